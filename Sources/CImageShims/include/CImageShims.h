// CImageShims: the only code in Magpie that calls setjmp.
//
// libjpeg and classic libpng report fatal errors by longjmp. Every public function here sets
// its own jump point before calling into the library, so a longjmp lands in this file and
// never crosses a Swift frame. Each function returns 0 on success and -1 on failure; the
// failure's message is then available from the *_message function.

#ifndef CIMAGESHIMS_H
#define CIMAGESHIMS_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

// MARK: - Memory

/// Frees a buffer returned by an encoder.
void mg_free(void *_Nullable buffer);

/// glibc's mallopt: allocations below `threshold` come from the heap, up to `retained` freed
/// bytes stay there for reuse, at most `arenas` arenas (0 leaves a setting alone).
/// Returns -1 where mallopt is missing or refuses.
int mg_retain_freed_memory(size_t threshold, size_t retained, int arenas);

/// The number of decoders and streams alive now (for tests that check abandoned ones are freed).
int mg_live_objects(void);

/// What an incremental decoder needs next.
enum {
    MG_STREAM_NEED_DATA = 0,  // feed more bytes
    MG_STREAM_HEADER = 1,     // the header is read: configure the output
    MG_STREAM_DONE = 2,       // the image is complete
    MG_STREAM_TRUNCATED = 3,  // the data ended early; the output holds what was decoded
    MG_STREAM_FAILED = -1,    // an error; see the message
};

// MARK: - JPEG decoding

enum {
    MG_JPEG_COLOR_UNKNOWN = 0,
    MG_JPEG_COLOR_GRAY = 1,
    MG_JPEG_COLOR_RGB = 2,
    MG_JPEG_COLOR_YCBCR = 3,
    MG_JPEG_COLOR_CMYK = 4,
    MG_JPEG_COLOR_YCCK = 5,
};

typedef struct mg_jpeg_decoder mg_jpeg_decoder;

typedef struct mg_jpeg_info {
    uint32_t width;
    uint32_t height;
    int components;
    int color_space;      // MG_JPEG_COLOR_*
    int progressive;      // 1 for a progressive (SOF2) stream
    int adobe_inverted;   // 1 when CMYK/YCCK samples are stored inverted (Adobe APP14)
    const uint8_t *_Nullable exif;  // the TIFF structure inside APP1 "Exif\0\0", owned by the decoder
    size_t exif_length;
} mg_jpeg_info;

/// A decoder for one image. Returns NULL only when memory runs out.
mg_jpeg_decoder *_Nullable mg_jpeg_decoder_create(void);
void mg_jpeg_decoder_destroy(mg_jpeg_decoder *_Nullable decoder);

/// Refuses progressive streams with more than this many scans (a CPU bomb). 500 by default.
void mg_jpeg_set_max_scans(mg_jpeg_decoder *decoder, int max_scans);

/// Reads the markers up to the first scan. `data` must stay valid until the decoder is destroyed.
int mg_jpeg_read_header(mg_jpeg_decoder *decoder, const uint8_t *data, size_t length, mg_jpeg_info *info);

/// Chooses the output, 1 (gray), 3 (RGB) or 4 (RGBA, opaque) channels, and a DCT scale of
/// `scale_num`/8 (1...16), and reports the output size. Allocates nothing large.
int mg_jpeg_prepare(mg_jpeg_decoder *decoder, int channels, int scale_num, uint32_t *width, uint32_t *height);

/// Decodes every row into `pixels`, `stride` bytes apart. CMYK and YCCK become RGB.
int mg_jpeg_decode(mg_jpeg_decoder *decoder, uint8_t *pixels, size_t stride);

/// 1 when the data ended before the image did.
int mg_jpeg_truncated(const mg_jpeg_decoder *decoder);
/// Number of recoverable corruption warnings libjpeg reported.
int mg_jpeg_warnings(const mg_jpeg_decoder *decoder);
const char *mg_jpeg_message(const mg_jpeg_decoder *decoder);

// MARK: - Incremental JPEG decoding

typedef struct mg_jpeg_stream mg_jpeg_stream;

mg_jpeg_stream *_Nullable mg_jpeg_stream_create(void);
void mg_jpeg_stream_destroy(mg_jpeg_stream *_Nullable stream);
/// Adds bytes (copied); `is_last` says no more will come, so a short file ends as truncated.
int mg_jpeg_stream_append(mg_jpeg_stream *stream, const uint8_t *_Nullable data, size_t length, int is_last);
/// Decodes as far as the data allows; returns an MG_STREAM_* value.
int mg_jpeg_stream_advance(mg_jpeg_stream *stream);
/// After MG_STREAM_HEADER: the header, valid until the stream is destroyed.
const mg_jpeg_info *mg_jpeg_stream_info(const mg_jpeg_stream *stream);
/// After MG_STREAM_HEADER: chooses the output as mg_jpeg_prepare does and allocates it.
int mg_jpeg_stream_configure(mg_jpeg_stream *stream, int channels, int scale_num, uint32_t *width, uint32_t *height);
/// Progressive: renders the last complete scan into the output; 1 when a new one was rendered.
int mg_jpeg_stream_render_scan(mg_jpeg_stream *stream);
const uint8_t *_Nullable mg_jpeg_stream_pixels(const mg_jpeg_stream *stream);
/// Rows of the output that hold decoded pixels (all of them once a progressive scan is rendered).
uint32_t mg_jpeg_stream_rows(const mg_jpeg_stream *stream);
int mg_jpeg_stream_completed_scans(const mg_jpeg_stream *stream);
int mg_jpeg_stream_rendered_scans(const mg_jpeg_stream *stream);
int mg_jpeg_stream_truncated(const mg_jpeg_stream *stream);
const char *mg_jpeg_stream_message(const mg_jpeg_stream *stream);

