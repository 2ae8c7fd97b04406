public import struct Foundation.Data
import CWebP

extension ImageDecoders {
    /// Decodes WebP through libwebp: lossy, lossless, alpha, and animations (composited by
    /// libwebp's animation decoder), with the EXIF orientation. Still images are scaled
    /// while decoding when a target size is given.
    ///
    /// Output: ``PixelFormat/rgb8`` for opaque still images, ``PixelFormat/rgba8`` otherwise.
    public struct WebP: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        public var format: ImageFormat { .webp }

        public func canDecode(_ data: Data) -> Bool { ImageFormat.sniff(data) == .webp }

        public func info(for data: Data) throws -> ImageInfo {
            try withBytes(data) { bytes in
                let features = try Self.features(bytes)
                let container = Self.container(bytes)
                return ImageInfo(
                    format: .webp, size: container?.size ?? PixelSize(width: Int(features.width), height: Int(features.height)),
                    frameCount: container?.frames ?? 1, hasAlpha: features.has_alpha != 0,
                    orientation: container?.orientation ?? .up, loopCount: container?.loopCount ?? 0)
            }
        }

        public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try options.validate()
            return try withBytes(data) { bytes in
                let features = try Self.features(bytes)
                let container = Self.container(bytes)
                let orientation = container?.orientation ?? .up
                var image: Image
                if features.has_animation != 0 {
                    guard let container else {
                        throw Self.isTruncated(bytes)
                            ? ImageError.truncated(.webp) : ImageError.corrupt(.webp, "cannot read the animation's container")
                    }
                    image = try Self.decodeAnimation(bytes, container: container, options: options)
                    image.orientation = orientation
                    // A file that declares no alpha is opaque: what the canvas leaves uncovered is black.
                    if features.has_alpha == 0 && options.pixelFormat == nil {
                        image = try image.mapFrames { $0.converted(to: .rgb8) }
                    }
                } else {
                    let size = PixelSize(width: Int(features.width), height: Int(features.height))
                    try options.checkFrame(size, format: .webp)
                    let alpha = features.has_alpha != 0
                    let bitmap = try Self.decodeStill(
                        bytes, size: size, alpha: alpha, options: options, target: options.storedTargetSize(for: orientation))
                    image = Image(bitmap: bitmap, format: .webp, orientation: orientation)
                }
                if let requested = options.pixelFormat, image.bitmap.format != requested {
                    image = try image.mapFrames { $0.converted(to: requested) }
                }
                return options.applyOrientation ? image.applyingOrientation() : image
            }
        }

        private func withBytes<T>(_ data: Data, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) throws -> T {
            guard !data.isEmpty else { throw ImageError.empty }
            return try data.withUnsafeBytes { raw in try body(raw.bindMemory(to: UInt8.self)) }
        }

        private static func features(_ bytes: UnsafeBufferPointer<UInt8>) throws -> WebPBitstreamFeatures {
            var features = WebPBitstreamFeatures()
            let status = WebPGetFeatures(bytes.baseAddress, bytes.count, &features)
            guard status == VP8_STATUS_OK else { throw error(status) }
            return features
        }

        /// Whether the RIFF header promises more bytes than there are.
        private static func isTruncated(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard bytes.count >= 8 else { return true }
            let riffSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
            return riffSize + 8 > bytes.count
        }

        static func error(_ status: VP8StatusCode) -> ImageError {
            switch status {
            case VP8_STATUS_NOT_ENOUGH_DATA: return .truncated(.webp)
            case VP8_STATUS_OUT_OF_MEMORY: return .corrupt(.webp, "out of memory")
            case VP8_STATUS_UNSUPPORTED_FEATURE: return .corrupt(.webp, "unsupported feature")
            case VP8_STATUS_INVALID_PARAM: return .corrupt(.webp, "invalid parameter")
            default: return .corrupt(.webp, "malformed bitstream (status \(status.rawValue))")
            }
        }

        /// What the extended (VP8X) container says: canvas, frame count, loop count, EXIF.
        private struct Container {
            var size: PixelSize
            var frames: Int
            var loopCount: Int
            var orientation: ImageOrientation?
        }

        private static func container(_ bytes: UnsafeBufferPointer<UInt8>) -> Container? {
            var data = WebPData(bytes: bytes.baseAddress, size: bytes.count)
            guard let demux = WebPDemux(&data) else { return nil }
            defer { WebPDemuxDelete(demux) }
            var container = Container(
                size: PixelSize(
                    width: Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH)),
                    height: Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT))),
                frames: Int(WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT)),
                loopCount: Int(WebPDemuxGetI(demux, WEBP_FF_LOOP_COUNT)))
            if WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS) & UInt32(EXIF_FLAG.rawValue) != 0 {
                var chunk = WebPChunkIterator()
                if WebPDemuxGetChunk(demux, "EXIF", 1, &chunk) != 0 {
                    var exif = UnsafeRawBufferPointer(start: chunk.chunk.bytes, count: chunk.chunk.size)
                    // Some writers keep JPEG's "Exif\0\0" prefix.
                    if exif.count > 6, exif.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) {
                        exif = UnsafeRawBufferPointer(rebasing: exif[6...])
                    }
                    container.orientation = EXIF.orientation(in: exif)
                    WebPDemuxReleaseChunkIterator(&chunk)
                }
            }
            return container
        }

        /// The decoded size for `target`: the smallest that covers it, keeping the aspect ratio.
        static func scaledSize(_ size: PixelSize, target: PixelSize?) -> PixelSize? {
            guard let target else { return nil }
            let sx = Double(target.width) / Double(size.width), sy = Double(target.height) / Double(size.height)
            let scale = max(sx, sy)
            guard scale < 1 else { return nil }
            let w = min(size.width, max(1, Int((Double(size.width) * scale).rounded(.up))))
            let h = min(size.height, max(1, Int((Double(size.height) * scale).rounded(.up))))
            return PixelSize(width: w, height: h)
        }

        private static func decodeStill(
            _ bytes: UnsafeBufferPointer<UInt8>, size: PixelSize, alpha: Bool, options: ImageDecodingOptions,
            target: PixelSize?
        ) throws -> Bitmap {
            var config = WebPDecoderConfig()
            guard WebPInitDecoderConfig(&config) != 0 else { throw ImageError.corrupt(.webp, "libwebp version mismatch") }
            let output = scaledSize(size, target: target) ?? size
            if output != size {
                config.options.use_scaling = 1
                config.options.scaled_width = Int32(output.width)
                config.options.scaled_height = Int32(output.height)
            }
            let format: PixelFormat = alpha || options.pixelFormat == .rgba8 ? .rgba8 : .rgb8
            config.output.colorspace = format == .rgba8 ? MODE_RGBA : MODE_RGB
            config.output.is_external_memory = 1
            return try Bitmap.make(width: output.width, height: output.height, format: format) { buffer in
                config.output.u.RGBA.rgba = buffer.baseAddress
                config.output.u.RGBA.stride = Int32(output.width * format.channels)
                config.output.u.RGBA.size = buffer.count
                let status = WebPDecode(bytes.baseAddress, bytes.count, &config)
                WebPFreeDecBuffer(&config.output)
                guard status == VP8_STATUS_OK else { throw error(status) }
            }
        }

        private static func decodeAnimation(
            _ bytes: UnsafeBufferPointer<UInt8>, container: Container, options: ImageDecodingOptions
        ) throws -> Image {
            try options.checkFrame(container.size, format: .webp)
            if !options.firstFrameOnly {
                try options.checkAnimation(frames: container.frames, size: container.size, format: .webp)
            }
            var animOptions = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&animOptions) != 0 else {
                throw ImageError.corrupt(.webp, "libwebp version mismatch")
            }
            animOptions.color_mode = MODE_RGBA
            animOptions.use_threads = 0
            var data = WebPData(bytes: bytes.baseAddress, size: bytes.count)
            guard let decoder = WebPAnimDecoderNew(&data, &animOptions) else {
                throw ImageError.corrupt(.webp, "cannot read the animation")
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw ImageError.corrupt(.webp, "cannot read the animation") }
            let size = PixelSize(width: Int(info.canvas_width), height: Int(info.canvas_height))
            try options.checkFrame(size, format: .webp)
            var frames: [ImageFrame] = []
            var previous: Int32 = 0
            while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                var pixels: UnsafeMutablePointer<UInt8>?
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &pixels, &timestamp) != 0, let pixels else {
                    throw ImageError.corrupt(.webp, "cannot decode frame \(frames.count + 1)")
                }
                let bitmap = try Bitmap.make(width: size.width, height: size.height, format: .rgba8) { buffer in
                    buffer.baseAddress?.update(from: pixels, count: buffer.count)
                }
                frames.append(ImageFrame(bitmap: bitmap, duration: .milliseconds(Int(timestamp - previous))))
                previous = timestamp
                if options.firstFrameOnly { break }
            }
            guard !frames.isEmpty else { throw ImageError.corrupt(.webp, "the animation has no frames") }
            return Image(uncheckedFrames: frames, loopCount: Int(info.loop_count), format: .webp, orientation: .up)
        }
    }
}

extension ImageDecoding where Self == ImageDecoders.WebP {
    /// The WebP decoder.
    public static var webp: ImageDecoders.WebP { ImageDecoders.WebP() }
}
