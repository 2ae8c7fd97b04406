import Foundation
import MagpieImage
import MagpieTestSupport
import Testing

@Suite("magpie fetch and magpie demo")
struct PipelineCLITests {
    func magpie(_ arguments: [String]) async throws -> ProcessRunner.Output {
        try await ProcessRunner.run(CLITests.magpie, arguments)
    }

    @Test("fetch loads through one pipeline: duplicates share a download, a second run hits the disk cache")
    func fetch() async throws {
        let dir = try TemporaryDirectory("cli-fetch")
        defer { dir.remove() }
        let jpeg = try SampleImages.landscape(width: 300, height: 200).encoded(using: .jpeg(quality: 0.8))
        let png = try SampleImages.badge(size: 40).encoded(using: .png())
        try await TestOrigin.with { origin in
            origin.setFile("a.jpg", jpeg, etag: "a")
            origin.setFile("b.png", png, etag: "b")
            let a = origin.url("/file/a.jpg?pace=20&chunk=4096").absoluteString
            let b = origin.url("/file/b.png").absoluteString
            let arguments = ["fetch", a, b, a, "--cache-dir", dir.path("cache"), "--out", dir.path("out"), "--size", "100", "--json"]
            let first = try await magpie(arguments)
            #expect(first.status == 0, "\(first.stderr)")
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [[String: Any]])
            #expect(objects.count == 3)
            #expect(objects.map { $0["source"] as? String } == ["remote", "remote", "remote"])
            #expect(objects.map { $0["width"] as? Int } == [100, 40, 100])
            #expect(origin.hits("/file/a.jpg") == 1)
            #expect(FileManager.default.fileExists(atPath: dir.path("out/a.jpg")))
            #expect(FileManager.default.fileExists(atPath: dir.path("out/b.png")))
            #expect(try Image(data: Data(contentsOf: dir.url.appendingPathComponent("out/a.jpg"))).width == 100)

            let second = try await magpie(arguments)
            #expect(second.status == 0, "\(second.stderr)")
            let again = try #require(try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [[String: Any]])
            let sources = again.map { $0["source"] as? String ?? "" }
            #expect(sources[1] == "disk")
            // The two loads of a.jpg share one disk read, or the second finds it in memory.
            #expect(sources[0] == "disk" || sources[2] == "disk")
            #expect(Set(sources).isSubset(of: ["disk", "memory"]), "\(sources)")
            #expect(origin.requestLog.count == 2)

            let failing = try await magpie(["fetch", origin.url("/file/missing.jpg").absoluteString, "--no-disk-cache"])
            #expect(failing.status == 1)
            #expect(failing.stderr.contains("404"))
        }
    }

    @Test("demo runs on its own and reports one download per image")
    func demo() async throws {
        let dir = try TemporaryDirectory("cli-demo")
        defer { dir.remove() }
        let out = try await magpie(["demo", "--out", dir.path("demo")])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("the origin served 5 downloads"))
        #expect(out.stdout.contains("memoryFast"))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path("demo")).filter { $0.contains("-256.") }
        #expect(files.count == 5)
    }
}

extension TestOrigin {
    /// Requests seen for `path` (without query).
    func hits(_ path: String) -> Int {
        requestLog.filter { $0.split(separator: " ").last.map { $0.split(separator: "?")[0] } == path[...] }.count
    }
}
