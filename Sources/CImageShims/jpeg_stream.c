// Incremental JPEG decoding: libjpeg with a suspending data source, fed as bytes arrive.
//
// Baseline (sequential) images are decoded row by row into the output buffer as data comes.
// Progressive images use buffered-image mode: input is absorbed scan by scan into libjpeg's
// coefficient buffer, and a preview is rendered from the last complete scan on request.
// Only unconsumed input is kept: consumed bytes are dropped on each append.

#include "CImageShims.h"
#include "shim_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

enum {
    STATE_HEADER = 0,     // reading markers up to the first SOS
    STATE_CONFIGURE,      // header read: waiting for mg_jpeg_stream_configure
    STATE_START,          // jpeg_start_decompress (may suspend)
    STATE_ROWS,           // sequential: reading scanlines
    STATE_SCANS,          // progressive: absorbing scans
    STATE_DONE,           // the output buffer holds the final image
    STATE_FAILED,
};

struct mg_jpeg_stream {
    struct jpeg_decompress_struct cinfo;
    struct { struct jpeg_error_mgr pub; jmp_buf jump; } err;
    struct jpeg_source_mgr source;
    struct jpeg_progress_mgr progress;
    int state;
    int max_scans;
    int truncated;
    int eof;                    // the caller said no more data comes
    size_t skip_pending;        // bytes libjpeg asked to skip beyond what we had
    uint8_t *buffer;            // unconsumed input starts at buffer
    size_t capacity;
    uint8_t *pixels;            // the output, width * height * channels
    size_t stride;
    int channels;
    int source_cmyk;
    uint8_t *row;               // one CMYK row
    int completed_scans;        // progressive: scans fully absorbed
    int rendered_scans;         // progressive: scans shown in the output buffer
    mg_jpeg_info info;
    char message[JMSG_LENGTH_MAX + 64];
};

static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};

static void stream_error_exit(j_common_ptr cinfo) {
    mg_jpeg_stream *s = (mg_jpeg_stream *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, s->message);
    longjmp(s->err.jump, 1);
}

static void stream_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return;
    mg_jpeg_stream *s = (mg_jpeg_stream *)cinfo->client_data;
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) s->truncated = 1;
    cinfo->err->num_warnings++;
}

static void stream_silent(j_common_ptr cinfo) { (void)cinfo; }

static void stream_progress(j_common_ptr cinfo) {
    mg_jpeg_stream *s = (mg_jpeg_stream *)cinfo->client_data;
    if (((j_decompress_ptr)cinfo)->input_scan_number > s->max_scans) {
        snprintf(s->message, sizeof s->message, "more than %d progressive scans", s->max_scans);
        longjmp(s->err.jump, 1);
    }
}

static void source_init(j_decompress_ptr cinfo) { (void)cinfo; }

// No more bytes: suspend, unless the caller said the data has ended; then end the image.
static boolean source_fill(j_decompress_ptr cinfo) {
    mg_jpeg_stream *s = (mg_jpeg_stream *)cinfo->client_data;
    if (!s->eof) return FALSE;
    WARNMS(cinfo, JWRN_JPEG_EOF);
    cinfo->src->next_input_byte = fake_eoi;
    cinfo->src->bytes_in_buffer = 2;
    return TRUE;
}

static void source_skip(j_decompress_ptr cinfo, long count) {
    if (count <= 0) return;
    mg_jpeg_stream *s = (mg_jpeg_stream *)cinfo->client_data;
    struct jpeg_source_mgr *src = cinfo->src;
    if ((size_t)count <= src->bytes_in_buffer) {
        src->next_input_byte += count;
        src->bytes_in_buffer -= (size_t)count;
    } else {
        s->skip_pending += (size_t)count - src->bytes_in_buffer;
        src->next_input_byte += src->bytes_in_buffer;
        src->bytes_in_buffer = 0;
    }
}

static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

mg_jpeg_stream *mg_jpeg_stream_create(void) {
    mg_jpeg_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->max_scans = 500;
    s->cinfo.err = jpeg_std_error(&s->err.pub);
    s->err.pub.error_exit = stream_error_exit;
    s->err.pub.emit_message = stream_emit_message;
    s->err.pub.output_message = stream_silent;
    s->cinfo.client_data = s;
    if (setjmp(s->err.jump)) {
        free(s);
        return NULL;
    }
    jpeg_create_decompress(&s->cinfo);
    s->progress.progress_monitor = stream_progress;
    s->cinfo.progress = &s->progress;
    s->source.init_source = source_init;
    s->source.fill_input_buffer = source_fill;
    s->source.skip_input_data = source_skip;
    s->source.resync_to_restart = jpeg_resync_to_restart;
    s->source.term_source = source_term;
    s->source.next_input_byte = NULL;
    s->source.bytes_in_buffer = 0;
    s->cinfo.src = &s->source;
    jpeg_save_markers(&s->cinfo, JPEG_APP0 + 1, 0xFFFF);
    mg_live_objects_add(1);
    return s;
}

