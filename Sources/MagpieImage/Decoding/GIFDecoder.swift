public import struct Foundation.Data
import CGIF

extension ImageDecoders {
    /// Decodes GIF through giflib: every frame composited onto the canvas as browsers do
    /// (disposal methods "leave", "restore to background" as transparent, and "restore to
    /// previous"), transparency, local colour tables, interlacing, delays and the NETSCAPE
    /// loop count.
    ///
    /// Output: ``PixelFormat/rgba8`` canvases. Parts of frames outside the logical screen are
    /// clipped. Colour indices past a table's end show as opaque black. Data that ends after
    /// a complete frame (a missing trailer) gives the frames so far; data that ends inside a
    /// frame is ``ImageError/Kind/truncated``.
    ///
    /// ``Image/loopCount`` counts plays: a file without a NETSCAPE block plays once (1); a
    /// block with `n > 0` repeats `n` times after the first play (`n + 1`); 0 is forever.
    public struct GIF: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        public var format: ImageFormat { .gif }

        public func canDecode(_ data: Data) -> Bool { ImageFormat.sniff(data) == .gif }

        public func info(for data: Data) throws -> ImageInfo {
            try GIFReader.withFile(data) { gif in
                var reader = GIFReader(gif: gif)
                let summary = try reader.scan()
                return ImageInfo(
                    format: .gif, size: reader.canvasSize, frameCount: summary.frames,
                    hasAlpha: summary.transparency, loopCount: reader.loopCount,
                    isProgressive: summary.interlaced)
            }
        }

        public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            try options.validate()
            return try GIFReader.withFile(data) { gif in
                var reader = GIFReader(gif: gif)
                try options.checkFrame(reader.canvasSize, format: .gif)
                var frames = try reader.decodeFrames(options: options)
                if let requested = options.pixelFormat, requested != .rgba8 {
                    frames = frames.map { ImageFrame(bitmap: $0.bitmap.converted(to: requested), duration: $0.duration) }
                }
                return Image(uncheckedFrames: frames, loopCount: reader.loopCount, format: .gif, orientation: .up)
            }
        }
    }
}

extension ImageDecoding where Self == ImageDecoders.GIF {
    /// The GIF decoder.
    public static var gif: ImageDecoders.GIF { ImageDecoders.GIF() }
}

/// Reads one GIF record by record over giflib's low-level API, which lets us check every
/// frame's size before decoding it (DGifSlurp would allocate first).
struct GIFReader {
    private struct Input {
        var base: UnsafePointer<UInt8>
        var count: Int
        var offset: Int
        /// Set when a read asked for more than was left: every later failure is truncation.
        var exhausted = false
    }

    private static let read: InputFunc = { gif, buffer, length in
        guard let gif, let buffer, length > 0,
              let input = gif.pointee.UserData?.assumingMemoryBound(to: Input.self) else { return 0 }
        let n = min(Int(length), input.pointee.count - input.pointee.offset)
        if n < Int(length) { input.pointee.exhausted = true }
        guard n > 0 else { return 0 }
        buffer.update(from: input.pointee.base + input.pointee.offset, count: n)
        input.pointee.offset += n
        return Int32(n)
    }

