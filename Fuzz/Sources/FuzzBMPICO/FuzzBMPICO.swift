import Foundation
import FuzzSupport
import MagpieImage

/// libFuzzer entry: the BMP and ICO decoders, chosen by the first byte.
func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    if count > 0 && bytes[0] == 0x42 {
        FuzzHarness.run(data, decoder: ImageDecoders.BMP())
    } else {
        FuzzHarness.run(data, decoder: ImageDecoders.ICO())
    }
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
