#include "CImageKernels.h"

#include <string.h>

static inline uint8_t clamp8(int32_t value) {
    return value < 0 ? 0 : value > 255 ? 255 : (uint8_t)value;
}

#define ROUND (1 << (MG_WEIGHT_BITS - 1))

void mg_resample_rows(const uint8_t *input, size_t input_stride, uint8_t *output, size_t output_stride,
                      int rows, int channels, int output_width,
                      const int32_t *starts, const int32_t *counts, const int32_t *weights, int stride_k) {
    for (int y = 0; y < rows; y++) {
        const uint8_t *in = input + (size_t)y * input_stride;
        uint8_t *out = output + (size_t)y * output_stride;
        switch (channels) {
        case 4:
            for (int x = 0; x < output_width; x++) {
                const uint8_t *p = in + (size_t)starts[x] * 4;
                const int32_t *w = weights + (size_t)x * stride_k;
                int32_t s0 = ROUND, s1 = ROUND, s2 = ROUND, s3 = ROUND;
                for (int k = 0; k < counts[x]; k++, p += 4) {
                    s0 += p[0] * w[k]; s1 += p[1] * w[k]; s2 += p[2] * w[k]; s3 += p[3] * w[k];
                }
                out[4 * x] = clamp8(s0 >> MG_WEIGHT_BITS); out[4 * x + 1] = clamp8(s1 >> MG_WEIGHT_BITS);
                out[4 * x + 2] = clamp8(s2 >> MG_WEIGHT_BITS); out[4 * x + 3] = clamp8(s3 >> MG_WEIGHT_BITS);
            }
            break;
        case 3:
            for (int x = 0; x < output_width; x++) {
                const uint8_t *p = in + (size_t)starts[x] * 3;
                const int32_t *w = weights + (size_t)x * stride_k;
                int32_t s0 = ROUND, s1 = ROUND, s2 = ROUND;
                for (int k = 0; k < counts[x]; k++, p += 3) {
                    s0 += p[0] * w[k]; s1 += p[1] * w[k]; s2 += p[2] * w[k];
                }
                out[3 * x] = clamp8(s0 >> MG_WEIGHT_BITS); out[3 * x + 1] = clamp8(s1 >> MG_WEIGHT_BITS);
                out[3 * x + 2] = clamp8(s2 >> MG_WEIGHT_BITS);
            }
            break;
        default:
            for (int x = 0; x < output_width; x++) {
                const uint8_t *p = in + starts[x];
                const int32_t *w = weights + (size_t)x * stride_k;
                int32_t s0 = ROUND;
                for (int k = 0; k < counts[x]; k++) s0 += p[k] * w[k];
                out[x] = clamp8(s0 >> MG_WEIGHT_BITS);
            }
            break;
        }
    }
}

void mg_resample_columns(const uint8_t *input, size_t input_stride, uint8_t *output, size_t output_stride,
                         int output_height, size_t row_bytes,
                         const int32_t *starts, const int32_t *counts, const int32_t *weights, int stride_k,
                         int32_t *accumulator) {
    for (int y = 0; y < output_height; y++) {
        for (size_t i = 0; i < row_bytes; i++) accumulator[i] = ROUND;
        const int32_t *w = weights + (size_t)y * stride_k;
        for (int k = 0; k < counts[y]; k++) {
            const uint8_t *row = input + (size_t)(starts[y] + k) * input_stride;
            int32_t weight = w[k];
            for (size_t i = 0; i < row_bytes; i++) accumulator[i] += row[i] * weight;
        }
        uint8_t *out = output + (size_t)y * output_stride;
        for (size_t i = 0; i < row_bytes; i++) out[i] = clamp8(accumulator[i] >> MG_WEIGHT_BITS);
    }
}

