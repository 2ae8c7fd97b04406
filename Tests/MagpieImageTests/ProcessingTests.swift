import Foundation
import MagpieImage
import MagpieTestSupport
import Testing

@Suite("Image processing")
struct ProcessingTests {
    /// The processor a manifest operation names.
    static func processor(for operation: String) throws -> any ImageProcessing {
        let words = operation.split(separator: " ").map(String.init)
        switch words[0] {
        case "resize":
            let dims = words[1].split(separator: "x").compactMap { Int($0) }
            let mode = ImageProcessors.Resize.ContentMode(rawValue: words[2]) ?? .fit
            let anchor = words.count > 3 ? ImageProcessors.Resize.Anchor(rawValue: words[3]) ?? .center : .center
            return .resize(size: PixelSize(width: dims[0], height: dims[1]), contentMode: mode, anchor: anchor,
                           upscale: words.contains("upscale"))
        case "blur": return .gaussianBlur(radius: Double(words[1]) ?? 0)
        case "corners": return .roundedCorners(radius: Double(words[1]) ?? 0)
        case "circle": return .circle()
        case "grayscale": return .grayscale
        case "rotate": return .rotate(try #require(ImageProcessors.Rotate.Angle(rawValue: Int(words[1]) ?? 0)))
        case "flip": return .flip(words[1] == "h" ? .horizontal : .vertical)
        case "crop":
            let n = words[1].split(separator: ",").compactMap { Int($0) }
            return .crop(x: n[0], y: n[1], width: n[2], height: n[3])
        default:
            throw ImageError.invalidArgument("unknown operation \(operation)")
        }
    }

    @Test("Processors match Pillow", arguments: Fixtures.processing)
    func matchesPillow(_ entry: Fixtures.ProcessingEntry) throws {
        let source = try Image(data: Fixtures.data(entry.source))
        let result = try source.processed(by: try Self.processor(for: entry.operation))
        #expect(result.width == entry.width)
        #expect(result.height == entry.height)
        let ours = ImageDiff.rgba(result), reference = try Fixtures.reference(entry.reference)
        try #require(ours.count == reference.count)
        if entry.compare == "exact" {
            #expect(ImageDiff.firstDifference(ours, reference, width: result.width, height: result.height) == nil)
        } else {
            // Compared as seen: colour under transparent pixels does not count.
            let psnr = ImageDiff.psnr(ImageDiff.premultiplied(ours), ImageDiff.premultiplied(reference))
            #expect(psnr >= entry.minPSNR ?? 35, "\(entry.name): \(psnr) dB")
        }
    }

    @Test("Resizing translucent edges leaves no dark fringe (premultiplied filtering)")
    func noDarkFringe() throws {
        let disc = try Image(data: Fixtures.data("processing/white-disc.png"))
        for size in [PixelSize(width: 37, height: 37), PixelSize(width: 13, height: 13), PixelSize(width: 200, height: 200)] {
            let resized = try disc.processed(by: .resize(size: size, upscale: true))
            let pixels = resized.bitmap.pixels
            var edges = 0
            for i in stride(from: 0, to: pixels.count, by: 4) where pixels[i + 3] > 8 {
                #expect(pixels[i] >= 245 && pixels[i + 1] >= 245 && pixels[i + 2] >= 245,
                        "pixel \(i / 4) of \(size): \(pixels[i..<(i + 4)])")
                if pixels[i + 3] < 250 { edges += 1 }
            }
            #expect(edges > 0)  // there are translucent edge pixels to check
        }
        // A blur neither bleeds the magenta hidden under transparency.
        let alpha = try Image(data: Fixtures.data("processing/photo-alpha.png"))
        let blurred = try alpha.processed(by: .gaussianBlur(radius: 4))
        let p = blurred.bitmap.pixels
        for i in stride(from: 0, to: p.count, by: 4) where p[i + 3] > 16 {
            #expect(!(p[i] > 200 && p[i + 1] < 60 && p[i + 2] > 200), "magenta at pixel \(i / 4)")
        }
    }

