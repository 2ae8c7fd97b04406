// JPEG decoding and encoding over the libjpeg API, with libjpeg's longjmp kept in this file.

#include "CImageShims.h"
#include "shim_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

void mg_free(void *buffer) { free(buffer); }

static _Atomic int live_objects = 0;
void mg_live_objects_add(int delta) { live_objects += delta; }
int mg_live_objects(void) { return live_objects; }

struct mg_jpeg_error {
    struct jpeg_error_mgr pub;  // must be first: libjpeg sees only this part
    jmp_buf jump;
};

// MARK: - Decoder

struct mg_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    struct mg_jpeg_error err;
    struct jpeg_progress_mgr progress;
    int max_scans;
    int truncated;
    int warnings;
    int source_cmyk;      // the output is CMYK and we convert it
    int adobe_inverted;
    int channels;         // what the caller asked for
    uint8_t *row;         // one CMYK row when converting
    char message[JMSG_LENGTH_MAX + 64];
};

static void mg_jpeg_decoder_error_exit(j_common_ptr cinfo) {
    mg_jpeg_decoder *d = (mg_jpeg_decoder *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, d->message);
    longjmp(d->err.jump, 1);
}

static void mg_jpeg_decoder_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return;  // trace messages
    mg_jpeg_decoder *d = (mg_jpeg_decoder *)cinfo->client_data;
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
        d->truncated = 1;
    } else {
        d->warnings++;
    }
    cinfo->err->num_warnings++;
}

static void mg_jpeg_silent_output(j_common_ptr cinfo) { (void)cinfo; }

static void mg_jpeg_decoder_progress(j_common_ptr cinfo) {
    mg_jpeg_decoder *d = (mg_jpeg_decoder *)cinfo->client_data;
    j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
    if (dinfo->input_scan_number > d->max_scans) {
        snprintf(d->message, sizeof d->message, "more than %d progressive scans", d->max_scans);
        longjmp(d->err.jump, 1);
    }
}

mg_jpeg_decoder *mg_jpeg_decoder_create(void) {
    mg_jpeg_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->max_scans = 500;
    d->cinfo.err = jpeg_std_error(&d->err.pub);
    d->err.pub.error_exit = mg_jpeg_decoder_error_exit;
    d->err.pub.emit_message = mg_jpeg_decoder_emit_message;
    d->err.pub.output_message = mg_jpeg_silent_output;
    d->cinfo.client_data = d;
    if (setjmp(d->err.jump)) {
        free(d);
        return NULL;
    }
    jpeg_create_decompress(&d->cinfo);
    d->progress.progress_monitor = mg_jpeg_decoder_progress;
    d->cinfo.progress = &d->progress;
    mg_live_objects_add(1);
    return d;
}

void mg_jpeg_decoder_destroy(mg_jpeg_decoder *d) {
    if (!d) return;
    jpeg_destroy_decompress(&d->cinfo);
    free(d->row);
    free(d);
    mg_live_objects_add(-1);
}

void mg_jpeg_set_max_scans(mg_jpeg_decoder *d, int max_scans) { d->max_scans = max_scans; }

int mg_jpeg_truncated(const mg_jpeg_decoder *d) { return d->truncated; }
int mg_jpeg_warnings(const mg_jpeg_decoder *d) { return d->warnings; }
const char *mg_jpeg_message(const mg_jpeg_decoder *d) { return d->message; }

int mg_jpeg_color(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return MG_JPEG_COLOR_GRAY;
    case JCS_RGB: return MG_JPEG_COLOR_RGB;
    case JCS_YCbCr: return MG_JPEG_COLOR_YCBCR;
    case JCS_CMYK: return MG_JPEG_COLOR_CMYK;
    case JCS_YCCK: return MG_JPEG_COLOR_YCCK;
    default: return MG_JPEG_COLOR_UNKNOWN;
    }
}

