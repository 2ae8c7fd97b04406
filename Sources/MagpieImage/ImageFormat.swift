/// An image file format, identified by a short lowercase name (`"jpeg"`, `"png"`...).
///
/// Extensible: a decoder registered for another format names its own, as in
/// `ImageFormat("qoi")`.
public struct ImageFormat: Hashable, Sendable, CustomStringConvertible {
    /// The lowercase identifier: `"jpeg"`, `"png"`, `"gif"`, `"webp"`...
    public let identifier: String
    private let displayName: String?

    /// A format named by `identifier` (lowercased).
    public init(_ identifier: String) {
        self.identifier = identifier.lowercased()
        self.displayName = nil
    }

    private init(_ identifier: String, displayName: String) {
        self.identifier = identifier
        self.displayName = displayName
    }

    public static let jpeg = ImageFormat("jpeg", displayName: "JPEG")
    public static let png = ImageFormat("png", displayName: "PNG")
    public static let gif = ImageFormat("gif", displayName: "GIF")
    public static let webp = ImageFormat("webp", displayName: "WebP")
    public static let avif = ImageFormat("avif", displayName: "AVIF")
    public static let heic = ImageFormat("heic", displayName: "HEIC")
    public static let tiff = ImageFormat("tiff", displayName: "TIFF")
    public static let jpegXL = ImageFormat("jxl", displayName: "JPEG XL")
    public static let bmp = ImageFormat("bmp", displayName: "BMP")
    public static let ico = ImageFormat("ico", displayName: "ICO")

    /// The name people use: `"JPEG"`, `"WebP"`, `"JPEG XL"`; the identifier in capitals otherwise.
    public var description: String { displayName ?? identifier.uppercased() }

    public static func == (lhs: ImageFormat, rhs: ImageFormat) -> Bool { lhs.identifier == rhs.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    /// The formats Magpie recognises by signature.
    public static let known: [ImageFormat] = [.jpeg, .png, .gif, .webp, .avif, .heic, .tiff, .jpegXL, .bmp, .ico]

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch identifier {
        case "jpeg": "jpg"
        case "tiff": "tif"
        default: identifier
        }
    }

    /// The media type, for Content-Type headers.
    public var mimeType: String {
        switch identifier {
        case "jpeg", "png", "gif", "webp", "avif", "heic", "tiff", "bmp": "image/\(identifier)"
        case "jxl": "image/jxl"
        case "ico": "image/x-icon"
        default: "application/octet-stream"
        }
    }

    /// The format named by a file extension or identifier (`"jpg"`, `"JPEG"`, `"webp"`), if known.
    public init?(fileExtension: String) {
        let name = fileExtension.lowercased().trimmingPrefix(".")
        switch name {
        case "jpg", "jpeg", "jpe", "jfif": self = .jpeg
        case "png", "apng": self = .png
        case "gif": self = .gif
        case "webp": self = .webp
        case "avif": self = .avif
        case "heic", "heif": self = .heic
        case "tif", "tiff": self = .tiff
        case "jxl": self = .jpegXL
        case "bmp", "dib": self = .bmp
        case "ico", "cur": self = .ico
        default: return nil
        }
    }
}