    @Test("Content modes give the documented sizes", arguments: [
        ("fit", 100, 100, false, 100, 75), ("fit", 100, 0, false, 100, 75), ("fit", 0, 30, false, 40, 30),
        ("fit", 400, 400, false, 200, 150), ("fit", 400, 400, true, 400, 300),
        ("fill", 50, 50, false, 50, 50), ("fill", 300, 100, false, 200, 67), ("fill", 300, 100, true, 300, 100),
        ("exact", 33, 77, false, 33, 77), ("exact", 300, 77, false, 200, 77),
    ])
    func contentModes(_ mode: String, _ w: Int, _ h: Int, _ upscale: Bool, _ ew: Int, _ eh: Int) throws {
        let photo = try Image(data: Fixtures.data("processing/photo.png"))  // 200x150
        let resize = ImageProcessors.Resize(
            size: PixelSize(width: w, height: h), contentMode: .init(rawValue: mode) ?? .fit, upscale: upscale)
        #expect(try photo.processed(by: resize).size == PixelSize(width: ew, height: eh))
    }

    @Test("Fill anchors keep the named edge")
    func anchors() throws {
        let photo = try Image(data: Fixtures.data("processing/photo.png"))
        let tall = try photo.processed(by: .resize(size: PixelSize(width: 50, height: 150), contentMode: .fill, anchor: .left))
        let left = try photo.processed(by: .crop(x: 0, y: 0, width: 50, height: 150))
        #expect(ImageDiff.psnr(ImageDiff.rgba(tall), ImageDiff.rgba(left)) > 40)
        let wide = try photo.processed(by: .resize(size: PixelSize(width: 200, height: 20), contentMode: .fill, anchor: .bottom))
        let bottom = try photo.processed(by: .crop(x: 0, y: 130, width: 200, height: 20))
        #expect(ImageDiff.psnr(ImageDiff.rgba(wide), ImageDiff.rgba(bottom)) > 40)
    }

    @Test("Impossible parameters are typed errors")
    func invalidParameters() throws {
        let photo = try Image(data: Fixtures.data("processing/photo.png"))
        let cases: [any ImageProcessing] = [
            .resize(size: PixelSize(width: 0, height: 0)), .resize(size: PixelSize(width: -5, height: 10)),
            .resize(size: PixelSize(width: 10, height: 0), contentMode: .fill), .crop(x: 190, y: 0, width: 20, height: 10),
            .crop(x: 0, y: 0, width: 0, height: 10), .crop(x: -1, y: 0, width: 10, height: 10),
            .gaussianBlur(radius: -1), .roundedCorners(radius: .nan),
        ]
        for processor in cases {
            let error = try #require(throws: ImageError.self) { try photo.processed(by: processor) }
            #expect(error.kind == .invalidArgument, "\(processor.identifier)")
        }
    }

    @Test("Identifiers name the parameters, and compositions join them")
    func identifiers() {
        #expect(ImageProcessors.Resize(size: PixelSize(width: 320, height: 0)).identifier == "resize(320x0,fit)")
        #expect(ImageProcessors.Resize(size: PixelSize(width: 64, height: 64), contentMode: .fill, anchor: .top, upscale: true)
            .identifier == "resize(64x64,fill,top,upscale)")
        let composed = ImageProcessors.Composition([.resize(width: 320), .roundedCorners(radius: 8), .grayscale])
        #expect(composed.identifier == "resize(320x0,fit)|roundedCorners(8)|grayscale")
        #expect(ImageProcessors.GaussianBlur(radius: 2.5, saturation: 1.8, tint: RGBAColor(red: 255, green: 255, blue: 255, alpha: 80))
            .identifier == "gaussianBlur(2.5,saturation=1.8,tint=#ffffff50)")
        #expect(ImageProcessors.RoundedCorners.circle(borderWidth: 2, borderColor: .black).identifier == "circle(border=2,#000000ff)")
    }

    @Test("Animated images are processed frame by frame")
    func animated() throws {
        let gif = try Image(data: Fixtures.data("gif/animated.gif"))
        let small = try gif.processed(by: [.resize(width: 24), .grayscale])
        #expect(small.frames.count == gif.frames.count)
        #expect(small.frames.allSatisfy { $0.bitmap.size == PixelSize(width: 24, height: 16) })
        #expect(small.frames.map(\.duration) == gif.frames.map(\.duration))
        #expect(small.loopCount == gif.loopCount)
    }

    @Test("An anonymous processor runs its closure under its identifier")
    func anonymous() throws {
        let photo = try Image(data: Fixtures.data("processing/photo.png"))
        let processor = ImageProcessors.Anonymous(identifier: "half") { image in
            try image.processed(by: .resize(width: image.width / 2))
        }
        #expect(processor.identifier == "half")
        #expect(try photo.processed(by: processor).width == 100)
    }

    @Test("Rounded corners with a border, and blur tint and saturation")
    func borderAndTint() throws {
        let photo = try Image(data: Fixtures.data("processing/photo.png"))
        let bordered = try photo.processed(by: .roundedCorners(radius: 20, borderWidth: 4, borderColor: RGBAColor(red: 255, green: 0, blue: 0)))
        // Middle of the top edge, inside the border: red; well inside: the photo; corner: transparent.
        let top = bordered.bitmap.rgba(x: 100, y: 1), inside = bordered.bitmap.rgba(x: 100, y: 20)
        #expect(top.r == 255 && top.g == 0 && top.b == 0 && top.a == 255)
        let original = photo.bitmap.rgba(x: 100, y: 20)
        #expect(inside.r == original.r && inside.g == original.g && inside.a == 255)
        #expect(bordered.bitmap.rgba(x: 0, y: 0).a == 0)

        let gray = try photo.processed(by: .gaussianBlur(radius: 2, saturation: 0))
        let pixel = gray.bitmap.rgba(x: 50, y: 50)
        #expect(abs(Int(pixel.r) - Int(pixel.g)) <= 1 && abs(Int(pixel.g) - Int(pixel.b)) <= 1)
        let tinted = try photo.processed(by: .gaussianBlur(radius: 2, tint: RGBAColor(red: 255, green: 255, blue: 255, alpha: 255)))
        #expect(tinted.bitmap.rgba(x: 10, y: 10).r == 255)
    }
}