int mg_jpeg_read_header(mg_jpeg_decoder *d, const uint8_t *data, size_t length, mg_jpeg_info *info) {
    if (setjmp(d->err.jump)) return -1;
    jpeg_mem_src(&d->cinfo, data, (unsigned long)length);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&d->cinfo, TRUE);

    memset(info, 0, sizeof *info);
    info->width = d->cinfo.image_width;
    info->height = d->cinfo.image_height;
    info->components = d->cinfo.num_components;
    info->color_space = mg_jpeg_color(d->cinfo.jpeg_color_space);
    info->progressive = d->cinfo.progressive_mode ? 1 : 0;
    info->adobe_inverted = d->cinfo.saw_Adobe_marker ? 1 : 0;
    d->adobe_inverted = info->adobe_inverted;
    for (jpeg_saved_marker_ptr m = d->cinfo.marker_list; m; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && memcmp(m->data, "Exif\0\0", 6) == 0) {
            info->exif = m->data + 6;
            info->exif_length = m->data_length - 6;
            break;
        }
    }
    return 0;
}

int mg_jpeg_set_output(j_decompress_ptr cinfo, int channels, int scale_num, int *source_cmyk,
                       char *message, size_t message_size) {
    if (channels != 1 && channels != 3 && channels != 4) {
        snprintf(message, message_size, "unsupported output channel count %d", channels);
        return -1;
    }
    if (scale_num < 1 || scale_num > 16) scale_num = 8;
    J_COLOR_SPACE space = cinfo->jpeg_color_space;
    if (space == JCS_CMYK || space == JCS_YCCK) {
        *source_cmyk = 1;
        cinfo->out_color_space = JCS_CMYK;
    } else if (space == JCS_UNKNOWN) {
        snprintf(message, message_size, "unknown color space with %d components", cinfo->num_components);
        return -1;
    } else {
        *source_cmyk = 0;
        cinfo->out_color_space = channels == 1 ? JCS_GRAYSCALE : channels == 3 ? JCS_RGB : JCS_EXT_RGBA;
    }
    cinfo->scale_num = (unsigned int)scale_num;
    cinfo->scale_denom = 8;
    cinfo->dct_method = JDCT_ISLOW;
    // A scaled decode feeds a resize: libjpeg's merged chroma upsampling is faster and the
    // difference does not survive the reduction.
    if (scale_num < 8) cinfo->do_fancy_upsampling = FALSE;
    jpeg_calc_output_dimensions(cinfo);
    return 0;
}

int mg_jpeg_prepare(mg_jpeg_decoder *d, int channels, int scale_num, uint32_t *width, uint32_t *height) {
    if (setjmp(d->err.jump)) return -1;
    if (mg_jpeg_set_output(&d->cinfo, channels, scale_num, &d->source_cmyk, d->message, sizeof d->message) != 0) {
        return -1;
    }
    d->channels = channels;
    *width = d->cinfo.output_width;
    *height = d->cinfo.output_height;
    return 0;
}

