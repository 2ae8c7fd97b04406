public import struct Foundation.Data

extension ImageDecoders {
    /// Decodes ICO and CUR files: the largest entry (most pixels, then most bits per pixel),
    /// stored as PNG or as a bitmap with its 1-bit transparency mask.
    ///
    /// Output: ``PixelFormat/rgba8``. A 32-bit bitmap entry takes its alpha from its fourth
    /// byte when any is non-zero, from the mask otherwise.
    public struct ICO: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        public var format: ImageFormat { .ico }

        public func canDecode(_ data: Data) -> Bool { ImageFormat.sniff(data) == .ico }

        /// The directory entry chosen: where its data is and how large it says it is.
        private struct Entry {
            var width: Int
            var height: Int
            var bitCount: Int
            var offset: Int
            var length: Int
        }

        private func largestEntry(_ b: [UInt8]) throws -> Entry {
            guard b.count >= 6 else { throw ImageError.truncated(.ico) }
            let count = Int(DIB.u16(b, 4))
            guard count > 0 else { throw ImageError.corrupt(.ico, "the directory lists no images") }
            guard b.count >= 6 + count * 16 else { throw ImageError.truncated(.ico) }
            var best: Entry?
            for i in 0..<count {
                let e = 6 + i * 16
                let entry = Entry(
                    width: b[e] == 0 ? 256 : Int(b[e]), height: b[e + 1] == 0 ? 256 : Int(b[e + 1]),
                    bitCount: Int(DIB.u16(b, e + 6)), offset: Int(DIB.u32(b, e + 12)), length: Int(DIB.u32(b, e + 8)))
                if let current = best,
                   (current.width * current.height, current.bitCount) >= (entry.width * entry.height, entry.bitCount) {
                    continue
                }
                best = entry
            }
            guard let best, best.offset >= 6 + count * 16, best.offset < b.count else {
                throw ImageError.truncated(.ico)
            }
            return best
        }

        public func info(for data: Data) throws -> ImageInfo {
            let b = [UInt8](data)
            let entry = try largestEntry(b)
            let slice = Data(b[entry.offset...])
            if ImageFormat.sniff(slice) == .png {
                let png = try ImageDecoders.PNG().info(for: slice)
                return ImageInfo(format: .ico, size: png.size, hasAlpha: true)
            }
            let dib = try DIB(b, at: entry.offset, format: .ico, icon: true)
            return ImageInfo(format: .ico, size: dib.size, hasAlpha: true)
        }

        public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try options.validate()
            let b = [UInt8](data)
            let entry = try largestEntry(b)
            let slice = Data(b[entry.offset...])
            var bitmap: Bitmap
            if ImageFormat.sniff(slice) == .png {
                var pngOptions = options
                pngOptions.pixelFormat = .rgba8
                pngOptions.firstFrameOnly = true
                do {
                    bitmap = try ImageDecoders.PNG().decode(slice, options: pngOptions).bitmap
                } catch let error as ImageError where error.kind == .tooLarge {
                    throw ImageError.tooLarge(.ico, size: error.size ?? PixelSize(width: 0, height: 0), limit: options.maxPixelCount)
                }
            } else {
                let dib = try DIB(b, at: entry.offset, format: .ico, icon: true)
                try options.checkFrame(dib.size, format: .ico)
                bitmap = try decodeBitmapEntry(b, dib: dib, at: entry.offset)
            }
            if let requested = options.pixelFormat, requested != bitmap.format { bitmap = bitmap.converted(to: requested) }
            return Image(bitmap: bitmap, format: .ico)
        }

        /// The colour rows, then the AND mask (1 = transparent) for the alpha.
        private func decodeBitmapEntry(_ b: [UInt8], dib: DIB, at offset: Int) throws -> Bitmap {
            let pixelsAt = dib.headerEnd + dib.palette.count * 4
            let colour = try dib.decode(b, pixelsAt: pixelsAt).converted(to: .rgba8)
            let width = dib.size.width, height = dib.size.height
            var pixels = colour.pixels
            // A 32-bit entry carries alpha in its fourth byte; read it when any is set.
            var usesAlphaByte = false
            if dib.bitCount == 32 {
                let rowBytes = dib.rowBytes
                for row in 0..<height where !usesAlphaByte {
                    let start = pixelsAt + row * rowBytes
                    for x in 0..<width where b[start + x * 4 + 3] != 0 {
                        usesAlphaByte = true
                        break
                    }
                }
                if usesAlphaByte {
                    for row in 0..<height {
                        let y = dib.topDown ? row : height - 1 - row
                        let start = pixelsAt + row * rowBytes
                        for x in 0..<width { pixels[(y * width + x) * 4 + 3] = b[start + x * 4 + 3] }
                    }
                }
            }
            if !usesAlphaByte {
                let maskAt = pixelsAt + dib.rowBytes * height
                let maskRow = ((width + 31) / 32) * 4
                if maskAt + maskRow * height <= b.count {
                    for row in 0..<height {
                        let y = dib.topDown ? row : height - 1 - row
                        let start = maskAt + row * maskRow
                        for x in 0..<width where (b[start + x / 8] >> (7 - x % 8)) & 1 == 1 {
                            pixels[(y * width + x) * 4 + 3] = 0
                        }
                    }
                }
            }
            return Bitmap(unchecked: width, height: height, format: .rgba8, pixels: pixels)
        }
    }
}

extension ImageDecoding where Self == ImageDecoders.ICO {
    /// The ICO and CUR decoder.
    public static var ico: ImageDecoders.ICO { ImageDecoders.ICO() }
}