@Suite("Thumbnails")
struct ThumbnailTests {
    @Test("Every fixture gives an upright thumbnail of the right size", arguments: Fixtures.good)
    func thumbnail(_ entry: Fixtures.Entry) throws {
        let data = try Fixtures.data(entry.file)
        let options = ThumbnailOptions(size: PixelSize(width: 24, height: 24))
        let thumbnail = try Image(thumbnailOf: data, options: options)
        let swaps = (entry.orientation ?? 1) >= 5
        let w = Double(swaps ? entry.height ?? 0 : entry.width ?? 0), h = Double(swaps ? entry.width ?? 0 : entry.height ?? 0)
        let scale = min(24 / w, 24 / h, 1)
        #expect(thumbnail.size == PixelSize(width: max(1, Int((w * scale).rounded())), height: max(1, Int((h * scale).rounded()))))
        #expect(thumbnail.orientation == .up)
        #expect(thumbnail.frames.count == entry.frames)
    }

    @Test("A thumbnail of a rotated JPEG looks like the upright image, smaller", arguments: [3, 6, 8])
    func orientation(_ value: Int) throws {
        let file = "jpeg/orientation-\(value).jpg"
        let entry = try #require(Fixtures.entry(file))
        let upright = Image(bitmap: try Bitmap(
            width: try #require(entry.uprightWidth), height: try #require(entry.uprightHeight), format: .rgba8,
            pixels: Fixtures.reference(try #require(entry.uprightReference))))
        let thumbnail = try Image(thumbnailOf: Fixtures.data(file), options: ThumbnailOptions(size: PixelSize(width: 12, height: 12)))
        let expected = try upright.processed(by: .resize(size: PixelSize(width: 12, height: 12)))
        #expect(thumbnail.size == expected.size)
        #expect(ImageDiff.psnr(ImageDiff.rgba(thumbnail), ImageDiff.rgba(expected)) > 25)
    }

    @Test("A large JPEG is downsampled while decoding, then resized exactly")
    func largeJPEG() throws {
        let data = try SampleImages.landscape(width: 1600, height: 1200).encoded(using: .jpeg(quality: 0.9))
        let fit = try Image(thumbnailOf: data, options: ThumbnailOptions(size: PixelSize(width: 160, height: 160)))
        #expect(fit.size == PixelSize(width: 160, height: 120))
        let fill = try Image(thumbnailOf: data, options: ThumbnailOptions(size: PixelSize(width: 100, height: 100), contentMode: .fill))
        #expect(fill.size == PixelSize(width: 100, height: 100))
        // Close to resizing the full decode.
        let full = try Image(data: data).processed(by: .resize(size: PixelSize(width: 160, height: 160)))
        #expect(ImageDiff.psnr(ImageDiff.rgba(fit), ImageDiff.rgba(full)) > 30)
    }
}