// Adobe writes CMYK inverted (255 = no ink); plain CMYK is converted to that form first.
void mg_jpeg_cmyk_row(const uint8_t *in, uint8_t *out, uint32_t width, int channels, int inverted) {
    for (uint32_t x = 0; x < width; x++) {
        unsigned c = in[0], m = in[1], y = in[2], k = in[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        unsigned r = (c * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
        if (channels == 1) {
            out[0] = (uint8_t)((r * 19595 + g * 38470 + b * 7471 + 32768) >> 16);
        } else {
            out[0] = (uint8_t)r; out[1] = (uint8_t)g; out[2] = (uint8_t)b;
            if (channels == 4) out[3] = 255;
        }
        in += 4;
        out += channels;
    }
}

int mg_jpeg_decode(mg_jpeg_decoder *d, uint8_t *pixels, size_t stride) {
    if (setjmp(d->err.jump)) {
        jpeg_abort_decompress(&d->cinfo);
        return -1;
    }
    jpeg_start_decompress(&d->cinfo);
    if (d->truncated) {
        snprintf(d->message, sizeof d->message, "the data ends before the image does");
        jpeg_abort_decompress(&d->cinfo);
        return -1;
    }
    uint32_t height = d->cinfo.output_height, width = d->cinfo.output_width;
    if (d->source_cmyk) {
        free(d->row);
        d->row = malloc((size_t)width * 4);
        if (!d->row) {
            snprintf(d->message, sizeof d->message, "out of memory");
            jpeg_abort_decompress(&d->cinfo);
            return -1;
        }
        while (d->cinfo.output_scanline < height) {
            uint32_t y = d->cinfo.output_scanline;
            JSAMPROW row = d->row;
            if (jpeg_read_scanlines(&d->cinfo, &row, 1) != 1) break;
            mg_jpeg_cmyk_row(d->row, pixels + (size_t)y * stride, width, d->channels, d->adobe_inverted);
            if (d->truncated) break;
        }
    } else {
        JSAMPROW rows[16];
        while (d->cinfo.output_scanline < height) {
            uint32_t y = d->cinfo.output_scanline;
            uint32_t n = height - y < 16 ? height - y : 16;
            for (uint32_t i = 0; i < n; i++) rows[i] = pixels + (size_t)(y + i) * stride;
            if (jpeg_read_scanlines(&d->cinfo, rows, n) == 0) break;
            if (d->truncated) break;
        }
    }
    int complete = d->cinfo.output_scanline == height && !d->truncated;
    jpeg_abort_decompress(&d->cinfo);
    if (!complete) {
        snprintf(d->message, sizeof d->message, "the data ends before the image does");
        d->truncated = 1;
        return -1;
    }
    return 0;
}

// MARK: - Encoder

struct mg_memory_destination {
    struct jpeg_destination_mgr pub;
    uint8_t *buffer;
    size_t capacity;
};

struct mg_jpeg_encoder {
    struct jpeg_compress_struct cinfo;
    struct mg_jpeg_error err;
    struct mg_memory_destination dest;
    int created;
    uint8_t *row;
    char message[JMSG_LENGTH_MAX + 64];
};

static void mg_jpeg_encoder_error_exit(j_common_ptr cinfo) {
    struct mg_jpeg_encoder *e = (struct mg_jpeg_encoder *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, e->message);
    longjmp(e->err.jump, 1);
}

static void mg_dest_init(j_compress_ptr cinfo) {
    struct mg_memory_destination *dest = (struct mg_memory_destination *)cinfo->dest;
    dest->capacity = 64 * 1024;
    dest->buffer = malloc(dest->capacity);
    if (!dest->buffer) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    dest->pub.next_output_byte = dest->buffer;
    dest->pub.free_in_buffer = dest->capacity;
}

static boolean mg_dest_empty(j_compress_ptr cinfo) {
    struct mg_memory_destination *dest = (struct mg_memory_destination *)cinfo->dest;
    size_t capacity = dest->capacity * 2;
    uint8_t *grown = realloc(dest->buffer, capacity);
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 1);
    dest->pub.next_output_byte = grown + dest->capacity;
    dest->pub.free_in_buffer = capacity - dest->capacity;
    dest->buffer = grown;
    dest->capacity = capacity;
    return TRUE;
}

static void mg_dest_term(j_compress_ptr cinfo) { (void)cinfo; }

static int mg_jpeg_encode_run(struct mg_jpeg_encoder *e, const uint8_t *pixels, uint32_t width, uint32_t height,
                              size_t stride, int channels, int quality, int progressive,
                              const uint8_t background[3], const uint8_t *exif, size_t exif_length) {
    if (setjmp(e->err.jump)) return -1;
    jpeg_create_compress(&e->cinfo);
    e->created = 1;
    e->dest.pub.init_destination = mg_dest_init;
    e->dest.pub.empty_output_buffer = mg_dest_empty;
    e->dest.pub.term_destination = mg_dest_term;
    e->cinfo.dest = &e->dest.pub;
    e->cinfo.image_width = width;
    e->cinfo.image_height = height;
    e->cinfo.input_components = channels == 1 ? 1 : 3;
    e->cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, quality, TRUE);
    if (progressive) jpeg_simple_progression(&e->cinfo);
    jpeg_start_compress(&e->cinfo, TRUE);
    if (exif && exif_length > 0 && exif_length + 6 <= 65533) {
        jpeg_write_m_header(&e->cinfo, JPEG_APP0 + 1, (unsigned int)(exif_length + 6));
        const char *prefix = "Exif\0\0";
        for (int i = 0; i < 6; i++) jpeg_write_m_byte(&e->cinfo, prefix[i]);
        for (size_t i = 0; i < exif_length; i++) jpeg_write_m_byte(&e->cinfo, exif[i]);
    }
    if (channels == 4) {
        e->row = malloc((size_t)width * 3);
        if (!e->row) ERREXIT1(&e->cinfo, JERR_OUT_OF_MEMORY, 2);
    }
    while (e->cinfo.next_scanline < height) {
        const uint8_t *src = pixels + (size_t)e->cinfo.next_scanline * stride;
        JSAMPROW row;
        if (channels == 4) {
            uint8_t *out = e->row;
            for (uint32_t x = 0; x < width; x++, src += 4, out += 3) {
                unsigned a = src[3], na = 255 - a;
                out[0] = (uint8_t)((src[0] * a + background[0] * na + 127) / 255);
                out[1] = (uint8_t)((src[1] * a + background[1] * na + 127) / 255);
                out[2] = (uint8_t)((src[2] * a + background[2] * na + 127) / 255);
            }
            row = e->row;
        } else {
            row = (JSAMPROW)src;
        }
        jpeg_write_scanlines(&e->cinfo, &row, 1);
    }
    jpeg_finish_compress(&e->cinfo);
    return 0;
}

