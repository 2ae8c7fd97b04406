public import Foundation
public import MagpieImage

/// How urgent a load is. Shared work runs at the highest priority of its callers.
public enum ImagePriority: Int, Comparable, Sendable, CaseIterable {
    case veryLow = 0, low, normal, high, veryHigh

    public static func < (a: ImagePriority, b: ImagePriority) -> Bool { a.rawValue < b.rawValue }
}

/// Options of a load, named after the seeds' where they still mean something.
public struct ImageOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Report previews while the image arrives (progressive JPEG scans, interlaced PNG passes).
    public static let progressive = ImageOptions(rawValue: 1 << 0)
    /// Blur the previews of a progressive load.
    public static let progressiveBlur = ImageOptions(rawValue: 1 << 1)
    /// Honour the response's Cache-Control and Expires: serve fresh disk entries, revalidate
    /// stale ones. Magpie's disk tier stays the only store.
    public static let useHTTPCache = ImageOptions(rawValue: 1 << 2)
    /// Accept any TLS certificate for this request only.
    public static let allowInvalidCertificates = ImageOptions(rawValue: 1 << 3)
    /// Send and store cookies.
    public static let handleCookies = ImageOptions(rawValue: 1 << 4)
    /// Skip cached results and ask the server, with `If-None-Match`/`If-Modified-Since` when
    /// the cached bytes have validators; a 304 keeps the cached bytes (YYWebImage's refresh).
    public static let refreshCache = ImageOptions(rawValue: 1 << 5)
    /// Neither read nor write the disk tier.
    public static let ignoreDiskCache = ImageOptions(rawValue: 1 << 6)
    /// Return the data only; no decoding, no processing, no memory caching.
    public static let ignoreImageDecoding = ImageOptions(rawValue: 1 << 7)
    /// Decode the first frame only.
    public static let ignoreAnimatedImage = ImageOptions(rawValue: 1 << 8)
    /// Fail at once for a URL whose earlier load failed for good (404, 410, undecodable data),
    /// and remember such failures.
    public static let ignoreFailedURL = ImageOptions(rawValue: 1 << 9)
    /// Decode downsampled so that the bitmap stays under the configuration's byte budget.
    public static let scaleDownLargeImages = ImageOptions(rawValue: 1 << 10)
    /// Count this load in the network activity counter.
    public static let showNetworkActivity = ImageOptions(rawValue: 1 << 11)
    /// The same as priority ``ImagePriority/low``.
    public static let lowPriority = ImageOptions(rawValue: 1 << 12)
    /// The same as priority ``ImagePriority/high``.
    public static let highPriority = ImageOptions(rawValue: 1 << 13)
}

/// What to load and how.
public struct ImageRequest: Sendable {
    /// The image's URL: http, https or file. Nil fails at once.
    public var url: URL? {
        didSet { urlString = url?.absoluteString }
    }
    /// The URL's absolute string, made once: it is the default cache key, read on every lookup.
    private(set) var urlString: String?
    /// Applied in order after decoding; the result is cached under the cache key plus their
    /// identifiers. Empty: the configuration's shared transform, if any, applies.
    public var processors: [any ImageProcessing]
    /// Decode straight to a thumbnail (downsampled while decoding, upright), before the
    /// processors. Part of the decode's identity: loads with other thumbnail options decode
    /// separately.
    public var thumbnail: ThumbnailOptions?
    /// The priority; changeable while running through ``ImageTask/priority``.
    public var priority: ImagePriority
    /// Options.
    public var options: ImageOptions
    /// Replaces the key the cache-key filter would make.
    public var cacheKey: String?
    /// Header fields added to the configuration's (after the headers filter).
    public var headers: [String: String]

    /// A request for `url`.
    public init(
        url: URL?, processors: [any ImageProcessing] = [], thumbnail: ThumbnailOptions? = nil, priority: ImagePriority = .normal,
        options: ImageOptions = [], cacheKey: String? = nil, headers: [String: String] = [:]
    ) {
        self.url = url
        self.urlString = url?.absoluteString
        self.processors = processors
        self.thumbnail = thumbnail
        self.priority = options.contains(.highPriority) ? .high : options.contains(.lowPriority) ? .low : priority
        self.options = options
        self.cacheKey = cacheKey
        self.headers = headers
    }

    /// A request for a URL string (nil or invalid fails when loaded).
    public init(string: String?, processors: [any ImageProcessing] = [], options: ImageOptions = []) {
        self.init(url: string.flatMap(URL.init(string:)), processors: processors, options: options)
    }
}

/// A transform applied to every request that names no processors of its own (YYWebImage's
/// shared transform block).
public struct SharedTransform: Sendable {
    /// Part of the cache key of every image it makes; change it whenever the transform changes.
    public let identifier: String
    let apply: @Sendable (Image, URL) throws -> Image

    /// Processors applied in order.
    public init(_ processors: [any ImageProcessing]) {
        identifier = processors.map(\.identifier).joined(separator: "|")
        apply = { image, _ in try image.processed(by: processors) }
    }

    /// A closure that also receives the URL, named by `identifier`.
    public init(identifier: String, _ transform: @escaping @Sendable (Image, URL) throws -> Image) {
        self.identifier = identifier
        apply = transform
    }
}
