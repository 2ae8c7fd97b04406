import ArgumentParser
import Foundation
import MagpieImage
import MagpieSupport

/// `magpie samples`: write the generated sample images, to try the other commands on.
struct Samples: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write generated sample images (JPEG, progressive JPEG, WebP, PNG with alpha, animated GIF).")

    @Option(name: .shortAndLong, help: "The directory to write into (created if missing).")
    var out: String = "samples"

    func run() async throws {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for sample in try SampleImages.all() {
            let data = try sample.image.encoded(using: sample.encoder)
            let path = (out as NSString).appendingPathComponent(sample.fileName)
            try FileOutput.write(data, to: path)
            print("wrote \(path) (\(ByteCount.format(data.count))): \(sample.summary)")
        }
    }
}
