// PNG decoding and encoding over libpng's classic API, with libpng's longjmp kept in this file.

#include "CImageShims.h"
#include "shim_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

// MARK: - Decoder

struct mg_png_decoder {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t length;
    size_t offset;
    int truncated;
    int channels;
    png_bytep *rows;
    char message[256];
};

// The error pointer is always a 256-byte message buffer.
void mg_png_error_fn(png_structp png, png_const_charp text) {
    char *message = (char *)png_get_error_ptr(png);
    if (message) snprintf(message, 256, "%s", text);
    png_longjmp(png, 1);
}

void mg_png_warning_fn(png_structp png, png_const_charp text) { (void)png; (void)text; }

void mg_png_set_limits(png_structp png) {
    // Magpie checks the pixel count itself, from the header, against its own limit.
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_set_chunk_cache_max(png, 1000);
    png_set_chunk_malloc_max(png, 8 * 1024 * 1024);
}

static void mg_png_read(png_structp png, png_bytep out, size_t count) {
    mg_png_decoder *d = (mg_png_decoder *)png_get_io_ptr(png);
    if (count > d->length - d->offset) {
        d->truncated = 1;
        png_error(png, "the data ends before the image does");
    }
    memcpy(out, d->data + d->offset, count);
    d->offset += count;
}

void mg_png_fill_info(png_structp png, png_infop info, mg_png_info *out) {
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    memset(out, 0, sizeof *out);
    out->width = width;
    out->height = height;
    out->bit_depth = bit_depth;
    out->color_type = color_type;
    out->interlaced = interlace != PNG_INTERLACE_NONE;
    out->has_trns = png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0;
    out->channels = mg_png_natural_channels(color_type, out->has_trns);
#ifdef PNG_eXIf_SUPPORTED
    png_bytep exif = NULL;
    png_uint_32 exif_length = 0;
    if (png_get_eXIf_1(png, info, &exif_length, &exif) && exif && exif_length > 0) {
        out->exif = exif;
        out->exif_length = exif_length;
    }
#endif
}

int mg_png_set_transforms(png_structp png, png_infop info, int channels, char *message, size_t message_size) {
    int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0;
    int natural = mg_png_natural_channels(color_type, has_trns);
    int target = channels == 0 ? natural : channels;
    if (target != natural && target != 4) {
        snprintf(message, message_size, "cannot decode to %d channels", target);
        return -1;
    }
    if (bit_depth == 16) png_set_strip_16(png);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (has_trns) png_set_tRNS_to_alpha(png);
    if (target >= 3 && (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA)) {
        png_set_gray_to_rgb(png);
    }
    if (target == 4 && natural != 4) png_set_filler(png, 0xff, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t expected = (size_t)png_get_image_width(png, info) * (size_t)target;
    if (png_get_rowbytes(png, info) != expected) {
        snprintf(message, message_size, "unexpected row size %zu (expected %zu)", (size_t)png_get_rowbytes(png, info),
                 expected);
        return -1;
    }
    return target;
}

mg_png_decoder *mg_png_decoder_create(void) {
    mg_png_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d->message, mg_png_error_fn, mg_png_warning_fn);
    if (!d->png) {
        free(d);
        return NULL;
    }
    d->info = png_create_info_struct(d->png);
    if (!d->info) {
        png_destroy_read_struct(&d->png, NULL, NULL);
        free(d);
        return NULL;
    }
    mg_live_objects_add(1);
    return d;
}

void mg_png_decoder_destroy(mg_png_decoder *d) {
    if (!d) return;
    png_destroy_read_struct(&d->png, &d->info, NULL);
    free(d->rows);
    free(d);
    mg_live_objects_add(-1);
}

int mg_png_truncated(const mg_png_decoder *d) { return d->truncated; }
const char *mg_png_message(const mg_png_decoder *d) { return d->message; }

int mg_png_natural_channels(int color_type, int has_trns) {
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return has_trns ? 4 : 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 4;
    case PNG_COLOR_TYPE_PALETTE: return has_trns ? 4 : 3;
    case PNG_COLOR_TYPE_RGB: return has_trns ? 4 : 3;
    default: return 4;
    }
}

