public import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MagpieSupport
import NIOCore
import ServiceLifecycle

/// A real HTTP origin on 127.0.0.1 with an ephemeral port, for tests: echo, status codes,
/// redirects, slow and trickling bodies, files with ETag, Range and If-Range, dropped
/// connections, cookies, basic auth, multipart uploads and flaky endpoints.
///
/// ```swift
/// try await TestOrigin.with { origin in
///     let url = origin.url("/echo?x=1")
/// }
/// ```
public final class TestOrigin: Sendable {
    /// The port it listens on.
    public let port: Int
    private let state: LockedValue<State>
    private let shutdown: @Sendable () async -> Void

    /// A file the origin serves under `/file/NAME` and `/drop/NAME`.
    public struct File: Sendable {
        public var data: Data
        public var etag: String
        public var lastModified: String
    }

    struct State: Sendable {
        var files: [String: File] = [:]
        var counters: [String: Int] = [:]
        var requests: [String] = []
        var headers: [[String: String]] = []
        var released: Set<String> = []
        var stopping = false
    }

    private init(port: Int, state: LockedValue<State>, shutdown: @escaping @Sendable () async -> Void) {
        self.port = port
        self.state = state
        self.shutdown = shutdown
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!  // a literal base and the test's own path
    }

    /// The origin's base URL, ending in a slash.
    public var baseURL: URL { url("/") }

    /// Serves `data` as `/file/NAME` with the given ETag.
    public func setFile(_ name: String, _ data: Data, etag: String) {
        state.withLock {
            $0.files[name] = File(data: data, etag: "\"\(etag)\"", lastModified: "Sun, 22 Nov 2026 10:00:00 GMT")
        }
    }

    /// How many times `key` was counted (requests to counting routes).
    public func count(_ key: String) -> Int { state.withLock { $0.counters[key] ?? 0 } }

    /// Every request line seen, in order ("GET /echo?x=1").
    public var requestLog: [String] { state.value.requests }

    /// Every request seen, in order, with its header fields (names in lowercase).
    public var requests: [(line: String, headers: [String: String])] {
        state.withLock { state in Array(zip(state.requests, state.headers)).map { (line: $0.0, headers: $0.1) } }
    }

    /// Starts an origin, runs `body`, and stops it gracefully.
    public static func with<T: Sendable>(_ body: (TestOrigin) async throws -> T) async throws -> T {
        let origin = try await start()
        do {
            let result = try await body(origin)
            await origin.shutdown()
            return result
        } catch {
            await origin.shutdown()
            throw error
        }
    }

    /// Starts an origin; call ``stop()`` when done.
    public static func start() async throws -> TestOrigin {
        let state = LockedValue(State())
        let router = Router()
        Self.routes(router, state)
        var logger = Logger(label: "test-origin")
        logger.logLevel = .critical
        let (portStream, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? -1)
                portContinuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let running = Task { try await group.run() }
        var port = -1
        for await value in portStream { port = value }
        guard port > 0 else {
            running.cancel()
            throw OriginError.notStarted
        }
        return TestOrigin(port: port, state: state) {
            state.withLock { $0.stopping = true }  // held requests answer, so shutdown need not wait for them
            await group.triggerGracefulShutdown()
            _ = try? await running.value
        }
    }

    /// Stops the origin.
    public func stop() async { await shutdown() }

    /// Lets the requests held at `/hold/KEY` answer.
    public func release(_ key: String) {
        state.withLock { _ = $0.released.insert(key) }
    }

    enum OriginError: Error { case notStarted }

    // MARK: - Routes

