import Foundation
public import MagpieImage

/// Pixel comparisons with stated tolerances.
public enum ImageDiff {
    /// Peak signal-to-noise ratio in dB between equal-length byte arrays; `.infinity` when equal.
    /// 40 dB means an RMS error of about 2.5 levels out of 255.
    public static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count, "psnr of \(a.count) and \(b.count) bytes")
        var sum = 0.0
        for i in 0..<a.count {
            let d = Double(Int(a[i]) - Int(b[i]))
            sum += d * d
        }
        guard sum > 0 else { return .infinity }
        let mse = sum / Double(a.count)
        return 10 * log10(255 * 255 / mse)
    }

    /// The largest difference of any one channel.
    public static func maxDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        precondition(a.count == b.count, "difference of \(a.count) and \(b.count) bytes")
        var worst = 0
        for i in 0..<a.count { worst = max(worst, abs(Int(a[i]) - Int(b[i]))) }
        return worst
    }

    /// RGBA bytes with colour multiplied by alpha: what is seen, so that the colour hidden
    /// under transparent pixels does not count.
    public static func premultiplied(_ rgba: [UInt8]) -> [UInt8] {
        var out = rgba
        for i in stride(from: 0, to: out.count, by: 4) {
            let a = Int(out[i + 3])
            for k in 0..<3 { out[i + k] = UInt8((Int(out[i + k]) * a + 127) / 255) }
        }
        return out
    }

    /// All frames of `image` as RGBA bytes, concatenated (the reference layout).
    public static func rgba(_ image: Image) -> [UInt8] {
        image.frames.flatMap { $0.bitmap.converted(to: .rgba8).pixels }
    }

    /// Where two RGBA frame sequences of `width`x`height` first differ, in words, or nil if equal.
    public static func firstDifference(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int) -> String? {
        guard a.count == b.count else { return "\(a.count) bytes against \(b.count)" }
        let frameBytes = width * height * 4
        for i in stride(from: 0, to: a.count, by: 4) where a[i..<(i + 4)] != b[i..<(i + 4)] {
            let frame = i / frameBytes, pixel = (i % frameBytes) / 4
            return "frame \(frame + 1) pixel (\(pixel % width), \(pixel / width)): \(Array(a[i..<(i + 4)])) "
                + "against \(Array(b[i..<(i + 4)])); max difference \(maxDifference(a, b))"
        }
        return nil
    }
}
