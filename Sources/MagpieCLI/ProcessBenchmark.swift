import ArgumentParser
import Foundation
import MagpieImage

/// `magpie bench-process`: times in-process resize, thumbnail and blur, for
/// `scripts/compare-peers.sh`. Hidden from help.
struct ProcessBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-process",
        abstract: "Time resize 4000x3000 RGBA to 800x600, a 256 px JPEG thumbnail of a 4000x3000 JPEG, and blur 8 on 1920x1080.",
        shouldDisplay: false)

    @Option(help: "Runs per case after one warm-up.")
    var iterations = 11

    @Option(help: "Directory holding rgba-4000x3000.png, jpeg-4000x3000-baseline.jpg and rgb-1920x1080.png.")
    var inputs: String

    func run() async throws {
        func load(_ name: String) throws -> Data { try FileInput.read((inputs as NSString).appendingPathComponent(name)) }
        let rgba = try Image(data: load("rgba-4000x3000.png"))
        let jpeg = try load("jpeg-4000x3000-baseline.jpg")
        let hd = try Image(data: load("rgb-1920x1080.png"))
        let thumbnail = ThumbnailOptions(size: PixelSize(width: 256, height: 256))
        let cases: [(String, () throws -> Void)] = [
            ("resize-4000x3000-rgba-to-800x600", { _ = try rgba.processed(by: .resize(size: PixelSize(width: 800, height: 600))) }),
            ("thumbnail-jpeg-4000x3000-to-256-q80", {
                _ = try Image(thumbnailOf: jpeg, options: thumbnail).encoded(using: .jpeg(quality: 0.8))
            }),
            ("blur-8-1920x1080", { _ = try hd.processed(by: .gaussianBlur(radius: 8)) }),
        ]
        let clock = ContinuousClock()
        for (name, body) in cases {
            try body()
            var times: [Double] = []
            for _ in 0..<iterations {
                let elapsed = try clock.measure(body)
                times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            }
            times.sort()
            print("\(name)\t\(String(format: "%.2f", times[times.count / 2]))")
        }
    }
}