int mg_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int channels,
                   int quality, int progressive, const uint8_t background[3],
                   const uint8_t *exif, size_t exif_length,
                   uint8_t **output, size_t *output_length, char *message) {
    *output = NULL;
    *output_length = 0;
    if (channels != 1 && channels != 3 && channels != 4) {
        snprintf(message, 200, "unsupported channel count %d", channels);
        return -1;
    }
    struct mg_jpeg_encoder *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(message, 200, "out of memory");
        return -1;
    }
    e->cinfo.err = jpeg_std_error(&e->err.pub);
    e->err.pub.error_exit = mg_jpeg_encoder_error_exit;
    e->err.pub.output_message = mg_jpeg_silent_output;
    e->cinfo.client_data = e;
    int result = mg_jpeg_encode_run(e, pixels, width, height, stride, channels, quality, progressive,
                                    background, exif, exif_length);
    if (result == 0) {
        *output = e->dest.buffer;
        *output_length = e->dest.capacity - e->dest.pub.free_in_buffer;
    } else {
        snprintf(message, 200, "%s", e->message);
        free(e->dest.buffer);
    }
    if (e->created) jpeg_destroy_compress(&e->cinfo);
    free(e->row);
    free(e);
    return result;
}

// MARK: - Allocator tuning

#include <malloc.h>

int mg_retain_freed_memory(size_t threshold, size_t retained, int arenas) {
#ifdef M_MMAP_THRESHOLD
    int ok = 1;
    if (threshold > 0) ok &= mallopt(M_MMAP_THRESHOLD, (int)threshold);
    if (retained > 0) ok &= mallopt(M_TRIM_THRESHOLD, (int)retained);
    if (arenas > 0) ok &= mallopt(M_ARENA_MAX, arenas);
    return ok ? 0 : -1;
#else
    (void)threshold; (void)retained; (void)arenas;
    return -1;
#endif
}
