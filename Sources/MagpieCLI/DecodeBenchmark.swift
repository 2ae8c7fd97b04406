import ArgumentParser
import Foundation
import MagpieImage
import MagpieSupport

/// `magpie bench-decode`: times in-process decodes of files, for `scripts/compare-peers.sh`.
/// Hidden from help: a measuring tool, not a user command.
struct DecodeBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-decode",
        abstract: "Time in-process decodes of each file (median of N runs) and print TSV: file, ms, megapixels/s.",
        shouldDisplay: false)

    @Option(help: "Decodes per file after one warm-up decode.")
    var iterations = 15

    @Option(name: .customLong("target-width"), help: "Downsample while decoding to at least this width.")
    var targetWidth: Int?

    @Flag(help: "Call ImageMemory.retainFreedMemory() first.")
    var retainMemory = false

    @Flag(help: "Write the benchmark inputs into --out and exit.")
    var writeInputs = false

    @Option(help: "Where --write-inputs writes.")
    var out = "bench-inputs"

    @Argument(help: "Files to decode.")
    var files: [String] = []

    func run() async throws {
        if retainMemory { ImageMemory.retainFreedMemory() }
        if writeInputs {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            for (name, data) in try SampleImages.benchmarkInputs() {
                try FileOutput.write(data, to: (out as NSString).appendingPathComponent(name))
                print("wrote \(name) (\(ByteCount.format(data.count)))")
            }
            return
        }
        var options = ImageDecodingOptions()
        if let targetWidth { options.targetSize = PixelSize(width: targetWidth, height: 0) }
        let clock = ContinuousClock()
        for path in files {
            let data = try FileInput.read(path)
            let first = try Image(data: data, options: options)
            var times: [Double] = []
            for _ in 0..<iterations {
                let elapsed = try clock.measure { _ = try Image(data: data, options: options) }
                times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            }
            times.sort()
            let median = times[times.count / 2]
            let megapixels = Double(first.width * first.height * first.frames.count) / 1e6
            print("\(path)\t\(String(format: "%.2f", median))\t\(String(format: "%.1f", megapixels / median * 1000))")
        }
    }
}
