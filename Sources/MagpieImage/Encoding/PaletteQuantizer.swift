/// Reduces an RGBA bitmap to at most 256 colours, for GIF.
///
/// The method, in order:
/// 1. Pixels with alpha below 128 become the transparent index; the rest are opaque.
/// 2. When the opaque pixels use no more colours than fit, the palette is exactly those
///    colours: images of 256 colours or fewer pass through GIF unchanged.
/// 3. Otherwise, median cut: the colours are counted in a 32×32×32 histogram (5 bits per
///    channel); the box of histogram cells with the most pixels times the longest side is
///    split at the weighted median of that side until there are as many boxes as palette
///    entries; each entry is the pixel-weighted mean colour of its box.
/// 4. Each pixel takes the nearest entry (squared RGB distance), looked up once per
///    histogram cell. There is no dithering, so frames of an animation stay stable and the
///    output is deterministic.
struct PaletteQuantizer {
    /// The result: palette colours (RGB triples), one index per pixel, and the transparent index.
    struct Result {
        var palette: [(r: UInt8, g: UInt8, b: UInt8)]
        var indices: [UInt8]
        var transparentIndex: Int?
    }

    static func quantize(_ bitmap: Bitmap, maxColors: Int = 256) -> Result {
        let rgba = bitmap.converted(to: .rgba8)
        let count = rgba.width * rgba.height
        return rgba.pixels.withUnsafeBufferPointer { pixels in
            var hasTransparent = false
            for i in 0..<count where pixels[i * 4 + 3] < 128 {
                hasTransparent = true
                break
            }
            let available = hasTransparent ? maxColors - 1 : maxColors
            if let exact = exactPalette(pixels, count: count, limit: available, transparent: hasTransparent) {
                return exact
            }
            return medianCut(pixels, count: count, colors: available, transparent: hasTransparent)
        }
    }

