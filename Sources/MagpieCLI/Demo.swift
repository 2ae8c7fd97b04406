import ArgumentParser
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Magpie
import MagpieCache
import MagpieImage
import MagpieNetworking
import MagpieSupport
import NIOCore
import ServiceLifecycle

/// `magpie demo`: the pipeline end to end against a local origin, offline.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the pipeline against a local origin serving generated images, and show what came from where.")

    @Option(help: "Where thumbnails and the demo's cache go (emptied first).")
    var out = "magpie-demo"

    @Option(help: "Copies of each URL loaded at once (they must share one download).")
    var duplicates = 3

    struct Sample: Sendable {
        var name: String
        var data: Data
        var summary: String
    }

    func validate() throws {
        guard (1...50).contains(duplicates) else { throw ValidationError("--duplicates must be within 1...50") }
    }

    func run() async throws {
        let directory = URL(fileURLWithPath: out)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        Self.step("1. Generating sample images")
        let samples = try Self.samples()
        for sample in samples { print("   " + Self.pad(sample.name, 24) + Self.pad("\(sample.data.count) bytes", 15, left: true) + "  " + sample.summary) }

        Self.step("2. Starting a local origin on 127.0.0.1 (sends each file in 16 KB pieces, 10 ms apart)")
        let origin = try await DemoOrigin.start(samples)
        print("   http://127.0.0.1:\(origin.port)/images/…")
        do {
            try await load(samples, origin: origin, directory: directory)
            await origin.stop()
        } catch {
            await origin.stop()
            throw error
        }
    }

    private func load(_ samples: [Sample], origin: DemoOrigin, directory: URL) async throws {
        let transport = AsyncHTTPClientTransport()
        let cacheDirectory = directory.appendingPathComponent("cache")
        func pipeline() throws -> ImagePipeline {
            var configuration = ImagePipeline.Configuration()
            configuration.transport = transport
            configuration.imageCache = ImageCache(disk: try DiskCache(directory: cacheDirectory))
            configuration.previewInterval = .milliseconds(30)
            configuration.activity = nil
            return ImagePipeline(configuration: configuration)
        }
        let first = try pipeline()
        let urls = samples.map { origin.url("/images/\($0.name)") }
        let resize = ImageProcessors.Resize(size: PixelSize(width: 256, height: 256), contentMode: .fit)

        Self.step("3. Loading \(samples.count) URLs × \(duplicates) at once (progressive, 256 px thumbnails)")
        let round1 = try await Self.round(first, urls: urls, duplicates: duplicates, processors: [resize], progressive: true)
        for (index, sample) in samples.enumerated() {
            let result = round1[index]
            guard let image = result.image else { continue }
            // Each thumbnail in its source's format: animations stay animated.
            let format = ImageFormat(fileExtension: (sample.name as NSString).pathExtension) ?? .png
            let encoder = ImageEncoders.encoder(for: format, quality: 0.85) ?? ImageEncoders.PNG()
            let name = (sample.name as NSString).deletingPathExtension + "-256." + encoder.format.fileExtension
            try FileOutput.write(try image.encoded(using: encoder), to: directory.appendingPathComponent(name).path)
        }
        print("   thumbnails written to \(directory.path)/")

        Self.step("4. The same loads again (memory), then in a fresh pipeline (disk)")
        let round2 = try await Self.round(first, urls: urls, duplicates: duplicates, processors: [resize], progressive: false)
        let round3 = try await Self.round(try pipeline(), urls: urls, duplicates: duplicates, processors: [resize], progressive: false)
        try await transport.shutdown()

        Self.step("5. What came from where")
        let widths = [24, 11, 11, 11, 9, 11, 12]
        func row(_ cells: [String]) {
            print("   " + zip(cells, widths).map { Self.pad($0, $1) }.joined(separator: " "))
        }
        row(["image", "first", "again", "fresh", "previews", "thumbnail", "loads/served"])
        for (index, sample) in samples.enumerated() {
            let size = round1[index].image.map { "\($0.width)x\($0.height)" } ?? "failed"
            row([sample.name, round1[index].sources, round2[index].sources, round3[index].sources, "\(round1[index].previews)", size,
                 "\(duplicates * 3)/\(origin.served(sample.name))"])
        }
        let total = samples.count * duplicates * 3
        let downloads = samples.reduce(0) { $0 + origin.served($1.name) }
        print("\n   \(total) loads; the origin served \(downloads) downloads (one per image: duplicates shared it, later rounds hit the caches).")
        let failed = (round1 + round2 + round3).filter { $0.image == nil }.count
        if failed > 0 {
            Terminal.error("magpie: \(failed) loads failed")
            throw ExitCode(1)
        }
    }

    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        guard text.count < width else { return text }
        let fill = String(repeating: " ", count: width - text.count)
        return left ? fill + text : text + fill
    }

    static func step(_ text: String) {
        print("\n\u{1B}[1m== \(text)\u{1B}[0m")
    }

    /// The demo's images, generated with Magpie's own encoders.
    static func samples() throws -> [Sample] {
        let scene = try SampleImages.landscape(width: 1200, height: 800)
        let photo = try SampleImages.landscape(width: 4000, height: 3000)
        let spinner = try SampleImages.spinner(size: 128, frames: 12)
        return [
            Sample(name: "scene-progressive.jpg", data: try scene.encoded(using: .jpeg(quality: 0.85, progressive: true)),
                   summary: "1200x800 progressive JPEG"),
            Sample(name: "badge-interlaced.png", data: try SampleImages.badge(size: 512).encoded(using: .png(interlaced: true)),
                   summary: "512x512 Adam7-interlaced PNG with alpha"),
            Sample(name: "spinner.gif", data: try spinner.encoded(using: .gif()), summary: "128x128 animated GIF, 12 frames"),
            Sample(name: "spinner.webp", data: try spinner.encoded(using: .webp(quality: 0.8)), summary: "128x128 animated WebP, 12 frames"),
            Sample(name: "photo-4000x3000.jpg", data: try photo.encoded(using: .jpeg(quality: 0.85)), summary: "4000x3000 baseline JPEG"),
        ]
    }

    struct RoundResult: Sendable {
        var image: Image?
        var sources: String
        var previews: Int
    }

    /// Loads every URL `duplicates` times at once; per URL: the image, the sources seen, the previews.
    static func round(
        _ pipeline: ImagePipeline, urls: [URL], duplicates: Int, processors: [any ImageProcessing], progressive: Bool
    ) async throws -> [RoundResult] {
        let previews = LockedValue([Int](repeating: 0, count: urls.count))
        let received = LockedValue([TransferProgress](repeating: TransferProgress(completed: 0, expected: -1), count: urls.count))
        let results = LockedValue([[ImageTaskResult]](repeating: [], count: urls.count))
        let remaining = LockedValue(urls.count * duplicates)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            for (index, url) in urls.enumerated() {
                for copy in 0..<duplicates {
                    let request = ImageRequest(url: url, processors: processors, options: progressive ? [.progressive] : [])
                    let progress: @Sendable (TransferProgress) -> Void = { value in
                        if copy == 0 { received.withLock { $0[index] = value } }
                    }
                    pipeline.loadImage(with: request, progress: progress) { result in
                        if result.stage == .progress {
                            guard copy == 0 else { return }
                            let count = previews.withLock { value -> Int in
                                value[index] += 1
                                return value[index]
                            }
                            if count <= 3, let image = result.image {
                                let bytes = received.value[index]
                                let share = bytes.expected > 0 ? " after \(Int(bytes.fraction * 100))% of the bytes" : ""
                                print("   \(urls[index].lastPathComponent): preview \(count) (\(image.width)x\(image.height))\(share)")
                            }
                            return
                        }
                        results.withLock { $0[index].append(result) }
                        let left = remaining.withLock { value -> Int in
                            value -= 1
                            return value
                        }
                        if left == 0 { continuation.resume() }
                    }
                }
            }
        }
        return urls.indices.map { index in
            let ends = results.value[index]
            let sources = Set(ends.compactMap { $0.source?.rawValue }).sorted().joined(separator: "+")
            let error = ends.first { $0.error != nil }?.error
            if let error { Terminal.error("   \(urls[index].lastPathComponent): \(error)") }
            return RoundResult(image: ends.first { $0.image != nil }?.image, sources: sources.isEmpty ? "failed" : sources,
                               previews: previews.value[index])
        }
    }
}

