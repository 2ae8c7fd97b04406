import Benchmark
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
    var port = 0
    var server: Process?
    var urls: [URL] { (0..<Self.count).map { URL(string: "http://127.0.0.1:\(port)/photo-\($0).jpg")! } }
    var thumbnailURL: URL { URL(string: "http://127.0.0.1:\(port)/thumb.jpg")! }

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
        port = 30_000 + Int(getpid() % 20_000)
        let config = """
            worker_processes 1;
            daemon off;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/error.log;
            events { worker_connections 1024; }
            http {
                access_log off;
                sendfile on;
                keepalive_requests 1000000;
                client_body_temp_path \(directory.path)/body;
                proxy_temp_path \(directory.path)/proxy;
                fastcgi_temp_path \(directory.path)/fastcgi;
                uwsgi_temp_path \(directory.path)/uwsgi;
                scgi_temp_path \(directory.path)/scgi;
                types { image/jpeg jpg; }
                server { listen 127.0.0.1:\(port); root \(www.path); }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try config.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        // Through python's execv after closing every inherited descriptor: nginx must not hold the
        // benchmark plugin's pipes, or a crashed run would leave the plugin waiting forever.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c", "import os, sys; os.closerange(3, 65536); os.execv('/usr/sbin/nginx', ['nginx'] + sys.argv[1:])",
            "-c", file.path, "-p", directory.path,
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        server = process
        for _ in 0..<200 {
            if (try? Data(contentsOf: thumbnailURL)) != nil { return }
            usleep(20_000)
        }
    }

    func stop() {
        server?.terminate()
        server?.waitUntilExit()
    }
}

/// Runs a program found on PATH (the Python that has Pillow) and waits for it with posix_spawnp
/// and waitpid. Foundation's Process never
/// noticed the Python peer exiting inside the benchmark runner (it stayed a zombie), so the
/// peer is started without it.
func spawnAndWait(_ path: String, _ arguments: [String]) throws -> Int32 {
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    // The runner's threads block most signals and ignore SIGPIPE; a child inherits both, and
    // Python's Pool then never sees the SIGTERM that ends its workers. Start it clean.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let result = posix_spawnp(&pid, path, &actions, &attributes, argv, environ)
    guard result == 0 else { throw PeerFailure(message: "posix_spawn: \(String(cString: strerror(result)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 {
        guard errno == EINTR else { throw PeerFailure(message: "waitpid: \(String(cString: strerror(errno)))") }
    }
    return status
}

struct PeerFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { "peer_pipeline.py failed: \(message)" }
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
            guard status == 0 else { throw PeerFailure(message: "exit status \(status)") }
        }
    }
}
