public import struct Foundation.Data
import CImageShims

extension ImageDecoders {
    /// Decodes PNG through libpng: every colour type and bit depth (1 to 16), palettes with
    /// and without tRNS transparency, Adam7 interlacing, and the eXIf orientation. 16-bit
    /// samples keep their high byte; gamma and colour-profile chunks are not applied.
    ///
    /// Output: ``PixelFormat/gray8`` for opaque gray, ``PixelFormat/rgb8`` for opaque colour,
    /// ``PixelFormat/rgba8`` whenever there is alpha or a transparent colour.
    ///
    /// Animated PNG (APNG) decodes to all its frames, composited with their blend and dispose
    /// operations, as ``PixelFormat/rgba8`` canvases; with ``ImageDecodingOptions/firstFrameOnly``
    /// it gives the default image. An APNG whose animation chunks are broken shows its default image.
    public struct PNG: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        public var format: ImageFormat { .png }

        public func canDecode(_ data: Data) -> Bool { ImageFormat.sniff(data) == .png }

        public func info(for data: Data) throws -> ImageInfo {
            let animation = APNG.structure(data)
            return try withDecoder(data) { _, header, orientation in
                ImageInfo(
                    format: .png, size: PixelSize(width: Int(header.width), height: Int(header.height)),
                    frameCount: animation?.frames.count ?? 1,
                    hasAlpha: header.channels == 4 || animation != nil, orientation: orientation,
                    loopCount: animation?.plays ?? 0, isProgressive: header.interlaced != 0)
            }
        }

        public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try options.validate()
            if !options.firstFrameOnly, let animation = APNG.structure(data) {
                // The header is checked (and its orientation read) by the still decoder's path.
                let orientation = try info(for: data).orientation
                var image = try APNG.decode(data, structure: animation, options: options)
                image.orientation = orientation
                if let requested = options.pixelFormat, requested != .rgba8 {
                    image = try image.mapFrames { $0.converted(to: requested) }
                }
                return options.applyOrientation ? image.applyingOrientation() : image
            }
            return try decodeStillImage(data, options: options)
        }

        /// Decodes the default image's bitmap only.
        func decodeStill(_ data: Data, options: ImageDecodingOptions) throws -> Bitmap {
            try decodeStillImage(data, options: options).bitmap
        }

        private func decodeStillImage(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try withDecoder(data) { decoder, header, orientation in
                let size = PixelSize(width: Int(header.width), height: Int(header.height))
                try options.checkFrame(size, format: .png)
                let natural: PixelFormat = header.channels == 1 ? .gray8 : header.channels == 3 ? .rgb8 : .rgba8
                let requested = options.pixelFormat ?? natural
                let decodeAs = requested == .rgba8 ? PixelFormat.rgba8 : natural
                var header = header
                let capacity = mg_png_fast_capacity(&header, Int32(decodeAs.channels))
                var bitmap = try Bitmap.make(
                    width: size.width, height: size.height, format: decodeAs, capacity: capacity
                ) { buffer in
                    guard let base = buffer.baseAddress else { throw ImageError.corrupt(.png, "no buffer") }
                    // libdeflate and our unfiltering for common 8-bit images; libpng for the rest
                    // and for anything unusual, which it reports precisely.
                    if mg_png_fast_decode(decoder, base, buffer.count, Int32(decodeAs.channels)) == 0 { return }
                    var channels: Int32 = 0
                    guard mg_png_prepare(decoder, Int32(decodeAs.channels), &channels) == 0,
                          mg_png_decode(decoder, base, size.width * decodeAs.channels) == 0 else {
                        throw Self.error(decoder)
                    }
                }
                if bitmap.format != requested { bitmap = bitmap.converted(to: requested) }
                let image = Image(bitmap: bitmap, format: .png, orientation: orientation)
                return options.applyOrientation ? image.applyingOrientation() : image
            }
        }

        private func withDecoder<T>(
            _ data: Data, _ body: (OpaquePointer, mg_png_info, ImageOrientation) throws -> T
        ) throws -> T {
            guard !data.isEmpty else { throw ImageError.empty }
            return try data.withUnsafeBytes { raw -> T in
                guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw ImageError.empty }
                guard let decoder = mg_png_decoder_create() else {
                    throw ImageError.corrupt(.png, "out of memory creating the decoder")
                }
                defer { mg_png_decoder_destroy(decoder) }
                var header = mg_png_info()
                guard mg_png_read_header(decoder, base, raw.count, &header) == 0 else { throw Self.error(decoder) }
                let orientation = EXIF.orientation(in: header.exif, count: header.exif_length) ?? .up
                return try body(decoder, header, orientation)
            }
        }

        private static func error(_ decoder: OpaquePointer) -> ImageError {
            let message = String(cString: mg_png_message(decoder))
            if mg_png_truncated(decoder) != 0 || message.contains("Not enough image data") {
                return .truncated(.png)
            }
            return .corrupt(.png, message.isEmpty ? "libpng failed" : message)
        }
    }
}

extension ImageDecoding where Self == ImageDecoders.PNG {
    /// The PNG decoder.
    public static var png: ImageDecoders.PNG { ImageDecoders.PNG() }
}
