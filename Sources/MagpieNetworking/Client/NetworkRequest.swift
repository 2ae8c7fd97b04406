public import Foundation

/// One request of a ``NetworkClient``.
public struct NetworkRequest: Sendable {
    /// The method. GET by default.
    public var method: HTTPMethod
    /// A path resolved against the base URL, or an absolute URL.
    public var path: String
    /// Parameters, merged over the client's defaults (a parameter here wins).
    public var parameters: Parameters
    /// How the parameters travel; nil (the default) means the query for GET, HEAD and DELETE,
    /// a form body otherwise.
    public var encoding: ParameterEncoding?
    /// Header fields added to (or replacing) the client's.
    public var headers: HeaderFields
    /// Use `path` as it is, without the base URL. `false` by default.
    public var ignoresBaseURL = false
    /// Answer from the response cache when a fresh entry exists, without a request. `false` by default.
    public var loadsCache = false
    /// Keep a successful response this many seconds; 0 or less (the default) keeps nothing.
    public var cacheDuration: TimeInterval = 0
    /// This request's timeout; nil (the default) uses the client's.
    public var timeout: Duration?
    /// Send and store cookies for this request. `false` by default.
    public var handlesCookies = false
    /// Accept any TLS certificate for this request only. `false` by default.
    public var allowsInvalidCertificates = false
    /// Status codes counted as success; nil uses the client's (200...299).
    public var acceptableStatusCodes: Set<Int>?
    /// An explicit body, sent instead of encoding parameters into one.
    public var body: RequestBody?

    /// A request for `path`.
    public init(
        _ method: HTTPMethod = .get, _ path: String, parameters: Parameters = [:], encoding: ParameterEncoding? = nil,
        headers: HeaderFields = [:]
    ) {
        self.method = method
        self.path = path
        self.parameters = parameters
        self.encoding = encoding
        self.headers = headers
    }
}

/// A completed response.
public struct NetworkResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HeaderFields
    /// The body.
    public var body: Data
    /// The URL that answered.
    public var url: URL
    /// Whether it came from the response cache.
    public var isFromCache: Bool
    /// The stable identifier of the request, as in logs, cache keys and the request pool.
    public var identifier: String

    /// The body decoded as `T` from JSON.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        do {
            return try decoder.decode(type, from: body)
        } catch {
            throw NetworkError(.decodingFailed, url: url, "cannot decode \(T.self) from the response: \(error)", underlying: error)
        }
    }

    /// The body parsed as a JSON object or array.
    public func json() throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        } catch {
            throw NetworkError(.decodingFailed, url: url, "the response is not JSON: \(error)", underlying: error)
        }
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Changes a request before it is sent (adds a token, signs it).
public protocol RequestAdapting: Sendable {
    func adapt(_ request: TransportRequest) async throws -> TransportRequest
}

/// Decides whether to try a failed request again.
public protocol RequestRetrying: Sendable {
    /// After attempt number `attempt` (1 for the first) failed with `error`: wait this long and
    /// try again, or nil to give up.
    func retryDelay(for request: TransportRequest, error: NetworkError, attempt: Int) async -> Duration?
}

/// A cancel handle for the callback API.
public final class RequestToken: Sendable {
    private let task: Task<Void, Never>
    init(_ task: Task<Void, Never>) { self.task = task }
    /// Cancels the request; its completion reports ``NetworkError/Kind/cancelled``.
    public func cancel() { task.cancel() }
}