int mg_png_read_header(mg_png_decoder *d, const uint8_t *data, size_t length, mg_png_info *info) {
    if (setjmp(png_jmpbuf(d->png))) return -1;
    d->data = data;
    d->length = length;
    d->offset = 0;
    png_set_read_fn(d->png, d, mg_png_read);
    mg_png_set_limits(d->png);
    png_read_info(d->png, d->info);
    mg_png_fill_info(d->png, d->info, info);
    return 0;
}

int mg_png_prepare(mg_png_decoder *d, int channels, int *out_channels) {
    if (setjmp(png_jmpbuf(d->png))) return -1;
    int target = mg_png_set_transforms(d->png, d->info, channels, d->message, sizeof d->message);
    if (target < 0) return -1;
    d->channels = target;
    *out_channels = target;
    return 0;
}

int mg_png_decode(mg_png_decoder *d, uint8_t *pixels, size_t stride) {
    if (setjmp(png_jmpbuf(d->png))) return -1;
    png_uint_32 height = png_get_image_height(d->png, d->info);
    free(d->rows);
    d->rows = malloc((size_t)height * sizeof(png_bytep));
    if (!d->rows) {
        snprintf(d->message, sizeof d->message, "out of memory");
        return -1;
    }
    for (png_uint_32 y = 0; y < height; y++) d->rows[y] = pixels + (size_t)y * stride;
    png_read_image(d->png, d->rows);
    return 0;
}

// MARK: - Encoder

struct mg_png_encoder {
    png_structp png;
    png_infop info;
    uint8_t *buffer;
    size_t length;
    size_t capacity;
    char message[256];
};

static void mg_png_write(png_structp png, png_bytep data, size_t count) {
    struct mg_png_encoder *e = (struct mg_png_encoder *)png_get_io_ptr(png);
    if (count > e->capacity - e->length) {
        size_t capacity = e->capacity ? e->capacity : 64 * 1024;
        while (capacity - e->length < count) capacity *= 2;
        uint8_t *grown = realloc(e->buffer, capacity);
        if (!grown) png_error(png, "out of memory");
        e->buffer = grown;
        e->capacity = capacity;
    }
    memcpy(e->buffer + e->length, data, count);
    e->length += count;
}

static void mg_png_flush(png_structp png) { (void)png; }

static int mg_png_encode_run(struct mg_png_encoder *e, const uint8_t *pixels, uint32_t width, uint32_t height,
                             size_t stride, int channels, int level, int interlaced, const uint8_t *exif, size_t exif_length) {
    if (setjmp(png_jmpbuf(e->png))) return -1;
    png_set_write_fn(e->png, e, mg_png_write, mg_png_flush);
    int color_type = channels == 1 ? PNG_COLOR_TYPE_GRAY
                   : channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGB_ALPHA;
    png_set_IHDR(e->png, e->info, width, height, 8, color_type, interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(e->png, level);
#ifdef PNG_eXIf_SUPPORTED
    if (exif && exif_length > 0) png_set_eXIf_1(e->png, e->info, (png_uint_32)exif_length, (png_bytep)exif);
#endif
    png_write_info(e->png, e->info);
    // With Adam7, libpng picks each pass's pixels out of full rows: every row once per pass.
    int passes = interlaced ? png_set_interlace_handling(e->png) : 1;
    for (int pass = 0; pass < passes; pass++)
        for (uint32_t y = 0; y < height; y++) png_write_row(e->png, (png_const_bytep)(pixels + (size_t)y * stride));
    png_write_end(e->png, NULL);
    return 0;
}

int mg_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int channels,
                  int level, int interlaced, const uint8_t *exif, size_t exif_length,
                  uint8_t **output, size_t *output_length, char *message) {
    *output = NULL;
    *output_length = 0;
    if (channels != 1 && channels != 3 && channels != 4) {
        snprintf(message, 200, "unsupported channel count %d", channels);
        return -1;
    }
    struct mg_png_encoder *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(message, 200, "out of memory");
        return -1;
    }
    e->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, e->message, mg_png_error_fn, mg_png_warning_fn);
    if (e->png) e->info = png_create_info_struct(e->png);
    if (!e->png || !e->info) {
        png_destroy_write_struct(&e->png, &e->info);
        free(e);
        snprintf(message, 200, "out of memory");
        return -1;
    }
    if (level < 0) level = 0;
    if (level > 9) level = 9;
    int result = mg_png_encode_run(e, pixels, width, height, stride, channels, level, interlaced, exif, exif_length);
    if (result == 0) {
        *output = e->buffer;
        *output_length = e->length;
    } else {
        snprintf(message, 200, "%s", e->message);
        free(e->buffer);
    }
    png_destroy_write_struct(&e->png, &e->info);
    free(e);
    return result;
}

