public import Foundation

/// A small deterministic random number generator (SplitMix64), so that "random" tests
/// are the same on every run.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ prefix: String = "magpie-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs a program and collects what it printed.
public enum ProcessRunner {
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `executable` with `arguments` in `directory` and waits for it.
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes before waiting, so a chatty child cannot fill a pipe and block.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs `executable` on a thread of its own, so waiting for it never blocks the Swift
    /// concurrency pool (a loopback origin in the same process must keep serving).
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try run(executable, arguments, in: directory) as Output })
            }
        }
    }

    /// The directory holding the built products (`.build/debug`), where `magpie` is.
    public static var productsDirectory: URL {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL
        #else
        return Bundle.main.bundleURL
        #endif
    }
}
