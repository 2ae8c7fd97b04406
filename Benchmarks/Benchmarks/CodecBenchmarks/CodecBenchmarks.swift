import Benchmark
import Foundation
import MagpieImage

/// Inputs are generated once by Magpie's own encoders from a synthetic scene; the
/// peer-comparison script decodes the same files.
struct Inputs: Sendable {
    let scene: Image
    let jpeg: Data
    let png: Data
    let webp: Data
    let gif: Data

    init() throws {
        scene = try SampleImages.landscape(width: 1920, height: 1080)
        jpeg = try scene.encoded(using: .jpeg(quality: 0.85))
        png = try scene.encoded(using: .png())
        webp = try scene.encoded(using: .webp(quality: 0.8))
        gif = try SampleImages.spinner(size: 240, frames: 20).encoded(using: .gif())
    }
}

let benchmarks: @Sendable () -> Void = {
    guard let inputs = try? Inputs() else { return }
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, .throughput],
        maxDuration: .seconds(3), maxIterations: 200)

    Benchmark("Decode JPEG 1920x1080", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try Image(data: inputs.jpeg)) }
    }
    Benchmark("Decode JPEG 1920x1080 to 240 px (DCT scaling)", configuration: configuration) { benchmark in
        var options = ImageDecodingOptions()
        options.targetSize = PixelSize(width: 240, height: 0)
        for _ in benchmark.scaledIterations { blackHole(try Image(data: inputs.jpeg, options: options)) }
    }
    Benchmark("Decode PNG 1920x1080 RGB", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try Image(data: inputs.png)) }
    }
    Benchmark("Decode WebP 1920x1080 lossy", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try Image(data: inputs.webp)) }
    }
    Benchmark("Decode GIF 240x240 x 20 frames", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try Image(data: inputs.gif)) }
    }
    Benchmark("Encode JPEG 1920x1080 q85", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try inputs.scene.encoded(using: .jpeg(quality: 0.85))) }
    }
}
