public import Foundation

/// What went wrong with a request, with the URL and, for HTTP errors, the status and body.
///
/// A struct so that new kinds can be added without breaking callers: compare ``kind`` with
/// the static members of ``Kind``.
public struct NetworkError: Error, Sendable, CustomStringConvertible {
    /// The category of a ``NetworkError``.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The URL is missing, relative without a base URL, or not http(s).
        public static let invalidURL = Kind("invalidURL")
        /// The request took longer than its timeout.
        public static let timeout = Kind("timeout")
        /// The request was cancelled.
        public static let cancelled = Kind("cancelled")
        /// The connection could not be made, or it failed or dropped.
        public static let connectionFailed = Kind("connectionFailed")
        /// More redirects than the limit.
        public static let tooManyRedirects = Kind("tooManyRedirects")
        /// The redirect hook refused a hop.
        public static let redirectRejected = Kind("redirectRejected")
        /// The response body passed the size limit.
        public static let responseTooLarge = Kind("responseTooLarge")
        /// The status code is not an acceptable one (2xx by default); ``NetworkError/status`` and
        /// ``NetworkError/body`` say what the server answered.
        public static let unacceptableStatus = Kind("unacceptableStatus")
        /// The body could not be decoded as asked (JSON).
        public static let decodingFailed = Kind("decodingFailed")
        /// Reading or writing a local file failed.
        public static let fileFailed = Kind("fileFailed")
        /// A parameter could not be encoded.
        public static let encodingFailed = Kind("encodingFailed")
        /// The server refused the byte range of a resumed download (416) and starting again
        /// did not help.
        public static let rangeNotSatisfiable = Kind("rangeNotSatisfiable")

        public var description: String { name }
    }

    /// The category.
    public let kind: Kind
    /// The request's URL, when known.
    public let url: URL?
    /// What happened, in words.
    public let detail: String
    /// The HTTP status, for ``Kind/unacceptableStatus``.
    public let status: Int?
    /// The response body, for ``Kind/unacceptableStatus``.
    public let body: Data?
    /// The error underneath, if any (a transport error, a decoding error).
    public let underlying: (any Error)?
    /// For a failed resumable download: the file holding the bytes received so far, from
    /// which the next attempt continues.
    public internal(set) var resumeData: URL?
    /// For a failed resumable download: the bytes kept in ``resumeData`` and the total
    /// (-1 when unknown).
    public internal(set) var resumeProgress: TransferProgress?

    init(_ kind: Kind, url: URL?, _ detail: String, status: Int? = nil, body: Data? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.url = url
        self.detail = detail
        self.status = status
        self.body = body
        self.underlying = underlying
    }

    public var description: String {
        let target = url.map { " (\($0.absoluteString))" } ?? ""
        let amount = resumeProgress.map { $0.expected >= 0 ? " (\($0.completed) of \($0.expected) bytes)" : " (\($0.completed) bytes)" } ?? ""
        let kept = resumeData.map { "; the partial data\(amount) is kept in \($0.path)" } ?? ""
        return "\(detail)\(target)\(kept)"
    }

    func keeping(_ file: URL?, progress: TransferProgress? = nil) -> NetworkError {
        var copy = self
        copy.resumeData = file
        copy.resumeProgress = file == nil ? nil : progress
        return copy
    }

    static func invalidURL(_ text: String) -> NetworkError {
        NetworkError(.invalidURL, url: nil, "invalid URL '\(text)'")
    }

    static func unacceptableStatus(_ status: Int, url: URL, body: Data) -> NetworkError {
        NetworkError(.unacceptableStatus, url: url, "the server answered \(status) \(HTTPStatus.reason(status))", status: status, body: body)
    }
}

/// Reason phrases for the status codes people meet.
public enum HTTPStatus {
    /// "Not Found" for 404; empty for codes without a common phrase.
    public static func reason(_ code: Int) -> String {
        switch code {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
