/// The logical screen of a GIF, onto which frames are composited as browsers do; every
/// completed frame is kept as a full-canvas RGBA bitmap.
struct GIFCanvas {
    /// One frame's placement and how to paint and dispose of it.
    struct Frame {
        var left: Int
        var top: Int
        var width: Int
        var height: Int
        var interlaced: Bool
        /// 256 RGBA words, byte order R, G, B, A.
        var palette: [UInt32]
        /// The transparent index, or -1.
        var transparent: Int
        /// GIF disposal: 0/1 leave, 2 clear to transparent, 3 restore the previous canvas.
        var disposal: Int32
        var duration: Duration
    }

    let size: PixelSize
    private var pixels: [UInt32]
    private var saved: [UInt32] = []
    private var row: [UInt8] = []
    private var pendingDisposal: (mode: Int32, left: Int, top: Int, right: Int, bottom: Int)?
    private(set) var frames: [ImageFrame] = []

    init(size: PixelSize) throws {
        self.size = size
        PixelAllocation.observer?(size.pixelCount * 4)
        pixels = [UInt32](repeating: 0, count: size.pixelCount)
    }

    /// Paints `frame`, whose rows `readRow` fills in stored order (false on failure), then
    /// keeps a copy of the canvas as the next frame.
    mutating func draw(
        _ frame: Frame, readRow: (inout [UInt8]) -> Bool, failure: () -> any Error
    ) throws {
        let width = size.width, height = size.height
        // Undo the previous frame as its disposal method says.
        if let disposal = pendingDisposal {
            if disposal.mode == 2 {
                pixels.withUnsafeMutableBufferPointer { c in
                    for y in disposal.top..<disposal.bottom {
                        for x in disposal.left..<disposal.right { c[y * width + x] = 0 }
                    }
                }
            } else if disposal.mode == 3, !saved.isEmpty {
                pixels = saved
            }
        }
        if frame.disposal == 3 {
            if saved.isEmpty { PixelAllocation.observer?(size.pixelCount * 4) }
            saved = pixels
        }

        // Decode the rows, in interlaced order when flagged, and paint the visible part.
        if row.count < max(frame.width, 1) { row = [UInt8](repeating: 0, count: max(frame.width, 1)) }
        let left = frame.left, top = frame.top
        let clippedRight = min(left + frame.width, width), clippedBottom = min(top + frame.height, height)
        let rowOrder = frame.interlaced ? GIFReader.interlacedRows(frame.height) : Array(0..<frame.height)
        for y in rowOrder {
            guard readRow(&row) else { throw failure() }
            let canvasY = top + y
            guard canvasY < height, left < clippedRight else { continue }
            row.withUnsafeBufferPointer { line in
                frame.palette.withUnsafeBufferPointer { colors in
                    pixels.withUnsafeMutableBufferPointer { c in
                        let rowBase = canvasY * width
                        for x in left..<clippedRight {
                            let index = Int(line[x - left])
                            if index != frame.transparent { c[rowBase + x] = colors[index] }
                        }
                    }
                }
            }
        }

        let byteCount = size.pixelCount * 4
        let bitmap = try Bitmap.make(width: width, height: height, format: .rgba8) { buffer in
            pixels.withUnsafeBytes { source in
                guard let from = source.baseAddress, let to = buffer.baseAddress else { return }
                UnsafeMutableRawPointer(to).copyMemory(from: from, byteCount: byteCount)
            }
        }
        frames.append(ImageFrame(bitmap: bitmap, duration: frame.duration))
        pendingDisposal = (
            frame.disposal, min(left, width), min(top, height),
            max(min(left, width), clippedRight), max(min(top, height), clippedBottom)
        )
    }
}
