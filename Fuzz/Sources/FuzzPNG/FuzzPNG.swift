import Foundation
import MagpieImage

/// libFuzzer entry: the PNG decoder must turn any input into an image or an ImageError.
func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzHarness.run(Data(bytes: bytes, count: count), decoder: ImageDecoders.PNG())
    return 0
}
