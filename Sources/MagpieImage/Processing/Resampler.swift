import CImageKernels

/// High-quality resampling: a separable Lanczos-3 filter with weights precomputed in fixed
/// point (22 fractional bits), colour premultiplied by alpha while filtering, and for large
/// reductions a box average first, so that the filter works on at most about twice the
/// output size.
enum Resampler {
    /// Lanczos with three lobes.
    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        if x <= -3 || x >= 3 { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// Per output pixel: the first input pixel, how many contribute, and their weights.
    struct Weights {
        var starts: [Int32]
        var counts: [Int32]
        var weights: [Int32]
        var strideK: Int
    }

    /// Weights mapping the input span [`start`, `start + length`) (in pixels of an axis with
    /// `limit` pixels) onto `output` pixels.
    static func weights(start: Double, length: Double, limit: Int, output: Int) -> Weights {
        let scale = length / Double(output)
        let filterScale = max(scale, 1)
        let support = 3 * filterScale
        let strideK = Int(support.rounded(.up)) * 2 + 1
        var starts = [Int32](repeating: 0, count: output)
        var counts = [Int32](repeating: 0, count: output)
        var weights = [Int32](repeating: 0, count: output * strideK)
        var taps = [Double](repeating: 0, count: strideK)
        let one = Double(1 << MG_WEIGHT_BITS)
        for i in 0..<output {
            let center = start + (Double(i) + 0.5) * scale
            let low = max(Int(center - support + 0.5), 0)
            let high = min(Int(center + support + 0.5), limit)
            let count = max(0, min(high - low, strideK))
            var total = 0.0
            for k in 0..<count {
                let w = lanczos3((Double(low + k) - center + 0.5) / filterScale)
                taps[k] = w
                total += w
            }
            starts[i] = Int32(low)
            counts[i] = Int32(count)
            guard total != 0 else { continue }
            for k in 0..<count {
                let w = taps[k] / total * one
                weights[i * strideK + k] = Int32(w < 0 ? w - 0.5 : w + 0.5)
            }
        }
        return Weights(starts: starts, counts: counts, weights: weights, strideK: strideK)
    }

    /// The region of a bitmap to resample, in (possibly fractional) source pixels.
    struct Region {
        var x: Double
        var y: Double
        var width: Double
        var height: Double
    }

    /// `bitmap`'s `region` resampled to `size`.
    static func resample(_ bitmap: Bitmap, region: Region, to size: PixelSize) throws -> Bitmap {
        if size == bitmap.size, region.x == 0, region.y == 0,
           region.width == Double(bitmap.width), region.height == Double(bitmap.height) {
            return bitmap
        }
        let channels = bitmap.format.channels
        let alpha = channels == 4
        var source = bitmap.pixels
        var sourceWidth = bitmap.width, sourceHeight = bitmap.height
        var region = region
        var premultiplied = false

        // Large reductions: average whole blocks first, keeping at least twice the output size.
        let fx = max(1, Int(region.width / Double(size.width) / 2))
        let fy = max(1, Int(region.height / Double(size.height) / 2))
        if fx > 1 || fy > 1 {
            if alpha {
                source = try premultipliedCopy(source, count: sourceWidth * sourceHeight, width: sourceWidth, height: sourceHeight)
                premultiplied = true
            }
            // Only the rows and columns the region touches.
            let x0 = max(0, Int(region.x) / fx * fx), y0 = max(0, Int(region.y) / fy * fy)
            let x1 = min(sourceWidth, Int((region.x + region.width).rounded(.up)))
            let y1 = min(sourceHeight, Int((region.y + region.height).rounded(.up)))
            let reducedWidth = (x1 - x0 + fx - 1) / fx, reducedHeight = (y1 - y0 + fy - 1) / fy
            let stride = sourceWidth * channels
            let reduced = try Bitmap.allocatePixels(width: reducedWidth, height: reducedHeight, channels: channels) { out in
                source.withUnsafeBufferPointer { input in
                    guard let base = input.baseAddress, let target = out.baseAddress else { return }
                    mg_box_reduce(base + y0 * stride + x0 * channels, stride, Int32(x1 - x0), Int32(y1 - y0),
                                  Int32(channels), Int32(fx), Int32(fy), target, reducedWidth * channels)
                }
            }
            source = reduced
            region = Region(
                x: (region.x - Double(x0)) / Double(fx), y: (region.y - Double(y0)) / Double(fy),
                width: region.width / Double(fx), height: region.height / Double(fy))
            sourceWidth = reducedWidth
            sourceHeight = reducedHeight
        }
        if alpha && !premultiplied {
            source = try premultipliedCopy(source, count: sourceWidth * sourceHeight, width: sourceWidth, height: sourceHeight)
        }

        let horizontal = weights(start: region.x, length: region.width, limit: sourceWidth, output: size.width)
        let vertical = weights(start: region.y, length: region.height, limit: sourceHeight, output: size.height)
        // The vertical pass vectorises (it adds whole rows), the horizontal one does not: when
        // the height shrinks, filter rows first so the horizontal pass sees fewer of them.
        var pixels = size.height < sourceHeight
            ? try verticalFirst(source, width: sourceWidth, channels: channels, horizontal, vertical, size)
            : try horizontalFirst(source, width: sourceWidth, height: sourceHeight, channels: channels, horizontal, vertical, size)
        if alpha {
            pixels.withUnsafeMutableBufferPointer { buffer in
                if let base = buffer.baseAddress { mg_unpremultiply(base, size.pixelCount) }
            }
        }
        return Bitmap(unchecked: size.width, height: size.height, format: bitmap.format, pixels: pixels)
    }

    /// The span of input indices the weights read.
    private static func span(_ weights: Weights, count: Int) -> Range<Int> {
        var low = Int.max, high = 0
        for i in 0..<count where weights.counts[i] > 0 {
            low = min(low, Int(weights.starts[i]))
            high = max(high, Int(weights.starts[i] + weights.counts[i]))
        }
        return low < high ? low..<high : 0..<1
    }

    private static func rows(
        _ input: UnsafePointer<UInt8>, stride: Int, rows: Int, channels: Int, _ w: Weights, offset: Int,
        into output: UnsafeMutablePointer<UInt8>, width: Int
    ) {
        let starts = w.starts.map { $0 - Int32(offset) }
        starts.withUnsafeBufferPointer { s in
            w.counts.withUnsafeBufferPointer { c in
                w.weights.withUnsafeBufferPointer { k in
                    guard let sb = s.baseAddress, let cb = c.baseAddress, let kb = k.baseAddress else { return }
                    mg_resample_rows(input, stride, output, width * channels, Int32(rows), Int32(channels), Int32(width),
                                     sb, cb, kb, Int32(w.strideK))
                }
            }
        }
    }

    private static func columns(
        _ input: UnsafePointer<UInt8>, stride: Int, rowBytes: Int, _ w: Weights, offset: Int,
        into output: UnsafeMutablePointer<UInt8>, height: Int
    ) {
        let starts = w.starts.map { $0 - Int32(offset) }
        var accumulator = [Int32](repeating: 0, count: rowBytes)
        starts.withUnsafeBufferPointer { s in
            w.counts.withUnsafeBufferPointer { c in
                w.weights.withUnsafeBufferPointer { k in
                    accumulator.withUnsafeMutableBufferPointer { a in
                        guard let sb = s.baseAddress, let cb = c.baseAddress, let kb = k.baseAddress, let ab = a.baseAddress else { return }
                        mg_resample_columns(input, stride, output, rowBytes, Int32(height), rowBytes, sb, cb, kb, Int32(w.strideK), ab)
                    }
                }
            }
        }
    }

    private static func horizontalFirst(
        _ source: [UInt8], width: Int, height: Int, channels: Int, _ horizontal: Weights, _ vertical: Weights, _ size: PixelSize
    ) throws -> [UInt8] {
        // Only the rows the vertical pass reads.
        let used = span(vertical, count: size.height)
        let intermediate = try Bitmap.allocatePixels(width: size.width, height: used.count, channels: channels) { out in
            source.withUnsafeBufferPointer { input in
                guard let base = input.baseAddress, let target = out.baseAddress else { return }
                rows(base + used.lowerBound * width * channels, stride: width * channels, rows: used.count,
                     channels: channels, horizontal, offset: 0, into: target, width: size.width)
            }
        }
        return try Bitmap.allocatePixels(width: size.width, height: size.height, channels: channels) { out in
            intermediate.withUnsafeBufferPointer { input in
                guard let base = input.baseAddress, let target = out.baseAddress else { return }
                columns(base, stride: size.width * channels, rowBytes: size.width * channels, vertical,
                        offset: used.lowerBound, into: target, height: size.height)
            }
        }
    }

    private static func verticalFirst(
        _ source: [UInt8], width: Int, channels: Int, _ horizontal: Weights, _ vertical: Weights, _ size: PixelSize
    ) throws -> [UInt8] {
        // Only the columns the horizontal pass reads.
        let used = span(horizontal, count: size.width)
        let intermediate = try Bitmap.allocatePixels(width: used.count, height: size.height, channels: channels) { out in
            source.withUnsafeBufferPointer { input in
                guard let base = input.baseAddress, let target = out.baseAddress else { return }
                columns(base + used.lowerBound * channels, stride: width * channels, rowBytes: used.count * channels,
                        vertical, offset: 0, into: target, height: size.height)
            }
        }
        return try Bitmap.allocatePixels(width: size.width, height: size.height, channels: channels) { out in
            intermediate.withUnsafeBufferPointer { input in
                guard let base = input.baseAddress, let target = out.baseAddress else { return }
                rows(base, stride: used.count * channels, rows: size.height, channels: channels, horizontal,
                     offset: used.lowerBound, into: target, width: size.width)
            }
        }
    }

    static func premultipliedCopy(_ source: [UInt8], count: Int, width: Int, height: Int) throws -> [UInt8] {
        try Bitmap.allocatePixels(width: width, height: height, channels: 4) { out in
            source.withUnsafeBufferPointer { input in
                guard let from = input.baseAddress, let to = out.baseAddress else { return }
                to.update(from: from, count: count * 4)
                mg_premultiply(to, count)
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