// MARK: - Fast path: libdeflate and our own unfiltering

#include <libdeflate.h>

static inline uint8_t paeth(int a, int b, int c) {
    int p = a + b - c;
    int pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (uint8_t)((pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c));
}

// Undoes one row's filter: `raw` (after the filter byte) into `cur`, with `prev` the row above.
static int unfilter_row(int filter, const uint8_t *raw, uint8_t *cur, const uint8_t *prev, size_t n, int bpp) {
    size_t i;
    switch (filter) {
    case 0: memcpy(cur, raw, n); return 0;
    case 1:
        for (i = 0; i < (size_t)bpp && i < n; i++) cur[i] = raw[i];
        for (; i < n; i++) cur[i] = (uint8_t)(raw[i] + cur[i - bpp]);
        return 0;
    case 2:
        for (i = 0; i < n; i++) cur[i] = (uint8_t)(raw[i] + prev[i]);
        return 0;
    case 3:
        for (i = 0; i < (size_t)bpp && i < n; i++) cur[i] = (uint8_t)(raw[i] + (prev[i] >> 1));
        for (; i < n; i++) cur[i] = (uint8_t)(raw[i] + ((cur[i - bpp] + prev[i]) >> 1));
        return 0;
    case 4:
        for (i = 0; i < (size_t)bpp && i < n; i++) cur[i] = (uint8_t)(raw[i] + prev[i]);
        for (; i < n; i++) cur[i] = (uint8_t)(raw[i] + paeth(cur[i - bpp], prev[i], prev[i - bpp]));
        return 0;
    default:
        return -1;
    }
}

static uint32_t read_u32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

size_t mg_png_fast_capacity(const mg_png_info *info, int out_channels) {
    int in_channels = info->color_type == 2 ? 3 : info->color_type == 4 ? 2 : info->color_type == 6 ? 4 : 1;
    size_t raw = (size_t)info->height * ((size_t)info->width * in_channels + 1);
    size_t out = (size_t)info->height * (size_t)info->width * (size_t)out_channels;
    return raw > out ? raw : out;
}

