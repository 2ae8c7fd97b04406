import CImageShims
import struct Foundation.Data

/// Incremental PNG over libpng's progressive reader: rows as they arrive, or for Adam7 each
/// complete pass filled in to full size (every known pixel covers the block it stands for).
final class PNGIncrementalDecoder: IncrementalDecoding {
    private let stream: OpaquePointer
    private let options: ImageDecodingOptions
    private var status = Int32(MG_STREAM_NEED_DATA)
    private var previewedRows: UInt32 = 0
    private var previewedPasses: Int32 = 0
    private var observed = false

    init(options: ImageDecodingOptions) throws {
        let channels: Int32 = options.pixelFormat == .rgba8 ? 4 : 0
        guard let stream = mg_png_stream_create(channels, UInt64(options.maxPixelCount)) else {
            throw ImageError.corrupt(.png, "out of memory")
        }
        self.stream = stream
        self.options = options
    }

    deinit { mg_png_stream_destroy(stream) }

    private var header: mg_png_info? { mg_png_stream_header(stream)?.pointee }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0 else { return }
        status = mg_png_stream_append(stream, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        if status == Int32(MG_STREAM_FAILED) { throw error() }
        if !observed, let header, mg_png_stream_pixels(stream) != nil {
            observed = true
            PixelAllocation.observer?(Int(header.width) * Int(header.height) * Int(mg_png_stream_channels(stream)))
        }
    }

    private func error() -> ImageError {
        if mg_png_stream_too_large(stream) != 0, let header {
            return .tooLarge(.png, size: PixelSize(width: Int(header.width), height: Int(header.height)), limit: options.maxPixelCount)
        }
        let message = String(cString: mg_png_stream_message(stream))
        return .corrupt(.png, message.isEmpty ? "libpng failed" : message)
    }

    private var pixelFormat: PixelFormat {
        switch mg_png_stream_channels(stream) {
        case 1: .gray8
        case 3: .rgb8
        default: .rgba8
        }
    }

    /// libpng's progressive reader skips eXIf, so the orientation is read from the chunks.
    private var orientation: ImageOrientation?

    private func snapshot(filledAfterPass pass: Int? = nil) throws -> Image {
        guard let header, let pixels = mg_png_stream_pixels(stream) else {
            throw ImageError.corrupt(.png, "no output")
        }
        let width = Int(header.width), height = Int(header.height), format = pixelFormat
        var bitmap: Bitmap
        if let pass {
            bitmap = try Self.filled(pixels, width: width, height: height, format: format, pass: pass)
        } else {
            bitmap = try Bitmap.copying(pixels, width: width, height: height, format: format)
        }
        if let requested = options.pixelFormat, requested != bitmap.format { bitmap = bitmap.converted(to: requested) }
        let orientation = self.orientation ?? EXIF.orientation(in: header.exif, count: header.exif_length) ?? .up
        let image = Image(bitmap: bitmap, format: .png, orientation: orientation)
        return options.applyOrientation ? image.applyingOrientation() : image
    }

    /// The block each known pixel covers after Adam7 pass 1...7.
    private static let blocks = [(8, 8), (4, 8), (4, 4), (2, 4), (2, 2), (1, 2), (1, 1)]

    /// The pixels known after `pass` (at multiples of the pass's block size), each repeated over its block.
    static func filled(
        _ source: UnsafePointer<UInt8>, width: Int, height: Int, format: PixelFormat, pass: Int
    ) throws -> Bitmap {
        let (bw, bh) = blocks[max(1, min(7, pass)) - 1]
        let c = format.channels, stride = width * c
        return try Bitmap.make(width: width, height: height, format: format) { out in
            guard let dst = out.baseAddress else { return }
            for y in 0..<height {
                let sourceRow = source + (y - y % bh) * stride
                let row = dst + y * stride
                if y % bh != 0 {
                    // The same as the block's first row, which is already filled.
                    row.update(from: dst + (y - y % bh) * stride, count: stride)
                    continue
                }
                for x in 0..<width {
                    let from = sourceRow + (x - x % bw) * c
                    for k in 0..<c { row[x * c + k] = from[k] }
                }
            }
        }
    }

    func makePreview(blurred: Bool, force: Bool) throws -> ImagePreview? {
        guard let header, mg_png_stream_pixels(stream) != nil, force || status == Int32(MG_STREAM_NEED_DATA) else {
            return nil
        }
        if header.interlaced != 0 {
            let passes = mg_png_stream_completed_passes(stream)
            guard passes > previewedPasses || (force && passes > 0) else { return nil }
            previewedPasses = passes
            var image = try snapshot(filledAfterPass: Int(passes))
            if blurred {
                let progress = Double(passes) / 7
                image = try image.mapFrames { $0.progressiveBlur(progress: progress) }
            }
            return ImagePreview(image: image, kind: .passes(Int(passes)), isBlurred: blurred)
        }
        let rows = mg_png_stream_rows(stream)
        guard force || !blurred, rows > previewedRows || (force && rows > 0) else { return nil }
        previewedRows = rows
        return ImagePreview(image: try snapshot(), kind: .rows(Int(rows)), isBlurred: false)
    }

    func finish(data: Data) throws -> Image {
        guard status == Int32(MG_STREAM_DONE) else {
            if status == Int32(MG_STREAM_FAILED) { throw error() }
            throw ImageError.truncated(.png)
        }
        // An animated PNG's frames come from the one-shot decoder; the stream read only the default image.
        if !options.firstFrameOnly, APNG.isAnimated(data) {
            return try ImageDecoders.PNG().decode(data, options: options)
        }
        PNGChunks.walk(data) { type, range in
            if type == "eXIf" {
                orientation = data[range].withUnsafeBytes { EXIF.orientation(in: $0) }
                return false
            }
            return type != "IEND"
        }
        return try snapshot()
    }
}
