/// Gaussian-like blur by three successive box blurs, each separable (horizontal, then
/// vertical) with running sums: the cost per pixel does not depend on the radius.
///
/// Colour channels are blurred premultiplied by alpha, so transparent pixels do not bleed
/// their hidden colour into visible neighbours.
enum BoxBlur {
    /// Box radii whose three passes approximate a Gaussian of standard deviation `sigma`.
    static func radii(sigma: Double) -> [Int] {
        // Three boxes of width w give variance 3 (w^2 - 1) / 12; pick the two nearest odd widths.
        let ideal = (12 * sigma * sigma / 3 + 1).squareRoot()
        var lower = Int(ideal)
        if lower % 2 == 0 { lower -= 1 }
        lower = max(lower, 1)
        let upper = lower + 2
        let m = ((12 * sigma * sigma - 3 * Double(lower * lower) - 12 * Double(lower) - 9) / (-4 * Double(lower) - 4)).rounded()
        return (0..<3).map { Double($0) < m ? (lower - 1) / 2 : (upper - 1) / 2 }
    }

    /// `bitmap` blurred with a Gaussian-like kernel of the given radius (about 2.5 sigma).
    static func blur(_ bitmap: Bitmap, radius: Double) -> Bitmap {
        guard radius > 0.5 else { return bitmap }
        let sigma = radius / 2.5
        let c = bitmap.format.channels
        let w = bitmap.width, h = bitmap.height
        var work = [Int32](repeating: 0, count: w * h * c)
        // Load, premultiplying colour by alpha (scaled by 255).
        bitmap.pixels.withUnsafeBufferPointer { src in
            for i in 0..<(w * h) {
                if c == 4 {
                    let a = Int32(src[i * 4 + 3])
                    work[i * 4] = Int32(src[i * 4]) * a
                    work[i * 4 + 1] = Int32(src[i * 4 + 1]) * a
                    work[i * 4 + 2] = Int32(src[i * 4 + 2]) * a
                    work[i * 4 + 3] = a * 255
                } else {
                    for k in 0..<c { work[i * c + k] = Int32(src[i * c + k]) * 255 }
                }
            }
        }
        var scratch = [Int32](repeating: 0, count: w * h * c)
        for r in radii(sigma: sigma) where r > 0 {
            pass(&work, &scratch, count: h, length: w, stride: c, lineStride: w * c, channels: c, radius: r)
            pass(&scratch, &work, count: w, length: h, stride: w * c, lineStride: c, channels: c, radius: r)
        }
        var out = bitmap
        out.pixels.withUnsafeMutableBufferPointer { dst in
            for i in 0..<(w * h) {
                if c == 4 {
                    let a = work[i * 4 + 3]
                    dst[i * 4 + 3] = UInt8(clamping: (a + 127) / 255)
                    for k in 0..<3 {
                        dst[i * 4 + k] = a > 0 ? UInt8(clamping: (Int(work[i * 4 + k]) * 255 + Int(a) / 2) / Int(a)) : 0
                    }
                } else {
                    for k in 0..<c { dst[i * c + k] = UInt8(clamping: (work[i * c + k] + 127) / 255) }
                }
            }
        }
        return out
    }

    /// One box pass along `count` lines of `length` samples, edges clamped.
    private static func pass(
        _ source: inout [Int32], _ destination: inout [Int32], count: Int, length: Int, stride: Int, lineStride: Int,
        channels: Int, radius: Int
    ) {
        let window = Int64(2 * radius + 1)
        source.withUnsafeBufferPointer { src in
            destination.withUnsafeMutableBufferPointer { dst in
                for line in 0..<count {
                    let base = line * lineStride
                    for k in 0..<channels {
                        let first = Int64(src[base + k]), last = Int64(src[base + (length - 1) * stride + k])
                        var sum = first * Int64(radius + 1)
                        for i in 1...radius { sum += Int64(src[base + min(i, length - 1) * stride + k]) }
                        for i in 0..<length {
                            dst[base + i * stride + k] = Int32((sum + window / 2) / window)
                            let add = i + radius + 1 < length ? Int64(src[base + (i + radius + 1) * stride + k]) : last
                            let remove = i - radius >= 0 ? Int64(src[base + (i - radius) * stride + k]) : first
                            sum += add - remove
                        }
                    }
                }
            }
        }
    }
}
