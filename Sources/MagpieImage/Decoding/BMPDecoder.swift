public import struct Foundation.Data

extension ImageDecoders {
    /// Decodes BMP (Windows and OS/2 bitmaps) in Swift: 1, 2, 4 and 8-bit palettes, 16, 24 and
    /// 32-bit colour, RLE8 and RLE4 compression, bit-field masks (with alpha from V3 headers
    /// on), top-down and bottom-up rows.
    ///
    /// Output: ``PixelFormat/rgb8``, or ``PixelFormat/rgba8`` when an alpha mask is given.
    /// A 32-bit file without masks keeps its fourth byte unused, as Windows does. Pixels an RLE
    /// file skips take palette entry 0.
    public struct BMP: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        public var format: ImageFormat { .bmp }

        public func canDecode(_ data: Data) -> Bool { ImageFormat.sniff(data) == .bmp }

        public func info(for data: Data) throws -> ImageInfo {
            let bytes = [UInt8](data)
            guard bytes.count >= 14 else { throw ImageError.truncated(.bmp) }
            let dib = try DIB(bytes, at: 14, format: .bmp)
            return ImageInfo(format: .bmp, size: dib.size, hasAlpha: dib.alphaMask != 0)
        }

        public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try options.validate()
            let bytes = [UInt8](data)
            guard bytes.count >= 14 else { throw ImageError.truncated(.bmp) }
            let dib = try DIB(bytes, at: 14, format: .bmp)
            try options.checkFrame(dib.size, format: .bmp)
            let pixelOffset = Int(DIB.u32(bytes, 10))
            var bitmap = try dib.decode(bytes, pixelsAt: pixelOffset)
            if let requested = options.pixelFormat, requested != bitmap.format { bitmap = bitmap.converted(to: requested) }
            return Image(bitmap: bitmap, format: .bmp)
        }
    }
}

extension ImageDecoding where Self == ImageDecoders.BMP {
    /// The BMP decoder.
    public static var bmp: ImageDecoders.BMP { ImageDecoders.BMP() }
}

/// A device-independent bitmap: the header after BMP's file header, also found inside ICO files.
struct DIB {
    let format: ImageFormat
    let size: PixelSize
    let topDown: Bool
    let bitCount: Int
    let compression: UInt32
    let headerEnd: Int              // where the palette (or masks of a 40-byte header) start
    let palette: [(UInt8, UInt8, UInt8)]
    let masks: (red: UInt32, green: UInt32, blue: UInt32)
    let alphaMask: UInt32
    let storedHeight: Int           // ICO: twice the height (colour rows, then the AND mask)

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    /// Reads the header at `start`. In an icon (`icon`), the height counts the mask too.
    init(_ b: [UInt8], at start: Int, format: ImageFormat, icon: Bool = false) throws {
        self.format = format
        guard b.count >= start + 4 else { throw ImageError.truncated(format) }
        let headerSize = Int(Self.u32(b, start))
        guard [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize) else {
            throw ImageError.corrupt(format, "unknown bitmap header size \(headerSize)")
        }
        guard b.count >= start + headerSize else { throw ImageError.truncated(format) }
        var width: Int, height: Int, compression: UInt32 = 0, colorsUsed = 0
        if headerSize == 12 {
            width = Int(Self.u16(b, start + 4))
            height = Int(Self.u16(b, start + 6))
            bitCount = Int(Self.u16(b, start + 10))
        } else {
            width = Int(Int32(bitPattern: Self.u32(b, start + 4)))
            height = Int(Int32(bitPattern: Self.u32(b, start + 8)))
            bitCount = Int(Self.u16(b, start + 14))
            if headerSize >= 20 { compression = Self.u32(b, start + 16) }
            if headerSize >= 36 { colorsUsed = Int(Self.u32(b, start + 32)) }
        }
        topDown = height < 0
        height = abs(height)
        storedHeight = height
        if icon { height /= 2 }
        guard width > 0, height > 0 else { throw ImageError.corrupt(format, "the header declares \(width)x\(height)") }
        size = PixelSize(width: width, height: height)
        self.compression = compression
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else {
            throw ImageError.corrupt(format, "unsupported bit count \(bitCount)")
        }
        switch compression {
        case 0, 3, 6: break
        case 1 where bitCount == 8, 2 where bitCount == 4: break
        default: throw ImageError.corrupt(format, "unsupported compression \(compression) at \(bitCount) bits")
        }

        // Masks: in the header from V2 (52 bytes) on, else right after a 40-byte header.
        var position = start + headerSize
        var red: UInt32 = 0, green: UInt32 = 0, blue: UInt32 = 0, alpha: UInt32 = 0
        if compression == 3 || compression == 6 {
            let maskStart = headerSize >= 52 ? start + 40 : position
            guard b.count >= maskStart + 12 else { throw ImageError.truncated(format) }
            red = Self.u32(b, maskStart); green = Self.u32(b, maskStart + 4); blue = Self.u32(b, maskStart + 8)
            if headerSize >= 56 || compression == 6 {
                guard b.count >= maskStart + 16 else { throw ImageError.truncated(format) }
                alpha = Self.u32(b, maskStart + 12)
            }
            if headerSize < 52 { position += compression == 6 ? 16 : 12 }
        } else if bitCount == 16 {
            (red, green, blue) = (0x7C00, 0x03E0, 0x001F)
        } else if bitCount >= 24 {
            (red, green, blue) = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF)
        }
        masks = (red, green, blue)
        alphaMask = bitCount == 32 || bitCount == 16 ? alpha : 0
        headerEnd = position

