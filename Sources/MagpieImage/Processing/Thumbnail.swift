public import struct Foundation.Data

/// What thumbnail to make: a size and how to fit the image into it.
public struct ThumbnailOptions: Hashable, Sendable {
    /// The box the thumbnail fits (or fills).
    public var size: PixelSize
    /// ``ImageProcessors/Resize/ContentMode/fit`` by default.
    public var contentMode: ImageProcessors.Resize.ContentMode
    /// Where ``ImageProcessors/Resize/ContentMode/fill`` crops. Centre by default.
    public var anchor: ImageProcessors.Resize.Anchor
    /// Whether a smaller image is enlarged to the size. `false` by default.
    public var upscale: Bool

    /// Options for a thumbnail of `size`.
    public init(
        size: PixelSize, contentMode: ImageProcessors.Resize.ContentMode = .fit,
        anchor: ImageProcessors.Resize.Anchor = .center, upscale: Bool = false
    ) {
        self.size = size
        self.contentMode = contentMode
        self.anchor = anchor
        self.upscale = upscale
    }

    /// The resize that makes this thumbnail from a decoded, upright image.
    public var resize: ImageProcessors.Resize {
        ImageProcessors.Resize(size: size, contentMode: contentMode, anchor: anchor, upscale: upscale)
    }
}

extension Image {
    /// A thumbnail straight from encoded bytes: the decoder downsamples while decoding (JPEG
    /// DCT scaling, WebP scaling) to the smallest size not below twice the thumbnail, the
    /// EXIF orientation is applied, then a Lanczos resize gives the exact size.
    ///
    /// ```swift
    /// let thumbnail = try Image(thumbnailOf: data, options: ThumbnailOptions(size: PixelSize(width: 256, height: 256)))
    /// ```
    public init(
        thumbnailOf data: Data, options: ThumbnailOptions, decoding: ImageDecodingOptions = .default,
        registry: ImageDecoderRegistry = .shared
    ) throws {
        try options.resize.validate()
        let info = try ImageInfo(data: data, registry: registry)
        let upright = info.orientation.swapsDimensions ? info.size.transposed : info.size
        let (target, _) = try options.resize.plan(for: upright)
        var decodeOptions = decoding
        decodeOptions.applyOrientation = true
        // For fill, the decoded image must cover the box the crop is taken from.
        let cover: PixelSize
        if options.contentMode == .fill {
            let scale = max(Double(target.width) / Double(upright.width), Double(target.height) / Double(upright.height))
            cover = PixelSize(width: Int((Double(upright.width) * scale).rounded(.up)), height: Int((Double(upright.height) * scale).rounded(.up)))
        } else {
            cover = target
        }
        decodeOptions.targetSize = PixelSize(width: cover.width * 2, height: cover.height * 2)
        let decoded = try Image(data: data, options: decodeOptions, registry: registry)
        self = try options.resize.process(decoded)
    }
}
