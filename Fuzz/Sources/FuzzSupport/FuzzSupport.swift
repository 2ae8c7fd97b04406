public import Foundation
public import MagpieImage

/// What every decoder target checks: header and decode either succeed or throw ImageError,
/// within limits small enough that the fuzzer's memory limit is never the one that trips.
public enum FuzzHarness {
    public static let options: ImageDecodingOptions = {
        var options = ImageDecodingOptions()
        options.maxPixelCount = 4_000_000
        options.maxTotalPixelCount = 16_000_000
        return options
    }()

    public static func run(_ data: Data, decoder: some ImageDecoding) {
        do {
            _ = try decoder.info(for: data)
        } catch is ImageError {
        } catch {
            fatalError("info threw a non-ImageError: \(error)")
        }
        do {
            let image = try decoder.decode(data, options: options)
            precondition(!image.frames.isEmpty, "an image without frames")
            for frame in image.frames {
                precondition(frame.bitmap.pixels.count == frame.bitmap.width * frame.bitmap.height * frame.bitmap.format.channels)
            }
        } catch is ImageError {
        } catch {
            fatalError("decode threw a non-ImageError: \(error)")
        }
    }
}

/// libFuzzer's driver, called from each target's own `main` (SwiftPM renames an executable's
/// `main`, so libFuzzer's would not link).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

public enum FuzzDriver {
    /// Runs libFuzzer with `entry` (the target's `LLVMFuzzerTestOneInput`) and exits.
    public static func main(_ entry: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, entry))
    }
}
