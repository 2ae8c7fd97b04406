import Foundation
import MagpieImage
import MagpieTestSupport
import Testing

@Suite("Encoding round trips")
struct EncodingTests {
    static func scene() throws -> Image { try SampleImages.landscape(width: 160, height: 100) }

    @Test("JPEG: quality trades size for fidelity; progressive is flagged")
    func jpeg() throws {
        let image = try Self.scene()
        let low = try image.encoded(using: .jpeg(quality: 0.3))
        let high = try image.encoded(using: .jpeg(quality: 0.95))
        #expect(low.count < high.count)
        let decoded = try Image(data: high)
        #expect(decoded.size == image.size)
        #expect(ImageDiff.psnr(ImageDiff.rgba(decoded), ImageDiff.rgba(image)) >= 32)
        let progressive = try image.encoded(using: .jpeg(quality: 0.9, progressive: true))
        #expect(try ImageInfo(data: progressive).isProgressive)
        #expect(try !ImageInfo(data: high).isProgressive)
    }

    @Test("JPEG composites alpha over the background and keeps the orientation in EXIF")
    func jpegAlphaAndOrientation() throws {
        let transparent = try Bitmap(width: 2, height: 1, format: .rgba8, pixels: [0, 0, 0, 0, 255, 0, 0, 255])
        var image = Image(bitmap: transparent)
        image.orientation = .left
        let decoded = try Image(data: image.encoded(using: .jpeg(quality: 1)))
        #expect(decoded.orientation == .left)
        let white = decoded.bitmap.rgba(x: 0, y: 0)
        #expect(white.r > 200 && white.g > 200 && white.b > 200)
    }

    @Test("PNG is lossless for gray, RGB and RGBA", arguments: [PixelFormat.gray8, .rgb8, .rgba8])
    func png(_ format: PixelFormat) throws {
        let source = try Fixtures.data("png/pillow-rgba.png")
        let image = Image(bitmap: try Image(data: source).bitmap.converted(to: format))
        let decoded = try Image(data: image.encoded(using: .png()))
        #expect(decoded.bitmap == image.bitmap)
    }

    @Test("Interlaced PNG is flagged Adam7 and decodes to the same pixels, whole and in pieces", arguments: [PixelFormat.gray8, .rgb8, .rgba8])
    func interlacedPNG(_ format: PixelFormat) throws {
        let source = try Fixtures.data("png/pillow-rgba.png")
        let image = Image(bitmap: try Image(data: source).bitmap.converted(to: format))
        let encoded = try image.encoded(using: .png(interlaced: true))
        #expect(encoded[28] == 1)  // IHDR interlace method: Adam7
        #expect(try Image(data: encoded).bitmap == image.bitmap)
        let decoder = IncrementalImageDecoder(configuration: .init(minimumPreviewInterval: .zero))
        for offset in stride(from: 0, to: encoded.count, by: 512) {
            try decoder.append(encoded.subdata(in: offset..<min(offset + 512, encoded.count)))
        }
        #expect(try decoder.finish().bitmap == image.bitmap)
    }

    @Test("WebP: lossless is exact, lossy is close, alpha survives")
    func webp() throws {
        let rgba = try Image(data: Fixtures.data("png/pillow-rgba.png"))
        let lossless = try Image(data: rgba.encoded(using: .webp(lossless: true)))
        #expect(lossless.bitmap == rgba.bitmap)
        let image = try Self.scene()
        let lossy = try Image(data: image.encoded(using: .webp(quality: 0.9)))
        #expect(ImageDiff.psnr(ImageDiff.rgba(lossy), ImageDiff.rgba(image)) >= 30)
        #expect(throws: ImageError.self) { try image.encoded(using: .webp(quality: 1.5)) }
    }

    @Test("Animated GIF and WebP keep frames, durations and loop count")
    func animations() throws {
        let source = try Image(data: Fixtures.data("gif/animated.gif"))
        for encoder in [ImageEncoders.encoder(for: .gif), ImageEncoders.WebP(lossless: true)] as [(any ImageEncoding)?] {
            let encoder = try #require(encoder)
            let decoded = try Image(data: source.encoded(using: encoder))
            #expect(decoded.frames.count == source.frames.count)
            #expect(decoded.loopCount == source.loopCount)
            #expect(decoded.frames.map(\.duration) == source.frames.map(\.duration))
            #expect(ImageDiff.rgba(decoded) == ImageDiff.rgba(source), "\(encoder.format)")
        }
        var thrice = source
        thrice.loopCount = 3
        #expect(try Image(data: thrice.encoded(using: .gif())).loopCount == 3)
        thrice.loopCount = 1
        #expect(try Image(data: thrice.encoded(using: .gif())).loopCount == 1)
    }

    @Test("GIF: 256 colours or fewer pass exactly; more are quantised closely")
    func gifQuantiser() throws {
        let few = try Image(data: Fixtures.data("gif/still.gif"))
        #expect(try Image(data: few.encoded(using: .gif())).bitmap == few.bitmap)
        let many = try Self.scene()  // thousands of colours
        let decoded = try Image(data: many.encoded(using: .gif()))
        let psnr = ImageDiff.psnr(ImageDiff.rgba(decoded), ImageDiff.rgba(many))
        #expect(psnr >= 28, "median cut PSNR \(psnr) dB")
    }

    @Test("Encoders refuse sizes their format cannot hold")
    func limits() throws {
        let wide = Image(bitmap: try Bitmap(width: 17_000, height: 1, format: .gray8, pixels: [UInt8](repeating: 0, count: 17_000)))
        let error = try #require(throws: ImageError.self) { try wide.encoded(using: .webp()) }
        #expect(error.kind == .encodingFailed)
    }
}
