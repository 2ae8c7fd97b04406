// CImageKernels: the inner loops of image processing, in C so that they compile to tight,
// vectorisable code. No library calls, no allocation, no longjmp: the Swift side validates
// every size and owns every buffer.

#ifndef CIMAGEKERNELS_H
#define CIMAGEKERNELS_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

/// Fixed-point precision of resampling weights: 1.0 is 1 << MG_WEIGHT_BITS.
#define MG_WEIGHT_BITS 22

/// Resamples each of `rows` rows horizontally: output pixel x is the sum over k < counts[x] of
/// weights[x * stride_k + k] * input pixel (starts[x] + k), in fixed point, rounded and clamped.
void mg_resample_rows(const uint8_t *input, size_t input_stride, uint8_t *output, size_t output_stride,
                      int rows, int channels, int output_width,
                      const int32_t *starts, const int32_t *counts, const int32_t *weights, int stride_k);

/// Resamples vertically: output row y is the weighted sum of input rows starts[y] ... + counts[y].
/// `accumulator` holds width * channels int32 values.
void mg_resample_columns(const uint8_t *input, size_t input_stride, uint8_t *output, size_t output_stride,
                         int output_height, size_t row_bytes,
                         const int32_t *starts, const int32_t *counts, const int32_t *weights, int stride_k,
                         int32_t *accumulator);

/// Averages blocks of `fx` by `fy` pixels (edge blocks average what they have).
void mg_box_reduce(const uint8_t *input, size_t input_stride, int width, int height, int channels,
                   int fx, int fy, uint8_t *output, size_t output_stride);

/// RGBA: colour times alpha / 255, in place, rounded.
void mg_premultiply(uint8_t *pixels, size_t count);
/// RGBA: back from premultiplied, in place.
void mg_unpremultiply(uint8_t *pixels, size_t count);

/// One box blur pass of radius `radius` along rows (or, with `vertical`, along columns), from
/// `input` to `output` (distinct buffers), edges extended. `line` holds max(width, height) * channels int32.
void mg_box_blur(const uint8_t *input, uint8_t *output, int width, int height, int channels, int radius,
                 int vertical, int32_t *line);

#pragma clang assume_nonnull end

#endif
