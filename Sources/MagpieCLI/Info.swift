import ArgumentParser
import Foundation
import MagpieImage

/// `magpie info`: what each file is, from its header or by decoding it fully.
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the format, size, frames, alpha and orientation of image files.",
        discussion: """
            One line per file: PATH: FORMAT WIDTHxHEIGHT frames=N alpha=yes|no orientation=N
            A file that cannot be read prints PATH: error: MESSAGE on stderr; the exit status
            is then 1.
            """)

    @Flag(help: "Decode every frame fully, as a validity check (like jpeginfo -c).")
    var decode = false

    @Flag(help: "Print a JSON array of {path, format, width, height, frames, hasAlpha, orientation, bytes}.")
    var json = false

    @Option(name: .customLong("max-pixels"), help: "The most pixels a frame may have when decoding.")
    var maxPixels: Int = ImageDecodingOptions.default.maxPixelCount

    @Argument(help: "Image files.")
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file") }
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive") }
    }

    struct Entry: Encodable {
        var path: String
        var format: String
        var formatName: String
        var width: Int
        var height: Int
        var frames: Int
        var hasAlpha: Bool
        var orientation: Int
        var bytes: Int

        enum CodingKeys: String, CodingKey {
            case path, format, width, height, frames, hasAlpha, orientation, bytes
        }
    }

    func run() async throws {
        var options = ImageDecodingOptions()
        options.maxPixelCount = maxPixels
        let decode = self.decode, limits = options
        let results = await ParallelMap.run(files) { path in
            Result { try Self.describe(path, decode: decode, options: limits) }
        }
        var entries: [Entry] = []
        var failed = false
        for (path, result) in zip(files, results) {
            switch result {
            case .success(let entry):
                entries.append(entry)
                if !json {
                    print("\(path): \(entry.formatName) "
                          + "\(entry.width)x\(entry.height) frames=\(entry.frames) "
                          + "alpha=\(entry.hasAlpha ? "yes" : "no") orientation=\(entry.orientation)")
                }
            case .failure(let error):
                failed = true
                Terminal.error("\(path): error: \(error)")
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes, .sortedKeys]
            print(String(decoding: try encoder.encode(entries), as: UTF8.self))
        }
        if failed { throw ExitCode(1) }
    }

    static func describe(_ path: String, decode: Bool, options: ImageDecodingOptions) throws -> Entry {
        let data = try FileInput.read(path)
        let info = try ImageInfo(data: data)
        var frames = info.frameCount
        if decode {
            let image = try Image(data: data, options: options)
            frames = image.frames.count
        }
        return Entry(
            path: path, format: info.format.identifier, formatName: info.format.description, width: info.size.width, height: info.size.height,
            frames: frames, hasAlpha: info.hasAlpha, orientation: info.orientation.rawValue, bytes: data.count)
    }
}