void mg_jpeg_stream_destroy(mg_jpeg_stream *s) {
    if (!s) return;
    jpeg_destroy_decompress(&s->cinfo);
    free(s->buffer);
    free(s->pixels);
    free(s->row);
    free(s);
    mg_live_objects_add(-1);
}

int mg_jpeg_stream_append(mg_jpeg_stream *s, const uint8_t *data, size_t length, int is_last) {
    if (is_last) s->eof = 1;
    if (s->skip_pending > 0) {
        size_t skip = s->skip_pending < length ? s->skip_pending : length;
        s->skip_pending -= skip;
        data += skip;
        length -= skip;
    }
    if (length == 0) return 0;
    // Keep only what libjpeg has not consumed, then the new bytes after it.
    size_t unconsumed = s->source.bytes_in_buffer;
    const JOCTET *start = s->source.next_input_byte;
    if (start == fake_eoi) unconsumed = 0;
    if (unconsumed > 0 && start != s->buffer) memmove(s->buffer, start, unconsumed);
    if (unconsumed + length > s->capacity) {
        size_t capacity = s->capacity ? s->capacity : 16 * 1024;
        while (capacity < unconsumed + length) capacity *= 2;
        uint8_t *grown = realloc(s->buffer, capacity);
        if (!grown) {
            snprintf(s->message, sizeof s->message, "out of memory");
            s->state = STATE_FAILED;
            return -1;
        }
        s->buffer = grown;
        s->capacity = capacity;
    }
    memcpy(s->buffer + unconsumed, data, length);
    s->source.next_input_byte = s->buffer;
    s->source.bytes_in_buffer = unconsumed + length;
    return 0;
}

static void render_cmyk_rows(mg_jpeg_stream *s) {
    // Reads what rows are available into the output, converting CMYK.
    while (s->cinfo.output_scanline < s->cinfo.output_height) {
        uint32_t y = s->cinfo.output_scanline;
        JSAMPROW row = s->row;
        if (jpeg_read_scanlines(&s->cinfo, &row, 1) != 1) return;
        mg_jpeg_cmyk_row(s->row, s->pixels + (size_t)y * s->stride, s->cinfo.output_width, s->channels,
                         s->info.adobe_inverted);
    }
}

static void read_rows(mg_jpeg_stream *s) {
    if (s->source_cmyk) {
        render_cmyk_rows(s);
        return;
    }
    JSAMPROW rows[16];
    while (s->cinfo.output_scanline < s->cinfo.output_height) {
        uint32_t y = s->cinfo.output_scanline;
        uint32_t n = s->cinfo.output_height - y < 16 ? s->cinfo.output_height - y : 16;
        for (uint32_t i = 0; i < n; i++) rows[i] = s->pixels + (size_t)(y + i) * s->stride;
        if (jpeg_read_scanlines(&s->cinfo, rows, n) == 0) return;
    }
}

