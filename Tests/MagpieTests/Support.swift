import Foundation
@testable import Magpie
import MagpieCache
import MagpieImage
import MagpieNetworking
import MagpieSupport
import MagpieTestSupport

/// Encoded test images, made with Magpie's encoders from the generated landscape (sizes tell
/// images apart).
enum TestImages {
    static func jpeg(width: Int = 240, height: Int = 160, progressive: Bool = false) throws -> Data {
        try SampleImages.landscape(width: width, height: height).encoded(using: .jpeg(quality: 0.8, progressive: progressive))
    }

    static func png(size: Int = 64) throws -> Data {
        try SampleImages.badge(size: size).encoded(using: .png())
    }
}

/// A pipeline with its own transport (shut down afterwards) and caches in a temporary directory.
final class PipelineHarness: Sendable {
    let transport = AsyncHTTPClientTransport()
    let directory: TemporaryDirectory
    let pipeline: ImagePipeline

    init(disk: Bool = true, memory: Bool = true, configure: (inout ImagePipeline.Configuration) -> Void = { _ in }) throws {
        directory = try TemporaryDirectory("pipeline")
        var configuration = ImagePipeline.Configuration()
        configuration.transport = transport
        configuration.activity = NetworkActivity()
        configuration.imageCache = ImageCache(
            memory: memory ? MemoryCache() : nil,
            disk: disk ? try DiskCache(directory: directory.url.appendingPathComponent("cache")) : nil)
        configure(&configuration)
        pipeline = ImagePipeline(configuration: configuration)
    }

    /// Another pipeline on the same disk directory with a fresh memory tier.
    func sibling(configure: (inout ImagePipeline.Configuration) -> Void = { _ in }) throws -> ImagePipeline {
        var configuration = pipeline.configuration
        configuration.imageCache = ImageCache(memory: MemoryCache(), disk: try DiskCache(directory: directory.url.appendingPathComponent("cache")))
        configure(&configuration)
        return ImagePipeline(configuration: configuration)
    }

    func close() async {
        try? await transport.shutdown()
        directory.remove()
    }
}

func withPipeline<T: Sendable>(
    disk: Bool = true, memory: Bool = true, configure: (inout ImagePipeline.Configuration) -> Void = { _ in },
    _ body: (ImagePipeline, TestOrigin, PipelineHarness) async throws -> T
) async throws -> T {
    try await TestOrigin.with { origin in
        let harness = try PipelineHarness(disk: disk, memory: memory, configure: configure)
        do {
            let result = try await body(harness.pipeline, origin, harness)
            await harness.close()
            return result
        } catch {
            await harness.close()
            throw error
        }
    }
}

/// Counts the calls of each stage of a callback load.
final class CallbackLog: Sendable {
    let results = LockedValue<[ImageTaskResult]>([])
    func record(_ result: ImageTaskResult) { results.withLock { $0.append(result) } }
    var ends: [ImageTaskResult] { results.value.filter { $0.stage != .progress } }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds`.
func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

extension TestOrigin {
    /// Requests seen for `path` (without query).
    func hits(_ path: String) -> Int {
        requestLog.filter { $0.split(separator: " ").last.map { $0.split(separator: "?")[0] } == path[...] }.count
    }
}
