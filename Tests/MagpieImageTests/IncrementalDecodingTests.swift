import Foundation
@testable import MagpieImage
import MagpieTestSupport
import Synchronization
import Testing

@Suite("Incremental decoding")
struct IncrementalDecodingTests {
    /// Feeds `data` in `chunk`-byte pieces, asking for a preview after each, and finishes.
    static func feed(
        _ data: Data, chunk: Int = 1024, options: ImageDecodingOptions = .default,
        configuration: IncrementalImageDecoder.Configuration = .init(minimumPreviewInterval: .zero)
    ) throws -> (previews: [ImagePreview], image: Image) {
        let decoder = IncrementalImageDecoder(options: options, configuration: configuration)
        var previews: [ImagePreview] = []
        var offset = 0
        while offset < data.count {
            try decoder.append(data.subdata(in: offset..<min(offset + chunk, data.count)))
            offset += chunk
            if let preview = try decoder.preview() { previews.append(preview) }
        }
        return (previews, try decoder.finish())
    }

    static func psnr(_ preview: ImagePreview, _ final: Image) -> Double {
        ImageDiff.psnr(ImageDiff.rgba(preview.image), ImageDiff.rgba(final))
    }

    @Test("A progressive JPEG gives full-size scans of rising quality, then the one-shot image")
    func progressiveJPEG() throws {
        let data = try Fixtures.data("jpeg/photo-progressive.jpg")
        let (previews, image) = try Self.feed(data)
        let oneShot = try Image(data: data)
        #expect(image.bitmap == oneShot.bitmap)
        #expect(previews.count >= 3)
        var scans = 0
        var quality = -Double.infinity
        for preview in previews {
            guard case .scans(let n) = preview.kind else {
                Issue.record("expected scans, got \(preview.kind)")
                continue
            }
            #expect(n > scans)
            scans = n
            #expect(preview.image.size == image.size)
            let psnr = Self.psnr(preview, image)
            #expect(psnr >= quality - 0.5, "scan \(n): \(psnr) dB after \(quality) dB")
            quality = max(quality, psnr)
        }
        let first = try #require(previews.first), last = try #require(previews.last)
        #expect(Self.psnr(last, image) > Self.psnr(first, image) + 3)
    }

    @Test("An interlaced PNG gives each Adam7 pass filled in to full size, then the one-shot image")
    func interlacedPNG() throws {
        let data = try Fixtures.data("png/photo-adam7.png")
        let (previews, image) = try Self.feed(data)
        #expect(image.bitmap == (try Image(data: data)).bitmap)
        #expect(previews.count >= 3)
        var last = 0
        var quality = -Double.infinity
        for preview in previews {
            guard case .passes(let n) = preview.kind else {
                Issue.record("expected passes, got \(preview.kind)")
                continue
            }
            #expect(n > last)
            last = n
            #expect(preview.image.size == image.size)
            let psnr = Self.psnr(preview, image)
            #expect(psnr > quality, "pass \(n): \(psnr) dB after \(quality) dB")
            quality = psnr
        }
    }

    @Test("Top-down formats give their rows so far", arguments: ["jpeg/photo-baseline.jpg", "png/pillow-rgba.png", "webp/lossless.webp"])
    func rows(_ file: String) throws {
        let data = try Fixtures.data(file)
        let (previews, image) = try Self.feed(data, chunk: 256)
        #expect(image.bitmap == (try Image(data: data)).bitmap)
        #expect(!previews.isEmpty)
        var last = 0
        for preview in previews {
            guard case .rows(let n) = preview.kind else {
                Issue.record("expected rows, got \(preview.kind)")
                continue
            }
            #expect(n > last && n <= image.height)
            last = n
            // The decoded rows are already final.
            let rowBytes = image.bitmap.bytesPerRow
            #expect(preview.image.bitmap.pixels.prefix(n * rowBytes) == image.bitmap.pixels.prefix(n * rowBytes))
        }
    }

    @Test("A GIF gives the frames completed so far")
    func gifFrames() throws {
        let data = try Fixtures.data("gif/animated.gif")
        let (previews, image) = try Self.feed(data, chunk: 64)
        let oneShot = try Image(data: data)
        #expect(ImageDiff.rgba(image) == ImageDiff.rgba(oneShot))
        #expect(image.loopCount == oneShot.loopCount)
        #expect(image.frames.map(\.duration) == oneShot.frames.map(\.duration))
        #expect(previews.count >= 3)
        for preview in previews {
            guard case .frames(let n) = preview.kind else {
                Issue.record("expected frames, got \(preview.kind)")
                continue
            }
            #expect(preview.image.frames.count == n)
            #expect(preview.image.frames.map(\.bitmap) == oneShot.frames.prefix(n).map(\.bitmap))
        }
    }

    @Test("Fed in pieces, every fixture decodes exactly as in one shot", arguments: Fixtures.good)
    func matchesOneShot(_ entry: Fixtures.Entry) throws {
        let data = try Fixtures.data(entry.file)
        let oneShot = try Image(data: data)
        let (_, image) = try Self.feed(data, chunk: 333)
        #expect(image.format == oneShot.format)
        #expect(image.orientation == oneShot.orientation)
        #expect(image.loopCount == oneShot.loopCount)
        #expect(image.frames.map(\.duration) == oneShot.frames.map(\.duration))
        #expect(image.frames.map(\.bitmap) == oneShot.frames.map(\.bitmap))
    }

