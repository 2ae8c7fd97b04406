import Foundation
import MagpieCache
@testable import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

/// A wall clock the test moves by hand.
final class TestWallClock: Sendable {
    private let current = LockedValue(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.value }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("Response cache")
struct ResponseCacheTests {
    static func cache(_ dir: TemporaryDirectory, clock: TestWallClock, version: String? = nil, downloads: URL? = nil) throws -> ResponseCache {
        var configuration = DiskCache.Configuration()
        configuration.now = { clock.now }
        return ResponseCache(storage: try DiskCache(directory: dir.url.appendingPathComponent("responses"), configuration: configuration),
                             version: version, downloadsDirectory: downloads)
    }

    @Test("Fresh entries answer without a request; expired ones are removed and the request goes out")
    func freshAndExpired() async throws {
        let dir = try TemporaryDirectory("response-cache")
        defer { dir.remove() }
        let clock = TestWallClock()
        let cache = try Self.cache(dir, clock: clock)
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.responseCache = cache }) { client in
                var request = NetworkRequest(.get, "count/news")
                request.cacheDuration = 60
                #expect(try await client.send(request).text == "hit 1")

                request.loadsCache = true
                let cached = try await client.send(request)
                #expect(cached.isFromCache)
                #expect(cached.text == "hit 1")
                #expect(origin.count("news") == 1)

                // Without loadsCache the network is asked even when an entry exists.
                var plain = request
                plain.loadsCache = false
                plain.cacheDuration = 0
                #expect(try await client.send(plain).text == "hit 2")

                clock.advance(61)
                let url = try client.url(for: request)
                let key = ResponseCache.key(url: url, method: .get, parameters: [:])
                guard case .expired = try await cache.lookup(key) else {
                    Issue.record("an expired entry was not reported as expired")
                    return
                }
                #expect(try await cache.storage.totalCount == 0)  // reading it removed it
                guard case .absent = try await cache.lookup(key) else {
                    Issue.record("a removed entry was not absent")
                    return
                }
                let fresh = try await client.send(request)
                #expect(!fresh.isFromCache)
                #expect(fresh.text == "hit 3")
                #expect(origin.count("news") == 3)
            }
        }
    }

    @Test("Only successful responses are written; duration 0 writes nothing")
    func onlySuccess() async throws {
        let dir = try TemporaryDirectory("response-cache")
        defer { dir.remove() }
        let clock = TestWallClock()
        let cache = try Self.cache(dir, clock: clock)
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.responseCache = cache }) { client in
                var failing = NetworkRequest(.get, "status/500")
                failing.cacheDuration = 60
                _ = try? await client.send(failing)
                var uncached = NetworkRequest(.get, "echo")
                uncached.cacheDuration = 0
                _ = try await client.send(uncached)
                #expect(try await cache.storage.totalCount == 0)
            }
        }
    }

    @Test("Keys hold URL, method and parameters with defaults; read and clear one, per URL, per URL and method")
    func readAndClearThreeWays() async throws {
        let dir = try TemporaryDirectory("response-cache")
        defer { dir.remove() }
        let clock = TestWallClock()
        let cache = try Self.cache(dir, clock: clock)
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.responseCache = cache; $0.defaultParameters = ["lang": "en"] }) { client in
                for (method, page) in [(HTTPMethod.get, 1), (.get, 2), (.post, 1)] {
                    var request = NetworkRequest(method, "echo/items", parameters: ["page": .int(page)])
                    request.cacheDuration = 300
                    _ = try await client.send(request)
                }
                var other = NetworkRequest(.get, "echo/other")
                other.cacheDuration = 300
                _ = try await client.send(other)

                let items = origin.url("/echo/items")
                let one = try await cache.entry(url: items, method: .get, parameters: ["page": 2, "lang": "en"])
                #expect(try one.map { try JSONDecoder().decode(Echo.self, from: $0.body).query } == "lang=en&page=2")
                #expect(try await cache.entry(url: items, method: .get, parameters: ["page": 2]) == nil)  // defaults are part of the key
                #expect(try await cache.entries(url: items).count == 3)
                #expect(try await cache.entries(url: items, method: .get).count == 2)
                #expect(try await cache.entries(url: items, method: .post).count == 1)

                try await cache.remove(url: items, method: .get, parameters: ["page": 1, "lang": "en"])
                #expect(try await cache.entries(url: items, method: .get).count == 1)
                #expect(try await cache.removeAll(url: items, method: .post) == 1)
                #expect(try await cache.entries(url: items).count == 1)
                #expect(try await cache.removeAll(url: items) == 1)
                #expect(try await cache.entries(url: items).isEmpty)
                #expect(try await cache.entries(url: origin.url("/echo/other")).count == 1)
                try await cache.removeAll()
                #expect(try await cache.storage.totalCount == 0)
            }
        }
    }

    @Test("The identifier is the cache key and names the request in the pool")
    func identifier() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.defaultParameters = ["b": 2] }) { client in
                let request = NetworkRequest(.get, "echo", parameters: ["a": 1])
                let identifier = try client.identifier(for: request)
                #expect(identifier == origin.url("/echo").absoluteString + " GET a=1&b=2")
                #expect(try await client.send(request).identifier == identifier)
            }
        }
    }

    @Test("An entry written under another version is absent and removed when read")
    func versions() async throws {
        let dir = try TemporaryDirectory("response-cache")
        defer { dir.remove() }
        let clock = TestWallClock()
        let url = URL(string: "http://127.0.0.1/v")!
        let old = try Self.cache(dir, clock: clock, version: "1.0")
        try await old.store(.init(status: 200, headers: [:], body: Data("old".utf8), url: url, storedAt: clock.now, expiresAt: nil),
                            forKey: ResponseCache.key(url: url, method: .get, parameters: [:]), duration: 60)
        #expect(try await old.entry(url: url, method: .get, parameters: [:])?.body == Data("old".utf8))
        let new = try Self.cache(dir, clock: clock, version: "2.0")
        #expect(try await new.entry(url: url, method: .get, parameters: [:]) == nil)
        #expect(try await new.storage.totalCount == 0)
    }

    @Test("calculateSize counts entries and unfinished downloads, in SJNetwork's words")
    func size() async throws {
        let dir = try TemporaryDirectory("response-cache")
        defer { dir.remove() }
        let downloads = dir.url.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let clock = TestWallClock()
        let cache = try Self.cache(dir, clock: clock, downloads: downloads)
        let url = URL(string: "http://127.0.0.1/big")!
        try await cache.store(.init(status: 200, headers: [:], body: Data(count: 1_000_000), url: url, storedAt: clock.now, expiresAt: nil),
                              forKey: ResponseCache.key(url: url, method: .get, parameters: [:]), duration: 60)
        try Data(count: 298_576).write(to: downloads.appendingPathComponent("x.partial"))
        let size = try await cache.calculateSize()
        #expect(size.fileCount == 2)
        #expect(size.totalBytes == 1_298_576)
        #expect(size.description == "1.2384 MB")
        #expect(ResponseCache.humanSize(1_500) == "1.4648 KB")
        #expect(ResponseCache.humanSize(1_048_576) == "1.0000 MB")
        #expect(ResponseCache.humanSize(12) == "12 B")
    }
}

