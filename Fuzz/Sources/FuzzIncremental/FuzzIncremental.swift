import Foundation
import FuzzSupport
import MagpieImage

/// libFuzzer entry: the incremental decoders, fed in pieces whose sizes come from the input's
/// last byte, asking for previews (blurred or not) after each piece.
func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 1 else { return 0 }
    let control = bytes[count - 1]
    let data = Data(bytes: bytes, count: count - 1)
    let chunk = 1 + Int(control & 0x7F) * 16
    var options = ImageDecodingOptions()
    options.maxPixelCount = 4_000_000
    options.maxTotalPixelCount = 16_000_000
    let decoder = IncrementalImageDecoder(
        options: options, configuration: .init(minimumPreviewInterval: .zero, blurPreviews: control & 0x80 != 0))
    do {
        var offset = 0
        while offset < data.count {
            try decoder.append(data.subdata(in: offset..<min(offset + chunk, data.count)))
            offset += chunk
            _ = try decoder.preview()
        }
        _ = try decoder.finish()
    } catch is ImageError {
    } catch {
        fatalError("not an ImageError: \(error)")
    }
    _ = try? decoder.bestPreview()
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
