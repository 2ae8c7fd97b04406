public import Foundation
public import MagpieImage
public import MagpieNetworking

/// Where a result came from.
public enum ImageSource: String, Sendable, Hashable, CustomStringConvertible {
    /// The memory cache, found before the call returned (the callback ran synchronously).
    case memoryFast
    /// The memory cache, found after the load started (another caller had just put it there).
    case memory
    /// The disk cache.
    case disk
    /// The network (or a local file for `file:` URLs).
    case remote

    public var description: String { rawValue }
}

/// The stage a callback reports.
public enum ImageStage: String, Sendable, Hashable {
    /// Bytes or a preview arrived; more will follow.
    case progress
    /// The caller cancelled; nothing more will follow.
    case cancelled
    /// The load ended, with an image or an error.
    case finished
}

/// A finished load.
public struct ImageResponse: Sendable {
    /// The image; nil only for ``ImageOptions/ignoreImageDecoding`` loads.
    public var image: Image?
    /// The encoded bytes, when the load had them (always for data-only loads; for remote and
    /// disk loads of unprocessed images).
    public var data: Data?
    /// The URL asked for.
    public var url: URL
    /// Where it came from.
    public var source: ImageSource
    /// The HTTP status of a remote load (200, or 304 for a revalidated one).
    public var status: Int?
    /// The HTTP response headers of a remote load.
    public var headers: HeaderFields?
}

/// Why a load failed.
public struct ImagePipelineError: Error, Sendable, CustomStringConvertible {
    /// The category of an ``ImagePipelineError``.
    public enum Kind: String, Sendable, Hashable {
        /// The request had no URL, or one that is not http, https or file.
        case invalidURL
        /// The caller cancelled.
        case cancelled
        /// The URL failed for good earlier and the request asked to skip such URLs.
        case failedURL
        /// The transfer failed (see ``ImagePipelineError/underlying``, a ``NetworkError``).
        case network
        /// The server answered with an unacceptable status (see ``ImagePipelineError/status``).
        case status
        /// A 304 arrived but no cached bytes exist to keep.
        case notModifiedWithoutCache
        /// The bytes are not an image Magpie can decode, or break a limit.
        case decodingFailed
        /// A processor failed.
        case processingFailed
        /// A local file could not be read.
        case fileFailed
    }

    /// The category.
    public let kind: Kind
    /// The URL asked for, when there was one.
    public let url: URL?
    /// What happened.
    public let detail: String
    /// The HTTP status, for ``Kind/status``.
    public let status: Int?
    /// The error underneath (a ``NetworkError`` or an ``ImageError``).
    public let underlying: (any Error)?

    init(_ kind: Kind, url: URL?, _ detail: String, status: Int? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.url = url
        self.detail = detail
        self.status = status
        self.underlying = underlying
    }

    public var description: String {
        detail + (url.map { " (\($0.absoluteString))" } ?? "")
    }

    static func cancelled(_ url: URL?) -> ImagePipelineError {
        ImagePipelineError(.cancelled, url: url, "the load was cancelled")
    }

    /// Whether a retry later could succeed: timeouts, connection losses and 5xx are transient;
    /// 404, 410 and undecodable data are not.
    public var isTransient: Bool {
        switch kind {
        case .cancelled, .network: return true
        case .status: return (status ?? 0) >= 500 || status == 408 || status == 429
        case .invalidURL, .failedURL, .decodingFailed, .processingFailed, .fileFailed, .notModifiedWithoutCache: return false
        }
    }
}
