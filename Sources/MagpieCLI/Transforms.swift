import ArgumentParser
import Foundation
import MagpieImage

/// The image operations `convert` applies, in the order they appear on the command line.
struct TransformOptions: ParsableArguments {
    @Option(help: "Resize to WxH (or W, or xH), fitted as --fit says.")
    var resize: [String] = []

    @Option(name: .customLong("fit"), help: "How --resize fits: fit, fill or exact (default fit).")
    var fitName = "fit"

    var fit: ImageProcessors.Resize.ContentMode { ImageProcessors.Resize.ContentMode(rawValue: fitName) ?? .fit }

    @Option(help: "Crop to X,Y,W,H.")
    var crop: [String] = []

    @Option(name: .customLong("corner-radius"), help: "Round the corners by R pixels.")
    var cornerRadius: [Double] = []

    @Option(help: "Gaussian blur of standard deviation R pixels.")
    var blur: [Double] = []

    @Flag(help: "Remove colour.")
    var grayscale = false

    @Option(help: "Turn clockwise by 90, 180 or 270 degrees.")
    var rotate: [Int] = []

    @Option(help: "Mirror: h (left-right) or v (top-bottom).")
    var flip: [String] = []

    static let names = ["--resize", "--crop", "--corner-radius", "--blur", "--grayscale", "--rotate", "--flip"]

    func validate() throws {
        guard ImageProcessors.Resize.ContentMode(rawValue: fitName) != nil else {
            throw ValidationError("--fit takes fit, fill or exact, not '\(fitName)'")
        }
        _ = try processors(arguments: [])
    }

    /// The processors, ordered as their options appear in `arguments` (the raw command line).
    func processors(arguments: [String]) throws -> [any ImageProcessing] {
        var queues: [String: [String]] = [
            "--resize": resize, "--crop": crop, "--corner-radius": cornerRadius.map { String($0) },
            "--blur": blur.map { String($0) }, "--rotate": rotate.map(String.init), "--flip": flip,
            "--grayscale": grayscale ? [""] : [],
        ]
        // The order the user gave; anything not found there (arguments: []) follows in a fixed order.
        var order: [String] = []
        for argument in arguments {
            let name = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            if Self.names.contains(name) { order.append(name) }
        }
        for name in Self.names { order += Array(repeating: name, count: max(0, (queues[name]?.count ?? 0) - order.filter { $0 == name }.count)) }
        var result: [any ImageProcessing] = []
        for name in order {
            guard var queue = queues[name], !queue.isEmpty else { continue }
            let value = queue.removeFirst()
            queues[name] = queue
            result.append(try Self.processor(name, value, fit: fit))
        }
        return result
    }

    static func processor(_ name: String, _ value: String, fit: ImageProcessors.Resize.ContentMode) throws -> any ImageProcessing {
        switch name {
        case "--resize":
            guard let size = Size.parse(value, allowFree: fit == .fit) else {
                throw ValidationError("--resize takes WxH (or W, or xH with --fit fit), not '\(value)'")
            }
            return ImageProcessors.Resize(size: size, contentMode: fit)
        case "--crop":
            let numbers = value.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard numbers.count == 4, numbers[2] > 0, numbers[3] > 0, numbers[0] >= 0, numbers[1] >= 0 else {
                throw ValidationError("--crop takes X,Y,W,H with a positive size, not '\(value)'")
            }
            return ImageProcessors.Crop(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
        case "--corner-radius":
            guard let radius = Double(value), radius >= 0 else { throw ValidationError("--corner-radius must be positive") }
            return ImageProcessors.RoundedCorners(radius: radius)
        case "--blur":
            guard let radius = Double(value), radius >= 0 else { throw ValidationError("--blur must be positive") }
            return ImageProcessors.GaussianBlur(radius: radius)
        case "--rotate":
            guard let angle = Int(value).flatMap(ImageProcessors.Rotate.Angle.init) else {
                throw ValidationError("--rotate takes 90, 180 or 270, not '\(value)'")
            }
            return ImageProcessors.Rotate(angle)
        case "--flip":
            switch value {
            case "h", "horizontal": return ImageProcessors.Flip(.horizontal)
            case "v", "vertical": return ImageProcessors.Flip(.vertical)
            default: throw ValidationError("--flip takes h or v, not '\(value)'")
            }
        default:
            return ImageProcessors.Grayscale()
        }
    }
}

/// Sizes given as `N`, `NxM`, `Nx` or `xM`.
enum Size {
    static func parse(_ text: String, allowFree: Bool) -> PixelSize? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1:
            guard let n = Int(parts[0]), n > 0 else { return nil }
            return PixelSize(width: n, height: n)
        case 2:
            let w = parts[0].isEmpty ? 0 : Int(parts[0]), h = parts[1].isEmpty ? 0 : Int(parts[1])
            guard let w, let h, w >= 0, h >= 0, w > 0 || h > 0 else { return nil }
            if !allowFree && (w == 0 || h == 0) { return nil }
            return PixelSize(width: w, height: h)
        default:
            return nil
        }
    }
}
