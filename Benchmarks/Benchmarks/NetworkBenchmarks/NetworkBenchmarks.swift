import AsyncHTTPClient
import Benchmark
import BenchmarkSupport
import Foundation
import MagpieNetworking
import NIOCore

/// A loopback nginx serving a 200 MB file and a small one: the same server for Magpie, raw
/// AsyncHTTPClient and curl, so their times can be compared as ratios.
final class LoopbackServer: @unchecked Sendable {  // set up once in Benchmark.setup, then read only
    static let shared = LoopbackServer()

    var nginx: LoopbackNginx?
    var port: Int { nginx?.port ?? 0 }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-netbench-\(getpid())")
    let bigSize = 200 * 1024 * 1024

    var big: URL { URL(string: "http://127.0.0.1:\(port)/big.bin")! }
    var small: URL { URL(string: "http://127.0.0.1:\(port)/small.json")! }

    func start() throws {
        let fm = FileManager.default
        try fm.createDirectory(at: directory.appendingPathComponent("www"), withIntermediateDirectories: true)
        let bigFile = directory.appendingPathComponent("www/big.bin")
        if !fm.fileExists(atPath: bigFile.path) {
            var chunk = Data(count: 1 << 20)
            chunk.withUnsafeMutableBytes { raw in
                for i in 0..<raw.count { raw[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
            }
            fm.createFile(atPath: bigFile.path, contents: nil)
            let handle = try FileHandle(forWritingTo: bigFile)
            for _ in 0..<(bigSize >> 20) { try handle.write(contentsOf: chunk) }
            try handle.close()
        }
        try Data(#"{"id":1,"name":"magpie","tags":["a","b"]}"#.utf8).write(to: directory.appendingPathComponent("www/small.json"))
        let nginx = try LoopbackNginx(
            directory: directory, root: directory.appendingPathComponent("www"), port: 20_000 + Int(getpid() % 20_000),
            types: ["application/json json", "application/octet-stream bin"])
        try nginx.start(probe: "small.json")
        self.nginx = nginx
    }

    func stop() {
        nginx?.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

let requestsPerIteration = 200

let benchmarks: @Sendable () -> Void = {
    let server = LoopbackServer.shared
    Benchmark.setup = { try server.start() }
    Benchmark.teardown = { server.stop() }

    let download = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(20), maxIterations: 10)
    let requests = Benchmark.Configuration(
        metrics: [.wallClock, .throughput], scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 200)

    Benchmark("Download 200 MB to a file: curl", configuration: download) { benchmark in
        let target = server.directory.appendingPathComponent("curl.bin").path
        for _ in benchmark.scaledIterations {
            let status = try spawnAndWait("curl", ["-s", "-o", target, server.big.absoluteString])
            guard status == 0 else { throw SpawnFailure(message: "curl failed with status \(status)") }
        }
    }

    Benchmark("Download 200 MB to a file: Magpie DownloadManager", configuration: download) { benchmark in
        let transport = AsyncHTTPClientTransport()
        var configuration = DownloadManager.Configuration()
        configuration.transport = transport
        configuration.activity = nil
        let manager = DownloadManager(configuration: configuration)
        let target = server.directory.appendingPathComponent("magpie.bin")
        for _ in benchmark.scaledIterations {
            var options = DownloadOptions()
            options.ignoresBaseURL = true
            let result = try await manager.download(server.big.absoluteString, to: target, options: options).result()
            precondition(result.bytes == Int64(server.bigSize))
        }
        try await transport.shutdown()
    }

    Benchmark("GET small JSON x\(requestsPerIteration): raw AsyncHTTPClient", configuration: requests) { benchmark in
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        for _ in benchmark.scaledIterations {
            for _ in 0..<requestsPerIteration {
                let request = HTTPClientRequest(url: server.small.absoluteString)
                let response = try await client.execute(request, timeout: .seconds(20))
                let body = try await response.body.collect(upTo: 1 << 20)
                precondition(response.status == .ok && body.readableBytes > 0)
            }
        }
        try await client.shutdown()
    }

    Benchmark("GET small JSON x\(requestsPerIteration): Magpie NetworkClient", configuration: requests) { benchmark in
        let transport = AsyncHTTPClientTransport()
        var configuration = NetworkClient.Configuration(baseURL: URL(string: "http://127.0.0.1:\(server.port)/"))
        configuration.transport = transport
        let client = NetworkClient(configuration: configuration)
        for _ in benchmark.scaledIterations {
            for _ in 0..<requestsPerIteration {
                let response = try await client.get("small.json")
                precondition(response.status == 200 && !response.body.isEmpty)
            }
        }
        try await transport.shutdown()
    }
}
