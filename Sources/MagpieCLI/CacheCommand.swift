import ArgumentParser
import Foundation
import MagpieCache
import MagpieSupport

/// `magpie cache`: inspect and manage a disk cache directory.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and manage a Magpie disk cache.",
        subcommands: [Stats.self, Get.self, Put.self, Remove.self, Trim.self, Clear.self, Verify.self, Stress.self])

    struct Location: ParsableArguments {
        @Option(help: "The cache directory.")
        var path: String

        @Option(name: .customLong("size-limit"), help: "Size limit in bytes (default 512 MB).")
        var sizeLimit: Int64?

        func open(readOnly: Bool = false) throws -> DiskCache {
            var configuration = DiskCache.Configuration()
            if let sizeLimit { configuration.sizeLimit = sizeLimit }
            configuration.readOnly = readOnly
            do {
                return try DiskCache(directory: URL(fileURLWithPath: path), configuration: configuration)
            } catch {
                Terminal.error("\(path): error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    /// Runs `body`, reporting a cache error as `PATH: error: MESSAGE` and exit status 1.
    static func reporting<T>(_ path: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ExitCode {
            throw error
        } catch {
            Terminal.error("\(path): error: \(error)")
            throw ExitCode(1)
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes and limits.")
        @OptionGroup var location: Location
        @Flag(help: "Print a JSON object: count, totalBytes, sizeLimit, countLimit, ageLimit (seconds).")
        var json = false

        func run() async throws {
            let cache = try location.open()
            let (count, size) = try await reporting(location.path) { (try await cache.totalCount, try await cache.totalSize) }
            let configuration = cache.configuration
            let age = configuration.ageLimit.map { Double($0.components.seconds) }
            if json {
                let object: [String: Any] = [
                    "count": count, "totalBytes": size, "sizeLimit": configuration.sizeLimit,
                    "countLimit": configuration.countLimit as Any? ?? NSNull(), "ageLimit": age as Any? ?? NSNull(),
                ]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
                print(String(decoding: data, as: UTF8.self))
            } else {
                print("\(location.path): \(count) entries, \(ByteCount.format(size)) of \(ByteCount.format(configuration.sizeLimit))"
                      + (configuration.countLimit.map { ", count limit \($0)" } ?? "")
                      + (age.map { ", age limit \(Int($0)) s" } ?? ""))
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write the value for KEY to stdout (exit 1 if absent).")
        @OptionGroup var location: Location
        @Argument var key: String

        func run() async throws {
            let cache = try location.open()
            guard let data = try await reporting(location.path, { try await cache.data(forKey: key) }) else {
                Terminal.error("\(key): not in the cache")
                throw ExitCode(1)
            }
            FileHandle.standardOutput.write(data)
        }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Store the contents of FILE (or - for stdin) under KEY.")
        @OptionGroup var location: Location
        @Argument var key: String
        @Argument var file: String
        @Option(help: "Expire after this many seconds.")
        var expires: Double?

        func run() async throws {
            let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try FileInput.read(file)
            let cache = try location.open()
            try await reporting(location.path) {
                try await cache.setData(data, forKey: key, expires: expires.map { Date().addingTimeInterval($0) })
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove KEY (or every key with --prefix).")
        @OptionGroup var location: Location
        @Argument var key: String
        @Flag(help: "Remove every key that starts with KEY.")
        var prefix = false

        func run() async throws {
            let cache = try location.open()
            try await reporting(location.path) {
                if prefix {
                    print("removed \(try await cache.removeAll(withPrefix: key)) entries")
                } else {
                    try await cache.removeValue(forKey: key)
                }
            }
        }
    }

    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove least-recently-used entries down to a size, count or age.")
        @OptionGroup var location: Location
        @Option(help: "Keep at most this many bytes.") var size: Int64?
        @Option(help: "Keep at most this many entries.") var count: Int?
        @Option(help: "Remove entries not read for this many seconds.") var age: Double?

        func validate() throws {
            guard size != nil || count != nil || age != nil else { throw ValidationError("give --size, --count or --age") }
        }

        func run() async throws {
            let cache = try location.open()
            try await reporting(location.path) {
                if let size { try await cache.trim(toSize: size) }
                if let count { try await cache.trim(toCount: count) }
                if let age { try await cache.trim(toAge: .milliseconds(Int64(age * 1000))) }
                print("\(location.path): \(try await cache.totalCount) entries, \(ByteCount.format(try await cache.totalSize))")
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = try location.open()
            try await reporting(location.path) { try await cache.removeAll() }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check every entry against its file and size, and repair.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = try location.open()
            let report = try await reporting(location.path) { try await cache.verify() }
            if report.isClean {
                print("\(location.path): ok")
            } else {
                print("\(location.path): repaired: \(report.rowsWithoutFiles) entries without files, "
                      + "\(report.sizeMismatches) of the wrong size, \(report.filesWithoutRows) stray files, "
                      + "\(report.temporaryFiles) temporary files")
            }
        }
    }

    /// Writes deterministic values in a loop, for the crash and two-process tests. Hidden.
    struct Stress: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write KEY-N entries whose bytes derive from their key, COUNT times.", shouldDisplay: false)
        @OptionGroup var location: Location
        @Option var prefix = "stress"
        @Option var count = 200
        @Option var seed: UInt64 = 1

        func run() async throws {
            let cache = try location.open()
            var rng = seed
            for _ in 0..<count {
                rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let key = "\(prefix)-\(rng >> 58)"
                try await reporting(location.path) { try await cache.setData(StressData.value(for: key), forKey: key) }
            }
        }
    }
}
