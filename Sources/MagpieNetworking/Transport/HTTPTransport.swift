public import Foundation
import MagpieSupport

/// An HTTP method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let patch = HTTPMethod(rawValue: "PATCH")

    public var description: String { rawValue }
}

/// How far a transfer has come.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes so far.
    public var completed: Int64
    /// Bytes expected in all, or -1 when unknown (no Content-Length), as in the seeds.
    public var expected: Int64
    /// `completed / expected`, or 0 when the total is unknown.
    public var fraction: Double { expected > 0 ? min(1, Double(completed) / Double(expected)) : 0 }

    public init(completed: Int64, expected: Int64) {
        self.completed = completed
        self.expected = expected
    }
}

/// User name and password for HTTP basic authentication.
public struct Credentials: Sendable, Hashable {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The `Authorization` header value.
    var headerValue: String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }
}

/// One redirect, shown to ``TransportRequest/redirectHook`` before it is followed.
public struct RedirectHop: Sendable {
    /// The URL that answered with a redirect.
    public var from: URL
    /// Where it points.
    public var to: URL
    /// The redirect status (301, 302, 303, 307, 308).
    public var status: Int
    /// How many redirects were followed before this one.
    public var index: Int
}

/// A request body.
public enum RequestBody: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// A file, streamed from disk (never read whole into memory).
    case file(URL)
    /// A stream made on demand (again for each redirect that keeps the body), of known or
    /// unknown (nil) length.
    case stream(length: Int64?, make: @Sendable () -> AsyncThrowingStream<Data, any Error>)
}

/// Everything the transport needs for one request.
public struct TransportRequest: Sendable {
    public var url: URL
    public var method: HTTPMethod = .get
    public var headers: HeaderFields = [:]
    public var body: RequestBody?
    /// The whole exchange, redirects included, must end within this. 20 seconds by default.
    public var timeout: Duration = .seconds(20)
    /// The most redirects followed. 10 by default; 0 returns redirects as responses.
    public var maxRedirects = 10
    /// Sees every redirect before it is followed; throw to refuse it.
    public var redirectHook: (@Sendable (RedirectHop) throws -> Void)?
    /// Accept any TLS certificate, for this request only. `false` by default.
    public var allowsInvalidCertificates = false
    /// Sent as basic auth to the request's own host only, never after a redirect elsewhere.
    public var credentials: Credentials?
    /// Cookies are read from and stored into this store only when it is set.
    public var cookies: CookieStore?
    /// The most response body bytes accepted. No limit (nil) by default.
    public var maxResponseSize: Int64?
    /// Called as the response body arrives.
    public var onProgress: (@Sendable (TransferProgress) -> Void)?
    /// Called as the request body is sent.
    public var onUploadProgress: (@Sendable (TransferProgress) -> Void)?

    public init(url: URL, method: HTTPMethod = .get) {
        self.url = url
        self.method = method
    }
}

/// A response whose body is still arriving.
public struct TransportResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HeaderFields
    /// The URL that answered, after redirects.
    public var url: URL
    /// The body, as it arrives.
    public var body: ResponseBody

    /// The body length the server announced, or -1.
    public var expectedLength: Int64 { headers["Content-Length"].flatMap(Int64.init) ?? -1 }

    /// Collects the whole body.
    public func collect() async throws -> Data {
        var data = Data()
        if expectedLength > 0 { data.reserveCapacity(Int(min(expectedLength, 64 << 20))) }
        for try await chunk in body { data.append(chunk) }
        return data
    }
}

/// Response body chunks, with the size limit and progress applied. Single use: iterate it once.
///
/// Cancelling the reading task ends the iteration with an error (never a silent early end),
/// so a cancelled transfer cannot pass for a complete one.
public struct ResponseBody: AsyncSequence, Sendable {
    public typealias Element = Data
    let pull: @Sendable () async throws -> Data?

    /// A body read by calling `pull` until it returns nil (for transports of your own).
    public init(pull: @escaping @Sendable () async throws -> Data?) {
        self.pull = pull
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let pull: @Sendable () async throws -> Data?
        public mutating func next() async throws -> Data? { try await pull() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pull: pull) }

    /// A body of these bytes.
    public static func bytes(_ data: Data) -> ResponseBody {
        let sent = LockedValue(data.isEmpty)
        return ResponseBody {
            try Task.checkCancellation()
            let done = sent.withLock { value -> Bool in
                defer { value = true }
                return value
            }
            return done ? nil : data
        }
    }

    /// A body that fails with `error` when read.
    static func failing(_ error: any Error) -> ResponseBody {
        ResponseBody { throw error }
    }
}

/// Sends HTTP requests. ``AsyncHTTPClientTransport`` is the implementation; tests and apps
/// may supply their own.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns when the response head has arrived; read the body from
    /// ``TransportResponse/body``. Cancelling the task closes the connection.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

extension HTTPTransport {
    /// Sends `request` and collects the body.
    public func data(for request: TransportRequest) async throws -> (Data, TransportResponse) {
        let response = try await send(request)
        return (try await response.collect(), response)
    }
}
