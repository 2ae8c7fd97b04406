import struct Foundation.Data
import MagpieSupport

/// Animated PNG: libpng (as Debian builds it) has no APNG support, so the `acTL`, `fcTL`
/// and `fdAT` chunks are read here and each frame is decoded by libpng as a small PNG of its
/// own, then composited with its blend and dispose operations.
enum APNG {
    /// Whether `data` is a PNG with an `acTL` chunk before its first `IDAT`.
    static func isAnimated(_ data: Data) -> Bool {
        var found = false
        PNGChunks.walk(data) { type, _ in
            if type == "acTL" { found = true; return false }
            return type != "IDAT"
        }
        return found
    }

    /// One frame control chunk and the compressed data that follows it.
    struct FrameChunk {
        var width: Int
        var height: Int
        var left: Int
        var top: Int
        var duration: Duration
        var dispose: UInt8  // 0 none, 1 background, 2 previous
        var blend: UInt8    // 0 source, 1 over
        var data: [Range<Int>] = []
    }

    /// The animation's structure, read without decoding.
    struct Structure {
        var header: Range<Int>            // IHDR data
        var shared: [(String, Range<Int>)] = []  // PLTE and tRNS, copied into every frame
        var frames: [FrameChunk] = []
        var plays = 0
        var canvas: PixelSize
    }

