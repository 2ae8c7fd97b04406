import Foundation
import MagpieImage
import MagpieTestSupport
import Testing

@Suite("Sniffing and the decoder registry")
struct FormatAndRegistryTests {
    @Test("Formats are recognised by their first bytes", arguments: [
        ("jpeg/baseline.jpg", "jpeg"), ("png/rgb8.png", "png"), ("gif/still.gif", "gif"), ("webp/lossy.webp", "webp"),
        ("other/image.avif", "avif"), ("other/image.heic", "heic"), ("other/image.tiff", "tiff"),
        ("other/image.jxl", "jxl"), ("bmp/pillow-rgb.bmp", "bmp"), ("ico/png-entries.ico", "ico"),
        ("other/lying-extension.jpg", "png"),
    ])
    func sniffing(_ file: String, _ identifier: String) throws {
        #expect(ImageFormat.sniff(try Fixtures.data(file))?.identifier == identifier)
    }

    @Test("Nothing is recognised in text or noise")
    func noSignature() {
        #expect(ImageFormat.sniff(Data("<html>".utf8)) == nil)
        #expect(ImageFormat.sniff(Data()) == nil)
        #expect(ImageFormat.sniff(Data([0xFF, 0xD8])) == nil)
    }

    /// A toy decoder for binary PGM ("P5"), to show a registered format decoding.
    struct PGMDecoder: ImageDecoding {
        var format: ImageFormat { ImageFormat("pgm") }
        func canDecode(_ data: Data) -> Bool { data.starts(with: Data("P5".utf8)) }
        func parse(_ data: Data) throws -> (PixelSize, Data) {
            let fields = data.split(separator: 0x0A, maxSplits: 3)
            guard fields.count == 4 else { throw ImageError.corrupt(format, "missing header fields") }
            let dims = String(decoding: fields[1], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
            guard dims.count == 2 else { throw ImageError.corrupt(format, "bad size") }
            return (PixelSize(width: dims[0], height: dims[1]), Data(fields[3]))
        }
        func info(for data: Data) throws -> ImageInfo {
            ImageInfo(format: format, size: try parse(data).0, hasAlpha: false)
        }
        func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
            let (size, pixels) = try parse(data)
            return Image(bitmap: try Bitmap(width: size.width, height: size.height, format: .gray8, pixels: [UInt8](pixels)),
                         format: format)
        }
    }

    @Test("A registered decoder handles its format; unknown formats stay errors")
    func customDecoder() throws {
        let registry = ImageDecoderRegistry()
        let pgm = Data("P5\n2 2\n255\n".utf8) + Data([0, 85, 170, 255])
        let before = try #require(throws: ImageError.self) { try Image(data: pgm, registry: registry) }
        #expect(before.kind == .unknownFormat)
        registry.register(PGMDecoder())
        let image = try Image(data: pgm, registry: registry)
        #expect(image.format == ImageFormat("pgm"))
        #expect(image.bitmap.pixels == [0, 85, 170, 255])
        #expect(try ImageInfo(data: pgm, registry: registry).size == PixelSize(width: 2, height: 2))
        // Built-ins still work, and the shared registry is untouched.
        #expect(try Image(data: Fixtures.data("png/rgb8.png"), registry: registry).format == .png)
        #expect(throws: ImageError.self) { try Image(data: pgm) }
    }

    @Test("A registered decoder can take over a built-in format")
    func overrideBuiltIn() throws {
        struct Fake: ImageDecoding {
            var format: ImageFormat { .png }
            func canDecode(_ data: Data) -> Bool { ImageFormat.sniff(data) == .png }
            func info(for data: Data) throws -> ImageInfo { ImageInfo(format: .png, size: PixelSize(width: 1, height: 1), hasAlpha: false) }
            func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
                Image(bitmap: try Bitmap(width: 1, height: 1, format: .gray8, pixels: [42]), format: .png)
            }
        }
        let registry = ImageDecoderRegistry()
        registry.register(Fake())
        #expect(try Image(data: Fixtures.data("png/rgb8.png"), registry: registry).bitmap.pixels == [42])
    }
}
