import Crypto
import Foundation
@testable import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

func sha256(_ data: Data) -> String {
    SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
}

func randomData(_ count: Int, seed: UInt64) -> Data {
    var generator = SeededGenerator(seed: seed)
    var data = Data(count: count)
    data.withUnsafeMutableBytes { raw in
        let words = raw.bindMemory(to: UInt64.self)
        for i in words.indices { words[i] = generator.next() }
    }
    return data
}

@Suite("Resumable downloads")
struct DownloadTests {
    static func options(retries: Int = 0, resumable: Bool = true) -> DownloadOptions {
        var options = DownloadOptions()
        options.maxRetries = retries
        options.retryDelay = .milliseconds(20)
        options.resumable = resumable
        return options
    }

    @Test("A connection dropped at 50% leaves resume data; the next run sends Range with If-Range and appends")
    func resumeAfterDrop() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        let content = randomData(1_000_000, seed: 1)
        let destination = dir.url.appendingPathComponent("out/file.bin")
        try await TestOrigin.with { origin in
            origin.setFile("f", content, etag: "v1")
            try await withClient(origin) { client in
                let first = try client.download("drop/f", to: destination, options: Self.options())
                let error = await #expect(throws: NetworkError.self) { try await first.result() }
                #expect(error?.kind == .connectionFailed)
                #expect(first.phase == .failed)
                let kept = try #require(error?.resumeData)
                let partial = try Data(contentsOf: kept)
                #expect(error?.resumeProgress == TransferProgress(completed: Int64(partial.count), expected: 1_000_000))
                #expect(partial.count > 0 && partial.count <= 500_000)
                #expect(partial == content.prefix(partial.count))
                let record = try #require(ResumeFiles(url: origin.url("/drop/f"), destination: destination, directory: nil).readRecord())
                #expect(record.totalLength == 1_000_000)
                #expect(record.etag == "\"v1\"")
                #expect(!FileManager.default.fileExists(atPath: destination.path))

                let second = try client.download("drop/f", to: destination, options: Self.options())
                let result = try await second.result()
                #expect(result.resumedFrom == Int64(partial.count))
                #expect(result.bytes == 1_000_000)
                #expect(second.phase == .completed)
                let last = try #require(origin.requests.last)
                #expect(last.headers["range"] == "bytes=\(partial.count)-")
                #expect(last.headers["if-range"] == "\"v1\"")
                #expect(sha256(try Data(contentsOf: destination)) == sha256(content))
                #expect(!FileManager.default.fileExists(atPath: kept.path))
            }
        }
    }

    @Test("Dropped connections are retried on their own, continuing from the stored bytes")
    func automaticRetry() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        let content = randomData(600_000, seed: 2)
        let destination = dir.url.appendingPathComponent("file.bin")
        try await TestOrigin.with { origin in
            origin.setFile("g", content, etag: "v1")
            try await withClient(origin) { client in
                let task = try client.download("drop/g?times=2&at=0.4", to: destination, options: Self.options(retries: 3))
                let result = try await task.result()
                #expect(result.attempts == 3)
                #expect(result.resumedFrom > 0)
                #expect(try Data(contentsOf: destination) == content)
                #expect(origin.requests.filter { $0.headers["range"] != nil }.count == 2)
            }
        }
    }

    @Test("A file changed on the server restarts from zero (If-Range fails, the server sends 200)")
    func changedFileRestarts() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        let old = randomData(400_000, seed: 3), new = randomData(450_000, seed: 4)
        let destination = dir.url.appendingPathComponent("file.bin")
        try await TestOrigin.with { origin in
            origin.setFile("h", old, etag: "v1")
            try await withClient(origin) { client in
                let first = try client.download("drop/h", to: destination, options: Self.options())
                _ = try? await first.result()
                #expect(first.phase == .failed)

                origin.setFile("h", new, etag: "v2")
                let result = try await client.download("drop/h", to: destination, options: Self.options()).result()
                #expect(result.restarts == 1)
                #expect(result.resumedFrom == 0)
                #expect(origin.requests.last?.headers["if-range"] == "\"v1\"")
                #expect(sha256(try Data(contentsOf: destination)) == sha256(new))
            }
        }
    }

    @Test("A 416 for data already complete finishes; for bad data it starts again")
    func rangeNotSatisfiable() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        let content = randomData(100_000, seed: 5)
        try await TestOrigin.with { origin in
            origin.setFile("r", content, etag: "v1")
            let url = origin.url("/file/r")
            try await withClient(origin) { client in
                // All bytes already stored, but the record was left (a kill just before the rename).
                let complete = dir.url.appendingPathComponent("complete.bin")
                let files = ResumeFiles(url: url, destination: complete.standardizedFileURL, directory: nil)
                try content.write(to: files.partial)
                try files.write(ResumeRecord(url: url.absoluteString, destination: complete.standardizedFileURL.path, totalLength: 100_000,
                                             etag: "\"v1\"", lastModified: nil, receivedLength: 100_000, updatedAt: 0))
                let done = try await client.download("file/r", to: complete, options: Self.options()).result()
                #expect(done.bytes == 100_000)
                #expect(origin.requests.last.map { ($0.line, $0.headers["range"]) }! == ("GET /file/r", "bytes=100000-"))
                #expect(try Data(contentsOf: complete) == content)

                // More bytes stored than the file has now (its record says an older, longer length).
                let stale = dir.url.appendingPathComponent("stale.bin")
                let staleFiles = ResumeFiles(url: url, destination: stale.standardizedFileURL, directory: nil)
                try randomData(150_000, seed: 9).write(to: staleFiles.partial)
                try staleFiles.write(ResumeRecord(url: url.absoluteString, destination: stale.standardizedFileURL.path, totalLength: 200_000,
                                                  etag: "\"v1\"", lastModified: nil, receivedLength: 150_000, updatedAt: 0))
                let restarted = try await client.download("file/r", to: stale, options: Self.options()).result()
                #expect(restarted.restarts == 1)
                #expect(try Data(contentsOf: stale) == content)
            }
        }
    }

    @Test("Not resumable: partial data is deleted on failure and no Range is sent")
    func notResumable() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        let content = randomData(300_000, seed: 6)
        let destination = dir.url.appendingPathComponent("file.bin")
        try await TestOrigin.with { origin in
            origin.setFile("n", content, etag: "v1")
            try await withClient(origin) { client in
                let task = try client.download("drop/n", to: destination, options: Self.options(resumable: false))
                let error = await #expect(throws: NetworkError.self) { try await task.result() }
                #expect(error?.resumeData == nil)
                #expect(!FileManager.default.fileExists(atPath: task.resumeData.path))
                let result = try await client.download("drop/n", to: destination, options: Self.options(resumable: false)).result()
                #expect(result.resumedFrom == 0)
                #expect(origin.requests.allSatisfy { $0.headers["range"] == nil })
                #expect(try Data(contentsOf: destination) == content)
            }
        }
    }

    @Test("HTTP errors fail at once with the status; a relative path needs a base URL")
    func httpErrors() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let task = try client.download("file/missing", to: dir.url.appendingPathComponent("x"), options: Self.options(retries: 3))
                let error = await #expect(throws: NetworkError.self) { try await task.result() }
                #expect(error?.status == 404)
                #expect(origin.requestLog.count == 1)  // a 404 is not retried
                var ignoring = Self.options()
                ignoring.ignoresBaseURL = true
                #expect(throws: NetworkError.self) { try client.download("file/missing", to: dir.url.appendingPathComponent("y"), options: ignoring) }
            }
        }
    }

    @Test("Suspend keeps the partial data and resume continues; cancel keeps it unless told to discard")
    func suspendResumeCancelOne() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        let content = randomData(800_000, seed: 7)
        let destination = dir.url.appendingPathComponent("file.bin")
        try await TestOrigin.with { origin in
            origin.setFile("s", content, etag: "v1")
            try await withClient(origin) { client in
                let task = try client.download("file/s?pace=15&chunk=16384", to: destination, options: Self.options())
                #expect(await eventually { task.progress.completed > 100_000 })
                task.suspend()
                #expect(task.phase == .suspended)
                #expect(await eventually { client.configuration.activity?.count == 0 })
                #expect(client.pool.requests.first?.state == .suspended)
                let stored = task.files.partialLength
                try await Task.sleep(for: .milliseconds(200))
                #expect(task.files.partialLength == stored)  // nothing more arrives while suspended
                #expect(stored > 0 && stored < 800_000)

                task.resume()
                let result = try await task.result()
                #expect(result.resumedFrom >= stored)
                #expect(try Data(contentsOf: destination) == content)
                #expect(client.pool.currentRequestCount == 0)

                // Cancel keeps, cancel with discard removes.
                let kept = try client.download("file/s?pace=15&chunk=16384", to: dir.url.appendingPathComponent("kept.bin"), options: Self.options())
                #expect(await eventually { kept.progress.completed > 50_000 })
                kept.cancel()
                let keptError = await #expect(throws: NetworkError.self) { try await kept.result() }
                #expect(keptError?.kind == .cancelled)
                #expect(keptError?.resumeData != nil)
                #expect(await eventually { kept.files.partialLength > 0 })

                let dropped = try client.download("file/s?pace=15&chunk=16384", to: dir.url.appendingPathComponent("dropped.bin"), options: Self.options())
                #expect(await eventually { dropped.progress.completed > 50_000 })
                dropped.cancel(discardingPartialData: true)
                #expect(dropped.phase == .failed)
                #expect(await eventually { !FileManager.default.fileExists(atPath: dropped.files.partial.path) })
            }
        }
    }

    @Test("Several by URL list, all at once, and the queued state beyond the concurrency limit")
    func severalAndAll() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        let content = randomData(300_000, seed: 8)
        try await TestOrigin.with { origin in
            for name in ["a", "b", "c"] { origin.setFile(name, content, etag: name) }
            try await withClient(origin, configure: { $0.maxConcurrentDownloads = 2 }) { client in
                let tasks = try ["a", "b", "c"].map { name in
                    try client.download("file/\(name)?pace=20&chunk=8192", to: dir.url.appendingPathComponent("\(name).bin"), options: Self.options())
                }
                #expect(tasks.map(\.phase) == [.running, .running, .queued])
                #expect(client.downloads.suspend(urls: [tasks[0].url, tasks[1].url]) == 2)
                #expect(tasks[0].phase == .suspended && tasks[1].phase == .suspended)
                #expect(await eventually { tasks[2].phase == .running })  // a slot came free

                client.downloads.suspendAll()
                #expect(tasks.allSatisfy { $0.phase == .suspended })
                #expect(await eventually { client.configuration.activity?.count == 0 })
                #expect(client.pool.requests.allSatisfy { $0.state == .suspended })

                #expect(client.downloads.resume(urls: [tasks[2].url]) == 1)
                client.downloads.resumeAll()
                for task in tasks { _ = try await task.result() }
                for name in ["a", "b", "c"] {
                    #expect(try Data(contentsOf: dir.url.appendingPathComponent("\(name).bin")) == content)
                }

                let more = try ["a", "b"].map { name in
                    try client.download("file/\(name)?pace=20&chunk=8192", to: dir.url.appendingPathComponent("\(name)2.bin"), options: Self.options())
                }
                client.downloads.cancelAll(discardingPartialData: true)
                for task in more {
                    await #expect(throws: NetworkError.self) { try await task.result() }
                }
                #expect(client.downloads.tasks.isEmpty)
                #expect(client.pool.currentRequestCount == 0)
            }
        }
    }

    @Test("Progress counts resumed bytes; -1 when the length is unknown")
    func progress() async throws {
        let dir = try TemporaryDirectory("download")
        defer { dir.remove() }
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let seen = LockedValue<[TransferProgress]>([])
                var options = Self.options()
                options.onProgress = { value in seen.withLock { $0.append(value) } }
                let result = try await client.download("large/300000", to: dir.url.appendingPathComponent("chunked.bin"), options: options).result()
                #expect(result.bytes == 300_000)
                #expect(seen.value.allSatisfy { $0.expected == -1 && $0.fraction == 0 })
                #expect(seen.value.last?.completed == 300_000)
            }
        }
    }
}
