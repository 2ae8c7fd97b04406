public import struct Foundation.Data

/// Something that turns an ``Image`` into encoded bytes of one format.
///
/// ```swift
/// let jpeg = try image.encoded(using: .jpeg(quality: 0.8))
/// let gif = try animation.encoded(using: .gif())
/// ```
public protocol ImageEncoding: Sendable {
    /// The format produced.
    var format: ImageFormat { get }
    /// Encodes `image`.
    func encode(_ image: Image) throws -> Data
}

/// The built-in encoders, and static-member sugar to name them.
public enum ImageEncoders {
    /// An encoder for `format` with a `quality` of 0...1 where the format has one
    /// (JPEG, lossy WebP), or `nil` for formats nothing here writes.
    public static func encoder(for format: ImageFormat, quality: Double = 0.8) -> (any ImageEncoding)? {
        switch format {
        case .jpeg: JPEG(quality: quality)
        case .png: PNG()
        case .webp: WebP(quality: quality)
        case .gif: GIF()
        default: nil
        }
    }

    /// Throws unless `quality` is within 0...1.
    static func check(quality: Double, _ format: ImageFormat) throws(ImageError) {
        guard quality >= 0, quality <= 1 else {
            throw .invalidArgument("\(format) quality must be within 0...1, not \(quality)")
        }
    }
}

extension Image {
    /// The image encoded by `encoder`.
    public func encoded(using encoder: some ImageEncoding) throws -> Data {
        try encoder.encode(self)
    }
}

extension Data {
    /// Bytes malloc'd by a C encoder, taken over and freed.
    init(takingMalloced pointer: UnsafeMutablePointer<UInt8>?, count: Int, free: (UnsafeMutableRawPointer?) -> Void) {
        guard let pointer, count > 0 else {
            free(pointer)
            self.init()
            return
        }
        self.init(bytes: pointer, count: count)
        free(pointer)
    }
}

extension String {
    /// The NUL-terminated text a C function wrote into `buffer`.
    init(cMessage buffer: [CChar]) {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self = bytes.isEmpty ? "unknown error" : String(decoding: bytes, as: UTF8.self)
    }
}
