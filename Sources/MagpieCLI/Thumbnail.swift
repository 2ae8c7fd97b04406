import ArgumentParser
import Foundation
import MagpieImage
import MagpieSupport

/// `magpie thumbnail`: thumbnails of many images in one process.
struct Thumbnail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make thumbnails: decode downsampled, turn upright, resize (Lanczos), encode.",
        discussion: """
            With --out DIR, each thumbnail is written to DIR under its input's base name and the
            output format's extension; with -o FILE (one input only), to FILE. The format is
            --format, else the input's own (BMP and ICO become PNG). Files are processed on all
            cores; a terminal shows a progress bar when there are more than three.
            """)

    @Argument(help: "Images to make thumbnails of.")
    var inputs: [String]

    @Option(help: "Directory to write the thumbnails into (created if missing).")
    var out: String?

    @Option(name: .short, help: "The file to write, for a single input.")
    var output: String?

    @Option(help: "The box: N (NxN) or WxH.")
    var size: String

    @Option(help: "fit (inside the box, the default) or fill (cover it and crop the centre).")
    var fit = "fit"

    @Option(help: "Output format: jpeg, png, webp or gif.")
    var format: String?

    @Option(help: "Quality for JPEG and lossy WebP: 0...1, or 1...100. Default 0.8.")
    var quality: Double = 0.8

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give at least one image") }
        guard (out == nil) != (output == nil) else { throw ValidationError("give either --out DIR or -o FILE") }
        if output != nil && inputs.count > 1 { throw ValidationError("-o FILE takes one input; use --out DIR for several") }
        guard Size.parse(size, allowFree: false) != nil else { throw ValidationError("--size takes N or WxH, not '\(size)'") }
        guard fit == "fit" || fit == "fill" else { throw ValidationError("--fit takes fit or fill, not '\(fit)'") }
        if let format {
            guard let parsed = ImageFormat(fileExtension: format), Convert.writable.contains(parsed) else {
                throw ValidationError("unknown output format '\(format)': use jpeg, png, webp or gif")
            }
        }
        guard (0...100).contains(quality) else { throw ValidationError("--quality must be within 0...1 (or 1...100)") }
    }

    struct Outcome: Sendable {
        var line: String
        var error: String?
    }

    func run() async throws {
        guard let box = Size.parse(size, allowFree: false) else { throw ExitCode(2) }
        let options = ThumbnailOptions(size: box, contentMode: fit == "fill" ? .fill : .fit)
        let requested = format.flatMap(ImageFormat.init(fileExtension:))
        let quality = self.quality > 1 ? self.quality / 100 : self.quality
        if let out { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
        let destination = out, single = output
        let progress = inputs.count > 3 && Terminal.isInteractive ? ProgressBar(total: inputs.count) : nil
        let outcomes = await ParallelMap.run(inputs) { path -> Outcome in
            defer { progress?.advance() }
            do {
                let data = try FileInput.read(path)
                let thumbnail = try Image(thumbnailOf: data, options: options)
                let source = ImageFormat.sniff(data)
                let outputFormat = requested ?? (source.flatMap { Convert.writable.contains($0) ? $0 : nil } ?? .png)
                guard let encoder = ImageEncoders.encoder(for: outputFormat, quality: quality) else {
                    throw ValidationError("cannot write \(outputFormat)")
                }
                let encoded = try thumbnail.encoded(using: encoder)
                let target = single ?? Self.outputPath(for: path, in: destination ?? ".", format: outputFormat)
                try FileOutput.write(encoded, to: target)
                return Outcome(line: "\(path) -> \(target): \(thumbnail.size) \(outputFormat) (\(ByteCount.format(encoded.count)))")
            } catch {
                return Outcome(line: "", error: "\(path): error: \(error)")
            }
        }
        progress?.finish()
        var failed = 0
        for outcome in outcomes {
            if let error = outcome.error {
                failed += 1
                Terminal.error(error)
            } else if progress == nil {
                print(outcome.line)
            }
        }
        if progress != nil {
            print("\(outcomes.count - failed) thumbnails written to \(destination ?? single ?? ".")" + (failed > 0 ? ", \(failed) failed" : ""))
        }
        if failed > 0 { throw ExitCode(1) }
    }

    /// `DIR/<base name>.<extension of format>`.
    static func outputPath(for input: String, in directory: String, format: ImageFormat) -> String {
        let base = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
        return URL(fileURLWithPath: directory).appendingPathComponent(base + "." + format.fileExtension).path
    }
}

/// A one-line progress bar on stderr, safe to advance from many tasks.
final class ProgressBar: Sendable {
    private let total: Int
    private let done = LockedValue(0)

    init(total: Int) {
        self.total = total
        draw(0)
    }

    func advance() {
        let count = done.withLock { value -> Int in
            value += 1
            return value
        }
        draw(count)
    }

    func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private func draw(_ count: Int) {
        let width = 30
        let filled = total > 0 ? count * width / total : width
        let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(count)/\(total)".utf8))
    }
}