int mg_jpeg_stream_advance(mg_jpeg_stream *s) {
    if (s->state == STATE_FAILED) return MG_STREAM_FAILED;
    if (setjmp(s->err.jump)) {
        s->state = STATE_FAILED;
        return MG_STREAM_FAILED;
    }
    for (;;) {
        switch (s->state) {
        case STATE_HEADER: {
            int r = jpeg_read_header(&s->cinfo, TRUE);
            if (r == JPEG_SUSPENDED) return MG_STREAM_NEED_DATA;
            memset(&s->info, 0, sizeof s->info);
            s->info.width = s->cinfo.image_width;
            s->info.height = s->cinfo.image_height;
            s->info.components = s->cinfo.num_components;
            s->info.color_space = mg_jpeg_color(s->cinfo.jpeg_color_space);
            s->info.progressive = s->cinfo.progressive_mode ? 1 : 0;
            s->info.adobe_inverted = s->cinfo.saw_Adobe_marker ? 1 : 0;
            for (jpeg_saved_marker_ptr m = s->cinfo.marker_list; m; m = m->next) {
                if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && memcmp(m->data, "Exif\0\0", 6) == 0) {
                    s->info.exif = m->data + 6;
                    s->info.exif_length = m->data_length - 6;
                    break;
                }
            }
            s->state = STATE_CONFIGURE;
            return MG_STREAM_HEADER;
        }
        case STATE_CONFIGURE:
            return MG_STREAM_HEADER;
        case STATE_START:
            if (s->info.progressive) s->cinfo.buffered_image = TRUE;
            if (!jpeg_start_decompress(&s->cinfo)) return MG_STREAM_NEED_DATA;
            s->state = s->info.progressive ? STATE_SCANS : STATE_ROWS;
            break;
        case STATE_ROWS:
            read_rows(s);
            if (s->cinfo.output_scanline < s->cinfo.output_height) return MG_STREAM_NEED_DATA;
            s->state = STATE_DONE;
            break;
        case STATE_SCANS: {
            int r = jpeg_consume_input(&s->cinfo);
            if (r == JPEG_SUSPENDED) return MG_STREAM_NEED_DATA;
            if (r == JPEG_REACHED_SOS) {
                s->completed_scans = s->cinfo.input_scan_number - 1;
            } else if (r == JPEG_REACHED_EOI) {
                s->completed_scans = s->cinfo.input_scan_number;
                // The final pass from the complete coefficients.
                jpeg_start_output(&s->cinfo, s->cinfo.input_scan_number);
                read_rows(s);
                jpeg_finish_output(&s->cinfo);
                s->rendered_scans = s->completed_scans;
                s->state = STATE_DONE;
            }
            break;
        }
        case STATE_DONE:
            return s->truncated ? MG_STREAM_TRUNCATED : MG_STREAM_DONE;
        default:
            return MG_STREAM_FAILED;
        }
    }
}

const mg_jpeg_info *mg_jpeg_stream_info(const mg_jpeg_stream *s) { return &s->info; }

int mg_jpeg_stream_configure(mg_jpeg_stream *s, int channels, int scale_num, uint32_t *width, uint32_t *height) {
    if (s->state != STATE_CONFIGURE) {
        snprintf(s->message, sizeof s->message, "configure called out of order");
        return -1;
    }
    if (setjmp(s->err.jump)) {
        s->state = STATE_FAILED;
        return -1;
    }
    if (mg_jpeg_set_output(&s->cinfo, channels, scale_num, &s->source_cmyk, s->message, sizeof s->message) != 0) {
        s->state = STATE_FAILED;
        return -1;
    }
    s->channels = channels;
    *width = s->cinfo.output_width;
    *height = s->cinfo.output_height;
    s->stride = (size_t)s->cinfo.output_width * (size_t)channels;
    // Zeroed: rows not decoded yet show as black (transparent for RGBA).
    s->pixels = calloc((size_t)s->cinfo.output_height, s->stride);
    if (s->source_cmyk) s->row = malloc((size_t)s->cinfo.output_width * 4);
    if (!s->pixels || (s->source_cmyk && !s->row)) {
        snprintf(s->message, sizeof s->message, "out of memory");
        s->state = STATE_FAILED;
        return -1;
    }
    s->state = STATE_START;
    return 0;
}

int mg_jpeg_stream_render_scan(mg_jpeg_stream *s) {
    if (s->state != STATE_SCANS || s->completed_scans <= s->rendered_scans) return 0;
    if (setjmp(s->err.jump)) {
        s->state = STATE_FAILED;
        return -1;
    }
    // Output from complete scans only, so that rendering never waits for input.
    int scan = s->completed_scans;
    if (!jpeg_start_output(&s->cinfo, scan)) return 0;
    read_rows(s);
    if (!jpeg_finish_output(&s->cinfo)) return 0;
    s->rendered_scans = scan;
    return 1;
}

const uint8_t *mg_jpeg_stream_pixels(const mg_jpeg_stream *s) { return s->pixels; }
uint32_t mg_jpeg_stream_rows(const mg_jpeg_stream *s) {
    if (s->state == STATE_DONE) return s->cinfo.output_height;
    if (s->info.progressive) return s->rendered_scans > 0 ? s->cinfo.output_height : 0;
    return s->cinfo.output_scanline;
}
int mg_jpeg_stream_completed_scans(const mg_jpeg_stream *s) { return s->completed_scans; }
int mg_jpeg_stream_rendered_scans(const mg_jpeg_stream *s) { return s->rendered_scans; }
int mg_jpeg_stream_truncated(const mg_jpeg_stream *s) { return s->truncated; }
const char *mg_jpeg_stream_message(const mg_jpeg_stream *s) { return s->message; }
