import Foundation
@testable import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

/// A part as the origin's multipart parser saw it.
struct ParsedPart: Decodable {
    var name: String
    var filename: String?
    var contentType: String?
    var size: Int
    var text: String
    var checksum: Int
}

struct ParsedForm: Decodable {
    var parts: [ParsedPart]
}

@Suite("Uploads")
struct UploadTests {
    @Test("Fields, in-memory files and files on disk arrive whole, named and typed")
    func multipart() async throws {
        let dir = try TemporaryDirectory("upload")
        defer { dir.remove() }
        var generator = SeededGenerator(seed: 11)
        let big = Data((0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let file = dir.url.appendingPathComponent("scan.png")
        try big.write(to: file)

        try await TestOrigin.with { origin in
            try await withClient(origin, configure: { $0.defaultParameters = ["app": "magpie"] }) { client in
                var form = MultipartFormData()
                form.append("Ada \"the\" first", name: "author")
                form.append(Data("tiny".utf8), name: "note", fileName: "my \"note\".txt", mimeType: "text/plain")
                try form.append(fileAt: file, name: "scan")
                let encodedLength = try await form.encoded().count
                #expect(Int64(encodedLength) == form.contentLength)

                let progress = LockedValue<[TransferProgress]>([])
                var options = UploadOptions()
                options.parameters = ["album": 7]
                options.onProgress = { value in progress.withLock { $0.append(value) } }
                let response = try await client.upload("upload", form: form, options: options)
                let parts = try response.decode(ParsedForm.self).parts
                #expect(parts.map(\.name) == ["album", "app", "author", "note", "scan"])
                #expect(parts[0].text == "7")
                #expect(parts[1].text == "magpie")
                #expect(parts[2].text == "Ada \"the\" first")
                #expect(parts[2].filename == nil)
                #expect(parts[3].filename == "my %22note%22.txt")  // quotes cannot appear inside the quoted name
                #expect(parts[3].contentType == "text/plain")
                #expect(parts[3].text == "tiny")
                #expect(parts[4].filename == "scan.png")
                #expect(parts[4].contentType == "image/png")
                #expect(parts[4].size == big.count)
                #expect(parts[4].checksum == Int(CRC32.checksum(big)))

                let seen = progress.value
                #expect(seen.count > 2)
                #expect(seen.last?.completed == seen.last?.expected)
                #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completed <= $1.completed })
            }
        }
    }

    @Test("A missing file is refused when the form is built")
    func missingFile() throws {
        var form = MultipartFormData()
        #expect(throws: NetworkError.self) { try form.append(fileAt: URL(fileURLWithPath: "/nonexistent/x.jpg"), name: "x") }
    }

    @Test("Image uploads: short MIME forms, re-encoding for JPEG below quality 1, PNG ignores quality")
    func images() async throws {
        let reencoded = LockedValue<[Double]>([])
        let hook: JPEGReencoder = { data, quality in
            reencoded.withLock { $0.append(quality) }
            return data.prefix(data.count / 2)
        }
        let images = [UploadImage(data: Data(repeating: 1, count: 1000), fileName: "a.jpg"),
                      UploadImage(data: Data(repeating: 2, count: 800), fileName: "b.jpg")]
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                for short in ["jpg", "JPG", "jpeg", "JPEG", "image/jpeg"] {
                    let report = try await client.uploadImages("upload", images: images, name: "photos", mimeType: short)
                    #expect(report.succeeded)
                    let parts = try report.responses[0].decode(ParsedForm.self).parts
                    #expect(parts.map(\.contentType) == ["image/jpeg", "image/jpeg"])
                    #expect(parts.map(\.name) == ["photos", "photos"])
                    #expect(parts.map(\.size) == [1000, 800])  // quality 1: untouched
                }
                #expect(reencoded.value.isEmpty)

                let squeezed = try await client.uploadImages("upload", images: images, mimeType: "jpg", compressionQuality: 0.5, reencode: hook)
                #expect(try squeezed.responses[0].decode(ParsedForm.self).parts.map(\.size) == [500, 400])
                #expect(reencoded.value == [0.5, 0.5])

                let png = try await client.uploadImages("upload", images: images, mimeType: "PNG", compressionQuality: 0.5, reencode: hook)
                let pngParts = try png.responses[0].decode(ParsedForm.self).parts
                #expect(pngParts.map(\.size) == [1000, 800])
                #expect(pngParts.map(\.contentType) == ["image/png", "image/png"])
                #expect(reencoded.value.count == 2)

                let separately = try await client.uploadImages("upload", images: images, separately: true)
                #expect(separately.responses.count == 2)

                await #expect(throws: NetworkError.self) {
                    try await client.uploadImages("upload", images: images, mimeType: "tiff?")
                }
            }
        }
    }

    @Test("A failed image upload names the images that did not go up")
    func imageFailures() async throws {
        let images = [UploadImage(data: Data(repeating: 1, count: 100), fileName: "good.jpg"),
                      UploadImage(data: Data(), fileName: "broken.jpg")]
        let hook: JPEGReencoder = { data, _ in
            guard !data.isEmpty else { throw HookRefusal() }
            return data
        }
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let partial = try await client.uploadImages("upload", images: images, compressionQuality: 0.8, reencode: hook)
                #expect(partial.failures.map(\.fileName) == ["broken.jpg"])
                #expect(partial.failures.first?.error.kind == .encodingFailed)
                #expect(try partial.responses[0].decode(ParsedForm.self).parts.map(\.filename) == ["good.jpg"])

                var options = UploadOptions()
                options.ignoresBaseURL = true
                let refused = try await client.uploadImages(
                    origin.url("/status/500").absoluteString, images: images, separately: true, options: options)
                #expect(refused.failures.map(\.fileName) == ["good.jpg", "broken.jpg"])
                #expect(refused.failures.allSatisfy { $0.error.status == 500 })
            }
        }
    }
}
