/// The decoded pixels of one frame.
///
/// Rows are tightly packed, top to bottom, `width × format.channels` bytes each; see
/// ``PixelFormat`` for the layout of a pixel. A bitmap is a value: copies share storage
/// until one of them is changed.
public struct Bitmap: Equatable, Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The layout of each pixel.
    public let format: PixelFormat
    /// The pixel bytes, `height × bytesPerRow` of them.
    public internal(set) var pixels: [UInt8]

    /// Wraps `pixels`, which must hold exactly `width × height × format.channels` bytes.
    public init(width: Int, height: Int, format: PixelFormat, pixels: [UInt8]) throws(ImageError) {
        guard width > 0, height > 0 else {
            throw .invalidArgument("a bitmap needs a positive size, not \(width)x\(height)")
        }
        let expected = PixelSize(width: width, height: height).pixelCount.multipliedReportingOverflow(by: format.channels)
        guard !expected.overflow, pixels.count == expected.partialValue else {
            throw .invalidArgument(
                "a \(width)x\(height) \(format) bitmap needs \(expected.partialValue) bytes, not \(pixels.count)")
        }
        self.width = width
        self.height = height
        self.format = format
        self.pixels = pixels
    }

    package init(unchecked width: Int, height: Int, format: PixelFormat, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.format = format
        self.pixels = pixels
    }

    /// Bytes per row: `width × format.channels`.
    public var bytesPerRow: Int { width * format.channels }

    /// The size in pixels.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// Bytes of pixel memory: what a memory cache charges for this bitmap.
    public var cost: Int { pixels.count }

    /// The channels of the pixel at (`x`, `y`), counted from the top left, as RGBA.
    /// Gray is repeated into red, green and blue; a format without alpha gives 255.
    public func rgba(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(size)")
        let i = y * bytesPerRow + x * format.channels
        switch format.channels {
        case 1: return (pixels[i], pixels[i], pixels[i], 255)
        case 3: return (pixels[i], pixels[i + 1], pixels[i + 2], 255)
        default: return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
        }
    }
}

extension Bitmap: CustomStringConvertible, CustomDebugStringConvertible {
    /// `"Bitmap(640x480 rgb8)"`: the size and layout, never the pixels.
    public var description: String { "Bitmap(\(size) \(format))" }
    public var debugDescription: String { description }
}