    static func bytes(_ count: Int, seed: Int = 0) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ ($0 >> 8)) })
    }

    private static func text(_ status: HTTPResponse.Status, _ body: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func json(_ object: Any) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static func query(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters[name[...]].map(String.init)
    }

    static func routes(_ router: Router<BasicRequestContext>, _ state: LockedValue<State>) {
        router.middlewares.add(LoggingMiddleware(state: state))

        let echo: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 64 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            return json([
                "method": request.method.rawValue, "path": request.uri.path, "query": request.uri.query ?? "",
                "headers": headers, "body": String(buffer: body),
            ])
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] {
            router.on("/echo", method: method, use: echo)
            router.on("/echo/**", method: method, use: echo)
        }

        router.get("/status/:code") { _, context -> Response in
            let code = Int(context.parameters.get("code") ?? "") ?? 500
            return text(HTTPResponse.Status(code: code), "status \(code)")
        }
        router.post("/status/:code") { _, context -> Response in
            let code = Int(context.parameters.get("code") ?? "") ?? 500
            return text(HTTPResponse.Status(code: code), "status \(code)")
        }

        router.get("/redirect/:n") { _, context -> Response in
            let n = Int(context.parameters.get("n") ?? "") ?? 0
            if n <= 0 { return text(.ok, "arrived") }
            return text(.found, "", headers: [.location: "/redirect/\(n - 1)"])
        }
        router.on("/redirect-to", method: .get) { request, _ -> Response in
            let status = Int(query(request, "status") ?? "") ?? 302
            return text(HTTPResponse.Status(code: status), "", headers: [.location: query(request, "url") ?? "/"])
        }
        router.on("/redirect-to", method: .post) { request, _ -> Response in
            let status = Int(query(request, "status") ?? "") ?? 302
            return text(HTTPResponse.Status(code: status), "", headers: [.location: query(request, "url") ?? "/"])
        }

        router.get("/slow/:ms") { _, context -> Response in
            try await Task.sleep(for: .milliseconds(Int(context.parameters.get("ms") ?? "") ?? 0))
            return text(.ok, "slow")
        }

        router.get("/bytes/:n") { _, context -> Response in
            let data = bytes(Int(context.parameters.get("n") ?? "") ?? 0)
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }

        // n bytes in chunks, `delay` ms apart, no Content-Length.
        router.get("/trickle/:n") { request, context -> Response in
            let total = Int(context.parameters.get("n") ?? "") ?? 0
            let chunk = Int(query(request, "chunk") ?? "") ?? 1024
            let delay = Int(query(request, "delay") ?? "") ?? 10
            let data = bytes(total)
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: ResponseBody { writer in
                var offset = 0
                do {
                    while offset < total {
                        let end = min(offset + chunk, total)
                        try await writer.write(ByteBuffer(bytes: data[offset..<end]))
                        offset = end
                        try await Task.sleep(for: .milliseconds(delay))
                    }
                } catch {
                    // The client went away: counted, so tests can see a cancel closed the connection.
                    state.withLock { $0.counters["trickle-closed", default: 0] += 1 }
                    throw error
                }
                try await writer.finish(nil)
            })
        }

        router.get("/file/:name") { request, context -> Response in
            guard let file = state.value.files[context.parameters.get("name") ?? ""] else { return text(.notFound, "no such file") }
            let pace = Int(query(request, "pace") ?? "").map { (delay: $0, chunk: Int(query(request, "chunk") ?? "") ?? 65_536) }
            var response = serve(file, request: request, dropAt: nil, pace: pace, state: state)
            if let maxAge = query(request, "maxAge") { response.headers[.cacheControl] = "max-age=\(maxAge)" }
            return response
        }
        router.head("/file/:name") { request, context -> Response in
            guard let file = state.value.files[context.parameters.get("name") ?? ""] else { return text(.notFound, "no such file") }
            var response = serve(file, request: request, dropAt: nil)
            response.body = ResponseBody()
            return response
        }
        // Like /file, but the first `times` requests (default 1) are cut after `at` of the bytes.
        router.get("/drop/:name") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            guard let file = state.value.files[name] else { return text(.notFound, "no such file") }
            let times = Int(query(request, "times") ?? "") ?? 1
            let served = state.withLock { state -> Int in
                state.counters["drop-\(name)", default: 0] += 1
                return state.counters["drop-\(name)"] ?? 0
            }
            let fraction = Double(query(request, "at") ?? "") ?? 0.5
            return serve(file, request: request, dropAt: served <= times ? fraction : nil)
        }

        router.get("/set-cookie") { request, _ -> Response in
            let name = query(request, "name") ?? "session", value = query(request, "value") ?? "abc"
            let attributes = query(request, "attributes") ?? "Path=/"
            return text(.ok, "set", headers: [.setCookie: "\(name)=\(value); \(attributes)"])
        }
        router.get("/cookies") { request, _ -> Response in
            text(.ok, request.headers[.cookie] ?? "")
        }

        router.get("/auth") { request, _ -> Response in
            let expected = "Basic " + Data("magpie:secret".utf8).base64EncodedString()
            guard request.headers[.authorization] == expected else {
                return text(.unauthorized, "who are you?", headers: [.wwwAuthenticate: "Basic realm=\"test\""])
            }
            return text(.ok, "welcome")
        }

        router.post("/upload") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 256 << 20)
            let contentType = request.headers[.contentType] ?? ""
            let parts = Multipart.parse(Data(body.readableBytesView), contentType: contentType)
            return json(["parts": parts.map { part -> [String: Any] in
                ["name": part.name, "filename": part.filename ?? NSNull(), "contentType": part.contentType ?? NSNull(),
                 "size": part.data.count, "text": part.data.count < 200 ? String(decoding: part.data, as: UTF8.self) : "",
                 "checksum": Int(CRC32.checksum(part.data))]
            }])
        }

        // Fails with `status` (503 by default) until it has failed `failures` times for `key`.
        router.get("/flaky/:key") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let failures = Int(query(request, "failures") ?? "") ?? 1
            let status = Int(query(request, "status") ?? "") ?? 503
            let seen = state.withLock { state -> Int in
                state.counters["flaky-\(key)", default: 0] += 1
                return state.counters["flaky-\(key)"] ?? 0
            }
            return seen <= failures ? text(HTTPResponse.Status(code: status), "not yet") : text(.ok, "ok after \(seen)")
        }

        // Counts hits under `key`, then answers like /echo.
        router.get("/count/:key") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let hits = state.withLock { state -> Int in
                state.counters[key, default: 0] += 1
                return state.counters[key] ?? 0
            }
            try await Task.sleep(for: .milliseconds(Int(query(request, "delay") ?? "") ?? 0))
            return text(.ok, "hit \(hits)")
        }

        // Answers only once the test calls `release(key)` (or the origin stops): requests that stay in flight.
        router.get("/hold/:key") { _, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline, !state.withLock({ $0.released.contains(key) || $0.stopping }) {
                try await Task.sleep(for: .milliseconds(10))
            }
            return text(.ok, "released")
        }

        // A body of n bytes with no Content-Length (chunked).
        router.get("/large/:n") { _, context -> Response in
            let total = Int(context.parameters.get("n") ?? "") ?? 0
            let data = bytes(total)
            return Response(status: .ok, body: ResponseBody { writer in
                var offset = 0
                while offset < total {
                    let end = min(offset + 65_536, total)
                    try await writer.write(ByteBuffer(bytes: data[offset..<end]))
                    offset = end
                }
                try await writer.finish(nil)
            })
        }
    }

    /// A file with ETag, Last-Modified, Range and If-Range; optionally cut after `dropAt` of the body.
    private static func serve(
        _ file: File, request: Request, dropAt: Double?, pace: (delay: Int, chunk: Int)? = nil, state: LockedValue<State>? = nil
    ) -> Response {
        var headers: HTTPFields = [.eTag: file.etag, .lastModified: file.lastModified, .acceptRanges: "bytes",
                                   .contentType: "application/octet-stream"]
        if let match = request.headers[.ifNoneMatch], match == file.etag {
            return Response(status: .notModified, headers: headers)
        }
        var start = 0
        var status = HTTPResponse.Status.ok
        if let range = request.headers[.range], range.hasPrefix("bytes="), range.hasSuffix("-"),
           let from = Int(range.dropFirst(6).dropLast()) {
            let ifRange = request.headers[.ifRange]
            if ifRange == nil || ifRange == file.etag || ifRange == file.lastModified {
                guard from < file.data.count else {
                    headers[.contentRange] = "bytes */\(file.data.count)"
                    return Response(status: .rangeNotSatisfiable, headers: headers)
                }
                start = from
                status = .partialContent
                headers[.contentRange] = "bytes \(from)-\(file.data.count - 1)/\(file.data.count)"
            }
        }
        let slice = file.data[(file.data.startIndex + start)...]
        headers[.contentLength] = String(slice.count)
        if let pace {
            // Sent in chunks `pace.delay` ms apart, for transfers that must still be running when a test acts.
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: slice.count) { writer in
                // Counts paced transfers in flight (and the most at once), and those the client closed.
                state?.withLock { state in
                    state.counters["paced-active", default: 0] += 1
                    state.counters["paced-max"] = max(state.counters["paced-max"] ?? 0, state.counters["paced-active"] ?? 0)
                }
                defer { state?.withLock { $0.counters["paced-active", default: 0] -= 1 } }
                var offset = slice.startIndex
                do {
                    while offset < slice.endIndex {
                        let end = min(offset + pace.chunk, slice.endIndex)
                        try await writer.write(ByteBuffer(bytes: slice[offset..<end]))
                        offset = end
                        try await Task.sleep(for: .milliseconds(pace.delay))
                    }
                } catch {
                    state?.withLock { $0.counters["paced-closed", default: 0] += 1 }
                    throw error
                }
                try await writer.finish(nil)
            })
        }
        guard let dropAt else {
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: slice)))
        }
        let cut = Int(Double(slice.count) * dropAt)
        return Response(status: status, headers: headers, body: ResponseBody(contentLength: slice.count) { writer in
            try await writer.write(ByteBuffer(bytes: slice.prefix(cut)))
            try await Task.sleep(for: .milliseconds(20))
            // Throwing mid-body makes the server close the connection: a dropped transfer.
            throw OriginError.notStarted
        })
    }

    /// Records each request line.
    struct LoggingMiddleware: RouterMiddleware {
        typealias Context = BasicRequestContext
        let state: LockedValue<State>

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            let line = "\(request.method.rawValue) \(request.uri.path)" + (request.uri.query.map { "?\($0)" } ?? "")
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
            state.withLock {
                $0.requests.append(line)
                $0.headers.append(headers)
            }
            return try await next(request, context)
        }
    }
}