void mg_box_reduce(const uint8_t *input, size_t input_stride, int width, int height, int channels,
                   int fx, int fy, uint8_t *output, size_t output_stride) {
    int out_w = (width + fx - 1) / fx, out_h = (height + fy - 1) / fy;
    for (int oy = 0; oy < out_h; oy++) {
        int y0 = oy * fy, y1 = y0 + fy < height ? y0 + fy : height;
        uint8_t *out = output + (size_t)oy * output_stride;
        for (int ox = 0; ox < out_w; ox++) {
            int x0 = ox * fx, x1 = x0 + fx < width ? x0 + fx : width;
            uint32_t sums[4] = {0, 0, 0, 0};
            for (int y = y0; y < y1; y++) {
                const uint8_t *p = input + (size_t)y * input_stride + (size_t)x0 * channels;
                for (int x = x0; x < x1; x++, p += channels) {
                    for (int c = 0; c < channels; c++) sums[c] += p[c];
                }
            }
            uint32_t n = (uint32_t)((y1 - y0) * (x1 - x0));
            for (int c = 0; c < channels; c++) out[ox * channels + c] = (uint8_t)((sums[c] + n / 2) / n);
        }
    }
}

void mg_premultiply(uint8_t *pixels, size_t count) {
    for (size_t i = 0; i < count; i++, pixels += 4) {
        uint32_t a = pixels[3];
        if (a == 255) continue;
        // x * a / 255, rounded: (t + (t >> 8)) >> 8 with t = x * a + 128.
        for (int c = 0; c < 3; c++) {
            uint32_t t = pixels[c] * a + 128;
            pixels[c] = (uint8_t)((t + (t >> 8)) >> 8);
        }
    }
}

void mg_unpremultiply(uint8_t *pixels, size_t count) {
    for (size_t i = 0; i < count; i++, pixels += 4) {
        uint32_t a = pixels[3];
        if (a == 255) continue;
        if (a == 0) {
            pixels[0] = pixels[1] = pixels[2] = 0;
            continue;
        }
        for (int c = 0; c < 3; c++) {
            uint32_t v = (pixels[c] * 255 + a / 2) / a;
            pixels[c] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

void mg_box_blur(const uint8_t *input, uint8_t *output, int width, int height, int channels, int radius,
                 int vertical, int32_t *line) {
    int window = 2 * radius + 1;
    // Divide by the window in fixed point: (sum * inverse) >> 24, rounded.
    uint32_t inverse = (uint32_t)(((1u << 24) + window / 2) / window);
    size_t row_bytes = (size_t)width * channels;
    if (vertical) {
        // Running sums of whole rows: each step adds one row and removes one, over contiguous bytes.
        const uint8_t *first = input, *last = input + (size_t)(height - 1) * row_bytes;
        for (size_t i = 0; i < row_bytes; i++) line[i] = first[i] * (radius + 1);
        for (int k = 1; k <= radius; k++) {
            const uint8_t *row = input + (size_t)(k < height ? k : height - 1) * row_bytes;
            for (size_t i = 0; i < row_bytes; i++) line[i] += row[i];
        }
        for (int y = 0; y < height; y++) {
            uint8_t *out = output + (size_t)y * row_bytes;
            for (size_t i = 0; i < row_bytes; i++) {
                out[i] = (uint8_t)(((uint64_t)(uint32_t)line[i] * inverse + (1u << 23)) >> 24);
            }
            const uint8_t *add = y + radius + 1 < height ? input + (size_t)(y + radius + 1) * row_bytes : last;
            const uint8_t *remove = y - radius >= 0 ? input + (size_t)(y - radius) * row_bytes : first;
            for (size_t i = 0; i < row_bytes; i++) line[i] += add[i] - remove[i];
        }
        return;
    }
    for (int y = 0; y < height; y++) {
        const uint8_t *in = input + (size_t)y * row_bytes;
        uint8_t *out = output + (size_t)y * row_bytes;
        for (int c = 0; c < channels; c++) {
            const uint8_t *p = in + c;
            uint8_t *q = out + c;
            int32_t first = p[0], last = p[(size_t)(width - 1) * channels];
            int32_t sum = first * (radius + 1);
            for (int i = 1; i <= radius; i++) sum += p[(size_t)(i < width ? i : width - 1) * channels];
            for (int i = 0; i < width; i++) {
                q[(size_t)i * channels] = (uint8_t)(((uint64_t)(uint32_t)sum * inverse + (1u << 23)) >> 24);
                int32_t add = i + radius + 1 < width ? p[(size_t)(i + radius + 1) * channels] : last;
                int32_t remove = i - radius >= 0 ? p[(size_t)(i - radius) * channels] : first;
                sum += add - remove;
            }
        }
    }
}
