import ArgumentParser
import Foundation
import MagpieImage
import MagpieSupport

/// `magpie convert`: decode one image and write it in another format.
struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert an image to JPEG, PNG, WebP or GIF.",
        discussion: """
            The output format comes from --format, or else from OUT's extension. The EXIF
            orientation is applied, so the output is upright. Animations stay animated in GIF
            and WebP; JPEG and PNG get the first frame. The operations (--resize, --crop,
            --corner-radius, --blur, --grayscale, --rotate, --flip) run in the order given, for
            example: --crop 0,0,400,400 --resize 200 --corner-radius 16.
            """)

    @Argument(help: "The image to read.")
    var input: String

    @Argument(help: "The file to write (replaced atomically).")
    var output: String

    @Option(help: "Output format: jpeg, png, webp or gif (default: from OUT's extension).")
    var format: String?

    @Option(help: "Quality for JPEG and lossy WebP: 0...1, or 1...100 as a percentage. Default 0.8.")
    var quality: Double = 0.8

    @Option(name: .customLong("max-pixels"), help: "The most pixels a frame may have.")
    var maxPixels: Int = ImageDecodingOptions.default.maxPixelCount

    @Flag(help: "Write a progressive JPEG.")
    var progressive = false

    @Flag(help: "Write lossless WebP.")
    var lossless = false

    @OptionGroup(title: "Operations (applied in the order given)")
    var transforms: TransformOptions

    func validate() throws {
        _ = try outputFormat()
        _ = try normalizedQuality()
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive") }
    }

    func outputFormat() throws -> ImageFormat {
        if let format {
            guard let parsed = ImageFormat(fileExtension: format), Self.writable.contains(parsed) else {
                throw ValidationError("unknown output format '\(format)': use jpeg, png, webp or gif")
            }
            return parsed
        }
        let ext = URL(fileURLWithPath: output).pathExtension
        guard !ext.isEmpty else { throw ValidationError("\(output) has no extension: give --format jpeg|png|webp|gif") }
        guard let parsed = ImageFormat(fileExtension: ext), Self.writable.contains(parsed) else {
            throw ValidationError("cannot tell the output format from '.\(ext)': give --format jpeg|png|webp|gif")
        }
        return parsed
    }

    static let writable: [ImageFormat] = [.jpeg, .png, .webp, .gif]

    func normalizedQuality() throws -> Double {
        if quality >= 0 && quality <= 1 { return quality }
        if quality > 1 && quality <= 100 { return quality / 100 }
        throw ValidationError("--quality must be within 0...1 (or 1...100), not \(quality)")
    }

    func encoder(for format: ImageFormat) throws -> any ImageEncoding {
        let quality = try normalizedQuality()
        switch format {
        case .jpeg: return ImageEncoders.JPEG(quality: quality, progressive: progressive)
        case .webp: return ImageEncoders.WebP(quality: quality, lossless: lossless)
        case .png: return ImageEncoders.PNG()
        default: return ImageEncoders.GIF()
        }
    }

    func run() async throws {
        let format = try outputFormat()
        var options = ImageDecodingOptions()
        options.maxPixelCount = maxPixels
        do {
            let data = try FileInput.read(input)
            let decoded = try Image(data: data, options: options)
            let image = try decoded.applyingOrientation().processed(by: transforms.processors(arguments: CommandLine.arguments))
            let encoded = try image.encoded(using: try encoder(for: format))
            try FileOutput.write(encoded, to: output)
            let source = decoded.format?.description ?? "image"
            let frames = image.isAnimated ? ", \(image.frames.count) frames" : ""
            print("\(input) -> \(output): \(source) \(decoded.size)\(frames) -> \(format) \(image.size) "
                  + "(\(ByteCount.format(data.count)) -> \(ByteCount.format(encoded.count)))")
        } catch {
            Terminal.error("\(input): error: \(error)")
            throw ExitCode(1)
        }
    }
}