// MARK: - JPEG encoding

/// Encodes 1, 3 or 4 channel pixels (4: straight alpha, composited over `background` RGB).
/// `quality` is 1...100. `exif`, when not NULL, is written as an APP1 "Exif" segment.
/// On success `*output` is a malloc'd buffer the caller frees with mg_free.
/// On failure `message` (at least 200 bytes) receives the reason.
int mg_jpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int channels,
                   int quality, int progressive, const uint8_t background[_Nonnull 3],
                   const uint8_t *_Nullable exif, size_t exif_length,
                   uint8_t *_Nullable *_Nonnull output, size_t *output_length, char *message);

// MARK: - PNG decoding

typedef struct mg_png_decoder mg_png_decoder;

typedef struct mg_png_info {
    uint32_t width;
    uint32_t height;
    int bit_depth;
    int color_type;       // PNG_COLOR_TYPE_*
    int interlaced;       // 1 for Adam7
    int has_trns;         // 1 when a tRNS chunk gives transparency
    int channels;         // the natural 8-bit output: 1 (gray), 3 (RGB) or 4 (RGBA)
    const uint8_t *_Nullable exif;  // eXIf chunk, owned by the decoder
    size_t exif_length;
} mg_png_info;

mg_png_decoder *_Nullable mg_png_decoder_create(void);
void mg_png_decoder_destroy(mg_png_decoder *_Nullable decoder);

/// Reads the chunks up to the first IDAT. `data` must stay valid until the decoder is destroyed.
int mg_png_read_header(mg_png_decoder *decoder, const uint8_t *data, size_t length, mg_png_info *info);

/// Sets the transformations for 8-bit output with `channels` (1, 3 or 4; 0 for the natural
/// count). Gray output is possible only from gray images without transparency.
int mg_png_prepare(mg_png_decoder *decoder, int channels, int *out_channels);

/// Decodes every row (every Adam7 pass) into `pixels`, `stride` bytes apart.
int mg_png_decode(mg_png_decoder *decoder, uint8_t *pixels, size_t stride);

int mg_png_truncated(const mg_png_decoder *decoder);
const char *mg_png_message(const mg_png_decoder *decoder);

/// The fast path for 8-bit, non-interlaced images: inflates with libdeflate and unfilters
/// here, into `pixels` of `capacity` bytes (at least mg_png_fast_capacity). Returns 0 when
/// done, 1 when the image is not eligible or anything is unusual; then use mg_png_prepare
/// and mg_png_decode, which report errors precisely.
size_t mg_png_fast_capacity(const mg_png_info *info, int channels);
int mg_png_fast_decode(mg_png_decoder *decoder, uint8_t *pixels, size_t capacity, int channels);

// MARK: - Incremental PNG decoding

typedef struct mg_png_stream mg_png_stream;

/// A progressive PNG reader producing `channels` (0 = natural) and refusing more than `max_pixels`.
mg_png_stream *_Nullable mg_png_stream_create(int channels, uint64_t max_pixels);
void mg_png_stream_destroy(mg_png_stream *_Nullable stream);
/// Feeds bytes; returns MG_STREAM_NEED_DATA, MG_STREAM_DONE or MG_STREAM_FAILED.
int mg_png_stream_append(mg_png_stream *stream, const uint8_t *_Nullable data, size_t length);
/// The header once read, else NULL.
const mg_png_info *_Nullable mg_png_stream_header(const mg_png_stream *stream);
int mg_png_stream_too_large(const mg_png_stream *stream);
int mg_png_stream_channels(const mg_png_stream *stream);
const uint8_t *_Nullable mg_png_stream_pixels(const mg_png_stream *stream);
/// Non-interlaced: rows decoded so far.
uint32_t mg_png_stream_rows(const mg_png_stream *stream);
/// Adam7: passes complete (0...7).
int mg_png_stream_completed_passes(const mg_png_stream *stream);
const char *mg_png_stream_message(const mg_png_stream *stream);

// MARK: - PNG encoding

/// Encodes 1, 3 or 4 channel pixels (4: straight alpha) with zlib `level` 0...9, Adam7
/// interlaced when `interlaced` is non-zero.
/// On success `*output` is a malloc'd buffer the caller frees with mg_free.
int mg_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int channels,
                  int level, int interlaced, const uint8_t *_Nullable exif, size_t exif_length,
                  uint8_t *_Nullable *_Nonnull output, size_t *output_length, char *message);

#pragma clang assume_nonnull end

#endif
