/// What went wrong while decoding, encoding or transforming an image.
///
/// A struct rather than an enum so that new kinds can be added without breaking callers:
/// compare ``kind`` with the static members of ``Kind``.
///
/// ```swift
/// do {
///     let image = try Image(data: data)
/// } catch let error as ImageError where error.kind == .tooLarge {
///     print(error) // "PNG image of 100000x100000 pixels (10000000000) exceeds the limit of 100000000 pixels"
/// }
/// ```
public struct ImageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category of an ``ImageError``.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// There were no bytes at all.
        public static let empty = Kind("empty")
        /// The first bytes match no format Magpie knows.
        public static let unknownFormat = Kind("unknownFormat")
        /// The format is known (AVIF, HEIC, TIFF...) but no registered decoder reads it.
        public static let unsupportedFormat = Kind("unsupportedFormat")
        /// The data ends before the image does.
        public static let truncated = Kind("truncated")
        /// The data is malformed; ``ImageError/detail`` says how.
        public static let corrupt = Kind("corrupt")
        /// The image has more pixels than the limit allows; see ``ImageError/size`` and ``ImageError/limit``.
        public static let tooLarge = Kind("tooLarge")
        /// The animation has more frames than the limit allows.
        public static let tooManyFrames = Kind("tooManyFrames")
        /// The encoder could not produce the requested format.
        public static let encodingFailed = Kind("encodingFailed")
        /// A parameter is impossible: a zero size, a crop outside the image, a quality above 1.
        public static let invalidArgument = Kind("invalidArgument")

        public var description: String { name }
    }

    /// The category of the error.
    public let kind: Kind
    /// The format of the data, when it is known.
    public let format: ImageFormat?
    /// What was wrong, in words.
    public let detail: String
    /// For ``Kind/tooLarge``: the size the data declares.
    public let size: PixelSize?
    /// For ``Kind/tooLarge`` and ``Kind/tooManyFrames``: the limit that was passed.
    public let limit: Int?

    private init(_ kind: Kind, _ format: ImageFormat?, _ detail: String, size: PixelSize? = nil, limit: Int? = nil) {
        self.kind = kind
        self.format = format
        self.detail = detail
        self.size = size
        self.limit = limit
    }

    /// A message for people: what was wrong and with what.
    public var description: String {
        let name = format.map { "\($0) " } ?? ""
        switch kind {
        case .empty: return "empty data: there is no image to decode"
        case .unknownFormat: return "unknown image format: \(detail)"
        case .unsupportedFormat: return "unsupported format \(format?.description ?? detail)"
        case .truncated: return "truncated \(name)data: \(detail)"
        case .corrupt: return "corrupt \(name)data: \(detail)"
        case .encodingFailed: return "cannot encode \(name)image: \(detail)"
        default: return detail
        }
    }

    /// No bytes.
    public static let empty = ImageError(.empty, nil, "")

    /// The first bytes match no known signature.
    public static func unknownFormat(firstBytes: some Collection<UInt8>) -> ImageError {
        let hex = firstBytes.prefix(8).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: " ")
        return ImageError(.unknownFormat, nil, hex.isEmpty ? "no bytes" : "the data starts with \(hex)")
    }

    /// A known format that nothing here decodes.
    public static func unsupportedFormat(_ format: ImageFormat) -> ImageError {
        ImageError(.unsupportedFormat, format, "no decoder is registered for \(format)")
    }

    /// The data ends before the image does.
    public static func truncated(_ format: ImageFormat?, _ detail: String = "the data ends before the image does") -> ImageError {
        ImageError(.truncated, format, detail)
    }

    /// The data is malformed.
    public static func corrupt(_ format: ImageFormat?, _ detail: String) -> ImageError {
        ImageError(.corrupt, format, detail)
    }

    /// The image declares `size`, whose pixel count is above `limit`.
    public static func tooLarge(_ format: ImageFormat?, size: PixelSize, limit: Int) -> ImageError {
        let article = format.map { "\($0) image" } ?? "image"
        return ImageError(
            .tooLarge, format,
            "\(article) of \(size) pixels (\(size.pixelCount)) exceeds the limit of \(limit) pixels",
            size: size, limit: limit)
    }

    /// An animation whose frames together need `total` pixels, above `limit`.
    public static func tooLarge(_ format: ImageFormat?, frames: Int, size: PixelSize, total: Int, limit: Int) -> ImageError {
        let article = format.map { "\($0) animation" } ?? "animation"
        return ImageError(
            .tooLarge, format,
            "\(article) of \(frames) frames of \(size) needs \(total) pixels, more than the limit of \(limit) for all frames",
            size: size, limit: limit)
    }

    /// An animation with more than `limit` frames.
    public static func tooManyFrames(_ format: ImageFormat?, limit: Int) -> ImageError {
        let article = format.map { "\($0) animation" } ?? "animation"
        return ImageError(.tooManyFrames, format, "\(article) has more than \(limit) frames, the limit", limit: limit)
    }

    /// The encoder failed.
    public static func encodingFailed(_ format: ImageFormat?, _ detail: String) -> ImageError {
        ImageError(.encodingFailed, format, detail)
    }

    /// An impossible parameter.
    public static func invalidArgument(_ detail: String) -> ImageError {
        ImageError(.invalidArgument, nil, detail)
    }
}
