/// A decoded image: one or more frames of pixels and what the file said about them.
///
/// All frames of an animation have the same size, the canvas size: each is the complete
/// picture to show at its time, already composited from the file's partial frames.
///
/// ```swift
/// let image = try Image(data: data)                       // sniffs the format, decodes
/// print(image.size, image.frames.count, image.cost)       // 640x480 1 921600
/// let webp = try image.encoded(using: .webp(quality: 0.8))
/// ```
public struct Image: Sendable {
    /// The frames in display order; never empty.
    public private(set) var frames: [ImageFrame]
    /// How many times an animation plays: 0 forever, 1 once, `n` `n` times.
    public var loopCount: Int
    /// The format the image was decoded from; `nil` for images made in memory.
    public var format: ImageFormat?
    /// The EXIF orientation of the pixels; ``ImageOrientation/up`` once applied.
    public var orientation: ImageOrientation

    /// A still image made of `bitmap`.
    public init(bitmap: Bitmap, format: ImageFormat? = nil, orientation: ImageOrientation = .up) {
        self.frames = [ImageFrame(bitmap: bitmap)]
        self.loopCount = 0
        self.format = format
        self.orientation = orientation
    }

    /// An image of `frames`, which must be non-empty and all of one size.
    public init(
        frames: [ImageFrame], loopCount: Int = 0, format: ImageFormat? = nil, orientation: ImageOrientation = .up
    ) throws(ImageError) {
        guard let first = frames.first else { throw .invalidArgument("an image needs at least one frame") }
        for frame in frames where frame.bitmap.size != first.bitmap.size {
            throw .invalidArgument("frames of one image must share a size: \(first.bitmap.size) and \(frame.bitmap.size)")
        }
        guard loopCount >= 0 else { throw .invalidArgument("loop count must not be negative, not \(loopCount)") }
        self.frames = frames
        self.loopCount = loopCount
        self.format = format
        self.orientation = orientation
    }

    package init(uncheckedFrames frames: [ImageFrame], loopCount: Int, format: ImageFormat?, orientation: ImageOrientation) {
        self.frames = frames
        self.loopCount = loopCount
        self.format = format
        self.orientation = orientation
    }

    /// The first frame's bitmap: the still image, or the poster frame of an animation.
    public var bitmap: Bitmap { frames[0].bitmap }
    /// The size of the stored pixels (before ``orientation`` is applied).
    public var size: PixelSize { bitmap.size }
    /// Width of the stored pixels.
    public var width: Int { bitmap.width }
    /// Height of the stored pixels.
    public var height: Int { bitmap.height }
    /// Whether there is more than one frame.
    public var isAnimated: Bool { frames.count > 1 }
    /// Whether the pixels carry an alpha channel.
    public var hasAlpha: Bool { bitmap.format.hasAlpha }
    /// Bytes of decoded pixels in all frames: what a memory cache charges.
    public var cost: Int { frames.reduce(0) { $0 + $1.bitmap.cost } }
    /// The sum of the frame durations.
    public var duration: Duration { frames.reduce(.zero) { $0 + $1.duration } }

    /// The image with every frame's bitmap replaced by `transform`'s result.
    ///
    /// The results must share one size; processors use this to treat animations frame by frame.
    public func mapFrames(_ transform: (Bitmap) throws -> Bitmap) throws -> Image {
        let mapped = try frames.map { ImageFrame(bitmap: try transform($0.bitmap), duration: $0.duration) }
        return try Image(frames: mapped, loopCount: loopCount, format: format, orientation: orientation)
    }
}

/// One frame: a bitmap and how long it stays on screen.
public struct ImageFrame: Sendable, Equatable {
    /// The complete picture of this frame.
    public var bitmap: Bitmap
    /// How long the frame is shown; zero for still images. Players usually show frames
    /// of 10 ms or less for 100 ms, as browsers do; the value here is what the file says.
    public var duration: Duration

    /// A frame of `bitmap`, shown for `duration`.
    public init(bitmap: Bitmap, duration: Duration = .zero) {
        self.bitmap = bitmap
        self.duration = duration
    }
}
