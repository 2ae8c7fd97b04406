/// How the bytes of a ``Bitmap`` are laid out.
///
/// Every format has 8 bits per channel and tightly packed rows (no padding). Alpha, when
/// present, is *straight* (not premultiplied): a pixel's colour channels hold its colour as
/// if it were opaque. Decoders keep gray and RGB images without alpha in ``gray8`` and
/// ``rgb8`` to save memory; ask for ``rgba8`` in ``ImageDecodingOptions/pixelFormat`` when
/// one layout for everything is more convenient.
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    /// Bytes per pixel.
    public let channels: Int
    /// Whether the last channel is alpha.
    public let hasAlpha: Bool
    private let name: String

    private init(channels: Int, hasAlpha: Bool, name: String) {
        self.channels = channels
        self.hasAlpha = hasAlpha
        self.name = name
    }

    /// One byte of luminance per pixel.
    public static let gray8 = PixelFormat(channels: 1, hasAlpha: false, name: "gray8")
    /// Red, green, blue: three bytes per pixel.
    public static let rgb8 = PixelFormat(channels: 3, hasAlpha: false, name: "rgb8")
    /// Red, green, blue and straight alpha: four bytes per pixel.
    public static let rgba8 = PixelFormat(channels: 4, hasAlpha: true, name: "rgba8")

    public var description: String { name }
}