        // The palette.
        var palette: [(UInt8, UInt8, UInt8)] = []
        if bitCount <= 8 {
            let entrySize = headerSize == 12 ? 3 : 4
            let count = colorsUsed > 0 ? min(colorsUsed, 1 << bitCount) : 1 << bitCount
            for i in 0..<count {
                let p = position + i * entrySize
                guard p + 3 <= b.count else { break }
                palette.append((b[p + 2], b[p + 1], b[p]))
            }
            guard !palette.isEmpty else { throw ImageError.truncated(format) }
        }
        self.palette = palette
    }

    /// Bytes per stored row, padded to 4.
    var rowBytes: Int { ((size.width * bitCount + 31) / 32) * 4 }

    /// Decodes the pixels starting at `offset`.
    func decode(_ b: [UInt8], pixelsAt offset: Int) throws -> Bitmap {
        let format: PixelFormat = alphaMask != 0 ? .rgba8 : .rgb8
        let width = size.width, height = size.height, c = format.channels
        guard offset >= 0, offset <= b.count else { throw ImageError.truncated(self.format) }
        if compression == 1 || compression == 2 {
            return try Bitmap.make(width: width, height: height, format: format) { out in
                try decodeRLE(b, at: offset, into: out)
            }
        }
        guard offset + rowBytes * height <= b.count else { throw ImageError.truncated(self.format) }
        return try Bitmap.make(width: width, height: height, format: format) { out in
            for row in 0..<height {
                let y = topDown ? row : height - 1 - row
                let source = offset + row * rowBytes
                let target = y * width * c
                decodeRow(b, source, out, target, c)
            }
        }
    }

    private func decodeRow(_ b: [UInt8], _ source: Int, _ out: UnsafeMutableBufferPointer<UInt8>, _ target: Int, _ c: Int) {
        let width = size.width
        switch bitCount {
        case 1, 2, 4, 8:
            let perByte = 8 / bitCount, mask = (1 << bitCount) - 1
            for x in 0..<width {
                let byte = Int(b[source + x / perByte])
                let index = (byte >> (8 - bitCount * (x % perByte + 1))) & mask
                let color = index < palette.count ? palette[index] : (0, 0, 0)
                out[target + x * c] = color.0; out[target + x * c + 1] = color.1; out[target + x * c + 2] = color.2
                if c == 4 { out[target + x * c + 3] = 255 }
            }
        case 24 where compression == 0:
            for x in 0..<width {
                let s = source + x * 3
                out[target + x * c] = b[s + 2]; out[target + x * c + 1] = b[s + 1]; out[target + x * c + 2] = b[s]
                if c == 4 { out[target + x * c + 3] = 255 }
            }
        default:
            let bytes = bitCount / 8
            for x in 0..<width {
                let s = source + x * bytes
                let value = bytes == 2 ? UInt32(DIB.u16(b, s)) : bytes == 3
                    ? UInt32(b[s]) | UInt32(b[s + 1]) << 8 | UInt32(b[s + 2]) << 16 : DIB.u32(b, s)
                out[target + x * c] = Self.channel(value, masks.red)
                out[target + x * c + 1] = Self.channel(value, masks.green)
                out[target + x * c + 2] = Self.channel(value, masks.blue)
                if c == 4 { out[target + x * c + 3] = Self.channel(value, alphaMask) }
            }
        }
    }

    /// The masked bits of `value`, scaled to 0...255.
    static func channel(_ value: UInt32, _ mask: UInt32) -> UInt8 {
        guard mask != 0 else { return 0 }
        let shift = mask.trailingZeroBitCount
        let field = mask >> shift
        // Only contiguous masks (a run of ones) describe a channel; others read as 0.
        guard field & (field &+ 1) == 0 else { return 0 }
        let bits = field.nonzeroBitCount
        let raw = (value & mask) >> shift
        guard bits > 0 else { return 0 }
        if bits >= 8 { return UInt8(truncatingIfNeeded: raw >> (bits - 8)) }
        // Scaled to the full range, rounded down (as Pillow does).
        let maximum = (UInt32(1) << bits) - 1
        return UInt8(raw * 255 / maximum)
    }

    /// RLE8 and RLE4: runs, literal runs, end of line, delta and end of bitmap.
    private func decodeRLE(_ b: [UInt8], at offset: Int, into out: UnsafeMutableBufferPointer<UInt8>) throws {
        let width = size.width, height = size.height, c = out.count / (width * height)
        let background = palette[0]
        for i in 0..<(width * height) {
            out[i * c] = background.0; out[i * c + 1] = background.1; out[i * c + 2] = background.2
            if c == 4 { out[i * c + 3] = 255 }
        }
        func put(_ x: Int, _ row: Int, _ index: Int) {
            guard x < width, row < height else { return }
            let y = topDown ? row : height - 1 - row
            let color = index < palette.count ? palette[index] : (0, 0, 0)
            let t = (y * width + x) * c
            out[t] = color.0; out[t + 1] = color.1; out[t + 2] = color.2
        }
        let four = compression == 2
        var p = offset, x = 0, row = 0
        while row < height {
            guard p + 2 <= b.count else { throw ImageError.truncated(format) }
            let count = Int(b[p]), value = Int(b[p + 1])
            p += 2
            if count > 0 {
                for i in 0..<count {
                    put(x, row, four ? (i % 2 == 0 ? value >> 4 : value & 0x0F) : value)
                    x += 1
                }
                continue
            }
            switch value {
            case 0: x = 0; row += 1
            case 1: return
            case 2:
                guard p + 2 <= b.count else { throw ImageError.truncated(format) }
                x += Int(b[p]); row += Int(b[p + 1]); p += 2
            default:
                let bytes = four ? (value + 1) / 2 : value
                guard p + bytes <= b.count else { throw ImageError.truncated(format) }
                for i in 0..<value {
                    let byte = Int(b[p + (four ? i / 2 : i)])
                    put(x, row, four ? (i % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                    x += 1
                }
                p += bytes + (bytes % 2)  // literal runs are padded to 16 bits
            }
        }
    }
}
