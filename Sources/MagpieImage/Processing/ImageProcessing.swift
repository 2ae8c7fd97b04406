/// Something that turns one image into another: a resize, a crop, a blur.
///
/// The ``identifier`` names the transformation and its parameters, so that caches can keep
/// processed images under keys like `"https://…/a.jpg" + "resize(320x0,fit,upscale=no)"`.
/// Two processors with the same identifier must produce the same result.
///
/// ```swift
/// let thumbnail = try image.processed(by: [.resize(width: 320), .roundedCorners(radius: 8)])
/// ```
///
/// Animated images are processed frame by frame.
public protocol ImageProcessing: Sendable {
    /// A stable description of the transformation and its parameters, for cache keys.
    var identifier: String { get }
    /// The processed image. Throws ``ImageError`` with kind ``ImageError/Kind/invalidArgument``
    /// for impossible parameters.
    func process(_ image: Image) throws -> Image
}

/// The built-in processors; use them through the static members of ``ImageProcessing``
/// (`.resize(width:)`, `.crop(_:)`, `.gaussianBlur(radius:)`…).
public enum ImageProcessors {}

extension Image {
    /// The image after each processor in turn.
    public func processed(by processors: [any ImageProcessing]) throws -> Image {
        try processors.reduce(self) { try $1.process($0) }
    }

    /// The image after `processor`.
    public func processed(by processor: some ImageProcessing) throws -> Image {
        try processor.process(self)
    }
}

extension ImageProcessors {
    /// Several processors applied in order, as one.
    public struct Composition: ImageProcessing {
        /// The processors, in the order they run.
        public var processors: [any ImageProcessing]

        /// Composes `processors`.
        public init(_ processors: [any ImageProcessing]) {
            self.processors = processors
        }

        public var identifier: String { processors.map(\.identifier).joined(separator: "|") }

        public func process(_ image: Image) throws -> Image {
            try image.processed(by: processors)
        }
    }

    /// A processor made of a closure and the identifier you give it (YYWebImage's transform
    /// block). The identifier must change whenever what the closure does changes.
    public struct Anonymous: ImageProcessing {
        public let identifier: String
        private let closure: @Sendable (Image) throws -> Image

        /// A processor named `identifier` that runs `closure`.
        public init(identifier: String, _ closure: @escaping @Sendable (Image) throws -> Image) {
            self.identifier = identifier
            self.closure = closure
        }

        public func process(_ image: Image) throws -> Image {
            try closure(image)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Several processors applied in order.
    public static func composition(_ processors: [any ImageProcessing]) -> ImageProcessors.Composition {
        ImageProcessors.Composition(processors)
    }
}

extension ImageProcessing where Self == ImageProcessors.Anonymous {
    /// A processor made of a closure, named by `identifier`.
    public static func anonymous(
        identifier: String, _ closure: @escaping @Sendable (Image) throws -> Image
    ) -> ImageProcessors.Anonymous {
        ImageProcessors.Anonymous(identifier: identifier, closure)
    }
}

/// Formats a number for an identifier: no trailing ".0", no locale.
func identifierNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
}
