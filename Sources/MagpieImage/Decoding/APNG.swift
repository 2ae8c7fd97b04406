import struct Foundation.Data

/// Animated PNG support: libpng (as Debian builds it) has no APNG, so the chunks are read
/// here and each frame is decoded by libpng as a small PNG of its own.
enum APNG {
    /// Whether `data` is a PNG with an `acTL` chunk before its first `IDAT`.
    static func isAnimated(_ data: Data) -> Bool {
        var found = false
        PNGChunks.walk(data) { type, _ in
            if type == "acTL" { found = true; return false }
            return type != "IDAT"
        }
        return found
    }
}

/// Walks the chunks of a PNG.
enum PNGChunks {
    /// Calls `body` with each chunk's type and data range until it returns false or the data ends.
    static func walk(_ data: Data, _ body: (String, Range<Int>) -> Bool) {
        var offset = data.startIndex + 8
        while offset + 8 <= data.endIndex {
            let length = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            let type = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let start = offset + 8
            guard length >= 0, start + length <= data.endIndex else { return }
            if !body(type, start..<(start + length)) { return }
            offset = start + length + 4
        }
    }
}
