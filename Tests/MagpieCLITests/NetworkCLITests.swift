import Crypto
import Foundation
import MagpieTestSupport
import Testing

private func sha256(_ data: Data) -> String {
    SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
}

private func content(_ count: Int, seed: UInt64) -> Data {
    var generator = SeededGenerator(seed: seed)
    return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
}

private func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0
}

@Suite("magpie download, request and upload")
struct NetworkCLITests {
    func magpie(_ arguments: [String]) async throws -> ProcessRunner.Output {
        try await ProcessRunner.run(CLITests.magpie, arguments)
    }

    @Test("download saves the file and prints its size and SHA-256")
    func download() async throws {
        let dir = try TemporaryDirectory("cli-download")
        defer { dir.remove() }
        let data = content(300_000, seed: 1)
        try await TestOrigin.with { origin in
            origin.setFile("a", data, etag: "a1")
            let out = try await magpie(["download", origin.url("/file/a").absoluteString, "--to", dir.path("a.bin"), "--header", "X-Test: 1"])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains("300000 bytes"))
            #expect(out.stdout.contains("sha256 \(sha256(data))"))
            #expect(try Data(contentsOf: dir.url.appendingPathComponent("a.bin")) == data)
            #expect(origin.requests.last?.headers["x-test"] == "1")
            #expect(out.stderr.contains("downloaded"))  // plain progress lines when not on a terminal

            let missing = try await magpie(["download", origin.url("/file/none").absoluteString, "--to", dir.path("none.bin")])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("404 Not Found"))
            #expect(!FileManager.default.fileExists(atPath: dir.path("none.bin")))
        }
    }

    @Test("download killed with SIGKILL mid-transfer resumes when run again")
    func resumeAfterKill() async throws {
        let dir = try TemporaryDirectory("cli-download")
        defer { dir.remove() }
        let data = content(1_500_000, seed: 2)
        let target = dir.path("big.bin")
        try await TestOrigin.with { origin in
            origin.setFile("big", data, etag: "b1")
            let url = origin.url("/file/big?pace=10&chunk=16384").absoluteString
            let process = Process()
            process.executableURL = CLITests.magpie
            process.arguments = ["download", url, "--to", target, "--quiet"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            #expect(await eventually(20) { fileSize(target + ".magpie-partial") > 200_000 })
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let kept = fileSize(target + ".magpie-partial")
            #expect(kept > 0 && kept < data.count)
            #expect(FileManager.default.fileExists(atPath: target + ".magpie-resume.json"))

            let again = try await magpie(["download", url, "--to", target, "--quiet"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("resumed from"))
            #expect(again.stdout.contains("sha256 \(sha256(data))"))
            #expect(origin.requests.last?.headers["range"] == "bytes=\(kept)-")
            #expect(!FileManager.default.fileExists(atPath: target + ".magpie-partial"))
        }
    }

    @Test("download interrupted by SIGINT says where the data is; a dropped connection exits 1 and resumes")
    func interruptAndDrop() async throws {
        let dir = try TemporaryDirectory("cli-download")
        defer { dir.remove() }
        let data = content(1_000_000, seed: 3)
        try await TestOrigin.with { origin in
            origin.setFile("c", data, etag: "c1")
            let slow = origin.url("/file/c?pace=10&chunk=16384").absoluteString
            let target = dir.path("c.bin")
            let process = Process()
            process.executableURL = CLITests.magpie
            process.arguments = ["download", slow, "--to", target, "--quiet"]
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            #expect(await eventually(20) { fileSize(target + ".magpie-partial") > 100_000 })
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            #expect(process.terminationStatus == 130)
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(message.contains("run the same command to resume"))
            #expect(message.contains(target + ".magpie-partial"))

            let dropped = dir.path("d.bin")
            let drop = origin.url("/drop/c").absoluteString
            let first = try await magpie(["download", drop, "--to", dropped, "--retries", "0"])
            #expect(first.status == 1)
            #expect(first.stderr.contains("partial data (") && first.stderr.contains("is kept in"))
            let second = try await magpie(["download", drop, "--to", dropped])
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stdout.contains("sha256 \(sha256(data))"))
        }
    }

    @Test("request prints status, headers and body; parameters and JSON; 4xx exits 1")
    func request() async throws {
        try await TestOrigin.with { origin in
            let get = try await magpie(["request", "GET", origin.url("/echo").absoluteString, "-d", "q=two words", "-d", "n:=3"])
            #expect(get.status == 0, "\(get.stderr)")
            #expect(get.stdout.hasPrefix("HTTP 200 OK\n"))
            #expect(get.stdout.lowercased().contains("content-type: application/json"))
            #expect(get.stdout.contains("\"query\" : \"n=3&q=two%20words\""))

            let post = try await magpie(["request", "post", origin.url("/echo").absoluteString, "-d", "tags:=[1,true]", "--json",
                                         "--header", "X-Who: cli"])
            #expect(post.status == 0, "\(post.stderr)")
            #expect(post.stdout.contains(#""body" : "{\"tags\":[1,true]}""#))
            #expect(post.stdout.contains(#""x-who" : "cli""#))

            let missing = try await magpie(["request", "GET", origin.url("/status/404").absoluteString])
            #expect(missing.status == 1)
            #expect(missing.stdout.hasPrefix("HTTP 404 Not Found"))

            let bad = try await magpie(["request", "FETCH", origin.url("/echo").absoluteString])
            #expect(bad.status == 2)
            let refused = try await magpie(["request", "GET", "http://127.0.0.1:1/", "--timeout", "2"])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("error"))
        }
    }

    @Test("upload re-encodes JPEGs below quality 1 with the JPEG encoder and sends them as parts")
    func upload() async throws {
        let photo = Fixtures.url("jpeg/photo-baseline.jpg")
        let original = try Data(contentsOf: photo)
        try await TestOrigin.with { origin in
            let out = try await magpie(["upload", origin.url("/upload").absoluteString, photo.path, "--quality", "0.3",
                                        "--name", "photos", "-d", "album=7"])
            #expect(out.status == 0, "\(out.stderr)")
            let json = try #require(out.stdout.split(separator: "\n", maxSplits: 1).last)
            let parts = try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["parts"] as? [[String: Any]])
            #expect(parts.map { $0["name"] as? String } == ["album", "photos"])
            #expect(parts[1]["contentType"] as? String == "image/jpeg")
            #expect(parts[1]["filename"] as? String == "photo-baseline.jpg")
            let size = try #require(parts[1]["size"] as? Int)
            #expect(size > 0 && size < original.count)
        }
    }
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
