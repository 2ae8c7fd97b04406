public import struct Foundation.Data
import CImageShims

extension ImageEncoders {
    /// Encodes JPEG through libjpeg-turbo (4:2:0 chroma subsampling, as most encoders do).
    ///
    /// JPEG has no alpha: transparent pixels are composited over ``background``. Animations
    /// give their first frame. An orientation other than ``ImageOrientation/up`` is written
    /// as EXIF so that viewers still show the image upright.
    public struct JPEG: ImageEncoding {
        /// The compression quality, 0...1 (SJNetwork's compression ratio); libjpeg's 1...100.
        /// 0.8 by default.
        public var quality: Double
        /// Write a progressive JPEG, which shows coarse-to-fine while it loads. `false` by default.
        public var progressive: Bool
        /// The colour transparent pixels are composited over. White by default.
        public var background: (red: UInt8, green: UInt8, blue: UInt8)

        /// An encoder with the given settings.
        public init(quality: Double = 0.8, progressive: Bool = false, background: (red: UInt8, green: UInt8, blue: UInt8) = (255, 255, 255)) {
            self.quality = quality
            self.progressive = progressive
            self.background = background
        }

        public var format: ImageFormat { .jpeg }

        public func encode(_ image: Image) throws -> Data {
            try ImageEncoders.check(quality: quality, .jpeg)
            let bitmap = image.bitmap
            guard bitmap.width <= 65_500, bitmap.height <= 65_500 else {
                throw ImageError.encodingFailed(.jpeg, "JPEG allows at most 65500 pixels a side, not \(bitmap.size)")
            }
            let exif = image.orientation == .up ? [] : EXIF.tiff(orientation: image.orientation)
            let libjpegQuality = max(1, min(100, Int32((quality * 100).rounded())))
            let background = [self.background.red, self.background.green, self.background.blue]
            var output: UnsafeMutablePointer<UInt8>?
            var length = 0
            var message = [CChar](repeating: 0, count: 256)
            let status = bitmap.pixels.withUnsafeBufferPointer { pixels in
                guard let base = pixels.baseAddress else { return Int32(-1) }
                return exif.withUnsafeBufferPointer { exifBytes in
                    mg_jpeg_encode(
                        base, UInt32(bitmap.width), UInt32(bitmap.height), bitmap.bytesPerRow,
                        Int32(bitmap.format.channels), libjpegQuality, progressive ? 1 : 0, background,
                        exifBytes.baseAddress, exifBytes.count, &output, &length, &message)
                }
            }
            guard status == 0 else {
                throw ImageError.encodingFailed(.jpeg, String(cMessage: message))
            }
            return Data(takingMalloced: output, count: length, free: mg_free)
        }
    }
}

extension ImageEncoding where Self == ImageEncoders.JPEG {
    /// A JPEG encoder with `quality` 0...1.
    public static func jpeg(quality: Double = 0.8, progressive: Bool = false) -> ImageEncoders.JPEG {
        ImageEncoders.JPEG(quality: quality, progressive: progressive)
    }
}
