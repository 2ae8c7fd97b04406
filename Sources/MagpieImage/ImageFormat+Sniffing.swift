public import struct Foundation.Data

extension ImageFormat {
    /// How many leading bytes ``sniff(_:)`` looks at.
    public static let sniffLength = 32

    /// The format whose signature starts `data`, or `nil` when none matches.
    ///
    /// Only the first bytes decide; file names and Content-Type headers lie too often.
    public static func sniff(_ data: Data) -> ImageFormat? {
        let prefix = [UInt8](data.prefix(sniffLength))
        return sniff(bytes: prefix)
    }

    /// The format whose signature starts `bytes`, or `nil` when none matches.
    public static func sniff(bytes: [UInt8]) -> ImageFormat? {
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + signature.count else { return false }
            for (i, byte) in signature.enumerated() where bytes[offset + i] != byte { return false }
            return true
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }

        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if ascii("GIF87a") || ascii("GIF89a") { return .gif }
        if ascii("RIFF") && ascii("WEBP", at: 8) { return .webp }
        if ascii("ftyp", at: 4) { return isoMediaFormat(bytes) }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            return .jpegXL
        }
        if ascii("BM") && bytes.count >= 18 {
            let headerSize = Int(bytes[14]) | Int(bytes[15]) << 8 | Int(bytes[16]) << 16 | Int(bytes[17]) << 24
            if [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize) { return .bmp }
        }
        if bytes.count >= 6, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 || bytes[2] == 2, bytes[3] == 0,
           bytes[4] != 0 || bytes[5] != 0 {
            return .ico
        }
        return nil
    }

    /// AVIF or HEIC from an ISO base media `ftyp` box: the major brand, then the compatible ones.
    private static func isoMediaFormat(_ bytes: [UInt8]) -> ImageFormat? {
        guard bytes.count >= 12 else { return nil }
        let boxSize = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        var brands: [String] = []
        var offset = 8
        let end = min(bytes.count, max(boxSize, 16))
        while offset + 4 <= end {
            if offset != 12 {  // bytes 12..<16 are the minor version
                brands.append(String(decoding: bytes[offset..<offset + 4], as: UTF8.self))
            }
            offset += 4
        }
        for brand in brands {
            switch brand {
            case "avif", "avis": return .avif
            case "heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1": return .heic
            default: continue
            }
        }
        return nil
    }
}