/// The demo's origin: serves the samples under /images/NAME in 16 KB pieces, counting downloads.
final class DemoOrigin: Sendable {
    let port: Int
    private let counts: LockedValue<[String: Int]>
    private let shutdown: @Sendable () async -> Void

    private init(port: Int, counts: LockedValue<[String: Int]>, shutdown: @escaping @Sendable () async -> Void) {
        self.port = port
        self.counts = counts
        self.shutdown = shutdown
    }

    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    func served(_ name: String) -> Int { counts.withLock { $0[name] ?? 0 } }

    func stop() async { await shutdown() }

    struct NotStarted: Error, CustomStringConvertible {
        var description: String { "the demo origin did not start" }
    }

    static func start(_ samples: [Demo.Sample]) async throws -> DemoOrigin {
        let files = Dictionary(uniqueKeysWithValues: samples.map { ($0.name, $0.data) })
        let counts = LockedValue<[String: Int]>([:])
        let router = Router()
        router.get("/images/:name") { _, context -> Response in
            let name = context.parameters.get("name") ?? ""
            guard let data = files[name] else { return Response(status: .notFound) }
            counts.withLock { $0[name, default: 0] += 1 }
            let type = name.hasSuffix(".png") ? "image/png" : name.hasSuffix(".gif") ? "image/gif" : name.hasSuffix(".webp") ? "image/webp" : "image/jpeg"
            return Response(
                status: .ok, headers: [.contentType: type, .eTag: "\"\(name)-1\"", .contentLength: String(data.count)],
                body: ResponseBody(contentLength: data.count) { writer in
                    var offset = 0
                    while offset < data.count {
                        let end = min(offset + 16_384, data.count)
                        try await writer.write(ByteBuffer(bytes: data[offset..<end]))
                        offset = end
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    try await writer.finish(nil)
                })
        }
        var logger = Logger(label: "magpie-demo-origin")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? -1)
                continuation.finish()
            }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let running = Task { try await group.run() }
        var port = -1
        for await value in ports { port = value }
        guard port > 0 else {
            running.cancel()
            throw NotStarted()
        }
        return DemoOrigin(port: port, counts: counts) {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
        }
    }
}
