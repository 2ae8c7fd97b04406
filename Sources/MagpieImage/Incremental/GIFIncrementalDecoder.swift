import struct Foundation.Data

/// Incremental GIF: a resumable scan of the block structure finds each frame as soon as its
/// last byte arrives; that frame alone is decoded (through giflib, as a one-frame file with
/// the original header and colour table) onto the same canvas the one-shot decoder uses.
/// Each byte is scanned once and each frame decoded once.
final class GIFIncrementalDecoder: IncrementalDecoding {
    private let options: ImageDecodingOptions
    private var bytes: [UInt8] = []
    private var scanner = GIFBlockScanner()
    private var canvas: GIFCanvas?
    private var finished = false
    private var previewedFrames = 0

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    func append(_ chunk: UnsafeRawBufferPointer) throws {
        guard !finished else { return }
        bytes.append(contentsOf: chunk.bindMemory(to: UInt8.self))
        while let event = try scanner.next(in: bytes) {
            switch event {
            case .header(let size):
                try options.checkFrame(size, format: .gif)
                canvas = try GIFCanvas(size: size)
            case .frame(let control, let image):
                try decodeFrame(control: control, image: image)
                if options.firstFrameOnly { finished = true }
            case .trailer:
                finished = true
            }
            if finished { return }
        }
    }

    /// Decodes one frame: the header and global table, the frame's control block and image, a trailer.
    private func decodeFrame(control: Range<Int>?, image: Range<Int>) throws {
        guard var current = canvas, let headerEnd = scanner.headerEnd else { return }
        var file = [UInt8](bytes[0..<headerEnd])
        if let control { file += bytes[control] }
        file += bytes[image]
        file.append(0x3B)
        try GIFReader.withFile(Data(file)) { gif in
            var reader = GIFReader(gif: gif)
            try reader.decodeFrames(into: &current, options: options)
        }
        canvas = current
    }

    private func image(frames: [ImageFrame]) throws -> Image {
        var image = Image(uncheckedFrames: frames, loopCount: scanner.loopCount, format: .gif, orientation: .up)
        if let requested = options.pixelFormat, requested != .rgba8 {
            image = try image.mapFrames { $0.converted(to: requested) }
        }
        return image
    }

    func makePreview(blurred: Bool, force: Bool) throws -> ImagePreview? {
        guard force || !finished, let frames = canvas?.frames,
              frames.count > previewedFrames || (force && !frames.isEmpty) else { return nil }
        previewedFrames = frames.count
        return ImagePreview(image: try image(frames: frames), kind: .frames(frames.count), isBlurred: false)
    }

    func finish(data: Data) throws -> Image {
        guard let frames = canvas?.frames, !frames.isEmpty else {
            // Nothing complete: the one-shot decoder gives the precise error.
            return try ImageDecoders.GIF().decode(data, options: options)
        }
        // Bytes after the last complete frame that are not a trailer: the data ends inside a frame.
        if !finished && scanner.isInsideBlock(bytes.count) { throw ImageError.truncated(.gif) }
        return try image(frames: frames)
    }
}

/// A resumable walk over a GIF's blocks: header, extensions, images, trailer.
struct GIFBlockScanner {
    enum Event {
        /// The header and global colour table are complete; the logical screen is this size.
        case header(PixelSize)
        /// A complete image, with the graphic control extension before it.
        case frame(control: Range<Int>?, image: Range<Int>)
        case trailer
    }

    private(set) var headerEnd: Int?
    private(set) var loopCount = 1
    private var offset = 0                   // the start of the block being read
    private var cursor: Int?                 // inside a block: the next sub-block length byte
    private var control: Range<Int>?

    /// Whether the data stops inside a block (rather than between blocks).
    func isInsideBlock(_ length: Int) -> Bool { length > offset }

    /// The next complete event in `bytes`, or nil when more bytes are needed.
    mutating func next(in bytes: [UInt8]) throws -> Event? {
        guard let headerEnd else {
            guard bytes.count >= 13 else { return nil }
            let flags = bytes[10]
            let table = flags & 0x80 != 0 ? 3 << (Int(flags & 7) + 1) : 0
            guard bytes.count >= 13 + table else { return nil }
            self.headerEnd = 13 + table
            offset = 13 + table
            let size = PixelSize(width: Int(bytes[6]) | Int(bytes[7]) << 8, height: Int(bytes[8]) | Int(bytes[9]) << 8)
            return .header(size)
        }
        _ = headerEnd
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x3B:
                offset += 1
                return .trailer
            case 0x21:
                guard offset + 2 <= bytes.count, let end = subBlocksEnd(in: bytes, from: offset + 2) else { return nil }
                let label = bytes[offset + 1]
                if label == 0xF9 { control = offset..<end }
                if label == 0xFF, end - offset >= 19, bytes[offset + 2] == 11,
                   String(decoding: bytes[(offset + 3)..<(offset + 14)], as: UTF8.self) == "NETSCAPE2.0",
                   bytes[offset + 14] >= 3, bytes[offset + 15] == 1 {
                    let repeats = Int(bytes[offset + 16]) | Int(bytes[offset + 17]) << 8
                    loopCount = repeats == 0 ? 0 : repeats + 1
                }
                offset = end
            case 0x2C:
                guard offset + 10 <= bytes.count else { return nil }
                let flags = bytes[offset + 9]
                let table = flags & 0x80 != 0 ? 3 << (Int(flags & 7) + 1) : 0
                let dataStart = offset + 10 + table + 1  // after the LZW minimum code size
                guard dataStart <= bytes.count, let end = subBlocksEnd(in: bytes, from: dataStart) else { return nil }
                let event = Event.frame(control: control, image: offset..<end)
                control = nil
                offset = end
                return event
            default:
                throw ImageError.corrupt(.gif, "unexpected block 0x\(String(bytes[offset], radix: 16)) at byte \(offset)")
            }
        }
        return nil
    }

    /// The end of the sub-blocks starting at `start` (after the zero-length terminator), or nil
    /// if they are not all there yet; remembers how far it got.
    private mutating func subBlocksEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var position = cursor ?? start
        while position < bytes.count {
            let length = Int(bytes[position])
            if length == 0 {
                cursor = nil
                return position + 1
            }
            position += 1 + length
        }
        cursor = position
        return nil
    }
}
