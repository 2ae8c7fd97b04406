import Foundation
import MagpieTestSupport
import Testing

/// The `magpie` executable, run as a process: output lines, JSON, exit codes.
@Suite("magpie CLI")
struct CLITests {
    static var magpie: URL { ProcessRunner.productsDirectory.appendingPathComponent("magpie") }

    func run(_ arguments: [String]) throws -> ProcessRunner.Output {
        try ProcessRunner.run(Self.magpie, arguments)
    }

    @Test("info prints one line per file")
    func infoLines() throws {
        let output = try run(["info", Fixtures.url("jpeg/orientation-6.jpg").path, Fixtures.url("gif/animated.gif").path,
                              Fixtures.url("png/rgba8.png").path])
        #expect(output.status == 0)
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines == [
            "\(Fixtures.url("jpeg/orientation-6.jpg").path): JPEG 40x24 frames=1 alpha=no orientation=6",
            "\(Fixtures.url("gif/animated.gif").path): GIF 48x32 frames=6 alpha=yes orientation=1",
            "\(Fixtures.url("png/rgba8.png").path): PNG 37x23 frames=1 alpha=yes orientation=1",
        ])
        #expect(output.stderr.isEmpty)
    }

    @Test("info --json prints the documented fields")
    func infoJSON() throws {
        let path = Fixtures.url("webp/animated-alpha.webp").path
        let output = try run(["info", "--json", "--decode", path])
        #expect(output.status == 0)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]])
        let object = try #require(array.first)
        #expect(Set(object.keys) == ["path", "format", "width", "height", "frames", "hasAlpha", "orientation", "bytes"])
        #expect(object["path"] as? String == path)
        #expect(object["format"] as? String == "webp")
        #expect(object["width"] as? Int == 40)
        #expect(object["frames"] as? Int == 3)
        #expect(object["hasAlpha"] as? Bool == true)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(object["bytes"] as? Int == size)
    }

    @Test("A bad file is reported on stderr and exits 1; the good ones still print")
    func infoErrors() throws {
        let good = Fixtures.url("png/rgb8.png").path
        let truncated = Fixtures.url("bad/truncated-jpeg-baseline.jpg").path
        // Without --decode only the header is read, which is intact.
        let header = try run(["info", truncated])
        #expect(header.status == 0)
        let output = try run(["info", "--decode", good, truncated, "/nonexistent/file.png"])
        #expect(output.status == 1)
        #expect(output.stdout.contains("\(good): PNG 37x23"))
        #expect(output.stderr.contains("\(truncated): error: truncated JPEG data"))
        #expect(output.stderr.contains("/nonexistent/file.png: error: cannot read /nonexistent/file.png: No such file or directory"))
        let bomb = try run(["info", "--decode", Fixtures.url("bad/png-huge-blank.png").path])
        #expect(bomb.status == 1)
        #expect(bomb.stderr.contains("exceeds the limit of 100000000 pixels"))
    }

    @Test("Usage errors exit 2")
    func usage() throws {
        #expect(try run(["info"]).status == 2)
        #expect(try run(["frobnicate"]).status == 2)
        #expect(try run(["convert", "a.png", "b.bmp"]).status == 2)
        #expect(try run(["convert", "a.png", "b.jpg", "--quality", "250"]).status == 2)
        #expect(try run(["--help"]).status == 0)
    }

    @Test("convert picks the format from the extension or --format")
    func convert() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let input = Fixtures.url("jpeg/orientation-6.jpg").path
        let output = try run(["convert", input, dir.path("upright.png")])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("JPEG 40x24 -> PNG"))
        let png = try Data(contentsOf: URL(fileURLWithPath: dir.path("upright.png")))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let info = try run(["info", dir.path("upright.png")])
        #expect(info.stdout.contains("PNG 24x40 frames=1 alpha=no orientation=1"))

        let webp = try run(["convert", Fixtures.url("gif/animated.gif").path, dir.path("anim.bin"), "--format", "webp",
                            "--quality", "90"])
        #expect(webp.status == 0)
        #expect(try run(["info", dir.path("anim.bin")]).stdout.contains("WebP 48x32 frames=6 alpha=yes"))

        let failed = try run(["convert", Fixtures.url("bad/random.bin").path, dir.path("x.png")])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("error: unknown image format"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("x.png")))
    }

    @Test("samples writes decodable images")
    func samples() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let output = try run(["samples", "--out", dir.url.path])
        #expect(output.status == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        #expect(files.count >= 5)
        let info = try run(["info", "--decode"] + files.map { dir.path($0) })
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("spinner.gif: GIF 96x96 frames=12 alpha=yes"))
    }
}