    @Test("Progressive blur: blurred scans and passes, no top-down previews")
    func blur() throws {
        let blurred = IncrementalImageDecoder.Configuration(minimumPreviewInterval: .zero, blurPreviews: true)
        let progressive = try Self.feed(Fixtures.data("jpeg/photo-progressive.jpg"), configuration: blurred)
        #expect(!progressive.previews.isEmpty)
        #expect(progressive.previews.allSatisfy { $0.isBlurred })
        // Blurred, a preview is smoother than the sharp one of the same scan.
        let sharp = try Self.feed(Fixtures.data("jpeg/photo-progressive.jpg"))
        if let b = progressive.previews.last, let s = sharp.previews.first(where: { $0.kind == b.kind }) {
            #expect(b.image.bitmap != s.image.bitmap)
        }
        let interlaced = try Self.feed(Fixtures.data("png/photo-adam7.png"), configuration: blurred)
        #expect(!interlaced.previews.isEmpty && interlaced.previews.allSatisfy { $0.isBlurred })
        let baseline = try Self.feed(Fixtures.data("jpeg/photo-baseline.jpg"), configuration: blurred)
        #expect(baseline.previews.isEmpty)
        #expect(baseline.image.bitmap == (try Image(data: Fixtures.data("jpeg/photo-baseline.jpg"))).bitmap)
    }

    @Test("Previews are at least the minimum interval apart")
    func interval() throws {
        let clock = ManualClock()
        let decoder = IncrementalImageDecoder(
            configuration: .init(minimumPreviewInterval: .milliseconds(200)), clock: clock)
        let data = try Fixtures.data("jpeg/photo-baseline.jpg")
        var previews = 0
        for offset in stride(from: 0, to: data.count, by: 1024) {
            try decoder.append(data.subdata(in: offset..<min(offset + 1024, data.count)))
            if try decoder.preview() != nil { previews += 1 }
        }
        #expect(previews == 1)  // the clock never moved
        let second = IncrementalImageDecoder(
            configuration: .init(minimumPreviewInterval: .milliseconds(200)), clock: clock)
        previews = 0
        for offset in stride(from: 0, to: data.count, by: 1024) {
            try second.append(data.subdata(in: offset..<min(offset + 1024, data.count)))
            if try second.preview() != nil { previews += 1 }
            clock.advance(by: .milliseconds(100))
        }
        #expect(previews >= 5 && previews <= (data.count / 1024 + 2) / 2)
    }

    @Test("Truncated input keeps the best preview and reports truncation", arguments: [
        "jpeg/photo-progressive.jpg", "jpeg/photo-baseline.jpg", "png/photo-adam7.png", "png/pillow-rgba.png",
        "gif/animated.gif", "webp/lossless.webp",
    ])
    func truncated(_ file: String) throws {
        let data = try Fixtures.data(file)
        let decoder = IncrementalImageDecoder(configuration: .init(minimumPreviewInterval: .zero))
        try decoder.append(data.prefix(data.count * 2 / 3))
        let error = try #require(throws: ImageError.self) { try decoder.finish() }
        #expect(error.kind == .truncated)
        let preview = try #require(decoder.latestPreview)
        #expect(preview.image.size == (try Image(data: data)).size)
    }

    @Test("Cut at every point, decoding never crashes", arguments: ["jpeg/progressive.jpg", "png/rgba8-adam7.png", "gif/disposal-methods.gif", "webp/lossy-alpha.webp"])
    func everyCut(_ file: String) throws {
        let data = try Fixtures.data(file)
        for cut in stride(from: 0, to: data.count, by: max(1, data.count / 200)) {
            let decoder = IncrementalImageDecoder(configuration: .init(minimumPreviewInterval: .zero))
            do {
                try decoder.append(data.prefix(cut))
                _ = try decoder.preview()
                _ = try decoder.finish()
            } catch is ImageError {
                // expected for most cuts
            }
            _ = try decoder.bestPreview()
        }
    }

    @Test("Bombs fail before allocation", arguments: ["bad/png-100000x100000.png", "bad/jpeg-60000x60000.jpg", "bad/gif-65535x65535.gif", "bad/png-huge-blank.png"])
    func bombs(_ file: String) throws {
        let data = try Fixtures.data(file)
        let sizes = Mutex<[Int]>([])
        let outcome = PixelAllocation.$observer.withValue({ bytes in sizes.withLock { $0.append(bytes) } }) {
            Result { try Self.feed(data, chunk: 100) }
        }
        let error = try #require(throws: ImageError.self) { try outcome.get() }
        #expect(error.kind == .tooLarge)
        #expect(sizes.withLock { $0 }.isEmpty)
    }

    @Test("An abandoned decoder frees its format decoder")
    func abandoned() throws {
        let data = try Fixtures.data("jpeg/photo-progressive.jpg")
        weak var inner: AnyObject?
        do {
            let decoder = IncrementalImageDecoder()
            try decoder.append(data.prefix(data.count / 2))
            inner = decoder.formatDecoder
            #expect(inner != nil)
        }
        #expect(inner == nil)
    }
}
