public import struct Foundation.Data

/// Something that decodes one image format.
///
/// Built-in decoders live in ``ImageDecoders``; add your own to an ``ImageDecoderRegistry``.
/// A decoder must never crash, hang or allocate beyond the limits in ``ImageDecodingOptions``
/// on any input: bad data becomes an ``ImageError``.
public protocol ImageDecoding: Sendable {
    /// The format this decoder reads.
    var format: ImageFormat { get }

    /// Whether `data` (possibly only its first bytes) looks like this decoder's format.
    func canDecode(_ data: Data) -> Bool

    /// Reads the header: size, frame count, alpha, orientation, without decoding pixels.
    func info(for data: Data) throws -> ImageInfo

    /// Decodes `data` within the limits of `options`.
    func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image
}

/// The built-in decoders, and static-member sugar to name them.
public enum ImageDecoders {
    /// JPEG, PNG, GIF, WebP, BMP and ICO, in the order the registry tries them.
    public static var builtIn: [any ImageDecoding] { [JPEG(), PNG(), GIF(), WebP(), BMP(), ICO()] }
}

extension ImageDecoding {
    /// Decodes `data` with the default options.
    public func decode(_ data: Data) throws -> Image {
        try decode(data, options: .default)
    }
}
