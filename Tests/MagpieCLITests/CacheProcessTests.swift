import Foundation
@testable import MagpieCache
import MagpieTestSupport
import Testing

/// The disk cache across processes: crashes at random moments, two writers at once, a full disk.
@Suite("Disk cache across processes", .serialized)
struct CacheProcessTests {
    static func checkEveryValue(_ directory: URL) async throws -> Int {
        let cache = try DiskCache(directory: directory)
        let keys = try await cache.keys(withPrefix: "")
        for key in keys {
            let data = try await cache.data(forKey: key)
            #expect(data == StressData.value(for: key), "\(key) came back with \(data?.count ?? -1) bytes")
        }
        return keys.count
    }

    @Test("A writer killed at random moments never leaves a wrong value behind")
    func killedWriter() async throws {
        let dir = try TemporaryDirectory("crash-cache")
        defer { dir.remove() }
        var rng = SeededGenerator(seed: 7)
        for round in 0..<25 {
            let process = Process()
            process.executableURL = CLITests.magpie
            process.arguments = ["cache", "stress", "--path", dir.url.path, "--count", "100000", "--seed", "\(round + 1)"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: .milliseconds(40 + Int(rng.next() % 160)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
        }
        let count = try await Self.checkEveryValue(dir.url)
        #expect(count > 0)
        let cache = try DiskCache(directory: dir.url)
        let report = try await cache.verify()
        #expect(report.sizeMismatches == 0)
        #expect(try await cache.verify().isClean)
    }

    @Test("Two processes writing the same keys while this one reads")
    func twoWriters() async throws {
        let dir = try TemporaryDirectory("shared-cache")
        defer { dir.remove() }
        _ = try DiskCache(directory: dir.url)
        let writers = try (1...2).map { seed -> Process in
            let process = Process()
            process.executableURL = CLITests.magpie
            process.arguments = ["cache", "stress", "--path", dir.url.path, "--count", "300", "--seed", "\(seed)"]
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            return process
        }
        let reader = try DiskCache(directory: dir.url)
        var reads = 0
        while writers.contains(where: \.isRunning) {
            for key in try await reader.keys(withPrefix: "stress-") {
                if let data = try await reader.data(forKey: key) {
                    #expect(data == StressData.value(for: key))
                    reads += 1
                }
            }
        }
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }
        #expect(try await Self.checkEveryValue(dir.url) > 0)
        #expect(try await reader.verify().isClean)
        _ = reads
    }

    @Test("A full disk fails that write with a typed error and loses nothing else")
    func fullDisk() async throws {
        let dir = try TemporaryDirectory("full-cache")
        defer { dir.remove() }
        do {
            let cache = try DiskCache(directory: dir.url)
            try await cache.setData(StressData.value(for: "kept-1"), forKey: "kept-1")
            try await cache.setData(StressData.value(for: "kept-2"), forKey: "kept-2")
        }
        let big = dir.url.appendingPathComponent("big.bin")
        try Data(repeating: 7, count: 2_000_000).write(to: big)
        // The file size limit (ulimit -f, 512-byte blocks) makes writes past 512 KB fail with
        // EFBIG, as a full disk fails them with ENOSPC.
        let output = try await ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "trap '' XFSZ; ulimit -f 1024; exec \"$0\" cache put --path \"$1\" big \"$2\"",
             CLITests.magpie.path, dir.url.path, big.path])
        #expect(output.status == 1)
        #expect(output.stderr.contains("File too large"), "\(output.stderr)")
        let cache = try DiskCache(directory: dir.url)
        #expect(try await cache.data(forKey: "big") == nil)
        #expect(try await cache.data(forKey: "kept-1") == StressData.value(for: "kept-1"))
        #expect(try await cache.data(forKey: "kept-2") == StressData.value(for: "kept-2"))
        #expect(try await cache.verify().isClean)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.appendingPathComponent("tmp").path).isEmpty)
    }
}
