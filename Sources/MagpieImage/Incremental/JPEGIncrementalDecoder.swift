import CImageShims
import struct Foundation.Data

/// Incremental JPEG: baseline rows as they arrive; progressive scans through libjpeg's
/// buffered-image mode, each complete scan rendered at full size when a preview is asked for.
final class JPEGIncrementalDecoder: IncrementalDecoding {
    private let stream: OpaquePointer
    private let options: ImageDecodingOptions
    private var format = PixelFormat.rgb8
    private var size = PixelSize(width: 0, height: 0)
    private var orientation = ImageOrientation.up
    private var progressive = false
    private var configured = false
    private var status = Int32(MG_STREAM_NEED_DATA)
    private var previewedRows: UInt32 = 0
    private var previewedScans: Int32 = 0

    init(options: ImageDecodingOptions) throws {
        guard let stream = mg_jpeg_stream_create() else { throw ImageError.corrupt(.jpeg, "out of memory") }
        self.stream = stream
        self.options = options
    }

    deinit { mg_jpeg_stream_destroy(stream) }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try feed(bytes, last: false)
    }

    private func feed(_ bytes: UnsafeRawBufferPointer, last: Bool) throws {
        let pointer = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard mg_jpeg_stream_append(stream, pointer, bytes.count, last ? 1 : 0) == 0 else { throw error() }
        while true {
            status = mg_jpeg_stream_advance(stream)
            switch status {
            case Int32(MG_STREAM_HEADER): try configure()
            case Int32(MG_STREAM_FAILED): throw error()
            default: return
            }
        }
    }

    private func configure() throws {
        let info = mg_jpeg_stream_info(stream).pointee
        let declared = PixelSize(width: Int(info.width), height: Int(info.height))
        try options.checkFrame(declared, format: .jpeg)
        orientation = EXIF.orientation(in: info.exif, count: info.exif_length) ?? .up
        progressive = info.progressive != 0
        format = options.pixelFormat ?? (info.color_space == Int32(MG_JPEG_COLOR_GRAY) ? .gray8 : .rgb8)
        let scale = ImageDecoders.JPEG.scaleNumerator(size: declared, target: options.storedTargetSize(for: orientation))
        var width: UInt32 = 0, height: UInt32 = 0
        guard mg_jpeg_stream_configure(stream, Int32(format.channels), Int32(scale), &width, &height) == 0 else {
            throw error()
        }
        size = PixelSize(width: Int(width), height: Int(height))
        PixelAllocation.observer?(size.pixelCount * format.channels)
        configured = true
    }

    private func error() -> ImageError {
        let message = String(cString: mg_jpeg_stream_message(stream))
        return mg_jpeg_stream_truncated(stream) != 0 ? .truncated(.jpeg) : .corrupt(.jpeg, message.isEmpty ? "libjpeg failed" : message)
    }

    private func snapshot() throws -> Image {
        guard let pixels = mg_jpeg_stream_pixels(stream) else { throw ImageError.corrupt(.jpeg, "no output") }
        let bitmap = try Bitmap.copying(pixels, width: size.width, height: size.height, format: format)
        let image = Image(bitmap: bitmap, format: .jpeg, orientation: orientation)
        return options.applyOrientation ? image.applyingOrientation() : image
    }

    func makePreview(blurred: Bool, force: Bool) throws -> ImagePreview? {
        guard configured, force || status == Int32(MG_STREAM_NEED_DATA) else { return nil }
        if progressive {
            if status == Int32(MG_STREAM_NEED_DATA), mg_jpeg_stream_render_scan(stream) < 0 { throw error() }
            let scans = mg_jpeg_stream_rendered_scans(stream)
            guard scans > previewedScans || (force && scans > 0) else { return nil }
            previewedScans = scans
            var image = try snapshot()
            if blurred {
                // A progressive JPEG usually has about ten scans.
                let progress = min(1, Double(scans) / 10)
                image = try image.mapFrames { $0.progressiveBlur(progress: progress) }
            }
            return ImagePreview(image: image, kind: .scans(Int(scans)), isBlurred: blurred)
        }
        // Top-down previews of a baseline image are skipped when blurring.
        let rows = mg_jpeg_stream_rows(stream)
        guard force || !blurred, rows > previewedRows || (force && rows > 0) else { return nil }
        previewedRows = rows
        return ImagePreview(image: try snapshot(), kind: .rows(Int(rows)), isBlurred: false)
    }

    func finish(data: Data) throws -> Image {
        try feed(UnsafeRawBufferPointer(start: nil, count: 0), last: true)
        switch status {
        case Int32(MG_STREAM_DONE): return try snapshot()
        case Int32(MG_STREAM_TRUNCATED): throw ImageError.truncated(.jpeg)
        default: throw configured ? ImageError.truncated(.jpeg) : error()
        }
    }
}
