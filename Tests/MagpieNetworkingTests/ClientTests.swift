import Foundation
import Logging
import MagpieCache
@testable import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

@Suite("NetworkClient against a loopback origin")
struct ClientTests {
    @Test("GET and DELETE put parameters in the query, POST and PUT in a form body; defaults merge and lose to the request's")
    func parameterPlacement() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.defaultParameters = ["app": "magpie", "page": 1] }) { client in
                let get = try await client.get("echo", parameters: ["page": 2, "q": "a b&c"]).decode(Echo.self)
                #expect(get.method == "GET")
                #expect(get.query == "app=magpie&page=2&q=a%20b%26c")
                #expect(get.body.isEmpty)

                let delete = try await client.delete("echo", parameters: ["id": 7]).decode(Echo.self)
                #expect(delete.method == "DELETE")
                #expect(delete.query == "app=magpie&id=7&page=1")

                let post = try await client.post("echo", parameters: ["name": "Ada Lovelace"]).decode(Echo.self)
                #expect(post.method == "POST")
                #expect(post.query.isEmpty)
                #expect(post.body == "app=magpie&name=Ada%20Lovelace&page=1")
                #expect(post.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)

                let put = try await client.put("echo", parameters: ["tags": ["a", "b"]], encoding: .json).decode(Echo.self)
                #expect(put.method == "PUT")
                #expect(put.header("Content-Type") == "application/json")
                let body = try JSONSerialization.jsonObject(with: Data(put.body.utf8)) as? [String: Any]
                #expect(body?["tags"] as? [String] == ["a", "b"])
                #expect(body?["app"] as? String == "magpie")
                #expect(body?["page"] as? Int == 1)

                // Query encoding chosen explicitly for a POST.
                let postQuery = try await client.send(NetworkRequest(.post, "echo", parameters: ["x": 1], encoding: .query)).decode(Echo.self)
                #expect(postQuery.query == "app=magpie&page=1&x=1")
                #expect(postQuery.body.isEmpty)
            }
        }
    }

    @Test("Nested parameters encode as bracketed keys; a query already in the path is kept")
    func nestedParameters() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let echo = try await client.get("echo?fixed=1", parameters: ["user": ["name": "ada", "roles": ["x", "y"]]]).decode(Echo.self)
                #expect(echo.query == "fixed=1&user%5Bname%5D=ada&user%5Broles%5D%5B%5D=x&user%5Broles%5D%5B%5D=y")
            }
        }
    }

    @Test("Headers are added and replaced, per client, per request and live")
    func headers() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.headers = ["X-App": "magpie", "Accept": "text/plain"] }) { client in
                var request = NetworkRequest(.get, "echo", headers: ["Accept": "application/json", "X-Extra": "1"])
                var echo = try await client.send(request).decode(Echo.self)
                #expect(echo.header("X-App") == "magpie")
                #expect(echo.header("Accept") == "application/json")
                #expect(echo.header("X-Extra") == "1")

                client.setHeader("Authorization", "Bearer after-login")
                client.setHeader("X-App", "magpie-2")
                request.headers = [:]
                echo = try await client.send(request).decode(Echo.self)
                #expect(echo.header("Authorization") == "Bearer after-login")
                #expect(echo.header("X-App") == "magpie-2")
                #expect(echo.header("Accept") == "text/plain")

                client.setHeader("X-App", nil)
                echo = try await client.send(request).decode(Echo.self)
                #expect(echo.header("X-App") == nil)
            }
        }
    }

    @Test("Live header changes under concurrency reach the requests that start after them")
    func concurrentHeaderChanges() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<50 {
                        group.addTask { client.setHeader("X-Round-\(i % 5)", "\(i)") }
                        group.addTask { _ = try await client.get("echo") }
                    }
                    try await group.waitForAll()
                }
                client.setHeader("X-Final", "yes")
                let echo = try await client.get("echo").decode(Echo.self)
                #expect(echo.header("X-Final") == "yes")
                #expect((0..<5).allSatisfy { echo.header("X-Round-\($0)") != nil })
            }
        }
    }

    @Test("Paths resolve against the base URL unless told not to; the base URL can change")
    func baseURL() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.baseURL = origin.url("/echo/v1/") }) { client in
                var echo = try await client.get("users").decode(Echo.self)
                #expect(echo.path == "/echo/v1/users")

                var request = NetworkRequest(.get, origin.url("/echo/plain").absoluteString)
                request.ignoresBaseURL = true
                echo = try await client.send(request).decode(Echo.self)
                #expect(echo.path == "/echo/plain")

                client.setBaseURL(origin.url("/echo/v2/"))
                echo = try await client.get("users").decode(Echo.self)
                #expect(echo.path == "/echo/v2/users")

                var relative = NetworkRequest(.get, "users")
                relative.ignoresBaseURL = true
                await #expect(throws: NetworkError.self) { try await client.send(relative) }
                await #expect(throws: NetworkError.self) { try await client.get("ftp://example.com/x") }
            }
        }
    }

    @Test("A request slower than its timeout fails with a timeout; 0 means the default")
    func timeouts() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                var request = NetworkRequest(.get, "slow/3000")
                request.timeout = .milliseconds(200)
                let error = await #expect(throws: NetworkError.self) { try await client.send(request) }
                #expect(error?.kind == .timeout)

                request = NetworkRequest(.get, "slow/10")
                request.timeout = .zero
                let slow = try await client.send(request)
                #expect(slow.text == "slow")
            }
        }
    }

    @Test("Redirects are followed, each hop shown to the hook, within the limit")
    func redirects() async throws {
        try await TestOrigin.with { origin in
            let hops = LockedValue<[RedirectHop]>([])
            try await withClient(origin, configure: { configuration in
                configuration.adapters = [HookAdapter { request in
                    var request = request
                    request.redirectHook = { hop in hops.withLock { $0.append(hop) } }
                    return request
                }]
            }) { client in
                let response = try await client.get("redirect/3")
                #expect(response.text == "arrived")
                #expect(response.url.path == "/redirect/0")
                #expect(hops.value.map(\.to.path) == ["/redirect/2", "/redirect/1", "/redirect/0"])
                #expect(hops.value.map(\.status) == [302, 302, 302])
                #expect(hops.value.map(\.index) == [0, 1, 2])
            }
            try await withClient(origin, configure: { configuration in
                configuration.adapters = [HookAdapter { request in
                    var request = request
                    request.maxRedirects = 2
                    return request
                }]
            }) { client in
                let error = await #expect(throws: NetworkError.self) { try await client.get("redirect/3") }
                #expect(error?.kind == .tooManyRedirects)
            }
            try await withClient(origin, configure: { configuration in
                configuration.adapters = [HookAdapter { request in
                    var request = request
                    request.redirectHook = { hop in
                        if hop.to.path.hasSuffix("/1") { throw HookRefusal() }
                    }
                    return request
                }]
            }) { client in
                let error = await #expect(throws: NetworkError.self) { try await client.get("redirect/3") }
                #expect(error?.kind == .redirectRejected)
            }
        }
    }

    @Test("A 303 after a POST becomes a GET without the body")
    func seeOther() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let response = try await client.send(NetworkRequest(.post, "redirect-to", parameters: ["status": 303, "url": "/echo/after"], encoding: .query))
                let echo = try response.decode(Echo.self)
                #expect(echo.method == "GET")
                #expect(echo.path == "/echo/after")
            }
        }
    }

    @Test("Credentials go to their own host and never follow a redirect to another")
    func credentialsStayHome() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.credentials = Credentials(user: "magpie", password: "secret") }) { client in
                #expect(try await client.get("auth").text == "welcome")
                // Same origin, via a redirect: still sent.
                let same = try await client.get("redirect-to", parameters: ["url": "/echo/same"]).decode(Echo.self)
                #expect(same.header("Authorization") != nil)
                // `localhost` is another host than 127.0.0.1 to the client.
                let elsewhere = "http://localhost:\(origin.port)/echo/elsewhere"
                let other = try await client.get("redirect-to", parameters: ["url": .string(elsewhere)]).decode(Echo.self)
                #expect(other.path == "/echo/elsewhere")
                #expect(other.header("Authorization") == nil)
            }
            try await withClient(origin) { client in
                let error = await #expect(throws: NetworkError.self) { try await client.get("auth") }
                #expect(error?.status == 401)
            }
        }
    }

    @Test("A status outside the accepted ones throws with the status and the body")
    func statusValidation() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let error = await #expect(throws: NetworkError.self) { try await client.get("status/404") }
                #expect(error?.kind == .unacceptableStatus)
                #expect(error?.status == 404)
                #expect(error?.body.map { String(decoding: $0, as: UTF8.self) } == "status 404")
                #expect(error?.description.contains("404 Not Found") == true)

                var request = NetworkRequest(.get, "status/404")
                request.acceptableStatusCodes = [200, 404]
                let accepted = try await client.send(request)
                #expect(accepted.status == 404)
            }
        }
    }

    @Test("A response over the size limit fails, announced or not")
    func sizeLimit() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.maxResponseSize = 10_000 }) { client in
                let fits = try await client.get("bytes/10000")
                #expect(fits.body.count == 10_000)
                let announced = await #expect(throws: NetworkError.self) { try await client.get("bytes/10001") }
                #expect(announced?.kind == .responseTooLarge)
                let chunked = await #expect(throws: NetworkError.self) { try await client.get("large/200000") }
                #expect(chunked?.kind == .responseTooLarge)
            }
        }
    }

    @Test("Cookies are stored and sent only for requests that ask, and persist to a file")
    func cookies() async throws {
        let dir = try TemporaryDirectory("cookies")
        defer { dir.remove() }
        let file = dir.url.appendingPathComponent("cookies.json")
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.cookies = CookieStore(file: file) }) { client in
                _ = try await client.get("set-cookie", parameters: ["name": "ignored", "value": "1"])
                #expect(client.configuration.cookies.all.isEmpty)

                var set = NetworkRequest(.get, "set-cookie", parameters: ["name": "session", "value": "s3cr3t"])
                set.handlesCookies = true
                _ = try await client.send(set)
                var read = NetworkRequest(.get, "cookies")
                read.handlesCookies = true
                #expect(try await client.send(read).text == "session=s3cr3t")
                #expect(try await client.get("cookies").text.isEmpty)
            }
        }
        // A new store on the same file has the cookie.
        #expect(CookieStore(file: file).all.map(\.name) == ["session"])
    }

    @Test("Adapters change requests; a retrier retries a bounded number of times")
    func interceptors() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { configuration in
                configuration.adapters = [HookAdapter { request in
                    var request = request
                    request.headers["X-Signature"] = "signed:\(request.url.path)"
                    return request
                }]
                configuration.retrier = BackoffRetrier()
                configuration.maxAttempts = 3
            }) { client in
                let echo = try await client.get("echo/signed").decode(Echo.self)
                #expect(echo.header("X-Signature") == "signed:/echo/signed")

                #expect(try await client.get("flaky/a", parameters: ["failures": 2]).text == "ok after 3")
                #expect(origin.count("flaky-a") == 3)

                let error = await #expect(throws: NetworkError.self) { try await client.get("flaky/b", parameters: ["failures": 5]) }
                #expect(error?.status == 503)
                #expect(origin.count("flaky-b") == 3)
            }
        }
    }

    @Test("The callback form reports success, failure with status, and cancellation")
    func callbacks() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let ok = await withCheckedContinuation { continuation in
                    client.send(NetworkRequest(.get, "echo")) { continuation.resume(returning: $0) }
                }
                #expect((try? ok.get())?.status == 200)

                let failed = await withCheckedContinuation { continuation in
                    client.send(NetworkRequest(.get, "status/500")) { continuation.resume(returning: $0) }
                }
                guard case .failure(let error) = failed else {
                    Issue.record("a 500 succeeded")
                    return
                }
                #expect(error.status == 500)

                let cancelled = await withCheckedContinuation { continuation in
                    let token = client.send(NetworkRequest(.get, "slow/5000")) { continuation.resume(returning: $0) }
                    Task {
                        try? await Task.sleep(for: .milliseconds(100))
                        token.cancel()
                    }
                }
                guard case .failure(let cancel) = cancelled else {
                    Issue.record("a cancelled request succeeded")
                    return
                }
                #expect(cancel.kind == .cancelled)
            }
        }
    }

    @Test("Debug logs show the request and cache decisions but never secrets")
    func logsHideSecrets() async throws {
        let dir = try TemporaryDirectory("log-cache")
        defer { dir.remove() }
        let handler = CapturingLogHandler()
        let logger = Logger(label: "test") { _ in handler }
        let cache = ResponseCache(storage: try DiskCache(directory: dir.url))
        let echo = try await TestOrigin.with { origin -> String in
            try await withClient(origin, configure: { configuration in
                configuration.logger = logger
                configuration.headers = ["Authorization": "Bearer hunter2", "X-Api-Key": "k-12345"]
                configuration.redactedNames.insert("X-Api-Key")
                configuration.responseCache = cache
            }) { client in
                var request = NetworkRequest(.get, "echo", parameters: ["password": "pa55word", "token": "t0ken", "q": "visible"],
                                             headers: ["Cookie": "sid=c00kie"])
                request.cacheDuration = 60
                _ = try await client.send(request)
                request.loadsCache = true
                let cached = try await client.send(request)
                #expect(cached.isFromCache)
            }
            return origin.url("/echo").absoluteString
        }
        let text = handler.text
        #expect(!text.isEmpty)
        for secret in ["hunter2", "k-12345", "pa55word", "t0ken", "c00kie"] {
            #expect(!text.contains(secret), "\(secret) appears in the log")
        }
        #expect(text.contains("q=visible"))
        #expect(text.contains("<redacted>"))
        #expect(text.contains("write cache succeeded"))
        #expect(text.contains("loaded from cache"))
        #expect(text.contains("request=\(echo) GET"))
    }
}

struct HookAdapter: RequestAdapting {
    let body: @Sendable (TransportRequest) async throws -> TransportRequest
    init(_ body: @escaping @Sendable (TransportRequest) async throws -> TransportRequest) { self.body = body }
    func adapt(_ request: TransportRequest) async throws -> TransportRequest { try await body(request) }
}

struct HookRefusal: Error {}

/// Retries 5xx answers after 10 ms.
struct BackoffRetrier: RequestRetrying {
    func retryDelay(for request: TransportRequest, error: NetworkError, attempt: Int) async -> Duration? {
        (error.status ?? 0) >= 500 ? .milliseconds(10 * attempt) : nil
    }
}
