#if canImport(Glibc)
import Glibc
#endif

/// Every pixel buffer a decoder or processor makes is allocated here, so that the size is
/// checked once and tests can watch the allocations (a decompression bomb must fail before
/// any buffer is asked for).
package enum PixelAllocation {
    /// Called with the byte count of every pixel buffer about to be allocated in this task.
    @TaskLocal package static var observer: (@Sendable (Int) -> Void)?

    /// Below this, a buffer is not worth huge pages.
    static let hugePageThreshold = 4 << 20

    /// Asks Linux to back the 2 MB-aligned interior of a large, untouched buffer with huge
    /// pages. A fresh 48 MB bitmap otherwise costs 12,000 page faults, each zeroing 4 KB: that
    /// was a third of a 12-megapixel JPEG decode. Harmless where transparent huge pages are off.
    static func adviseHugePages(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        #if os(Linux)
        guard buffer.count >= hugePageThreshold, let base = buffer.baseAddress else { return }
        let huge = 2 << 20
        let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(huge - 1)
        guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(pointer, end - start, MADV_HUGEPAGE)
        #endif
    }
}

extension Bitmap {
    /// Allocates an uninitialised bitmap and lets `fill` write every byte of it.
    ///
    /// `fill` must initialise all `width × height × channels` bytes or throw.
    /// With `capacity`, the buffer `fill` sees has that many bytes (at least the pixel count);
    /// the bitmap keeps only the pixels.
    package static func make(
        width: Int, height: Int, format: PixelFormat, capacity: Int = 0,
        fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Void
    ) throws -> Bitmap {
        let pixels = try allocatePixels(
            width: width, height: height, channels: format.channels, capacity: capacity, fill: fill)
        return Bitmap(unchecked: width, height: height, format: format, pixels: pixels)
    }

    /// Allocates `width × height × channels` uninitialised bytes and lets `fill` write them.
    package static func allocatePixels(
        width: Int, height: Int, channels: Int, capacity: Int = 0,
        fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Void
    ) throws -> [UInt8] {
        let count = try byteCount(width: width, height: height, channels: channels)
        let total = max(count, capacity)
        PixelAllocation.observer?(total)
        return try [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            PixelAllocation.adviseHugePages(buffer)
            try fill(UnsafeMutableBufferPointer(rebasing: buffer[0..<total]))
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
