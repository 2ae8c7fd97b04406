import Foundation
import MagpieImage
import MagpieTestSupport
import Testing

@Suite("Decoding options")
struct DecodingOptionsTests {
    /// A 400x300 JPEG made by our encoder from a generated scene (only its size matters here).
    static func largeJPEG(progressive: Bool = false) throws -> Data {
        let image = try SampleImages.landscape(width: 400, height: 300)
        return try image.encoded(using: .jpeg(quality: 0.9, progressive: progressive))
    }

    @Test("JPEG downsamples by the smallest DCT scale that covers the target", arguments: [
        (PixelSize(width: 50, height: 0), PixelSize(width: 50, height: 38)),    // 1/8
        (PixelSize(width: 51, height: 0), PixelSize(width: 100, height: 75)),   // 2/8
        (PixelSize(width: 100, height: 75), PixelSize(width: 100, height: 75)), // 2/8 exactly
        (PixelSize(width: 120, height: 10), PixelSize(width: 150, height: 113)), // 3/8
        (PixelSize(width: 10, height: 290), PixelSize(width: 400, height: 300)), // full
        (PixelSize(width: 1000, height: 1000), PixelSize(width: 400, height: 300)), // never upscales
    ])
    func jpegScaling(target: PixelSize, expected: PixelSize) throws {
        var options = ImageDecodingOptions()
        options.targetSize = target
        let image = try Image(data: try Self.largeJPEG(), options: options)
        #expect(image.size == expected)
        let progressive = try Image(data: try Self.largeJPEG(progressive: true), options: options)
        #expect(progressive.size == expected)
    }

    @Test("A downsampled JPEG still looks like the full decode")
    func downsampledContent() throws {
        let data = try Self.largeJPEG()
        var options = ImageDecodingOptions()
        options.targetSize = PixelSize(width: 100, height: 75)
        let small = try Image(data: data, options: options)
        let full = try Image(data: data)
        // Compare a pixel in the sky and one in the lake with the full decode's.
        for (x, y) in [(10, 5), (90, 70)] {
            let a = small.bitmap.rgba(x: x, y: y), b = full.bitmap.rgba(x: x * 4 + 2, y: y * 4 + 2)
            #expect(abs(Int(a.r) - Int(b.r)) < 25 && abs(Int(a.g) - Int(b.g)) < 25 && abs(Int(a.b) - Int(b.b)) < 25)
        }
    }

    @Test("The target is taken in upright pixels when the orientation turns the image")
    func targetFollowsOrientation() throws {
        // orientation-6 stores 40x24 and shows 24x40. A target 12 wide and 20 tall needs 4/8
        // of the stored 40x24 (20x12): as stored, 12 wide by 20 tall would be 6/8.
        var options = ImageDecodingOptions()
        options.targetSize = PixelSize(width: 12, height: 20)
        let image = try Image(data: Fixtures.data("jpeg/orientation-6.jpg"), options: options)
        #expect(image.size == PixelSize(width: 20, height: 12))
        options.applyOrientation = true
        let upright = try Image(data: Fixtures.data("jpeg/orientation-6.jpg"), options: options)
        #expect(upright.size == PixelSize(width: 12, height: 20))
    }

    @Test("WebP scales to the smallest size covering the target, keeping the aspect ratio")
    func webpScaling() throws {
        var options = ImageDecodingOptions()
        options.targetSize = PixelSize(width: 32, height: 0)
        let image = try Image(data: Fixtures.data("webp/lossy.webp"), options: options)  // 64x48
        #expect(image.size == PixelSize(width: 32, height: 24))
    }

    @Test("Formats without decode-time scaling return the full size")
    func otherFormatsFullSize() throws {
        var options = ImageDecodingOptions()
        options.targetSize = PixelSize(width: 8, height: 8)
        #expect(try Image(data: Fixtures.data("png/rgb8.png"), options: options).size == PixelSize(width: 37, height: 23))
        #expect(try Image(data: Fixtures.data("gif/still.gif"), options: options).size == PixelSize(width: 48, height: 32))
    }

    @Test("First frame only", arguments: ["gif/animated.gif", "webp/animated.webp", "png/apng-dispose-blend.png"])
    func firstFrameOnly(_ file: String) throws {
        var options = ImageDecodingOptions()
        options.firstFrameOnly = true
        let first = try Image(data: Fixtures.data(file), options: options)
        let all = try Image(data: Fixtures.data(file))
        #expect(first.frames.count == 1)
        #expect(all.frames.count > 1)
        #expect(first.bitmap == all.bitmap)
    }

    @Test("RGBA output on request, with the same colours", arguments: [
        "jpeg/gray.jpg", "jpeg/baseline.jpg", "jpeg/cmyk-adobe.jpg", "png/gray8.png", "png/rgb16.png", "webp/lossy.webp",
    ])
    func forcedRGBA(_ file: String) throws {
        var options = ImageDecodingOptions()
        options.pixelFormat = .rgba8
        let forced = try Image(data: Fixtures.data(file), options: options)
        let natural = try Image(data: Fixtures.data(file))
        #expect(forced.bitmap.format == .rgba8)
        #expect(forced.bitmap == natural.bitmap.converted(to: .rgba8))
    }

    @Test("Orientation transforms compose to identity")
    func orientationRoundTrip() throws {
        let bitmap = try Bitmap(width: 3, height: 2, format: .gray8, pixels: [1, 2, 3, 4, 5, 6])
        #expect(bitmap.applying(.right).pixels == [4, 1, 5, 2, 6, 3])
        #expect(bitmap.applying(.left).pixels == [3, 6, 2, 5, 1, 4])
        #expect(bitmap.applying(.down).pixels == [6, 5, 4, 3, 2, 1])
        #expect(bitmap.applying(.upMirrored).pixels == [3, 2, 1, 6, 5, 4])
        #expect(bitmap.applying(.downMirrored).pixels == [4, 5, 6, 1, 2, 3])
        #expect(bitmap.applying(.leftMirrored).pixels == [1, 4, 2, 5, 3, 6])
        #expect(bitmap.applying(.rightMirrored).pixels == [6, 3, 5, 2, 4, 1])
        #expect(bitmap.applying(.right).applying(.left) == bitmap)
    }
}