    /// Opens `data` with giflib for the duration of `body`.
    static func withFile<T>(_ data: Data, _ body: (UnsafeMutablePointer<GifFileType>) throws -> T) throws -> T {
        guard !data.isEmpty else { throw ImageError.empty }
        return try data.withUnsafeBytes { raw -> T in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw ImageError.empty }
            var input = Input(base: base, count: raw.count, offset: 0)
            return try withUnsafeMutablePointer(to: &input) { pointer -> T in
                var code: Int32 = 0
                guard let gif = DGifOpen(pointer, read, &code) else {
                    throw pointer.pointee.exhausted ? ImageError.truncated(.gif) : error(code)
                }
                defer {
                    var ignored: Int32 = 0
                    DGifCloseFile(gif, &ignored)
                }
                do {
                    return try body(gif)
                } catch let failure as ImageError where failure.kind == .corrupt && pointer.pointee.exhausted {
                    throw ImageError.truncated(.gif)
                }
            }
        }
    }

    static func error(_ code: Int32) -> ImageError {
        switch code {
        case D_GIF_ERR_READ_FAILED, D_GIF_ERR_EOF_TOO_SOON: return .truncated(.gif)
        default:
            let text = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
            return .corrupt(.gif, text)
        }
    }

    private let gif: UnsafeMutablePointer<GifFileType>
    let canvasSize: PixelSize
    private(set) var loopCount = 1
    private var control = GraphicsControlBlock(DisposalMode: 0, UserInputFlag: false, DelayTime: 0, TransparentColor: -1)

    init(gif: UnsafeMutablePointer<GifFileType>) {
        self.gif = gif
        canvasSize = PixelSize(width: Int(gif.pointee.SWidth), height: Int(gif.pointee.SHeight))
    }

    private var lastError: ImageError { Self.error(gif.pointee.Error) }

    /// What `scan` learns without decompressing pixels.
    struct Summary {
        var frames = 0
        var transparency = false
        var interlaced = false
    }

    /// Walks every record, skipping the compressed pixel data.
    mutating func scan() throws -> Summary {
        var summary = Summary()
        while true {
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &type) == GIF_OK else {
                if summary.frames > 0 { return summary }  // no trailer
                throw lastError
            }
            switch type {
            case EXTENSION_RECORD_TYPE:
                try readExtension()
                if control.TransparentColor >= 0 { summary.transparency = true }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageHeader(gif) == GIF_OK else { throw lastError }
                if gif.pointee.Image.Interlace { summary.interlaced = true }
                var codeSize: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetCode(gif, &codeSize, &block) == GIF_OK else { throw lastError }
                while block != nil {
                    guard DGifGetCodeNext(gif, &block) == GIF_OK else { throw lastError }
                }
                summary.frames += 1
                resetControl()
            case TERMINATE_RECORD_TYPE:
                return summary
            default:
                throw ImageError.corrupt(.gif, "unexpected record type \(type.rawValue)")
            }
        }
    }

    /// Decodes and composites every frame (or the first only).
    mutating func decodeFrames(options: ImageDecodingOptions) throws -> [ImageFrame] {
        var canvas = try GIFCanvas(size: canvasSize)
        try decodeFrames(into: &canvas, options: options)
        guard !canvas.frames.isEmpty else { throw ImageError.corrupt(.gif, "the file has no frames") }
        return canvas.frames
    }

    /// Decodes the frames of this file onto `canvas`, which may already hold earlier frames
    /// (the incremental decoder feeds it one frame at a time).
    mutating func decodeFrames(into canvas: inout GIFCanvas, options: ImageDecodingOptions) throws {
        while true {
            var type = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &type) == GIF_OK else {
                if !canvas.frames.isEmpty, gif.pointee.Error == D_GIF_ERR_READ_FAILED { return }  // no trailer
                throw lastError
            }
            if type == TERMINATE_RECORD_TYPE { return }
            if type == EXTENSION_RECORD_TYPE {
                try readExtension()
                continue
            }
            guard type == IMAGE_DESC_RECORD_TYPE else {
                throw ImageError.corrupt(.gif, "unexpected record type \(type.rawValue)")
            }
            if !options.firstFrameOnly {
                try options.checkAnimation(frames: canvas.frames.count + 1, size: canvasSize, format: .gif)
            }
            guard DGifGetImageHeader(gif) == GIF_OK else { throw lastError }
            let descriptor = gif.pointee.Image
            guard let colorMap = descriptor.ColorMap ?? gif.pointee.SColorMap else {
                throw ImageError.corrupt(.gif, "frame \(canvas.frames.count + 1) has no colour table")
            }
            let frame = GIFCanvas.Frame(
                left: Int(descriptor.Left), top: Int(descriptor.Top), width: Int(descriptor.Width),
                height: Int(descriptor.Height), interlaced: descriptor.Interlace,
                palette: Self.palette(colorMap, transparent: control.TransparentColor),
                transparent: Int(control.TransparentColor), disposal: control.DisposalMode,
                duration: .milliseconds(Int(control.DelayTime) * 10))
            let gif = self.gif
            try canvas.draw(frame) { row in
                row.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frame.width)) } == GIF_OK
            } failure: {
                lastError
            }
            resetControl()
            if options.firstFrameOnly { return }
        }
    }

    /// Row numbers in the order an interlaced frame stores them: every 8th from 0, every 8th
    /// from 4, every 4th from 2, every 2nd from 1.
    static func interlacedRows(_ height: Int) -> [Int] {
        var rows: [Int] = []
        rows.reserveCapacity(height)
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            var y = start
            while y < height {
                rows.append(y)
                y += step
            }
        }
        return rows
    }

    /// 256 RGBA words (byte order R, G, B, A in memory); the transparent index is 0.
    static func palette(_ map: UnsafeMutablePointer<ColorMapObject>, transparent: Int32) -> [UInt32] {
        var table = [UInt32](repeating: 0, count: 256)
        let black = rgba(0, 0, 0, 255)
        let count = Int(max(0, min(256, map.pointee.ColorCount)))
        for i in 0..<256 {
            if Int32(i) == transparent {
                table[i] = 0
            } else if i < count, let colors = map.pointee.Colors {
                let color = colors[i]
                table[i] = rgba(color.Red, color.Green, color.Blue, 255)
            } else {
                table[i] = black
            }
        }
        return table
    }

    private static func rgba(_ r: UInt8, _ g: UInt8, _ b: UInt8, _ a: UInt8) -> UInt32 {
        var word: UInt32 = 0
        withUnsafeMutableBytes(of: &word) { bytes in
            bytes[0] = r; bytes[1] = g; bytes[2] = b; bytes[3] = a
        }
        return word
    }

    private mutating func resetControl() {
        control = GraphicsControlBlock(DisposalMode: 0, UserInputFlag: false, DelayTime: 0, TransparentColor: -1)
    }

    /// Reads one extension: graphics control blocks and the NETSCAPE loop count matter.
    private mutating func readExtension() throws {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw lastError }
        if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] == 4 {
            var parsed = GraphicsControlBlock()
            if DGifExtensionToGCB(4, block + 1, &parsed) == GIF_OK { control = parsed }
        }
        var isNetscape = false
        if code == APPLICATION_EXT_FUNC_CODE, let block, block[0] == 11 {
            let name = String(decoding: UnsafeBufferPointer(start: block + 1, count: 11), as: UTF8.self)
            isNetscape = name == "NETSCAPE2.0" || name == "ANIMEXTS1.0"
        }
        while block != nil {
            guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw lastError }
            if isNetscape, let data = block, data[0] >= 3, data[1] == 1 {
                let repeats = Int(data[2]) | Int(data[3]) << 8
                loopCount = repeats == 0 ? 0 : repeats + 1
                isNetscape = false
            }
        }
    }
}
