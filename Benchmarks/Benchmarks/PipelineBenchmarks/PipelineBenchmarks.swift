import Benchmark
import BenchmarkSupport
import Foundation
import Magpie
import MagpieCache
import MagpieImage
import MagpieNetworking

/// 200 distinct 4000x3000 JPEGs and a 256 px thumbnail, served by a loopback nginx: the same
/// server for Magpie's pipeline and for the thumbor-like Pillow loop (scripts/peer_pipeline.py).
final class Corpus: @unchecked Sendable {  // set up once in Benchmark.setup, then read only
    static let shared = Corpus()
    static let count = 200

    let directory = URL(fileURLWithPath: "/tmp/magpie-pipeline-bench")
    var server: LoopbackNginx?
    var urls: [URL] { (0..<Self.count).map { server!.url("photo-\($0).jpg") } }
    var thumbnailURL: URL { server!.url("thumb.jpg") }

    func prepare() throws {
        let www = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        let marker = www.appendingPathComponent("photo-\(Self.count - 1).jpg")
        if !FileManager.default.fileExists(atPath: marker.path) {
            let base = try SampleImages.landscape(width: 4000, height: 3000)
            for index in 0..<Self.count {
                // Each photo differs: a band of rows tinted by its index.
                var pixels = base.bitmap.pixels
                let row = 4000 * 3
                for y in (index * 10)..<(index * 10 + 40) {
                    for x in stride(from: 0, to: row, by: 3) { pixels[(y % 3000) * row + x] = UInt8(truncatingIfNeeded: index &* 37) }
                }
                let image = Image(bitmap: try Bitmap(width: 4000, height: 3000, format: .rgb8, pixels: pixels))
                try image.encoded(using: .jpeg(quality: 0.85)).write(to: www.appendingPathComponent("photo-\(index).jpg"))
            }
            let thumb = try SampleImages.landscape(width: 256, height: 192)
            try thumb.encoded(using: .jpeg(quality: 0.85)).write(to: www.appendingPathComponent("thumb.jpg"))
        }
        let server = try LoopbackNginx(directory: directory, root: www, port: 30_000 + Int(getpid() % 20_000), types: ["image/jpeg jpg"])
        try server.start(probe: "thumb.jpg")
        self.server = server
    }

    func stop() { server?.stop() }
}

let benchmarks: @Sendable () -> Void = {
    let corpus = Corpus.shared
    Benchmark.setup = { try corpus.prepare() }
    Benchmark.teardown = { corpus.stop() }

    let hits = Benchmark.Configuration(metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 50)
    let slow = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(60), maxIterations: 5)

    // Memory hits: the raw cache against the pipeline's async API on the same key.
    let key = "http://127.0.0.1/photo.jpg"
    let image = try? SampleImages.landscape(width: 64, height: 48)

    Benchmark("Memory hit: raw MemoryCache.value(forKey:)", configuration: hits) { benchmark in
        let memory = MemoryCache<String, Image>()
        if let image { memory.setValue(image, forKey: key, cost: image.cost) }
        for _ in benchmark.scaledIterations {
            blackHole(memory.value(forKey: key))
        }
    }

    Benchmark("Memory hit: ImagePipeline.image(for:)", configuration: hits) { benchmark in
        var configuration = ImagePipeline.Configuration()
        configuration.imageCache = ImageCache(memory: MemoryCache(), disk: nil)
        let pipeline = ImagePipeline(configuration: configuration)
        if let image { configuration.imageCache?.memory?.setValue(image, forKey: key, cost: image.cost) }
        let request = ImageRequest(url: URL(string: key))
        for _ in benchmark.scaledIterations {
            blackHole(try await pipeline.image(for: request))
        }
    }

    Benchmark("Disk hit: 256 px thumbnail through the pipeline", configuration: .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(5), maxIterations: 2000)) { benchmark in
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-diskhit-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = try DiskCache(directory: directory)
        let transport = AsyncHTTPClientTransport()
        var configuration = ImagePipeline.Configuration()
        configuration.transport = transport
        configuration.imageCache = ImageCache(memory: nil, disk: disk)
        let pipeline = ImagePipeline(configuration: configuration)
        _ = try await pipeline.image(for: corpus.thumbnailURL)  // now on disk
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let response = try await pipeline.imageTask(with: ImageRequest(url: corpus.thumbnailURL)).response
            precondition(response.source == .disk)
            blackHole(response)
        }
        benchmark.stopMeasurement()
        try await transport.shutdown()
    }

    Benchmark("Thumbnails of 200 4000x3000 JPEGs from loopback: Magpie pipeline", configuration: slow) { benchmark in
        let transport = AsyncHTTPClientTransport()
        let urls = corpus.urls
        for _ in benchmark.scaledIterations {
            var configuration = ImagePipeline.Configuration()
            configuration.transport = transport
            configuration.imageCache = nil
            let pipeline = ImagePipeline(configuration: configuration)
            let options = ThumbnailOptions(size: PixelSize(width: 256, height: 256))
            let encoder = ImageEncoders.JPEG(quality: 0.8)
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for url in urls {
                    group.addTask {
                        let thumbnail = try await pipeline.image(for: ImageRequest(url: url, thumbnail: options))
                        return try thumbnail.encoded(using: encoder).count
                    }
                }
                return try await group.reduce(0, +)
            }
            precondition(total > 0)
        }
        try await transport.shutdown()
    }

    Benchmark("Thumbnails of 200 4000x3000 JPEGs from loopback: Pillow, thumbor-like, 2 processes", configuration: slow) { benchmark in
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/peer_pipeline.py")
        for _ in benchmark.scaledIterations {
            let status = try spawnAndWait("python3", [script.path] + corpus.urls.map(\.absoluteString))
            guard status == 0 else { throw SpawnFailure(message: "peer_pipeline.py failed with status \(status)") }
        }
    }
}
