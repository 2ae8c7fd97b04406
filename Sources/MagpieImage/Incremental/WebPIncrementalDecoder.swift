import CWebP
import struct Foundation.Data

/// Incremental WebP for still images through libwebp's incremental decoder: the rows
/// decoded so far. Animated WebP is decoded once complete (no previews).
final class WebPIncrementalDecoder: IncrementalDecoding {
    private let options: ImageDecodingOptions
    private var header: [UInt8] = []          // bytes kept until the features can be read
    private var decoder: OpaquePointer?       // WebPIDecoder
    /// libwebp keeps a pointer to the configuration's options for the decoder's whole life,
    /// so it lives on the heap with the decoder, not on a stack frame.
    private let config = UnsafeMutablePointer<WebPDecoderConfig>.allocate(capacity: 1)
    private var output: UnsafeMutableBufferPointer<UInt8>?
    private var size = PixelSize(width: 0, height: 0)
    private var format = PixelFormat.rgb8
    private var orientation = ImageOrientation.up
    private var animated = false
    private var status = VP8_STATUS_SUSPENDED
    private var previewedRows: Int32 = 0

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    deinit {
        if let decoder { WebPIDelete(decoder) }
        config.deallocate()
        output?.deallocate()
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard !animated, bytes.count > 0 else { return }
        if let decoder {
            status = WebPIAppend(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            try check()
            return
        }
        header.append(contentsOf: bytes.bindMemory(to: UInt8.self))
        var features = WebPBitstreamFeatures()
        let result = header.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        if result == VP8_STATUS_NOT_ENOUGH_DATA { return }
        guard result == VP8_STATUS_OK else { throw ImageDecoders.WebP.error(result) }
        if features.has_animation != 0 {
            animated = true  // decoded once complete
            header = []
            return
        }
        try start(features)
    }

    private func start(_ features: WebPBitstreamFeatures) throws {
        let declared = PixelSize(width: Int(features.width), height: Int(features.height))
        try options.checkFrame(declared, format: .webp)
        // EXIF comes after the image data in most files; the orientation is read at the end.
        let target = options.targetSize.flatMap { $0.width > 0 || $0.height > 0 ? $0 : nil }
        size = ImageDecoders.WebP.scaledSize(declared, target: target) ?? declared
        format = features.has_alpha != 0 || options.pixelFormat == .rgba8 ? .rgba8 : .rgb8
        PixelAllocation.observer?(size.pixelCount * format.channels)
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: size.pixelCount * format.channels)
        buffer.initialize(repeating: 0)
        output = buffer
        config.initialize(to: WebPDecoderConfig())
        guard WebPInitDecoderConfig(config) != 0 else { throw ImageError.corrupt(.webp, "libwebp version mismatch") }
        if size != declared {
            config.pointee.options.use_scaling = 1
            config.pointee.options.scaled_width = Int32(size.width)
            config.pointee.options.scaled_height = Int32(size.height)
        }
        config.pointee.output.colorspace = format == .rgba8 ? MODE_RGBA : MODE_RGB
        config.pointee.output.is_external_memory = 1
        config.pointee.output.u.RGBA.rgba = buffer.baseAddress
        config.pointee.output.u.RGBA.stride = Int32(size.width * format.channels)
        config.pointee.output.u.RGBA.size = buffer.count
        guard let decoder = WebPIDecode(nil, 0, config) else {
            throw ImageError.corrupt(.webp, "cannot start the incremental decoder")
        }
        self.decoder = decoder
        let bytes = header
        header = []
        status = bytes.withUnsafeBufferPointer { WebPIAppend(decoder, $0.baseAddress, $0.count) }
        try check()
    }

    private func check() throws {
        if status != VP8_STATUS_OK && status != VP8_STATUS_SUSPENDED { throw ImageDecoders.WebP.error(status) }
    }

    private func decodedRows() -> Int32 {
        guard let decoder else { return 0 }
        var lastRow: Int32 = 0, width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
        guard WebPIDecGetRGB(decoder, &lastRow, &width, &height, &stride) != nil else { return 0 }
        return lastRow
    }

    private func snapshot() throws -> Image {
        guard let base = output?.baseAddress else { throw ImageError.corrupt(.webp, "no output") }
        let bitmap = try Bitmap.copying(base, width: size.width, height: size.height, format: format)
        return Image(bitmap: bitmap, format: .webp, orientation: orientation)
    }

    func makePreview(blurred: Bool, force: Bool) throws -> ImagePreview? {
        guard force || (!blurred && status == VP8_STATUS_SUSPENDED) else { return nil }
        let rows = decodedRows()
        guard rows > previewedRows || (force && rows > 0) else { return nil }
        previewedRows = rows
        return ImagePreview(image: try snapshot(), kind: .rows(Int(rows)), isBlurred: false)
    }

    func finish(data: Data) throws -> Image {
        if animated || decoder == nil {
            return try ImageDecoders.WebP().decode(data, options: options)
        }
        guard status == VP8_STATUS_OK else { throw ImageError.truncated(.webp) }
        // The orientation (and the conversions the one-shot decoder applies) from the whole file.
        let info = try ImageDecoders.WebP().info(for: data)
        var image = try snapshot()
        image.orientation = info.orientation
        if let requested = options.pixelFormat, requested != image.bitmap.format {
            image = try image.mapFrames { $0.converted(to: requested) }
        }
        return options.applyOrientation ? image.applyingOrientation() : image
    }
}
