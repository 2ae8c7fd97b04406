extension Bitmap {
    /// The pixels turned and mirrored so that an image stored with `orientation` is upright.
    public func applying(_ orientation: ImageOrientation) -> Bitmap {
        if orientation == .up { return self }
        let w = width, h = height, c = format.channels
        let outW = orientation.swapsDimensions ? h : w
        let outH = orientation.swapsDimensions ? w : h
        // For each output pixel (dx, dy), the source pixel is (x0 + dx * ax + dy * bx, y0 + dx * ay + dy * by).
        let (x0, ax, bx, y0, ay, by): (Int, Int, Int, Int, Int, Int)
        switch orientation {
        case .up: (x0, ax, bx, y0, ay, by) = (0, 1, 0, 0, 0, 1)
        case .upMirrored: (x0, ax, bx, y0, ay, by) = (w - 1, -1, 0, 0, 0, 1)
        case .down: (x0, ax, bx, y0, ay, by) = (w - 1, -1, 0, h - 1, 0, -1)
        case .downMirrored: (x0, ax, bx, y0, ay, by) = (0, 1, 0, h - 1, 0, -1)
        case .leftMirrored: (x0, ax, bx, y0, ay, by) = (0, 0, 1, 0, 1, 0)
        case .right: (x0, ax, bx, y0, ay, by) = (0, 0, 1, h - 1, -1, 0)
        case .rightMirrored: (x0, ax, bx, y0, ay, by) = (w - 1, 0, -1, h - 1, -1, 0)
        case .left: (x0, ax, bx, y0, ay, by) = (w - 1, 0, -1, 0, 1, 0)
        }
        let stepX = (ay * w + ax) * c  // source step per output column
        let stepY = (by * w + bx) * c  // source step per output row
        let out = (try? Bitmap.allocatePixels(width: outW, height: outH, channels: c) { buffer in
            pixels.withUnsafeBufferPointer { source in
                guard let src = source.baseAddress, var dst = buffer.baseAddress else { return }
                var rowStart = (y0 * w + x0) * c
                for _ in 0..<outH {
                    var s = rowStart
                    switch c {
                    case 1:
                        for _ in 0..<outW { dst[0] = src[s]; dst += 1; s += stepX }
                    case 3:
                        for _ in 0..<outW { dst[0] = src[s]; dst[1] = src[s + 1]; dst[2] = src[s + 2]; dst += 3; s += stepX }
                    default:
                        for _ in 0..<outW {
                            dst[0] = src[s]; dst[1] = src[s + 1]; dst[2] = src[s + 2]; dst[3] = src[s + 3]
                            dst += 4; s += stepX
                        }
                    }
                    rowStart += stepY
                }
            }
        }) ?? []
        return Bitmap(unchecked: outW, height: outH, format: format, pixels: out)
    }
}

extension Image {
    /// The image turned upright: every frame has ``orientation`` applied, which becomes ``ImageOrientation/up``.
    public func applyingOrientation() -> Image {
        guard orientation != .up else { return self }
        var image = Image(
            uncheckedFrames: frames.map { ImageFrame(bitmap: $0.bitmap.applying(orientation), duration: $0.duration) },
            loopCount: loopCount, format: format, orientation: .up)
        image.orientation = .up
        return image
    }
}
