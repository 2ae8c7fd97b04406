extension Bitmap {
    /// This bitmap in another pixel format.
    ///
    /// Gray becomes equal red, green and blue; colour becomes gray by Rec. 601 luma
    /// (0.299 R + 0.587 G + 0.114 B); removing alpha drops it without compositing (use a
    /// processor to flatten onto a background); adding alpha makes every pixel opaque.
    public func converted(to target: PixelFormat) -> Bitmap {
        if target == format { return self }
        let source = format.channels
        let destination = target.channels
        let count = width * height
        // The size was valid for `self`, so only an allocation failure could throw here,
        // and Swift traps on those anyway.
        let pixels = (try? Bitmap.allocatePixels(width: width, height: height, channels: destination) { out in
            self.pixels.withUnsafeBufferPointer { input in
                guard let src = input.baseAddress, let dst = out.baseAddress else { return }
                Self.convert(src, source, dst, destination, count)
            }
        }) ?? []
        return Bitmap(unchecked: width, height: height, format: target, pixels: pixels)
    }

    private static func convert(
        _ src: UnsafePointer<UInt8>, _ from: Int, _ dst: UnsafeMutablePointer<UInt8>, _ to: Int, _ count: Int
    ) {
        var s = src
        var d = dst
        for _ in 0..<count {
            let r: UInt8, g: UInt8, b: UInt8, a: UInt8
            switch from {
            case 1: (r, g, b, a) = (s[0], s[0], s[0], 255)
            case 3: (r, g, b, a) = (s[0], s[1], s[2], 255)
            default: (r, g, b, a) = (s[0], s[1], s[2], s[3])
            }
            switch to {
            case 1:
                d[0] = luma(r, g, b)
            case 3:
                d[0] = r; d[1] = g; d[2] = b
            default:
                d[0] = r; d[1] = g; d[2] = b; d[3] = a
            }
            s += from
            d += to
        }
    }

    /// Rec. 601 luma in 16-bit fixed point: 0.299 R + 0.587 G + 0.114 B, rounded.
    @inline(__always)
    package static func luma(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> UInt8 {
        let red: UInt32 = UInt32(r) &* 19595
        let green: UInt32 = UInt32(g) &* 38470
        let blue: UInt32 = UInt32(b) &* 7471
        return UInt8(truncatingIfNeeded: (red &+ green &+ blue &+ 32768) >> 16)
    }
}
