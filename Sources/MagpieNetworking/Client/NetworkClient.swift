public import Foundation
public import Logging
import MagpieSupport

/// A REST client with SJNetwork's conveniences: a base URL, default parameters and headers,
/// a response cache with expiry, debug logging that hides secrets, interceptors, a request pool
/// and the network activity counter.
///
/// ```swift
/// let client = NetworkClient(configuration: .init(baseURL: URL(string: "https://api.example.com/v1/")))
/// let response = try await client.send(NetworkRequest(.get, "users", parameters: ["page": 2]))
/// let users = try response.decode([User].self)
/// client.setHeader("Authorization", "Bearer \(token)")   // for the requests that start afterwards
/// ```
public final class NetworkClient: Sendable {
    /// The client's settings; the defaults are written next to each property.
    public struct Configuration: Sendable {
        /// Relative paths resolve against this. None by default.
        public var baseURL: URL?
        /// Merged into every request's parameters (a request's own value wins). None by default.
        public var defaultParameters: Parameters = [:]
        /// Sent with every request. None by default.
        public var headers: HeaderFields = [:]
        /// 20 seconds by default; 0 means the default.
        public var timeout: Duration = .seconds(20)
        /// Status codes counted as success. 200...299 by default.
        public var acceptableStatusCodes = Set(200...299)
        /// Logs requests, cache decisions and durations at debug level. Silent by default.
        public var logger: Logger?
        /// Header and parameter names whose values the log shows as `<redacted>`, besides
        /// Authorization, Cookie and Set-Cookie (compared without case).
        public var redactedNames: Set<String> = ["password", "token", "access_token", "api_key", "secret"]
        /// Where responses are cached; none by default (caching then does nothing).
        public var responseCache: ResponseCache?
        /// Cookies for requests that ask for them; in memory by default.
        public var cookies = CookieStore()
        /// Basic-auth credentials, sent only to the base URL's host (or the request's, without one).
        public var credentials: Credentials?
        /// The most response bytes accepted. No limit by default.
        public var maxResponseSize: Int64?
        /// Run in order on every request before it is sent.
        public var adapters: [any RequestAdapting] = []
        /// Decides retries after failures.
        public var retrier: (any RequestRetrying)?
        /// The most attempts a request makes, retries included. 3 by default.
        public var maxAttempts = 3
        /// Sends the requests. The process-wide AsyncHTTPClient transport by default.
        public var transport: any HTTPTransport = AsyncHTTPClientTransport.shared
        /// Registers every request in flight.
        public var pool = RequestPool()
        /// Counts requests in flight. The shared counter by default.
        public var activity: NetworkActivity? = .shared
        /// Where downloads keep partial data; nil (the default) keeps it next to each destination.
        public var resumeDirectory: URL?
        /// Downloads running at once; the rest wait. 4 by default.
        public var maxConcurrentDownloads = 4

        /// A configuration; see each property for its default.
        public init(baseURL: URL? = nil) {
            self.baseURL = baseURL
        }
    }

    private struct Live {
        var baseURL: URL?
        var headers: HeaderFields
    }

    /// The settings the client was made with (base URL and headers may have changed since).
    public let configuration: Configuration
    private let live: LockedValue<Live>

    /// Downloads with resume, sharing this client's transport, base URL, headers, pool and
    /// activity counter.
    public let downloads: DownloadManager

