public import struct Foundation.Data
import CImageShims

extension ImageEncoders {
    /// Encodes PNG through libpng: 8-bit gray, RGB or RGBA as the bitmap is, with adaptive
    /// filtering. Animations give their first frame. An orientation other than
    /// ``ImageOrientation/up`` is written as an eXIf chunk.
    public struct PNG: ImageEncoding {
        /// zlib's compression level, 0 (none, fastest) to 9 (smallest). 6 by default.
        public var compressionLevel: Int

        /// Adam7 interlacing: a decoder can show a coarse whole picture after 1/64 of the data.
        /// `false` by default.
        public var interlaced = false

        /// An encoder with the given level and interlacing.
        public init(compressionLevel: Int = 6, interlaced: Bool = false) {
            self.interlaced = interlaced
            self.compressionLevel = compressionLevel
        }

        public var format: ImageFormat { .png }

        public func encode(_ image: Image) throws -> Data {
            guard (0...9).contains(compressionLevel) else {
                throw ImageError.invalidArgument("PNG compression level must be within 0...9, not \(compressionLevel)")
            }
            let bitmap = image.bitmap
            let exif = image.orientation == .up ? [] : EXIF.tiff(orientation: image.orientation)
            var output: UnsafeMutablePointer<UInt8>?
            var length = 0
            var message = [CChar](repeating: 0, count: 256)
            let status = bitmap.pixels.withUnsafeBufferPointer { pixels in
                guard let base = pixels.baseAddress else { return Int32(-1) }
                return exif.withUnsafeBufferPointer { exifBytes in
                    mg_png_encode(
                        base, UInt32(bitmap.width), UInt32(bitmap.height), bitmap.bytesPerRow,
                        Int32(bitmap.format.channels), Int32(compressionLevel), interlaced ? 1 : 0,
                        exifBytes.baseAddress, exifBytes.count, &output, &length, &message)
                }
            }
            guard status == 0 else {
                throw ImageError.encodingFailed(.png, String(cMessage: message))
            }
            return Data(takingMalloced: output, count: length, free: mg_free)
        }
    }
}

extension ImageEncoding where Self == ImageEncoders.PNG {
    /// A PNG encoder.
    public static func png(compressionLevel: Int = 6, interlaced: Bool = false) -> ImageEncoders.PNG {
        ImageEncoders.PNG(compressionLevel: compressionLevel, interlaced: interlaced)
    }
}
