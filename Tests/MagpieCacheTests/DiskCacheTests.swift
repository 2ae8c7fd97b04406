import Foundation
import MagpieCache
import MagpieSupport
import MagpieTestSupport
import Synchronization
import Testing

/// A wall clock that tests move by hand.
final class ManualDate: Sendable {
    private let value = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { value.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { value.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("Disk cache")
struct DiskCacheTests {
    static func bytes(_ count: Int, seed: UInt64 = 1) -> Data {
        var rng = SeededGenerator(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
    }

    func withCache<T>(
        _ configure: (inout DiskCache.Configuration) -> Void = { _ in }, _ body: (DiskCache, TemporaryDirectory) async throws -> T
    ) async throws -> T {
        let dir = try TemporaryDirectory("disk-cache")
        defer { dir.remove() }
        var configuration = DiskCache.Configuration()
        configure(&configuration)
        let cache = try DiskCache(directory: dir.url, configuration: configuration)
        return try await body(cache, dir)
    }

    @Test("Small values live inline, large ones in files; both read back exactly")
    func roundTrip() async throws {
        try await withCache { cache, dir in
            let small = Self.bytes(1000), large = Self.bytes(300_000, seed: 2)
            try await cache.setData(small, forKey: "small")
            try await cache.setData(large, forKey: "large", metadata: Data("etag: \"abc\"".utf8))
            #expect(try await cache.data(forKey: "small") == small)
            #expect(try await cache.data(forKey: "large") == large)
            #expect(try await cache.entry(forKey: "small")?.fileURL == nil)
            let file = try #require(try await cache.entry(forKey: "large")?.fileURL)
            #expect(try Data(contentsOf: file) == large)
            #expect(file.lastPathComponent.hasPrefix(MD5.hex("large") + "-"))
            #expect(try await cache.metadata(forKey: "large") == Data("etag: \"abc\"".utf8))
            #expect(try await cache.totalCount == 2)
            #expect(try await cache.totalSize == 301_000)
            // Overwrite: the old file goes.
            try await cache.setData(Self.bytes(200_000, seed: 3), forKey: "large")
            #expect(try await cache.data(forKey: "large") == Self.bytes(200_000, seed: 3))
            #expect(FileManager.default.fileExists(atPath: file.path) == false)
            let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.appendingPathComponent("data").path)
            #expect(files.count == 1)
            try await cache.removeValue(forKey: "large")
            #expect(try await cache.data(forKey: "large") == nil)
            #expect(try await !cache.contains("large"))
            #expect(try await cache.contains("small"))
            try await cache.removeAll()
            #expect(try await cache.totalCount == 0)
        }
    }

    @Test("Expiry per entry, measured by the injected clock")
    func expiry() async throws {
        let clock = ManualDate()
        try await withCache({ $0.now = { clock.now } }) { cache, _ in
            try await cache.setData(Data("a".utf8), forKey: "short", expires: clock.now.addingTimeInterval(60))
            try await cache.setData(Data("b".utf8), forKey: "long", expires: clock.now.addingTimeInterval(3600))
            clock.advance(61)
            #expect(try await cache.data(forKey: "short") == nil)
            #expect(try await cache.data(forKey: "long") == Data("b".utf8))
            #expect(try await cache.totalCount == 1)  // the expired entry was removed when read
        }
    }

    @Test("Prefix queries list, count and remove keys by their start")
    func prefixes() async throws {
        try await withCache { cache, _ in
            let keys = ["GET https://a.example/x?1", "GET https://a.example/x?2", "POST https://a.example/x", "GET https://b.example/",
                        "GET https://a.example/xy", "ünïcode/1", "ünïcode/2"]
            for key in keys { try await cache.setData(Data(key.utf8), forKey: key) }
            #expect(try await cache.keys(withPrefix: "GET https://a.example/x") ==
                ["GET https://a.example/x?1", "GET https://a.example/x?2", "GET https://a.example/xy"])
            #expect(try await cache.count(withPrefix: "GET ") == 4)
            #expect(try await cache.count(withPrefix: "ünïcode/") == 2)
            #expect(try await cache.removeAll(withPrefix: "GET https://a.example/x?") == 2)
            #expect(try await cache.totalCount == 5)
            #expect(try await cache.keys(withPrefix: "").count == 5)
        }
    }

    @Test("Passing the size limit trims least recently read entries to 70% of it")
    func sizeLimit() async throws {
        let clock = ManualDate()
        try await withCache({ $0.sizeLimit = 100_000; $0.now = { clock.now }; $0.inlineThreshold = 0 }) { cache, _ in
            for i in 0..<9 {
                try await cache.setData(Self.bytes(10_000, seed: UInt64(i)), forKey: "k\(i)")
                clock.advance(1)
            }
            _ = try await cache.data(forKey: "k0")  // k0 becomes the most recently read
            clock.advance(1)
            try await cache.setData(Self.bytes(30_000), forKey: "big")  // 120,000 > 100,000: trim to 70,000
            #expect(try await cache.totalSize <= 70_000)
            #expect(try await cache.contains("k0"))
            #expect(try await cache.contains("big"))
            #expect(try await !cache.contains("k1"))
            #expect(try await !cache.contains("k2"))
        }
    }

    @Test("Count and age limits; trims by hand")
    func countAndAge() async throws {
        let clock = ManualDate()
        try await withCache({ $0.countLimit = 10; $0.ageLimit = .seconds(100); $0.now = { clock.now } }) { cache, _ in
            for i in 0..<11 {
                try await cache.setData(Data([UInt8(i)]), forKey: "k\(i)")
                clock.advance(1)
            }
            #expect(try await cache.totalCount == 7)  // 11 > 10: trimmed to 70%
            clock.advance(95)
            try await cache.setData(Data([1]), forKey: "fresh")
            try await cache.performMaintenance()
            // k0...k3 went to the count trim; k4 and k5 were last read more than 100 s ago.
            let remaining = Set(try await cache.keys(withPrefix: ""))
            #expect(remaining == ["k6", "k7", "k8", "k9", "k10", "fresh"])
            try await cache.trim(toCount: 1)
            #expect(try await cache.keys(withPrefix: "") == ["fresh"])
            try await cache.trim(toSize: 0)
            #expect(try await cache.totalCount == 0)
        }
    }

    @Test("A periodic trim runs while the cache is open, not only at start-up")
    func periodicTrim() async throws {
        let clock = ManualDate()
        try await withCache({ $0.ageLimit = .seconds(10); $0.now = { clock.now }; $0.maintenanceInterval = .milliseconds(50) }) { cache, _ in
            try await cache.setData(Data("x".utf8), forKey: "old")
            clock.advance(60)
            // Nothing reads or writes; only the periodic task can remove it.
            let deadline = ContinuousClock.now + .seconds(10)
            while try await cache.keys(withPrefix: "").contains("old"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await cache.keys(withPrefix: "").isEmpty)
        }
    }

    @Test("Opening repairs what a crash left: rows without files, files without rows, temporary files")
    func repairOnOpen() async throws {
        let dir = try TemporaryDirectory("disk-repair")
        defer { dir.remove() }
        var configuration = DiskCache.Configuration()
        configuration.inlineThreshold = 0
        do {
            let cache = try DiskCache(directory: dir.url, configuration: configuration)
            try await cache.setData(Self.bytes(5000), forKey: "kept")
            try await cache.setData(Self.bytes(5000, seed: 2), forKey: "lost-file")
            let lost = try #require(try await cache.entry(forKey: "lost-file")?.fileURL)
            try FileManager.default.removeItem(at: lost)
        }
        // A file no row names, and a half-written temporary file, both old.
        let data = dir.url.appendingPathComponent("data"), tmp = dir.url.appendingPathComponent("tmp")
        try Data("stray".utf8).write(to: data.appendingPathComponent("0123-stray"))
        try Data("half".utf8).write(to: tmp.appendingPathComponent("x.tmp"))
        let old = Date(timeIntervalSinceNow: -3600)
        for url in [data.appendingPathComponent("0123-stray"), tmp.appendingPathComponent("x.tmp")] {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: url.path)
        }
        let reopened = try DiskCache(directory: dir.url, configuration: configuration)
        #expect(try await reopened.data(forKey: "kept") == Self.bytes(5000))
        #expect(try await reopened.data(forKey: "lost-file") == nil)
        #expect(try await reopened.totalCount == 1)
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("0123-stray").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty)
        // verify() finds a file whose size changed behind the index's back.
        let kept = try #require(try await reopened.entry(forKey: "kept")?.fileURL)
        try Data("truncated".utf8).write(to: kept)
        let report = try await reopened.verify()
        #expect(report.sizeMismatches == 1)
        #expect(try await reopened.data(forKey: "kept") == nil)
        #expect(try await reopened.verify().isClean)
    }