    /// A client with `configuration`.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        let live = LockedValue(Live(baseURL: configuration.baseURL, headers: configuration.headers))
        self.live = live
        var downloads = DownloadManager.Configuration()
        downloads.transport = configuration.transport
        downloads.pool = configuration.pool
        downloads.activity = configuration.activity
        downloads.logger = configuration.logger
        downloads.resumeDirectory = configuration.resumeDirectory
        downloads.maxConcurrentDownloads = configuration.maxConcurrentDownloads
        self.downloads = DownloadManager(
            configuration: downloads,
            resolve: { path, ignoresBase in try DownloadManager.resolve(path, base: ignoresBase ? nil : live.value.baseURL) },
            headers: { live.value.headers })
    }

    /// Downloads `path` (resolved against the base URL unless the options say not) to
    /// `destination`, resuming from partial data left by an earlier attempt; see
    /// ``DownloadManager``.
    public func download(_ path: String, to destination: URL, options: DownloadOptions = .init()) throws -> DownloadTask {
        try downloads.download(path, to: destination, options: options)
    }

    /// The request pool.
    public var pool: RequestPool { configuration.pool }

    // MARK: - Live changes

    /// Adds or replaces a header for requests that start from now on (SJNetwork's
    /// `addCustomHeader`, after a login).
    public func setHeader(_ name: String, _ value: String?) {
        live.withLock { $0.headers[name] = value }
    }

    /// The headers sent with every request now.
    public var headers: HeaderFields { live.value.headers }

    /// Changes the base URL for requests that start from now on.
    public func setBaseURL(_ url: URL?) {
        live.withLock { $0.baseURL = url }
    }

    /// The base URL now.
    public var baseURL: URL? { live.value.baseURL }

    // MARK: - Building requests

    /// The absolute URL of `request`, before query parameters.
    public func url(for request: NetworkRequest) throws -> URL {
        let base = request.ignoresBaseURL ? nil : baseURL
        guard let url = URL(string: request.path, relativeTo: base)?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw NetworkError.invalidURL(request.path)
        }
        return url
    }

    /// The request's parameters over the defaults.
    func parameters(for request: NetworkRequest) -> Parameters {
        configuration.defaultParameters.merging(request.parameters) { $1 }
    }

    /// The identifier of `request`: the cache key, shown in logs and in the pool.
    public func identifier(for request: NetworkRequest) throws -> String {
        ResponseCache.key(url: try url(for: request), method: request.method, parameters: parameters(for: request))
    }

    func transportRequest(for request: NetworkRequest, url base: URL, parameters: Parameters) throws -> TransportRequest {
        let encoding = request.encoding ?? .default(for: request.method)
        var url = base
        var body = request.body
        var headers = live.value.headers.merging(request.headers)
        if !parameters.isEmpty {
            switch encoding {
            case .query:
                var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
                let query = ParameterSerialization.query(parameters)
                let existing = components?.percentEncodedQuery
                components?.percentEncodedQuery = [existing, query].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "&")
                guard let withQuery = components?.url else { throw NetworkError.invalidURL(base.absoluteString) }
                url = withQuery
            case .form where body == nil:
                body = .data(Data(ParameterSerialization.query(parameters).utf8))
                if !headers.contains("Content-Type") { headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8" }
            case .json where body == nil:
                body = .data(try ParameterSerialization.json(parameters, url: base))
                if !headers.contains("Content-Type") { headers["Content-Type"] = "application/json" }
            default:
                break
            }
        }
        var transport = TransportRequest(url: url, method: request.method)
        transport.headers = headers
        transport.body = body
        transport.timeout = (request.timeout ?? configuration.timeout) == .zero ? .seconds(20) : (request.timeout ?? configuration.timeout)
        transport.allowsInvalidCertificates = request.allowsInvalidCertificates
        transport.cookies = request.handlesCookies ? configuration.cookies : nil
        transport.maxResponseSize = configuration.maxResponseSize
        if let credentials = configuration.credentials, Self.credentialHost(base: baseURL, url: url) {
            transport.credentials = credentials
        }
        return transport
    }

    /// Credentials go to the base URL's host only (or, without a base URL, wherever asked).
    static func credentialHost(base: URL?, url: URL) -> Bool {
        guard let base else { return true }
        return base.host?.lowercased() == url.host?.lowercased()
    }

    // MARK: - Sending

    /// Sends `request`: from the response cache when asked and fresh, else over the network,
    /// retrying as the retrier says; validates the status; caches a successful response when
    /// asked.
    public func send(_ request: NetworkRequest) async throws -> NetworkResponse {
        try await send(request, kind: .request, uploadProgress: nil)
    }

    func send(
        _ request: NetworkRequest, kind: RequestPool.Kind, uploadProgress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> NetworkResponse {
        let url = try url(for: request)
        let parameters = parameters(for: request)
        let identifier = ResponseCache.key(url: url, method: request.method, parameters: parameters)
        let log = configuration.logger
        let started = ContinuousClock.now

        if request.loadsCache, let cache = configuration.responseCache {
            let id = redacted(identifier)
            switch try? await cache.lookup(identifier) {
            case .fresh(let entry):
                log?.debug("loaded from cache", metadata: ["request": "\(id)"])
                return NetworkResponse(
                    status: entry.status, headers: entry.headers, body: entry.body, url: entry.url, isFromCache: true,
                    identifier: identifier)
            case .expired:
                log?.debug("cache expired, clearing", metadata: ["request": "\(id)"])
            case .invalid:
                log?.debug("cache written by another version, clearing", metadata: ["request": "\(id)"])
            case .absent, nil:
                log?.debug("no cache entry", metadata: ["request": "\(id)"])
            }
        }

        var transportRequest = try transportRequest(for: request, url: url, parameters: parameters)
        transportRequest.onUploadProgress = uploadProgress
        for adapter in configuration.adapters { transportRequest = try await adapter.adapt(transportRequest) }
        log?.debug("request", metadata: [
            "request": "\(redacted(identifier))", "method": "\(request.method)", "url": "\(redacted(url.absoluteString))",
            "parameters": "\(redactedParameters(parameters))", "headers": "\(redactedHeaders(transportRequest.headers))",
        ])

        let final = transportRequest
        let task = Task { () throws -> (Data, TransportResponse) in
            try await self.attempts(final, acceptable: request.acceptableStatusCodes ?? self.configuration.acceptableStatusCodes)
        }
        let cacheSettings = request.loadsCache ? "load cache" : request.cacheDuration > 0 ? "cache \(Int(request.cacheDuration)) s" : "no cache"
        let id = configuration.pool.register({ id in
            RequestPool.Entry(id: id, kind: kind, method: request.method, url: url, parameters: parameters,
                              state: .running, cacheSettings: cacheSettings, identifier: identifier)
        }, cancel: { task.cancel() })
        configuration.activity?.increment()
        defer {
            configuration.pool.unregister(id)
            configuration.activity?.decrement()
        }
        let (body, response) = try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
        let elapsed = ContinuousClock.now - started
        log?.debug("response", metadata: [
            "request": "\(redacted(identifier))", "status": "\(response.status)", "bytes": "\(body.count)",
            "duration": "\(elapsed)",
        ])
        if request.cacheDuration > 0, let cache = configuration.responseCache {
            do {
                try await cache.store(
                    ResponseCache.Entry(status: response.status, headers: response.headers, body: body, url: response.url,
                                        storedAt: Date(), expiresAt: nil),
                    forKey: identifier, duration: request.cacheDuration)
                log?.debug("write cache succeeded", metadata: ["request": "\(redacted(identifier))"])
            } catch {
                log?.debug("write cache failed", metadata: ["request": "\(redacted(identifier))", "error": "\(error)"])
            }
        }
        return NetworkResponse(
            status: response.status, headers: response.headers, body: body, url: response.url, isFromCache: false,
            identifier: identifier)
    }

    /// Sends with retries; validates the status.
    private func attempts(_ request: TransportRequest, acceptable: Set<Int>) async throws -> (Data, TransportResponse) {
        var attempt = 1
        while true {
            do {
                let (body, response) = try await configuration.transport.data(for: request)
                guard acceptable.contains(response.status) else {
                    throw NetworkError.unacceptableStatus(response.status, url: response.url, body: body)
                }
                return (body, response)
            } catch {
                let failure = AsyncHTTPClientTransport.mapError(error, url: request.url)
                if Task.isCancelled || failure.kind == .cancelled {
                    throw NetworkError(.cancelled, url: request.url, "cancelled")
                }
                guard attempt < max(1, configuration.maxAttempts), let retrier = configuration.retrier,
                      let delay = await retrier.retryDelay(for: request, error: failure, attempt: attempt) else {
                    throw failure
                }
                configuration.logger?.debug("retrying", metadata: ["url": "\(redacted(request.url.absoluteString))", "attempt": "\(attempt + 1)", "error": "\(failure)"])
                try? await Task.sleep(for: delay)
                attempt += 1
            }
        }
    }

    /// The callback form (the seeds' success and failure blocks): `completion` gets the response
    /// or the error; cancel the returned token to stop the request.
    @discardableResult
    public func send(_ request: NetworkRequest, completion: @escaping @Sendable (Result<NetworkResponse, NetworkError>) -> Void) -> RequestToken {
        RequestToken(Task {
            do {
                completion(.success(try await send(request)))
            } catch let error as NetworkError {
                completion(.failure(error))
            } catch {
                completion(.failure(NetworkError(.cancelled, url: nil, "\(error)")))
            }
        })
    }

    /// GET `path`.
    public func get(_ path: String, parameters: Parameters = [:]) async throws -> NetworkResponse {
        try await send(NetworkRequest(.get, path, parameters: parameters))
    }

    /// POST `path` with `parameters` (a form body by default).
    public func post(_ path: String, parameters: Parameters = [:], encoding: ParameterEncoding? = nil) async throws -> NetworkResponse {
        try await send(NetworkRequest(.post, path, parameters: parameters, encoding: encoding))
    }

    /// PUT `path`.
    public func put(_ path: String, parameters: Parameters = [:], encoding: ParameterEncoding? = nil) async throws -> NetworkResponse {
        try await send(NetworkRequest(.put, path, parameters: parameters, encoding: encoding))
    }

    /// DELETE `path` (parameters in the query).
    public func delete(_ path: String, parameters: Parameters = [:]) async throws -> NetworkResponse {
        try await send(NetworkRequest(.delete, path, parameters: parameters))
    }

    // MARK: - Redaction

    private static let alwaysRedacted: Set<String> = ["authorization", "cookie", "set-cookie", "proxy-authorization"]

    private func isSecret(_ name: String) -> Bool {
        let lower = name.lowercased()
        return Self.alwaysRedacted.contains(lower) || configuration.redactedNames.contains { $0.lowercased() == lower }
    }

    func redactedHeaders(_ headers: HeaderFields) -> String {
        headers.fields.map { "\($0.name): \(isSecret($0.name) ? "<redacted>" : $0.value)" }.joined(separator: ", ")
    }

    func redactedParameters(_ parameters: Parameters) -> String {
        parameters.keys.sorted().map { "\($0)=\(isSecret($0) ? "<redacted>" : parameters[$0]?.description ?? "")" }.joined(separator: "&")
    }

    /// A URL or identifier with secret query values hidden.
    func redacted(_ text: String) -> String {
        var result = text
        for name in configuration.redactedNames.union(["access_token", "token", "password"]) {
            let escaped = ParameterSerialization.escape(name)
            guard let range = result.range(of: escaped + "=") else { continue }
            let valueEnd = result[range.upperBound...].firstIndex { $0 == "&" || $0 == " " } ?? result.endIndex
            result.replaceSubrange(range.upperBound..<valueEnd, with: "<redacted>")
        }
        return result
    }
}
