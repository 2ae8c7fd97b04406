import Foundation
import MagpieImage

/// What every decoder target checks: header and decode either succeed or throw ImageError,
/// within limits small enough that the fuzzer's memory limit is never the one that trips.
enum FuzzHarness {
    static let options: ImageDecodingOptions = {
        var options = ImageDecodingOptions()
        options.maxPixelCount = 4_000_000
        options.maxTotalPixelCount = 16_000_000
        return options
    }()

    static func run(_ data: Data, decoder: some ImageDecoding) {
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

/// libFuzzer's driver, called from our own `main` (SwiftPM renames an executable's `main`, so
/// libFuzzer's would not link); the callback is this target's `fuzz`.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The entry libFuzzer's own `main` calls, when the linker picks it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let bytes else { return 0 }
    return fuzz(bytes, count)
}

@main
enum FuzzMain {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
            guard let bytes else { return 0 }
            return fuzz(bytes, count)
        })
    }
}