    @Test("Read-only extra directories: another cache, and a folder named as SDImageCache names files")
    func extraDirectories() async throws {
        let other = try TemporaryDirectory("other-cache"), folder = try TemporaryDirectory("sd-folder")
        defer { other.remove(); folder.remove() }
        do {
            let seeded = try DiskCache(directory: other.url)
            try await seeded.setData(Data("from the other cache".utf8), forKey: "https://x.example/a.png")
        }
        let url = "https://x.example/photo.jpg"
        try Data("from SDImageCache".utf8).write(to: folder.url.appendingPathComponent(MD5.hex(url) + ".jpg"))
        try Data("no extension".utf8).write(to: folder.url.appendingPathComponent(MD5.hex("plain-key")))
        try await withCache({ $0.extraDirectories = [other.url, folder.url] }) { cache, _ in
            #expect(try await cache.data(forKey: "https://x.example/a.png") == Data("from the other cache".utf8))
            #expect(try await cache.data(forKey: url) == Data("from SDImageCache".utf8))
            #expect(try await cache.data(forKey: "plain-key") == Data("no extension".utf8))
            #expect(try await cache.contains(url))
            #expect(try await cache.data(forKey: "absent") == nil)
            // The main cache wins over the extra ones.
            try await cache.setData(Data("mine".utf8), forKey: url)
            #expect(try await cache.data(forKey: url) == Data("mine".utf8))
        }
    }

