// Incremental PNG decoding over libpng's progressive reader, fed as bytes arrive.
//
// Rows (and, for Adam7, each pass's pixels) land in their final place in the output buffer
// as they are decoded; the caller builds previews from it.

#include "CImageShims.h"
#include "shim_internal.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

struct mg_png_stream {
    png_structp png;
    png_infop info;
    int requested_channels;
    uint64_t max_pixels;
    int state;              // MG_STREAM_NEED_DATA, MG_STREAM_DONE or MG_STREAM_FAILED
    int too_large;
    int has_header;
    mg_png_info header;
    int channels;
    size_t stride;
    uint8_t *pixels;
    int pass;               // the Adam7 pass rows are arriving for (0...6)
    int completed_passes;
    uint32_t rows;          // non-interlaced: rows decoded
    char message[256];
};

static void stream_info(png_structp png, png_infop info) {
    mg_png_stream *s = (mg_png_stream *)png_get_progressive_ptr(png);
    mg_png_fill_info(png, info, &s->header);
    s->has_header = 1;
    uint64_t pixels = (uint64_t)s->header.width * (uint64_t)s->header.height;
    if (pixels > s->max_pixels) {
        s->too_large = 1;
        png_error(png, "the image is larger than the limit");
    }
    char reason[256];
    int channels = mg_png_set_transforms(png, info, s->requested_channels, reason, sizeof reason);
    if (channels < 0) png_error(png, reason);
    s->channels = channels;
    s->stride = (size_t)s->header.width * (size_t)channels;
    s->pixels = calloc((size_t)s->header.height, s->stride);
    if (!s->pixels) png_error(png, "out of memory");
}

static void stream_row(png_structp png, png_bytep row, png_uint_32 row_number, int pass) {
    mg_png_stream *s = (mg_png_stream *)png_get_progressive_ptr(png);
    if (pass > s->pass) {
        s->completed_passes = pass;
        s->pass = pass;
    }
    if (!row || row_number >= s->header.height) return;
    png_progressive_combine_row(png, s->pixels + (size_t)row_number * s->stride, row);
    if (!s->header.interlaced) s->rows = row_number + 1;
}

static void stream_end(png_structp png, png_infop info) {
    (void)info;
    mg_png_stream *s = (mg_png_stream *)png_get_progressive_ptr(png);
    s->completed_passes = s->header.interlaced ? 7 : 1;
    s->rows = s->header.height;
    s->state = MG_STREAM_DONE;
}

mg_png_stream *mg_png_stream_create(int channels, uint64_t max_pixels) {
    mg_png_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->requested_channels = channels;
    s->max_pixels = max_pixels;
    s->state = MG_STREAM_NEED_DATA;
    s->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, s->message, mg_png_error_fn, mg_png_warning_fn);
    if (s->png) s->info = png_create_info_struct(s->png);
    if (!s->png || !s->info) {
        png_destroy_read_struct(&s->png, &s->info, NULL);
        free(s);
        return NULL;
    }
    mg_png_set_limits(s->png);
    png_set_progressive_read_fn(s->png, s, stream_info, stream_row, stream_end);
    mg_live_objects_add(1);
    return s;
}

void mg_png_stream_destroy(mg_png_stream *s) {
    if (!s) return;
    png_destroy_read_struct(&s->png, &s->info, NULL);
    free(s->pixels);
    free(s);
    mg_live_objects_add(-1);
}

int mg_png_stream_append(mg_png_stream *s, const uint8_t *data, size_t length) {
    if (s->state != MG_STREAM_NEED_DATA) return s->state;
    if (setjmp(png_jmpbuf(s->png))) {
        s->state = MG_STREAM_FAILED;
        return s->state;
    }
    png_process_data(s->png, s->info, (png_bytep)data, length);
    return s->state;
}

const mg_png_info *mg_png_stream_header(const mg_png_stream *s) { return s->has_header ? &s->header : NULL; }
int mg_png_stream_too_large(const mg_png_stream *s) { return s->too_large; }
int mg_png_stream_channels(const mg_png_stream *s) { return s->channels; }
const uint8_t *mg_png_stream_pixels(const mg_png_stream *s) { return s->pixels; }
uint32_t mg_png_stream_rows(const mg_png_stream *s) { return s->rows; }
int mg_png_stream_completed_passes(const mg_png_stream *s) { return s->completed_passes; }
const char *mg_png_stream_message(const mg_png_stream *s) { return s->message; }
