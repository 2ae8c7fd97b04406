public import struct Foundation.Data
import CWebP

extension ImageEncoders {
    /// Encodes WebP through libwebp, lossy (with a quality) or lossless, keeping alpha.
    /// Animations become animated WebP through libwebp's animation encoder.
    public struct WebP: ImageEncoding {
        /// For lossy encoding, the quality 0...1; for lossless, the effort 0...1 (higher is
        /// smaller and slower). 0.8 by default.
        public var quality: Double
        /// Encode every pixel exactly. `false` by default.
        public var lossless: Bool

        /// An encoder with the given settings.
        public init(quality: Double = 0.8, lossless: Bool = false) {
            self.quality = quality
            self.lossless = lossless
        }

        public var format: ImageFormat { .webp }

        /// WebP's limit on either side.
        public static let maxDimension = 16_383

        public func encode(_ image: Image) throws -> Data {
            try ImageEncoders.check(quality: quality, .webp)
            guard image.width <= Self.maxDimension, image.height <= Self.maxDimension else {
                throw ImageError.encodingFailed(.webp, "WebP allows at most \(Self.maxDimension) pixels a side, not \(image.size)")
            }
            return image.isAnimated ? try encodeAnimation(image) : try encodeStill(image.bitmap)
        }

        private func config() throws -> WebPConfig {
            var config = WebPConfig()
            guard WebPConfigInit(&config) != 0 else { throw ImageError.encodingFailed(.webp, "libwebp version mismatch") }
            config.lossless = lossless ? 1 : 0
            config.quality = Float(quality * 100)
            // Lossless means every pixel, also the colour under fully transparent ones.
            config.exact = lossless ? 1 : 0
            return config
        }

        private func encodeStill(_ source: Bitmap) throws -> Data {
            let bitmap = source.format == .gray8 ? source.converted(to: .rgb8) : source
            var config = try config()
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw ImageError.encodingFailed(.webp, "libwebp version mismatch") }
            defer { WebPPictureFree(&picture) }
            picture.width = Int32(bitmap.width)
            picture.height = Int32(bitmap.height)
            picture.use_argb = lossless ? 1 : 0
            let imported = bitmap.pixels.withUnsafeBufferPointer { pixels -> Int32 in
                bitmap.format.hasAlpha
                    ? WebPPictureImportRGBA(&picture, pixels.baseAddress, Int32(bitmap.bytesPerRow))
                    : WebPPictureImportRGB(&picture, pixels.baseAddress, Int32(bitmap.bytesPerRow))
            }
            guard imported != 0 else { throw ImageError.encodingFailed(.webp, "out of memory importing \(bitmap.size)") }
            var writer = WebPMemoryWriter()
            WebPMemoryWriterInit(&writer)
            defer { WebPMemoryWriterClear(&writer) }
            let encoded = withUnsafeMutablePointer(to: &writer) { writerPointer -> Int32 in
                picture.writer = WebPMemoryWrite
                picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
                return WebPEncode(&config, &picture)
            }
            guard encoded != 0, let bytes = writer.mem else {
                throw ImageError.encodingFailed(.webp, "libwebp error \(picture.error_code.rawValue) encoding \(bitmap.size)")
            }
            return Data(bytes: bytes, count: writer.size)
        }

        private func encodeAnimation(_ image: Image) throws -> Data {
            var options = WebPAnimEncoderOptions()
            guard WebPAnimEncoderOptionsInit(&options) != 0 else {
                throw ImageError.encodingFailed(.webp, "libwebp version mismatch")
            }
            options.anim_params.loop_count = Int32(clamping: image.loopCount)
            guard let encoder = WebPAnimEncoderNew(Int32(image.width), Int32(image.height), &options) else {
                throw ImageError.encodingFailed(.webp, "cannot create the animation encoder")
            }
            defer { WebPAnimEncoderDelete(encoder) }
            var config = try config()
            var timestamp = 0
            for (index, frame) in image.frames.enumerated() {
                let rgba = frame.bitmap.converted(to: .rgba8)
                var picture = WebPPicture()
                guard WebPPictureInit(&picture) != 0 else { throw ImageError.encodingFailed(.webp, "libwebp version mismatch") }
                picture.width = Int32(rgba.width)
                picture.height = Int32(rgba.height)
                picture.use_argb = 1
                defer { WebPPictureFree(&picture) }
                let imported = rgba.pixels.withUnsafeBufferPointer { pixels in
                    WebPPictureImportRGBA(&picture, pixels.baseAddress, Int32(rgba.bytesPerRow))
                }
                guard imported != 0, WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else {
                    throw ImageError.encodingFailed(.webp, "cannot add frame \(index + 1): \(Self.message(encoder))")
                }
                timestamp += frame.duration.milliseconds
            }
            guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0 else {
                throw ImageError.encodingFailed(.webp, Self.message(encoder))
            }
            var data = WebPData()
            guard WebPAnimEncoderAssemble(encoder, &data) != 0 else {
                throw ImageError.encodingFailed(.webp, Self.message(encoder))
            }
            defer { WebPDataClear(&data) }
            guard let bytes = data.bytes else { throw ImageError.encodingFailed(.webp, "the encoder produced nothing") }
            return Data(bytes: bytes, count: data.size)
        }

        private static func message(_ encoder: OpaquePointer) -> String {
            WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "unknown error"
        }
    }
}

extension ImageEncoding where Self == ImageEncoders.WebP {
    /// A WebP encoder: lossy with `quality` 0...1, or lossless.
    public static func webp(quality: Double = 0.8, lossless: Bool = false) -> ImageEncoders.WebP {
        ImageEncoders.WebP(quality: quality, lossless: lossless)
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    package var milliseconds: Int {
        let parts = components
        return Int(parts.seconds) * 1000 + Int(parts.attoseconds / 1_000_000_000_000_000)
    }
}