int mg_png_fast_decode(mg_png_decoder *d, uint8_t *out, size_t capacity, int out_channels) {
    png_uint_32 width = 0, height = 0;
    int depth = 0, ct = 0, interlace = 0;
    png_get_IHDR(d->png, d->info, &width, &height, &depth, &ct, &interlace, NULL, NULL);
    if (depth != 8 || interlace != PNG_INTERLACE_NONE) return 1;
    if (ct != 0 && ct != 2 && ct != 3 && ct != 4 && ct != 6) return 1;
    png_colorp palette = NULL;
    int palette_count = 0;
    if (ct == 3 && !png_get_PLTE(d->png, d->info, &palette, &palette_count)) return 1;
    png_bytep trns = NULL;
    int trns_count = 0;
    png_color_16p trns_color = NULL;
    int has_trns = png_get_tRNS(d->png, d->info, &trns, &trns_count, &trns_color) != 0;
    int natural = mg_png_natural_channels(ct, has_trns);
    if (out_channels == 0) out_channels = natural;
    if (out_channels != natural && out_channels != 4) return 1;
    int in_channels = ct == 2 ? 3 : ct == 4 ? 2 : ct == 6 ? 4 : 1;
    size_t rowbytes = (size_t)width * in_channels;
    size_t raw_size = (size_t)height * (rowbytes + 1);
    size_t out_stride = (size_t)width * out_channels;
    if (capacity < raw_size || capacity < out_stride * height) return 1;

    // Gather the IDAT chunks, checking their CRCs as libpng would.
    const uint8_t *data = d->data;
    size_t length = d->length, offset = 8, total = 0, first = 0, count = 0;
    while (offset + 12 <= length) {
        uint32_t n = read_u32(data + offset);
        if (n > length - offset - 12) return 1;
        if (memcmp(data + offset + 4, "IDAT", 4) == 0) {
            uint32_t crc = libdeflate_crc32(0, data + offset + 4, (size_t)n + 4);
            if (crc != read_u32(data + offset + 8 + n)) return 1;
            if (count == 0) first = offset;
            total += n;
            count++;
        } else if (count > 0) {
            break;
        }
        offset += (size_t)n + 12;
    }
    if (count == 0) return 1;
    const uint8_t *compressed = data + first + 8;
    uint8_t *joined = NULL;
    if (count > 1) {
        joined = malloc(total);
        if (!joined) return 1;
        size_t at = first, filled = 0;
        for (size_t i = 0; i < count; i++) {
            uint32_t n = read_u32(data + at);
            memcpy(joined + filled, data + at + 8, n);
            filled += n;
            at += (size_t)n + 12;
        }
        compressed = joined;
    }

    // Inflate into the end of the output buffer; rows are converted to the front, never
    // overtaking the raw rows still to be read.
    uint8_t *raw = out + capacity - raw_size;
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    int result = 1;
    uint8_t *rows = NULL;
    if (!inflater) goto done;
    if (libdeflate_zlib_decompress(inflater, compressed, total, raw, raw_size, NULL) != LIBDEFLATE_SUCCESS) goto done;
    rows = calloc(2, rowbytes);
    if (!rows) goto done;
    uint8_t *prev = rows, *cur = rows + rowbytes;
    int bpp = in_channels;
    uint8_t lut[256][4];
    if (ct == 3) {
        for (int i = 0; i < 256; i++) {
            png_color c = i < palette_count ? palette[i] : (png_color){0, 0, 0};
            lut[i][0] = c.red; lut[i][1] = c.green; lut[i][2] = c.blue;
            lut[i][3] = (has_trns && i < trns_count) ? trns[i] : 255;
        }
    }
    int key_gray = (has_trns && ct == 0 && trns_color) ? trns_color->gray : -1;
    int key_r = -1, key_g = -1, key_b = -1;
    if (has_trns && ct == 2 && trns_color) { key_r = trns_color->red; key_g = trns_color->green; key_b = trns_color->blue; }
    for (png_uint_32 y = 0; y < height; y++) {
        const uint8_t *src = raw + (size_t)y * (rowbytes + 1);
        if (unfilter_row(src[0], src + 1, cur, prev, rowbytes, bpp) != 0) goto done;
        uint8_t *dst = out + (size_t)y * out_stride;
        if (in_channels == out_channels && ct != 3 && !(has_trns && (ct == 0 || ct == 2))) {
            memcpy(dst, cur, rowbytes);
        } else {
            for (png_uint_32 x = 0; x < width; x++) {
                uint8_t r, g, b, a = 255;
                switch (ct) {
                case 0: r = g = b = cur[x]; if (cur[x] == key_gray) a = 0; break;
                case 2: r = cur[3 * x]; g = cur[3 * x + 1]; b = cur[3 * x + 2];
                        if (r == key_r && g == key_g && b == key_b) a = 0; break;
                case 3: r = lut[cur[x]][0]; g = lut[cur[x]][1]; b = lut[cur[x]][2]; a = lut[cur[x]][3]; break;
                case 4: r = g = b = cur[2 * x]; a = cur[2 * x + 1]; break;
                default: r = cur[4 * x]; g = cur[4 * x + 1]; b = cur[4 * x + 2]; a = cur[4 * x + 3]; break;
                }
                if (out_channels == 4) {
                    dst[4 * x] = r; dst[4 * x + 1] = g; dst[4 * x + 2] = b; dst[4 * x + 3] = a;
                } else if (out_channels == 3) {
                    dst[3 * x] = r; dst[3 * x + 1] = g; dst[3 * x + 2] = b;
                } else {
                    dst[x] = r;
                }
            }
        }
        uint8_t *swap = prev; prev = cur; cur = swap;
    }
    result = 0;
done:
    free(rows);
    free(joined);
    if (inflater) libdeflate_free_decompressor(inflater);
    return result;
}
