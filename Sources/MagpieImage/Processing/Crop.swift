extension ImageProcessors {
    /// Cuts out a rectangle of the image.
    public struct Crop: ImageProcessing {
        /// Left edge, in pixels from the left.
        public var x: Int
        /// Top edge, in pixels from the top.
        public var y: Int
        /// Width of the rectangle.
        public var width: Int
        /// Height of the rectangle.
        public var height: Int

        /// A crop of `width` by `height` pixels at (`x`, `y`).
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        public var identifier: String { "crop(\(x),\(y),\(width)x\(height))" }

        public func process(_ image: Image) throws -> Image {
            guard width > 0, height > 0 else {
                throw ImageError.invalidArgument("crop needs a positive size, not \(width)x\(height)")
            }
            guard x >= 0, y >= 0, x + width <= image.width, y + height <= image.height else {
                throw ImageError.invalidArgument(
                    "crop \(width)x\(height) at (\(x), \(y)) is outside the \(image.size) image")
            }
            return try image.mapFrames { try $0.cropped(x: x, y: y, width: width, height: height) }
        }
    }
}

extension Bitmap {
    /// The rectangle at (`x`, `y`), which must lie inside the bitmap.
    func cropped(x: Int, y: Int, width: Int, height: Int) throws -> Bitmap {
        if x == 0, y == 0, width == self.width, height == self.height { return self }
        let c = format.channels, stride = bytesPerRow, rowBytes = width * c
        return try Bitmap.make(width: width, height: height, format: format) { out in
            pixels.withUnsafeBufferPointer { source in
                guard let from = source.baseAddress, let to = out.baseAddress else { return }
                for row in 0..<height {
                    (to + row * rowBytes).update(from: from + (y + row) * stride + x * c, count: rowBytes)
                }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Crop {
    /// Crop to a rectangle.
    public static func crop(x: Int, y: Int, width: Int, height: Int) -> ImageProcessors.Crop {
        ImageProcessors.Crop(x: x, y: y, width: width, height: height)
    }
}