    /// Reads the chunks; nil when the file is not an animation or its animation chunks are broken.
    static func structure(_ data: Data) -> Structure? {
        var result: Structure?
        var animated = false
        var sawIDAT = false
        var idatIsFrame = false
        var broken = false
        PNGChunks.walk(data) { type, range in
            func u32(_ at: Int) -> Int {
                Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3])
            }
            switch type {
            case "IHDR":
                guard range.count == 13, result == nil else { broken = true; return false }
                result = Structure(header: range, canvas: PixelSize(width: u32(range.lowerBound), height: u32(range.lowerBound + 4)))
            case "acTL":
                guard range.count == 8, !sawIDAT else { broken = true; return false }
                animated = true
                result?.plays = u32(range.lowerBound + 4)
            case "PLTE", "tRNS":
                result?.shared.append((type, range))
            case "fcTL":
                guard range.count == 26, let canvas = result?.canvas else { broken = true; return false }
                let b = range.lowerBound
                let numerator = Int(data[b + 20]) << 8 | Int(data[b + 21])
                var denominator = Int(data[b + 22]) << 8 | Int(data[b + 23])
                if denominator == 0 { denominator = 100 }
                let frame = FrameChunk(
                    width: u32(b + 4), height: u32(b + 8), left: u32(b + 12), top: u32(b + 16),
                    duration: .milliseconds((numerator * 1000 + denominator / 2) / denominator),
                    dispose: data[b + 24], blend: data[b + 25])
                guard frame.width > 0, frame.height > 0, frame.left + frame.width <= canvas.width,
                      frame.top + frame.height <= canvas.height, frame.dispose <= 2, frame.blend <= 1 else {
                    broken = true
                    return false
                }
                result?.frames.append(frame)
            case "IDAT":
                // The default image is the first frame only when an fcTL came before it.
                if !sawIDAT { idatIsFrame = result?.frames.count == 1 }
                sawIDAT = true
                if idatIsFrame, result?.frames.isEmpty == false { result?.frames[0].data.append(range) }
            case "fdAT":
                guard range.count > 4, let count = result?.frames.count, count > 0 else { broken = true; return false }
                result?.frames[count - 1].data.append((range.lowerBound + 4)..<range.upperBound)
            case "IEND":
                return false
            default:
                break
            }
            return true
        }
        guard animated, !broken, var structure = result else { return nil }
        structure.frames.removeAll { $0.data.isEmpty }
        return structure.frames.isEmpty ? nil : structure
    }

    /// A standalone PNG holding one frame: the original header with the frame's size, the
    /// palette and transparency chunks, and the frame's data as IDAT.
    static func framePNG(_ data: Data, structure: Structure, frame: FrameChunk) -> Data {
        var out = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        func chunk(_ type: String, _ body: some Collection<UInt8>) {
            let length = UInt32(body.count)
            out.append(contentsOf: [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)])
            var crc = CRC32()
            crc.update(Array(type.utf8))
            crc.update(body)
            out.append(contentsOf: Array(type.utf8))
            out.append(contentsOf: body)
            let value = crc.value
            out.append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
        }
        var header = [UInt8](data[structure.header])
        for (i, shift) in [24, 16, 8, 0].enumerated() {
            header[i] = UInt8((frame.width >> shift) & 0xFF)
            header[4 + i] = UInt8((frame.height >> shift) & 0xFF)
        }
        chunk("IHDR", header)
        for (type, range) in structure.shared { chunk(type, data[range]) }
        var compressed = Data()
        for range in frame.data { compressed.append(data[range]) }
        chunk("IDAT", compressed)
        chunk("IEND", [])
        return out
    }

    /// Decodes every frame and composites it onto the canvas.
    static func decode(_ data: Data, structure: Structure, options: ImageDecodingOptions) throws -> Image {
        let canvasSize = structure.canvas
        try options.checkFrame(canvasSize, format: .png)
        try options.checkAnimation(frames: structure.frames.count, size: canvasSize, format: .png)
        let width = canvasSize.width
        PixelAllocation.observer?(canvasSize.pixelCount * 4)
        var canvas = [UInt8](repeating: 0, count: canvasSize.pixelCount * 4)
        var previous: [UInt8] = []
        var frames: [ImageFrame] = []
        var frameOptions = ImageDecodingOptions()
        frameOptions.pixelFormat = .rgba8
        frameOptions.maxPixelCount = options.maxPixelCount
        for (index, frame) in structure.frames.enumerated() {
            let png = framePNG(data, structure: structure, frame: frame)
            let bitmap = try ImageDecoders.PNG().decodeStill(png, options: frameOptions)
            // APNG: a first frame that says "restore previous" means "clear".
            let dispose = index == 0 && frame.dispose == 2 ? 1 : frame.dispose
            if dispose == 2 {
                if previous.isEmpty { PixelAllocation.observer?(canvas.count) }
                previous = canvas
            }
            bitmap.pixels.withUnsafeBufferPointer { source in
                canvas.withUnsafeMutableBufferPointer { target in
                    for y in 0..<frame.height {
                        for x in 0..<frame.width {
                            let s = (y * frame.width + x) * 4
                            let t = ((frame.top + y) * width + frame.left + x) * 4
                            if frame.blend == 0 || source[s + 3] == 255 {
                                for k in 0..<4 { target[t + k] = source[s + k] }
                            } else if source[s + 3] > 0 {
                                blendOver(source, s, target, t)
                            }
                        }
                    }
                }
            }
            let snapshot = try Bitmap.make(width: width, height: canvasSize.height, format: .rgba8) { buffer in
                buffer.baseAddress?.update(from: canvas, count: canvas.count)
            }
            frames.append(ImageFrame(bitmap: snapshot, duration: frame.duration))
            switch dispose {
            case 1:
                for y in frame.top..<(frame.top + frame.height) {
                    let start = (y * width + frame.left) * 4
                    canvas.replaceSubrange(start..<(start + frame.width * 4), with: repeatElement(0, count: frame.width * 4))
                }
            case 2:
                canvas = previous
            default:
                break
            }
        }
        return Image(uncheckedFrames: frames, loopCount: structure.plays, format: .png, orientation: .up)
    }

    /// Straight-alpha "over": the frame pixel at `s` onto the canvas pixel at `t`.
    private static func blendOver(_ source: UnsafeBufferPointer<UInt8>, _ s: Int, _ target: UnsafeMutableBufferPointer<UInt8>, _ t: Int) {
        let sa = Int(source[s + 3]), da = Int(target[t + 3])
        let outA = sa * 255 + da * (255 - sa)  // scaled by 255
        guard outA > 0 else {
            for k in 0..<4 { target[t + k] = 0 }
            return
        }
        for k in 0..<3 {
            let value = (Int(source[s + k]) * sa * 255 + Int(target[t + k]) * da * (255 - sa) + outA / 2) / outA
            target[t + k] = UInt8(clamping: value)
        }
        target[t + 3] = UInt8(clamping: (outA + 127) / 255)
    }
}

/// Walks the chunks of a PNG.
enum PNGChunks {
    /// Calls `body` with each chunk's type and data range until it returns false or the data ends.
    static func walk(_ data: Data, _ body: (String, Range<Int>) -> Bool) {
        var offset = data.startIndex + 8
        while offset + 8 <= data.endIndex {
            let length = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            let type = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let start = offset + 8
            guard length >= 0, start + length <= data.endIndex else { return }
            if !body(type, start..<(start + length)) { return }
            offset = start + length + 4
        }
    }
}
