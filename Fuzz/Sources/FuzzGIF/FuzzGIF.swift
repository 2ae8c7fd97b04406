import Foundation
import FuzzSupport
import MagpieImage

/// libFuzzer entry: the GIF decoder must turn any input into an image or an ImageError.
func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzHarness.run(Data(bytes: bytes, count: count), decoder: ImageDecoders.GIF())
    return 0
}

/// The entry libFuzzer calls (its own `main`, or ours below).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let bytes else { return 0 }
    return fuzz(bytes, count)
}

@main
enum Main {
    static func main() {
        FuzzDriver.main(fuzzerTestOneInput)
    }
}