/// A small multipart/form-data parser for the origin's upload route.
public enum Multipart {
    public struct Part: Sendable {
        public var name: String
        public var filename: String?
        public var contentType: String?
        public var data: Data
    }

    public static func parse(_ body: Data, contentType: String) -> [Part] {
        guard let range = contentType.range(of: "boundary=") else { return [] }
        let boundary = String(contentType[range.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [Part] = []
        var searchStart = body.startIndex
        var sections: [Range<Data.Index>] = []
        var previous: Data.Index?
        while let found = body.range(of: delimiter, in: searchStart..<body.endIndex) {
            if let previous { sections.append(previous..<found.lowerBound) }
            previous = found.upperBound
            searchStart = found.upperBound
        }
        for section in sections {
            var chunk = body[section]
            if chunk.starts(with: Data("\r\n".utf8)) { chunk = chunk.dropFirst(2) }
            guard let split = chunk.range(of: Data("\r\n\r\n".utf8)) else { continue }
            let headerText = String(decoding: chunk[chunk.startIndex..<split.lowerBound], as: UTF8.self)
            var data = Data(chunk[split.upperBound...])
            if data.suffix(2) == Data("\r\n".utf8) { data.removeLast(2) }
            var name = "", filename: String?, type: String?
            for line in headerText.components(separatedBy: "\r\n") {
                let lower = line.lowercased()
                if lower.hasPrefix("content-disposition:") {
                    name = Self.attribute("name", in: line) ?? ""
                    filename = Self.attribute("filename", in: line)
                } else if lower.hasPrefix("content-type:") {
                    type = line.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
                }
            }
            parts.append(Part(name: name, filename: filename, contentType: type, data: data))
        }
        return parts
    }

    static func attribute(_ name: String, in line: String) -> String? {
        guard let range = line.range(of: " \(name)=\"") ?? line.range(of: ";\(name)=\"") else { return nil }
        let rest = line[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
