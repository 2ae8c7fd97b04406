import Foundation
import MagpieImage
import MagpieTestSupport
import Synchronization
import Testing

/// Every bad fixture fails with one of the error kinds its manifest allows, and bombs fail
/// before any pixel buffer is requested.
@Suite("Bad input")
struct BadInputTests {
    /// Records every pixel buffer requested while `body` runs in this task.
    static func allocations<T>(_ body: () throws -> T) rethrows -> (T, [Int]) {
        let sizes = Mutex<[Int]>([])
        let result = try PixelAllocation.$observer.withValue({ bytes in sizes.withLock { $0.append(bytes) } }) {
            try body()
        }
        return (result, sizes.withLock { $0 })
    }

    @Test("Fails with a typed error", arguments: Fixtures.bad)
    func failsWithTypedError(_ entry: Fixtures.Entry) throws {
        let data = try Fixtures.data(entry.file)
        let allowed = try #require(entry.errors)
        let (outcome, requested) = Self.allocations { Result { try Image(data: data) } }
        guard case .failure(let failure) = outcome else {
            Issue.record("\(entry.file) decoded, expected \(allowed)")
            return
        }
        let error = try #require(failure as? ImageError, "\(failure) is not an ImageError")
        #expect(allowed.contains(error.kind.description), "\(entry.file): \(error)")
        if let format = entry.format, error.kind != .unknownFormat {
            #expect(error.format?.identifier == format)
        }
        #expect(!error.description.isEmpty)
        if error.kind == .tooLarge {
            #expect(requested.isEmpty, "a bomb allocated \(requested) bytes")
            if let width = entry.declaredWidth, let height = entry.declaredHeight {
                #expect(error.size == PixelSize(width: width, height: height))
                #expect(error.limit == ImageDecodingOptions.default.maxPixelCount)
            }
        }
    }

    @Test("Messages name the problem and the input")
    func messages() throws {
        let bomb = try #require(throws: ImageError.self) { try Image(data: Fixtures.data("bad/png-100000x100000.png")) }
        #expect(bomb.description == "PNG image of 100000x100000 pixels (10000000000) exceeds the limit of 100000000 pixels")
        let unknown = try #require(throws: ImageError.self) { try Image(data: Data("hello, world".utf8)) }
        #expect(unknown.description == "unknown image format: the data starts with 68 65 6c 6c 6f 2c 20 77")
        let avif = try #require(throws: ImageError.self) { try Image(data: Fixtures.data("other/image.avif")) }
        #expect(avif.description == "unsupported format AVIF")
        let truncated = try #require(throws: ImageError.self) {
            try Image(data: Fixtures.data("bad/truncated-png-rgba8.png"))
        }
        #expect(truncated.description == "truncated PNG data: the data ends before the image does")
        let empty = try #require(throws: ImageError.self) { try Image(data: Data()) }
        #expect(empty.kind == .empty)
    }

    @Test("A tiny limit stops a normal image before allocation", arguments: [
        "jpeg/baseline.jpg", "jpeg/progressive.jpg", "png/rgba8-adam7.png", "gif/animated.gif",
        "webp/lossy.webp", "webp/animated.webp",
    ])
    func tinyLimit(_ file: String) throws {
        var options = ImageDecodingOptions()
        options.maxPixelCount = 100
        let data = try Fixtures.data(file)
        let (outcome, requested) = Self.allocations { Result { try Image(data: data, options: options) } }
        let error = try #require(throws: ImageError.self) { try outcome.get() }
        #expect(error.kind == .tooLarge)
        #expect(error.limit == 100)
        #expect(requested.isEmpty)
    }

    @Test("Animation budgets: frame count and total pixels")
    func animationBudgets() throws {
        let gif = try Fixtures.data("gif/animated.gif")  // 6 frames of 48x32
        var options = ImageDecodingOptions()
        options.maxFrameCount = 4
        #expect(throws: ImageError.self) { try Image(data: gif, options: options) }
        let frames = try #require(throws: ImageError.self) { try Image(data: gif, options: options) }
        #expect(frames.kind == .tooManyFrames)
        #expect(frames.limit == 4)

        options = ImageDecodingOptions()
        options.maxTotalPixelCount = 48 * 32 * 3
        let total = try #require(throws: ImageError.self) { try Image(data: gif, options: options) }
        #expect(total.kind == .tooLarge)

        let webp = try Fixtures.data("webp/animated.webp")  // 4 frames of 40x30, checked before decoding
        options.maxTotalPixelCount = 40 * 30 * 3
        let (outcome, requested) = Self.allocations { Result { try Image(data: webp, options: options) } }
        #expect(throws: ImageError.self) { try outcome.get() }
        #expect(requested.isEmpty)

        // The first frame alone fits in any of these budgets.
        options.firstFrameOnly = true
        #expect(try Image(data: webp, options: options).frames.count == 1)
    }

    @Test("Invalid options are rejected")
    func invalidOptions() throws {
        var options = ImageDecodingOptions()
        options.maxPixelCount = 0
        let error = try #require(throws: ImageError.self) {
            try Image(data: Fixtures.data("png/rgb8.png"), options: options)
        }
        #expect(error.kind == .invalidArgument)
    }
}
