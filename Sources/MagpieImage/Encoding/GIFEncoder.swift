public import struct Foundation.Data
import CGIF

extension ImageEncoders {
    /// Encodes GIF through giflib, animated when the image has several frames.
    ///
    /// Each frame gets its own palette of up to 256 colours from ``PaletteQuantizer`` (exact
    /// when the frame has that few colours; median cut otherwise; no dithering). Pixels with
    /// alpha below 128 become transparent. Every frame is written whole, and frames of an
    /// animation with transparency are cleared before the next ("restore to background"),
    /// so what is shown is exactly each frame. Durations are rounded to GIF's 10 ms units.
    /// ``Image/loopCount`` 0 loops forever; `n` plays `n` times.
    public struct GIF: ImageEncoding {
        /// Creates the encoder.
        public init() {}

        public var format: ImageFormat { .gif }

        private final class Sink {
            var bytes: [UInt8] = []
        }

        private static let write: OutputFunc = { gif, bytes, length in
            guard let gif, let bytes, length > 0, let user = gif.pointee.UserData else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(length)))
            return length
        }

        public func encode(_ image: Image) throws -> Data {
            guard image.width <= 65_535, image.height <= 65_535 else {
                throw ImageError.encodingFailed(.gif, "GIF allows at most 65535 pixels a side, not \(image.size)")
            }
            let sink = Sink()
            var error: Int32 = 0
            guard let gif = EGifOpen(Unmanaged.passUnretained(sink).toOpaque(), Self.write, &error) else {
                throw ImageError.encodingFailed(.gif, Self.message(error))
            }
            var closed = false
            defer { if !closed { EGifCloseFile(gif, &error) } }
            func check(_ status: Int32) throws {
                guard status == GIF_OK else { throw ImageError.encodingFailed(.gif, Self.message(gif.pointee.Error)) }
            }

            EGifSetGifVersion(gif, true)
            try check(EGifPutScreenDesc(gif, Int32(image.width), Int32(image.height), 8, 0, nil))
            if image.isAnimated && image.loopCount != 1 {
                let repeats = image.loopCount == 0 ? 0 : min(image.loopCount - 1, 65_535)
                try check(EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE))
                try check(EGifPutExtensionBlock(gif, 11, Array("NETSCAPE2.0".utf8)))
                try check(EGifPutExtensionBlock(gif, 3, [1, UInt8(repeats & 0xFF), UInt8(repeats >> 8)]))
                try check(EGifPutExtensionTrailer(gif))
            }
            let clearBetweenFrames = image.isAnimated && image.hasAlpha
            for frame in image.frames {
                var quantized = PaletteQuantizer.quantize(frame.bitmap)
                if image.isAnimated || quantized.transparentIndex != nil {
                    var control = GraphicsControlBlock(
                        DisposalMode: clearBetweenFrames ? DISPOSE_BACKGROUND : DISPOSE_DO_NOT, UserInputFlag: false,
                        DelayTime: Int32(clamping: (frame.duration.milliseconds + 5) / 10),
                        TransparentColor: Int32(quantized.transparentIndex ?? -1))
                    var extensionBytes = [UInt8](repeating: 0, count: 4)
                    let length = EGifGCBToExtension(&control, &extensionBytes)
                    try check(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), extensionBytes))
                }
                var size = 2
                while size < quantized.palette.count { size *= 2 }
                var colors = quantized.palette.map { GifColorType(Red: $0.r, Green: $0.g, Blue: $0.b) }
                colors += Array(repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: size - colors.count)
                guard let map = GifMakeMapObject(Int32(size), colors) else {
                    throw ImageError.encodingFailed(.gif, "cannot make a colour table of \(size) entries")
                }
                defer { GifFreeMapObject(map) }
                try check(EGifPutImageDesc(gif, 0, 0, Int32(image.width), Int32(image.height), false, map))
                let width = image.width
                try quantized.indices.withUnsafeMutableBufferPointer { indices in
                    guard let base = indices.baseAddress else { return }
                    for y in 0..<image.height {
                        try check(EGifPutLine(gif, base + y * width, Int32(width)))
                    }
                }
            }
            closed = true
            guard EGifCloseFile(gif, &error) == GIF_OK else {
                throw ImageError.encodingFailed(.gif, Self.message(error))
            }
            return Data(sink.bytes)
        }

        private static func message(_ code: Int32) -> String {
            GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        }
    }
}

extension ImageEncoding where Self == ImageEncoders.GIF {
    /// A GIF encoder (animated when the image has several frames).
    public static func gif() -> ImageEncoders.GIF {
        ImageEncoders.GIF()
    }
}