    @Test("A read-only cache refuses writes with a typed error")
    func readOnly() async throws {
        let dir = try TemporaryDirectory("ro-cache")
        defer { dir.remove() }
        _ = try DiskCache(directory: dir.url)
        var configuration = DiskCache.Configuration()
        configuration.readOnly = true
        let cache = try DiskCache(directory: dir.url, configuration: configuration)
        let error = try await #require(throws: CacheError.self) { try await cache.setData(Data([1]), forKey: "k") }
        #expect(error.kind == .readOnly)
        #expect(MD5.hex("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(MD5.hex("The quick brown fox jumps over the lazy dog") == "9e107d9d372bb6826bd81d3542a419d6")
    }

    @Test("Free-space headroom: a write that would pass it is refused, nothing else lost")
    func headroom() async throws {
        try await withCache({ $0.minimumFreeSpace = Int64.max / 4 }) { cache, _ in
            let error = try await #require(throws: CacheError.self) { try await cache.setData(Self.bytes(100), forKey: "k") }
            #expect(error.kind == .insufficientSpace)
            #expect(try await cache.totalCount == 0)
        }
    }

    @Test("Many tasks reading and writing at once")
    func concurrency() async throws {
        try await withCache({ $0.inlineThreshold = 2000 }) { cache, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        var rng = SeededGenerator(seed: UInt64(task + 1))
                        for _ in 0..<60 {
                            let key = "key-\(rng.next() % 24)"
                            let size = 1000 + Int(rng.next() % 4) * 1000
                            if rng.next() % 2 == 0 {
                                try await cache.setData(Self.bytes(size, seed: UInt64(key.hashValue & 0xFFFF)), forKey: key)
                            } else if let data = try await cache.data(forKey: key) {
                                // Whatever version is read, it is one that was written whole.
                                #expect(data.count % 1000 == 0)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await cache.verify().isClean)
        }
    }
}
