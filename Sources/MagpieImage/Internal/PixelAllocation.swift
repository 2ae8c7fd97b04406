/// Every pixel buffer a decoder or processor makes is allocated here, so that the size is
/// checked once and tests can watch the allocations (a decompression bomb must fail before
/// any buffer is asked for).
package enum PixelAllocation {
    /// Called with the byte count of every pixel buffer about to be allocated in this task.
    @TaskLocal package static var observer: (@Sendable (Int) -> Void)?
}

extension Bitmap {
    /// Allocates an uninitialised bitmap and lets `fill` write every byte of it.
    ///
    /// `fill` must initialise all `width × height × channels` bytes or throw.
    package static func make(
        width: Int, height: Int, format: PixelFormat,
        fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Void
    ) throws -> Bitmap {
        let pixels = try allocatePixels(width: width, height: height, channels: format.channels, fill: fill)
        return Bitmap(unchecked: width, height: height, format: format, pixels: pixels)
    }

    /// Allocates `width × height × channels` uninitialised bytes and lets `fill` write them.
    package static func allocatePixels(
        width: Int, height: Int, channels: Int,
        fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Void
    ) throws -> [UInt8] {
        let count = try byteCount(width: width, height: height, channels: channels)
        PixelAllocation.observer?(count)
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try fill(buffer)
            initialized = count
        }
    }

    /// A zero-filled (transparent black) buffer, for canvases that are painted in parts.
    package static func zeroedPixels(width: Int, height: Int, channels: Int) throws -> [UInt8] {
        let count = try byteCount(width: width, height: height, channels: channels)
        PixelAllocation.observer?(count)
        return [UInt8](repeating: 0, count: count)
    }

    private static func byteCount(width: Int, height: Int, channels: Int) throws(ImageError) -> Int {
        guard width > 0, height > 0 else {
            throw .invalidArgument("a bitmap needs a positive size, not \(width)x\(height)")
        }
        let pixels = width.multipliedReportingOverflow(by: height)
        let bytes = pixels.partialValue.multipliedReportingOverflow(by: channels)
        guard !pixels.overflow, !bytes.overflow else {
            throw .tooLarge(nil, size: PixelSize(width: width, height: height), limit: Int.max / channels)
        }
        return bytes.partialValue
    }
}
