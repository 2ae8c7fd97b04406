/// The little of EXIF that Magpie needs: reading and writing the orientation tag.
///
/// EXIF is a TIFF structure: a byte-order mark ("II" little-endian or "MM" big-endian), the
/// number 42, the offset of the first directory (IFD0), and in it 12-byte entries of tag,
/// type, count and value. Orientation is tag 0x0112, a SHORT.
enum EXIF {
    static let orientationTag: UInt16 = 0x0112

    /// The orientation in a TIFF structure, or `nil` when absent or malformed.
    static func orientation(in tiff: UnsafeRawBufferPointer) -> ImageOrientation? {
        guard tiff.count >= 8 else { return nil }
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ offset: Int) -> UInt16? {
            guard offset >= 0, offset + 2 <= tiff.count else { return nil }
            let a = UInt16(tiff[offset]), b = UInt16(tiff[offset + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> UInt32? {
            guard let high = u16(littleEndian ? offset + 2 : offset),
                  let low = u16(littleEndian ? offset : offset + 2) else { return nil }
            return UInt32(high) << 16 | UInt32(low)
        }
        guard u16(2) == 42, let ifd = u32(4).map(Int.init), let count = u16(ifd) else { return nil }
        for index in 0..<Int(count) {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == orientationTag else { continue }
            guard let type = u16(entry + 2), type == 3, let value = u16(entry + 8) else { return nil }
            return ImageOrientation(rawValue: Int(value))
        }
        return nil
    }

    /// The orientation in a TIFF structure held by `bytes`.
    static func orientation(in bytes: UnsafePointer<UInt8>?, count: Int) -> ImageOrientation? {
        guard let bytes, count > 0 else { return nil }
        return orientation(in: UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// A minimal big-endian TIFF structure holding only `orientation`.
    static func tiff(orientation: ImageOrientation) -> [UInt8] {
        let value = UInt8(orientation.rawValue)
        return [
            0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,  // "MM", 42, IFD0 at 8
            0x00, 0x01,  // one entry
            0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, value, 0x00, 0x00,  // orientation, SHORT, 1
            0x00, 0x00, 0x00, 0x00,  // no next IFD
        ]
    }
}
