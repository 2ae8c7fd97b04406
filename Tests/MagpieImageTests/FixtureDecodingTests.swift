import Foundation
import MagpieImage
import MagpieTestSupport
import Testing

/// Every good fixture decodes to the size, frames and pixels Pillow gave: exactly for PNG,
/// GIF and lossless WebP, within PSNR ≥ 40 dB for JPEG and lossy WebP.
@Suite("Decoding the fixtures")
struct FixtureDecodingTests {
    static let minimumPSNR = 40.0

    @Test("Manifest is present and covers every format")
    func manifestIsPresent() {
        let formats = Set(Fixtures.good.compactMap(\.format))
        #expect(formats.isSuperset(of: ["jpeg", "png", "gif", "webp"]))
        #expect(Fixtures.good.count >= 60)
        #expect(Fixtures.bad.count >= 20)
    }

    @Test("Decodes to the reference pixels", arguments: Fixtures.good)
    func decodesToReference(_ entry: Fixtures.Entry) throws {
        // Given
        let data = try Fixtures.data(entry.file)
        // When
        let image = try Image(data: data)
        // Then
        #expect(image.format?.identifier == entry.format)
        #expect(image.width == entry.width)
        #expect(image.height == entry.height)
        #expect(image.frames.count == entry.frames)
        #expect(image.orientation.rawValue == entry.orientation)
        if let loopCount = entry.loopCount { #expect(image.loopCount == loopCount) }
        if let durations = entry.durations {
            #expect(image.frames.map { $0.duration.milliseconds } == durations)
        }
        let reference = try Fixtures.reference(try #require(entry.reference))
        let decoded = ImageDiff.rgba(image)
        try #require(decoded.count == reference.count)
        if entry.isExact {
            let difference = ImageDiff.firstDifference(decoded, reference, width: image.width, height: image.height)
            #expect(difference == nil, "\(difference ?? "")")
        } else {
            let psnr = ImageDiff.psnr(decoded, reference)
            #expect(psnr >= Self.minimumPSNR, "PSNR \(psnr) dB")
        }
    }

    @Test("Header info matches the decode", arguments: Fixtures.good)
    func infoMatches(_ entry: Fixtures.Entry) throws {
        let info = try ImageInfo(data: try Fixtures.data(entry.file))
        #expect(info.format.identifier == entry.format)
        #expect(info.size == PixelSize(width: try #require(entry.width), height: try #require(entry.height)))
        #expect(info.orientation.rawValue == entry.orientation)
        if entry.format != "png" || entry.file != "png/apng.png" {
            #expect(info.frameCount == entry.frames)
        }
        if let hasAlpha = entry.hasAlpha { #expect(info.hasAlpha == hasAlpha) }
    }

    @Test(
        "Applying the EXIF orientation gives Pillow's exif_transpose",
        arguments: Fixtures.good.filter { $0.uprightReference != nil })
    func appliesOrientation(_ entry: Fixtures.Entry) throws {
        var options = ImageDecodingOptions()
        options.applyOrientation = true
        let image = try Image(data: try Fixtures.data(entry.file), options: options)
        #expect(image.orientation == .up)
        #expect(image.width == entry.uprightWidth)
        #expect(image.height == entry.uprightHeight)
        let reference = try Fixtures.reference(try #require(entry.uprightReference))
        let decoded = ImageDiff.rgba(image)
        try #require(decoded.count == reference.count)
        #expect(ImageDiff.psnr(decoded, reference) >= Self.minimumPSNR)
    }

    @Test("Gray and opaque images keep their compact pixel formats")
    func compactFormats() throws {
        #expect(try Image(data: Fixtures.data("jpeg/gray.jpg")).bitmap.format == .gray8)
        #expect(try Image(data: Fixtures.data("jpeg/baseline.jpg")).bitmap.format == .rgb8)
        #expect(try Image(data: Fixtures.data("jpeg/cmyk-adobe.jpg")).bitmap.format == .rgb8)
        #expect(try Image(data: Fixtures.data("png/gray8.png")).bitmap.format == .gray8)
        #expect(try Image(data: Fixtures.data("png/palette4.png")).bitmap.format == .rgb8)
        #expect(try Image(data: Fixtures.data("png/palette4-trns.png")).bitmap.format == .rgba8)
        #expect(try Image(data: Fixtures.data("webp/lossy.webp")).bitmap.format == .rgb8)
        #expect(try Image(data: Fixtures.data("webp/lossy-alpha.webp")).bitmap.format == .rgba8)
    }

    @Test("Cost is the bytes of decoded pixels in all frames")
    func cost() throws {
        let still = try Image(data: Fixtures.data("png/rgba8.png"))
        #expect(still.cost == 37 * 23 * 4)
        let animation = try Image(data: Fixtures.data("gif/animated.gif"))
        #expect(animation.cost == 48 * 32 * 4 * 6)
        #expect(animation.isAnimated)
        #expect(animation.hasAlpha)
    }
}
