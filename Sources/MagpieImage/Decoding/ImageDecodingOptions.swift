/// Limits and choices for one decode.
///
/// The limits are the decompression-bomb guard: each is checked against the sizes the
/// file's header declares before any pixel buffer is allocated.
public struct ImageDecodingOptions: Hashable, Sendable {
    /// The most pixels one frame may have. 100 megapixels by default.
    public var maxPixelCount: Int = 100_000_000
    /// The most pixels all frames of an animation may have together (each frame is a
    /// full canvas). 400 megapixels by default: 1.6 GB of RGBA.
    public var maxTotalPixelCount: Int = 400_000_000
    /// The most frames an animation may have. 2,000 by default.
    public var maxFrameCount: Int = 2_000
    /// Downsample while decoding to a size no smaller than this in either dimension, when the
    /// format can (JPEG by DCT scaling to the smallest of 1/8...8/8 that still covers it, WebP
    /// by its scaler, keeping the aspect ratio). Given in displayed (oriented) pixels. A
    /// dimension of 0 leaves that side free. Other formats return their full size. `nil` by default.
    public var targetSize: PixelSize?
    /// Decode only the first frame of an animation (YYWebImage's "ignore animated image").
    /// `false` by default.
    public var firstFrameOnly: Bool = false
    /// Turn the pixels upright according to the EXIF orientation; the image then reports
    /// ``ImageOrientation/up``. `false` by default: the orientation is only reported.
    public var applyOrientation: Bool = false
    /// The pixel layout to produce; `nil` (the default) keeps gray as ``PixelFormat/gray8``
    /// and opaque colour as ``PixelFormat/rgb8``.
    public var pixelFormat: PixelFormat?

    /// The defaults.
    public init() {}

    /// The defaults.
    public static let `default` = ImageDecodingOptions()

    /// Throws when a limit is not positive or the target size is negative.
    public func validate() throws(ImageError) {
        guard maxPixelCount > 0, maxTotalPixelCount > 0, maxFrameCount > 0 else {
            throw .invalidArgument(
                "decode limits must be positive (pixels \(maxPixelCount), total \(maxTotalPixelCount), frames \(maxFrameCount))")
        }
        if let target = targetSize, target.width < 0 || target.height < 0 {
            throw .invalidArgument("target size must not be negative, not \(target)")
        }
    }

    /// Throws ``ImageError/Kind/tooLarge`` when one frame of `size` passes ``maxPixelCount``.
    package func checkFrame(_ size: PixelSize, format: ImageFormat) throws(ImageError) {
        guard size.width > 0, size.height > 0 else {
            throw .corrupt(format, "the header declares an empty image (\(size))")
        }
        if size.pixelCount > maxPixelCount {
            throw .tooLarge(format, size: size, limit: maxPixelCount)
        }
    }

    /// Throws when `frames` canvases of `size` pass the frame count or total pixel limits.
    package func checkAnimation(frames: Int, size: PixelSize, format: ImageFormat) throws(ImageError) {
        if frames > maxFrameCount { throw .tooManyFrames(format, limit: maxFrameCount) }
        let total = size.pixelCount.multipliedReportingOverflow(by: frames)
        if total.overflow || total.partialValue > maxTotalPixelCount {
            throw .tooLarge(
                format, frames: frames, size: size, total: total.overflow ? Int.max : total.partialValue,
                limit: maxTotalPixelCount)
        }
    }

    /// The target size in stored pixels: exchanged when the orientation turns the image.
    package func storedTargetSize(for orientation: ImageOrientation) -> PixelSize? {
        guard let target = targetSize, target.width > 0 || target.height > 0 else { return nil }
        return orientation.swapsDimensions ? target.transposed : target
    }
}
