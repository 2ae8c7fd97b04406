public import struct Foundation.Data
import CImageShims

extension ImageDecoders {
    /// Decodes JPEG through libjpeg-turbo: baseline and progressive, gray, RGB, YCbCr,
    /// CMYK and YCCK (Adobe-inverted or not; converted to RGB), restart markers, and the
    /// EXIF orientation. Downsamples by DCT scaling when a target size is given.
    ///
    /// Output: ``PixelFormat/gray8`` for gray files, ``PixelFormat/rgb8`` otherwise.
    public struct JPEG: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        public var format: ImageFormat { .jpeg }

        public func canDecode(_ data: Data) -> Bool {
            data.count >= 3 && data[data.startIndex] == 0xFF && data[data.startIndex + 1] == 0xD8
                && data[data.startIndex + 2] == 0xFF
        }

        public func info(for data: Data) throws -> ImageInfo {
            try withDecoder(data) { decoder, header, orientation in
                ImageInfo(
                    format: .jpeg, size: PixelSize(width: Int(header.width), height: Int(header.height)),
                    hasAlpha: false, orientation: orientation, isProgressive: header.progressive != 0)
            }
        }

        public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try options.validate()
            return try withDecoder(data) { decoder, header, orientation in
                let size = PixelSize(width: Int(header.width), height: Int(header.height))
                try options.checkFrame(size, format: .jpeg)
                let gray = header.color_space == Int32(MG_JPEG_COLOR_GRAY)
                let pixelFormat = options.pixelFormat ?? (gray ? .gray8 : .rgb8)
                let scale = Self.scaleNumerator(size: size, target: options.storedTargetSize(for: orientation))
                var width: UInt32 = 0, height: UInt32 = 0
                guard mg_jpeg_prepare(decoder, Int32(pixelFormat.channels), Int32(scale), &width, &height) == 0 else {
                    throw Self.error(decoder)
                }
                let bitmap = try Bitmap.make(width: Int(width), height: Int(height), format: pixelFormat) { buffer in
                    guard let base = buffer.baseAddress,
                          mg_jpeg_decode(decoder, base, Int(width) * pixelFormat.channels) == 0 else {
                        throw Self.error(decoder)
                    }
                }
                let image = Image(bitmap: bitmap, format: .jpeg, orientation: orientation)
                return options.applyOrientation ? image.applyingOrientation() : image
            }
        }

        /// The smallest `n` in 1...8 for which an `n/8` scale still covers `target`.
        static func scaleNumerator(size: PixelSize, target: PixelSize?) -> Int {
            guard let target else { return 8 }
            for n in 1...8 {
                let w = (size.width * n + 7) / 8, h = (size.height * n + 7) / 8
                if w >= target.width && h >= target.height { return n }
            }
            return 8
        }

        private func withDecoder<T>(
            _ data: Data, _ body: (OpaquePointer, mg_jpeg_info, ImageOrientation) throws -> T
        ) throws -> T {
            guard !data.isEmpty else { throw ImageError.empty }
            return try data.withUnsafeBytes { raw -> T in
                guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw ImageError.empty }
                guard let decoder = mg_jpeg_decoder_create() else {
                    throw ImageError.corrupt(.jpeg, "out of memory creating the decoder")
                }
                defer { mg_jpeg_decoder_destroy(decoder) }
                var header = mg_jpeg_info()
                guard mg_jpeg_read_header(decoder, base, raw.count, &header) == 0 else { throw Self.error(decoder) }
                let orientation = EXIF.orientation(in: header.exif, count: header.exif_length) ?? .up
                return try body(decoder, header, orientation)
            }
        }

        private static func error(_ decoder: OpaquePointer) -> ImageError {
            let message = String(cString: mg_jpeg_message(decoder))
            if mg_jpeg_truncated(decoder) != 0 || message.contains("Premature end") {
                return .truncated(.jpeg)
            }
            return .corrupt(.jpeg, message.isEmpty ? "libjpeg failed" : message)
        }
    }
}

extension ImageDecoding where Self == ImageDecoders.JPEG {
    /// The JPEG decoder.
    public static var jpeg: ImageDecoders.JPEG { ImageDecoders.JPEG() }
}
