/// A partial image shown while the data is still arriving.
public struct ImagePreview: Sendable {
    /// What part of the image a preview shows.
    public enum Kind: Hashable, Sendable {
        /// A progressive JPEG after this many complete scans, at full size.
        case scans(Int)
        /// An interlaced PNG after this many complete Adam7 passes (1...7), filled in to full size.
        case passes(Int)
        /// The first rows of a top-down image; the rest is zero (black, or transparent with alpha).
        case rows(Int)
        /// The frames of an animation that are complete.
        case frames(Int)
    }

    /// The partial image, at the final image's size.
    public var image: Image
    /// What it shows.
    public var kind: Kind
    /// Whether it was blurred (YYWebImage's "progressive blur").
    public var isBlurred: Bool
}

/// A format's incremental decoder, fed by ``IncrementalImageDecoder``.
protocol IncrementalDecoding: AnyObject {
    /// Takes the next bytes (the bytes are not kept after the call).
    func append(_ bytes: UnsafeRawBufferPointer) throws
    /// A preview of what is decoded, if there is more than at the last preview; with `force`,
    /// whatever there is (also after a truncated finish).
    func makePreview(blurred: Bool, force: Bool) throws -> ImagePreview?
    /// The image, once all bytes were appended: identical to a one-shot decode of them.
    /// `data` is every byte appended, for decoders that finish by a one-shot decode.
    func finish(data: Data) throws -> Image
}

extension Bitmap {
    /// A copy of `count` bytes at `source` as a bitmap (counted by the allocation hook).
    static func copying(
        _ source: UnsafePointer<UInt8>, width: Int, height: Int, format: PixelFormat
    ) throws -> Bitmap {
        try Bitmap.make(width: width, height: height, format: format) { buffer in
            buffer.baseAddress?.update(from: source, count: buffer.count)
        }
    }
}

import struct Foundation.Data