@Suite("magpie thumbnail and convert operations")
struct CLIProcessingTests {
    func run(_ arguments: [String]) throws -> ProcessRunner.Output {
        try ProcessRunner.run(CLITests.magpie, arguments)
    }

    @Test("thumbnail writes many inputs into a directory, upright, in their formats")
    func thumbnails() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let inputs = ["jpeg/orientation-6.jpg", "png/pillow-rgba.png", "gif/animated.gif", "bmp/pillow-rgb.bmp"].map { Fixtures.url($0).path }
        let output = try run(["thumbnail"] + inputs + ["--out", dir.url.path, "--size", "16"])
        #expect(output.status == 0, "\(output.stderr)")
        let info = try run(["info", dir.path("orientation-6.jpg"), dir.path("pillow-rgba.png"), dir.path("animated.gif"),
                            dir.path("pillow-rgb.png")])
        #expect(info.status == 0, "\(info.stderr)")
        let lines = info.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0].hasSuffix("JPEG 10x16 frames=1 alpha=no orientation=1"))
        #expect(lines[1].hasSuffix("PNG 16x11 frames=1 alpha=yes orientation=1"))
        #expect(lines[2].hasSuffix("GIF 16x11 frames=6 alpha=yes orientation=1"))
        #expect(lines[3].hasSuffix("PNG 16x10 frames=1 alpha=no orientation=1"))
    }

    @Test("thumbnail -o writes one file; fill crops to the box; errors exit 1")
    func singleAndErrors() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let one = try run(["thumbnail", Fixtures.url("png/rgb8.png").path, "-o", dir.path("t.webp"), "--size", "8x8",
                           "--fit", "fill", "--format", "webp"])
        #expect(one.status == 0)
        #expect(try run(["info", dir.path("t.webp")]).stdout.contains("WebP 8x8"))
        let bad = try run(["thumbnail", Fixtures.url("bad/random.bin").path, Fixtures.url("png/rgb8.png").path,
                           "--out", dir.url.path, "--size", "8"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("random.bin: error: unknown image format"))
        #expect(FileManager.default.fileExists(atPath: dir.path("rgb8.png")))
        #expect(try run(["thumbnail", "a.png", "--size", "8"]).status == 2)
        #expect(try run(["thumbnail", "a.png", "--out", "d", "--size", "0"]).status == 2)
    }

    @Test("convert applies operations in the order given")
    func orderedOperations() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let input = Fixtures.url("processing/photo.png").path  // 200x150
        // Crop then resize: 100x50 -> 40x20. Resize then crop: 40x30 -> crop 0,0,20,10.
        let a = try run(["convert", input, dir.path("a.png"), "--crop", "0,0,100,50", "--resize", "40"])
        #expect(a.status == 0, "\(a.stderr)")
        #expect(try run(["info", dir.path("a.png")]).stdout.contains("PNG 40x20"))
        let b = try run(["convert", input, dir.path("b.png"), "--resize", "40", "--crop", "0,0,20,10", "--rotate", "90"])
        #expect(b.status == 0, "\(b.stderr)")
        #expect(try run(["info", dir.path("b.png")]).stdout.contains("PNG 10x20"))
        let c = try run(["convert", input, dir.path("c.png"), "--grayscale", "--corner-radius", "10", "--blur", "2",
                         "--flip", "v", "--resize", "64x64", "--fit", "fill"])
        #expect(c.status == 0, "\(c.stderr)")
        #expect(try run(["info", dir.path("c.png")]).stdout.contains("PNG 64x64 frames=1 alpha=yes"))
        #expect(try run(["convert", input, dir.path("d.png"), "--crop", "1,2,3"]).status == 2)
        let outside = try run(["convert", input, dir.path("e.png"), "--crop", "150,0,100,10"])
        #expect(outside.status == 1)
        #expect(outside.stderr.contains("outside the 200x150 image"))
    }
}
