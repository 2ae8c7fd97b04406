// Helpers shared by the files of CImageShims; not part of its public header.
#ifndef SHIM_INTERNAL_H
#define SHIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>
#include <png.h>

// Counts live decoders and streams, so tests can see that abandoned ones were freed.
void mg_live_objects_add(int delta);

// JPEG
int mg_jpeg_color(J_COLOR_SPACE space);
void mg_jpeg_cmyk_row(const uint8_t *in, uint8_t *out, uint32_t width, int channels, int inverted);
// Sets the output colour space and scale and computes the output size; returns -1 with a message.
int mg_jpeg_set_output(j_decompress_ptr cinfo, int channels, int scale_num, int *source_cmyk,
                       char *message, size_t message_size);

// PNG
void mg_png_error_fn(png_structp png, png_const_charp text);
void mg_png_warning_fn(png_structp png, png_const_charp text);
void mg_png_set_limits(png_structp png);
int mg_png_natural_channels(int color_type, int has_trns);
void mg_png_fill_info(png_structp png, png_infop info, mg_png_info *out);
// Sets the transformations for 8-bit output with `channels` (0 = natural); returns the count or -1.
int mg_png_set_transforms(png_structp png, png_infop info, int channels, char *message, size_t message_size);

#endif
