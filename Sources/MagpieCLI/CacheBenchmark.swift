import ArgumentParser
import Foundation
import MagpieCache

/// `magpie bench-cache`: disk cache set and get rates against raw files (the floor), for
/// `scripts/compare-peers.sh`. Hidden from help.
struct CacheBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-cache",
        abstract: "Disk cache set/get of 4 KB, 100 KB and 1 MB values, and raw temp-file-and-rename writes and reads.",
        shouldDisplay: false)

    @Option(help: "A scratch directory (emptied).")
    var directory: String

    @Option(help: "Operations per case.")
    var operations = 400

    func run() async throws {
        let root = URL(fileURLWithPath: directory)
        try? FileManager.default.removeItem(at: root)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let clock = ContinuousClock()
        for size in [4096, 100 * 1024, 1024 * 1024] {
            let count = size >= 1024 * 1024 ? max(50, operations / 4) : operations
            let value = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let keys = (0..<count).map { "https://example.com/images/\(size)/\($0).jpg" }

            // Magpie's disk cache.
            let cache = try DiskCache(directory: root.appendingPathComponent("cache-\(size)"))
            let set = try await clock.measure { for key in keys { try await cache.setData(value, forKey: key) } }
            let get = try await clock.measure { for key in keys { _ = try await cache.data(forKey: key) } }

            // The floor: one file per value, written to a temporary name and renamed.
            let raw = root.appendingPathComponent("raw-\(size)")
            try FileManager.default.createDirectory(at: raw, withIntermediateDirectories: true)
            let rawSet = try clock.measure {
                for (i, _) in keys.enumerated() {
                    let temporary = raw.appendingPathComponent("\(i).tmp"), final = raw.appendingPathComponent("\(i)")
                    try value.write(to: temporary)
                    _ = rename(temporary.path, final.path)
                }
            }
            let rawGet = try clock.measure {
                for i in keys.indices { _ = try Data(contentsOf: raw.appendingPathComponent("\(i)")) }
            }
            // The same raw operations, each run off the caller's thread as the cache runs its own.
            let rawAsyncSet = try await clock.measure {
                for i in keys.indices {
                    try await Self.offload {
                        let temporary = raw.appendingPathComponent("\(i).tmp"), final = raw.appendingPathComponent("\(i)")
                        try value.write(to: temporary)
                        _ = rename(temporary.path, final.path)
                    }
                }
            }
            let rawAsyncGet = try await clock.measure {
                for i in keys.indices { try await Self.offload { _ = try Data(contentsOf: raw.appendingPathComponent("\(i)")) } }
            }
            for (name, duration) in [("set", set), ("get", get), ("raw-set", rawSet), ("raw-get", rawGet),
                                     ("raw-async-set", rawAsyncSet), ("raw-async-get", rawAsyncGet)] {
                let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
                print("\(name)-\(size)\t\(String(format: "%.0f", Double(count) / seconds))")
            }
        }
        try? FileManager.default.removeItem(at: root)
    }

    static let queue = DispatchQueue(label: "bench-cache", attributes: .concurrent)

    /// Runs `work` on a dispatch queue and waits for it without blocking the caller's thread.
    static func offload(_ work: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
