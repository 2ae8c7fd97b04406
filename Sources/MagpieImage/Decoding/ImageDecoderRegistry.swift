public import struct Foundation.Data
import MagpieSupport

/// Chooses a decoder by the data's first bytes and runs it.
///
/// The registry starts with the built-in decoders (JPEG, PNG, GIF, WebP). Decoders you
/// register are asked first, most recent first, so one can also replace a built-in.
///
/// ```swift
/// ImageDecoderRegistry.shared.register(MyQOIDecoder())
/// let image = try Image(data: qoiData)
/// ```
public final class ImageDecoderRegistry: Sendable {
    /// The registry ``Image/init(data:options:registry:)`` uses by default.
    public static let shared = ImageDecoderRegistry()

    private let decoders: LockedValue<[any ImageDecoding]>

    /// A registry holding `decoders` (the built-ins by default).
    public init(decoders: [any ImageDecoding] = ImageDecoders.builtIn) {
        self.decoders = LockedValue(decoders)
    }

    /// Adds `decoder` ahead of every decoder already registered.
    public func register(_ decoder: any ImageDecoding) {
        decoders.withLock { $0.insert(decoder, at: 0) }
    }

    /// The decoders, in the order they are asked.
    public var all: [any ImageDecoding] { decoders.value }

    /// The decoder for `data`.
    ///
    /// - Throws: ``ImageError/Kind/empty`` for no bytes; ``ImageError/Kind/unsupportedFormat``
    ///   for a recognised format nothing decodes (AVIF, HEIC, TIFF, JPEG XL, BMP, ICO);
    ///   ``ImageError/Kind/unknownFormat`` otherwise.
    public func decoder(for data: Data) throws(ImageError) -> any ImageDecoding {
        guard !data.isEmpty else { throw .empty }
        if let decoder = decoders.value.first(where: { $0.canDecode(data) }) {
            return decoder
        }
        if let format = ImageFormat.sniff(data) {
            throw .unsupportedFormat(format)
        }
        throw .unknownFormat(firstBytes: data.prefix(8))
    }

    /// Decodes `data` with the decoder its first bytes call for.
    public func decode(_ data: Data, options: ImageDecodingOptions = .default) throws -> Image {
        try options.validate()
        return try decoder(for: data).decode(data, options: options)
    }

    /// Reads `data`'s header with the decoder its first bytes call for.
    public func info(for data: Data) throws -> ImageInfo {
        try decoder(for: data).info(for: data)
    }
}

extension Image {
    /// Decodes `data`, whatever its format, with the decoders of `registry`.
    public init(
        data: Data, options: ImageDecodingOptions = .default, registry: ImageDecoderRegistry = .shared
    ) throws {
        self = try registry.decode(data, options: options)
    }
}

extension ImageInfo {
    /// Reads the header of `data`, whatever its format.
    public init(data: Data, registry: ImageDecoderRegistry = .shared) throws {
        self = try registry.info(for: data)
    }
}