    private static func key(_ p: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt32 {
        UInt32(p[i * 4]) << 16 | UInt32(p[i * 4 + 1]) << 8 | UInt32(p[i * 4 + 2])
    }

    private static func exactPalette(
        _ pixels: UnsafeBufferPointer<UInt8>, count: Int, limit: Int, transparent: Bool
    ) -> Result? {
        var lookup: [UInt32: UInt8] = [:]
        var palette: [(r: UInt8, g: UInt8, b: UInt8)] = []
        var indices = [UInt8](repeating: 0, count: count)
        let transparentIndex = transparent ? 0 : nil
        if transparent { palette.append((0, 0, 0)) }
        var lastKey: UInt32 = .max
        var lastIndex: UInt8 = 0
        for i in 0..<count {
            if pixels[i * 4 + 3] < 128 {
                indices[i] = 0
                continue
            }
            let k = key(pixels, i)
            if k == lastKey {
                indices[i] = lastIndex
                continue
            }
            if let index = lookup[k] {
                lastKey = k
                lastIndex = index
                indices[i] = index
                continue
            }
            guard lookup.count < limit else { return nil }
            let index = UInt8(palette.count)
            palette.append((pixels[i * 4], pixels[i * 4 + 1], pixels[i * 4 + 2]))
            lookup[k] = index
            lastKey = k
            lastIndex = index
            indices[i] = index
        }
        if palette.isEmpty { palette.append((0, 0, 0)) }
        return Result(palette: palette, indices: indices, transparentIndex: transparentIndex)
    }

    private struct Cell {
        var index: Int
        var count: Int
        var r: Int, g: Int, b: Int  // 5-bit coordinates
    }

    private static func medianCut(
        _ pixels: UnsafeBufferPointer<UInt8>, count: Int, colors: Int, transparent: Bool
    ) -> Result {
        var counts = [Int](repeating: 0, count: 32768)
        var sums = [Int](repeating: 0, count: 32768 * 3)
        for i in 0..<count where pixels[i * 4 + 3] >= 128 {
            let r = Int(pixels[i * 4]), g = Int(pixels[i * 4 + 1]), b = Int(pixels[i * 4 + 2])
            let cell = (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3)
            counts[cell] += 1
            sums[cell * 3] += r
            sums[cell * 3 + 1] += g
            sums[cell * 3 + 2] += b
        }
        var cells: [Cell] = []
        for index in 0..<32768 where counts[index] > 0 {
            cells.append(Cell(index: index, count: counts[index], r: index >> 10, g: (index >> 5) & 31, b: index & 31))
        }
        // Boxes are ranges of `cells`, which is reordered as boxes are split.
        var boxes: [Range<Int>] = [0..<cells.count]
        func extent(_ box: Range<Int>) -> (axis: Int, length: Int, pixels: Int) {
            var low = [31, 31, 31], high = [0, 0, 0], total = 0
            for cell in cells[box] {
                low[0] = min(low[0], cell.r); high[0] = max(high[0], cell.r)
                low[1] = min(low[1], cell.g); high[1] = max(high[1], cell.g)
                low[2] = min(low[2], cell.b); high[2] = max(high[2], cell.b)
                total += cell.count
            }
            let lengths = [high[0] - low[0], high[1] - low[1], high[2] - low[2]]
            let axis = lengths[0] >= lengths[1] && lengths[0] >= lengths[2] ? 0 : lengths[1] >= lengths[2] ? 1 : 2
            return (axis, lengths[axis], total)
        }
        while boxes.count < colors {
            var best = -1, bestScore = 0, bestAxis = 0
            for (i, box) in boxes.enumerated() where box.count > 1 {
                let e = extent(box)
                let score = e.pixels * (e.length + 1)
                if e.length > 0 && score > bestScore { (best, bestScore, bestAxis) = (i, score, e.axis) }
            }
            guard best >= 0 else { break }
            let box = boxes[best]
            cells[box].sort { a, b in
                switch bestAxis {
                case 0: return a.r < b.r
                case 1: return a.g < b.g
                default: return a.b < b.b
                }
            }
            let total = cells[box].reduce(0) { $0 + $1.count }
            var running = 0, split = box.lowerBound + 1
            for i in box where i < box.upperBound - 1 {
                running += cells[i].count
                split = i + 1
                if running * 2 >= total { break }
            }
            boxes[best] = box.lowerBound..<split
            boxes.append(split..<box.upperBound)
        }

        var palette: [(r: UInt8, g: UInt8, b: UInt8)] = transparent ? [(0, 0, 0)] : []
        var cellToEntry = [Int16](repeating: -1, count: 32768)
        for box in boxes {
            var n = 0, r = 0, g = 0, b = 0
            for cell in cells[box] {
                n += cell.count
                r += sums[cell.index * 3]; g += sums[cell.index * 3 + 1]; b += sums[cell.index * 3 + 2]
            }
            guard n > 0 else { continue }
            palette.append((UInt8((r + n / 2) / n), UInt8((g + n / 2) / n), UInt8((b + n / 2) / n)))
        }
        if palette.isEmpty { palette.append((0, 0, 0)) }
        let first = transparent ? 1 : 0

        var indices = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            if pixels[i * 4 + 3] < 128 { continue }  // index 0 is transparent
            let r = Int(pixels[i * 4]), g = Int(pixels[i * 4 + 1]), b = Int(pixels[i * 4 + 2])
            let cell = (r >> 3) << 10 | (g >> 3) << 5 | (b >> 3)
            if cellToEntry[cell] < 0 {
                // Nearest to the cell's mean colour, so every pixel of the cell agrees.
                let n = counts[cell]
                let mr = sums[cell * 3] / n, mg = sums[cell * 3 + 1] / n, mb = sums[cell * 3 + 2] / n
                var bestIndex = first, bestDistance = Int.max
                for e in first..<palette.count {
                    let dr = Int(palette[e].r) - mr, dg = Int(palette[e].g) - mg, db = Int(palette[e].b) - mb
                    let distance = dr * dr + dg * dg + db * db
                    if distance < bestDistance { (bestIndex, bestDistance) = (e, distance) }
                }
                cellToEntry[cell] = Int16(bestIndex)
            }
            indices[i] = UInt8(cellToEntry[cell])
        }
        return Result(palette: palette, indices: indices, transparentIndex: transparent ? 0 : nil)
    }
}
