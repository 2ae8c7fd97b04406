/// What an image's header says, read without decoding its pixels.
public struct ImageInfo: Hashable, Sendable {
    /// The format, from the signature.
    public var format: ImageFormat
    /// The stored size (before ``orientation`` is applied); the canvas size for animations.
    public var size: PixelSize
    /// The number of frames (1 for still images).
    public var frameCount: Int
    /// Whether the image has an alpha channel or transparent colour.
    public var hasAlpha: Bool
    /// The EXIF orientation, ``ImageOrientation/up`` when the file has none.
    public var orientation: ImageOrientation
    /// How many times an animation plays: 0 forever.
    public var loopCount: Int
    /// Whether the file is progressive (JPEG) or interlaced (PNG, GIF).
    public var isProgressive: Bool

    /// Describes an image.
    public init(
        format: ImageFormat, size: PixelSize, frameCount: Int = 1, hasAlpha: Bool, orientation: ImageOrientation = .up,
        loopCount: Int = 0, isProgressive: Bool = false
    ) {
        self.format = format
        self.size = size
        self.frameCount = frameCount
        self.hasAlpha = hasAlpha
        self.orientation = orientation
        self.loopCount = loopCount
        self.isProgressive = isProgressive
    }
}
