public import struct Foundation.Data

/// Decodes an image from bytes that arrive in pieces, with previews on the way, as browsers
/// (and YYWebImage and SDWebImage) show progressive JPEG and interlaced PNG.
///
/// Feed every chunk to ``append(_:)``; ask ``preview()`` when you could show one; call
/// ``finish()`` after the last chunk for the final image, identical to a one-shot decode.
/// Work stays linear in the input: each format keeps its decoder's state between chunks and
/// never decodes from the start again.
///
/// ```swift
/// let decoder = IncrementalImageDecoder(configuration: .init(blurPreviews: true))
/// for try await chunk in response.body {
///     try decoder.append(Data(chunk))
///     if let preview = try decoder.preview() { show(preview.image) }
/// }
/// let image = try decoder.finish()
/// ```
///
/// What a preview shows: a progressive JPEG's last complete scan at full size; a baseline
/// JPEG's, a non-interlaced PNG's and a WebP's rows so far; an interlaced PNG's last complete
/// Adam7 pass, filled in to full size; a GIF's complete frames. Other formats (animated
/// WebP, APNG frames, formats of registered decoders) give no previews and decode at the end.
///
/// Not thread-safe: use one decoder from one task at a time. Dropping a decoder before
/// ``finish()`` (a cancelled download) frees everything it holds.
public final class IncrementalImageDecoder {
    /// How previews are made.
    public struct Configuration: Sendable {
        /// The least time between two previews, so that a fast network does not flood a slow
        /// consumer. 0.2 seconds by default (YYWebImage's value).
        public var minimumPreviewInterval: Duration
        /// Blur previews of progressive JPEG and interlaced PNG, less as more arrives, and give
        /// no top-down previews of baseline images (YYWebImage's "progressive blur"). `false` by default.
        public var blurPreviews: Bool

        /// A configuration; the defaults are 0.2 s and no blur.
        public init(minimumPreviewInterval: Duration = .milliseconds(200), blurPreviews: Bool = false) {
            self.minimumPreviewInterval = minimumPreviewInterval
            self.blurPreviews = blurPreviews
        }
    }

    private let options: ImageDecodingOptions
    private let configuration: Configuration
    private let registry: ImageDecoderRegistry
    private let elapsed: () -> Duration
    private var data = Data()
    private var decoder: (any IncrementalDecoding)?
    private var lastPreviewTime: Duration?
    private var finished = false

    /// The format, once enough bytes arrived to tell.
    public private(set) var format: ImageFormat?
    /// The last preview returned.
    public private(set) var latestPreview: ImagePreview?
    /// Bytes appended so far.
    public var byteCount: Int { data.count }

    /// The format's decoder, for tests that check it is released.
    package var formatDecoder: AnyObject? { decoder }

    /// A decoder with the given limits and preview configuration, timed by the continuous clock.
    public convenience init(
        options: ImageDecodingOptions = .default, configuration: Configuration = .init(),
        registry: ImageDecoderRegistry = .shared
    ) {
        self.init(options: options, configuration: configuration, registry: registry, clock: ContinuousClock())
    }

    /// A decoder whose preview interval is measured by `clock` (tests pass a manual clock).
    public init<C: Clock>(
        options: ImageDecodingOptions = .default, configuration: Configuration = .init(),
        registry: ImageDecoderRegistry = .shared, clock: C
    ) where C.Duration == Duration {
        self.options = options
        self.configuration = configuration
        self.registry = registry
        let start = clock.now
        self.elapsed = { start.duration(to: clock.now) }
    }

    /// Feeds the next bytes. Throws as soon as the data is known to be bad (corrupt, too large,
    /// an unknown format); a decoder that threw is done.
    public func append(_ chunk: Data) throws {
        guard !finished else { throw ImageError.invalidArgument("append after finish") }
        guard !chunk.isEmpty else { return }
        data.append(chunk)
        if let decoder {
            try chunk.withUnsafeBytes { try decoder.append($0) }
            return
        }
        // Choose a decoder once the signature can be read.
        guard data.count >= ImageFormat.sniffLength else { return }
        try start()
    }

    private func start() throws {
        try options.validate()
        let chosen = try registry.decoder(for: data)
        format = chosen.format
        let decoder: any IncrementalDecoding
        switch chosen {
        case is ImageDecoders.JPEG: decoder = try JPEGIncrementalDecoder(options: options)
        case is ImageDecoders.PNG: decoder = try PNGIncrementalDecoder(options: options)
        case is ImageDecoders.GIF: decoder = GIFIncrementalDecoder(options: options)
        case is ImageDecoders.WebP: decoder = WebPIncrementalDecoder(options: options)
        default: decoder = BufferedIncrementalDecoder(decoder: chosen, options: options)
        }
        self.decoder = decoder
        try data.withUnsafeBytes { try decoder.append($0) }
    }

    /// A new preview, when the minimum interval has passed since the last one and more of the
    /// image is decoded than it showed; otherwise nil.
    public func preview() throws -> ImagePreview? {
        guard let decoder, !finished else { return nil }
        let now = elapsed()
        if let last = lastPreviewTime, now - last < configuration.minimumPreviewInterval { return nil }
        guard let preview = try decoder.makePreview(blurred: configuration.blurPreviews, force: false) else { return nil }
        lastPreviewTime = now
        latestPreview = preview
        return preview
    }

    /// The best preview there is now, whatever the interval: for showing something when the
    /// data ends early.
    public func bestPreview() throws -> ImagePreview? {
        if let decoder, !finished, let preview = try decoder.makePreview(blurred: false, force: true) {
            latestPreview = preview
        }
        return latestPreview
    }

    /// The final image, after the last chunk. Throws ``ImageError/Kind/truncated`` when the
    /// data ended before the image did (``bestPreview()`` still has what arrived).
    public func finish() throws -> Image {
        guard !finished else { throw ImageError.invalidArgument("finish called twice") }
        if decoder == nil {
            guard !data.isEmpty else { throw ImageError.empty }
            try start()
        }
        guard let decoder else { throw ImageError.empty }
        defer {
            finished = true
            self.decoder = nil
        }
        do {
            return try decoder.finish(data: data)
        } catch let error as ImageError where error.kind == .truncated {
            // Keep what arrived: the best preview there is.
            if let preview = try? decoder.makePreview(blurred: false, force: true) { latestPreview = preview }
            throw error
        }
    }
}

/// For formats without a streaming decoder: keeps the bytes and decodes them at the end.
final class BufferedIncrementalDecoder: IncrementalDecoding {
    private let decoder: any ImageDecoding
    private let options: ImageDecodingOptions

    init(decoder: any ImageDecoding, options: ImageDecodingOptions) {
        self.decoder = decoder
        self.options = options
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {}
    func makePreview(blurred: Bool, force: Bool) throws -> ImagePreview? { nil }
    func finish(data: Data) throws -> Image { try decoder.decode(data, options: options) }
}
