import Benchmark
import Foundation
import MagpieImage

/// Decode benchmarks on generated inputs: the same bytes `scripts/compare-peers.sh` gives the
/// peers (`SampleImages.benchmarkInputs()`). Malloc counts show the allocations per decode:
/// one pixel buffer per frame, no per-row allocations.
let benchmarks: @Sendable () -> Void = {
    guard let inputs = try? Dictionary(uniqueKeysWithValues: SampleImages.benchmarkInputs().map { ($0.name, $0.data) }) else {
        return
    }
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident, .throughput],
        maxDuration: .seconds(4), maxIterations: 60)

    func decode(_ title: String, _ name: String, options: ImageDecodingOptions = .default) {
        guard let data = inputs[name] else { return }
        Benchmark(title, configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try Image(data: data, options: options))
            }
        }
    }

    decode("Decode JPEG 4000x3000 baseline", "jpeg-4000x3000-baseline.jpg")
    decode("Decode JPEG 4000x3000 progressive", "jpeg-4000x3000-progressive.jpg")
    var downsample = ImageDecodingOptions()
    downsample.targetSize = PixelSize(width: 500, height: 0)
    decode("Decode JPEG 4000x3000 to 500 px (DCT scaling)", "jpeg-4000x3000-baseline.jpg", options: downsample)
    decode("Decode PNG 1920x1080 RGB", "png-1920x1080-rgb.png")
    decode("Decode PNG 1920x1080 RGBA", "png-1920x1080-rgba.png")
    decode("Decode GIF 480x360 x 20 frames", "gif-480x360-20-frames.gif")
    decode("Decode WebP 4000x3000 lossy", "webp-4000x3000-lossy.webp")
    decode("Decode WebP 480x360 x 20 frames", "webp-480x360-20-frames.webp")

    // Processing.
    if let png = inputs["rgba-4000x3000.png"], let rgba = try? Image(data: png) {
        Benchmark("Resize 4000x3000 RGBA to 800x600 (Lanczos)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try rgba.processed(by: .resize(size: PixelSize(width: 800, height: 600))))
            }
        }
    }
    if let jpeg = inputs["jpeg-4000x3000-baseline.jpg"] {
        let options = ThumbnailOptions(size: PixelSize(width: 256, height: 256))
        Benchmark("Thumbnail 4000x3000 JPEG to 256 px JPEG q80", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try Image(thumbnailOf: jpeg, options: options).encoded(using: .jpeg(quality: 0.8)))
            }
        }
    }
    if let png = inputs["rgb-1920x1080.png"], let hd = try? Image(data: png) {
        Benchmark("Gaussian blur radius 8 on 1920x1080", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try hd.processed(by: .gaussianBlur(radius: 8)))
            }
        }
    }

    if let jpeg = inputs["jpeg-4000x3000-progressive.jpg"] {
        Benchmark("Incremental decode of the progressive JPEG, 64 KB chunks", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                let decoder = IncrementalImageDecoder()
                var offset = 0
                while offset < jpeg.count {
                    try decoder.append(jpeg.subdata(in: offset..<min(offset + 65_536, jpeg.count)))
                    offset += 65_536
                }
                blackHole(try decoder.finish())
            }
        }
    }
}
