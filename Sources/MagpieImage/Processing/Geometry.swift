extension ImageProcessors {
    /// Turns the image by a multiple of 90°, clockwise.
    public struct Rotate: ImageProcessing {
        /// A clockwise turn.
        public enum Angle: Int, Hashable, Sendable, CaseIterable {
            case degrees90 = 90, degrees180 = 180, degrees270 = 270
        }

        /// How far to turn.
        public var angle: Angle

        /// A turn by `angle`, clockwise.
        public init(_ angle: Angle) {
            self.angle = angle
        }

        public var identifier: String { "rotate(\(angle.rawValue))" }

        public func process(_ image: Image) throws -> Image {
            // Turning clockwise is what a viewer does for these EXIF orientations.
            let orientation: ImageOrientation = switch angle {
            case .degrees90: .right
            case .degrees180: .down
            case .degrees270: .left
            }
            return try image.mapFrames { $0.applying(orientation) }
        }
    }

    /// Mirrors the image.
    public struct Flip: ImageProcessing {
        /// Which way to mirror.
        public enum Direction: String, Hashable, Sendable, CaseIterable {
            /// Left becomes right.
            case horizontal
            /// Top becomes bottom.
            case vertical
        }

        /// Which way to mirror.
        public var direction: Direction

        /// A mirror image.
        public init(_ direction: Direction) {
            self.direction = direction
        }

        public var identifier: String { "flip(\(direction.rawValue))" }

        public func process(_ image: Image) throws -> Image {
            try image.mapFrames { $0.applying(direction == .horizontal ? .upMirrored : .downMirrored) }
        }
    }

    /// Turns the pixels upright according to the image's EXIF orientation.
    public struct ApplyOrientation: ImageProcessing {
        /// Creates the processor.
        public init() {}

        public var identifier: String { "applyOrientation" }

        public func process(_ image: Image) throws -> Image {
            image.applyingOrientation()
        }
    }

    /// Removes colour: Rec. 601 luma. Opaque images become ``PixelFormat/gray8``; alpha is kept.
    public struct Grayscale: ImageProcessing {
        /// Creates the processor.
        public init() {}

        public var identifier: String { "grayscale" }

        public func process(_ image: Image) throws -> Image {
            try image.mapFrames { bitmap in
                guard bitmap.format.hasAlpha else { return bitmap.converted(to: .gray8) }
                var out = bitmap.converted(to: .rgba8)
                let count = out.width * out.height
                out.pixels.withUnsafeMutableBufferPointer { p in
                    for i in 0..<count {
                        let luma = Bitmap.luma(p[i * 4], p[i * 4 + 1], p[i * 4 + 2])
                        p[i * 4] = luma; p[i * 4 + 1] = luma; p[i * 4 + 2] = luma
                    }
                }
                return out
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Rotate {
    /// Turn clockwise by `angle`.
    public static func rotate(_ angle: ImageProcessors.Rotate.Angle) -> ImageProcessors.Rotate {
        ImageProcessors.Rotate(angle)
    }
}

extension ImageProcessing where Self == ImageProcessors.Flip {
    /// Mirror horizontally or vertically.
    public static func flip(_ direction: ImageProcessors.Flip.Direction) -> ImageProcessors.Flip {
        ImageProcessors.Flip(direction)
    }
}

extension ImageProcessing where Self == ImageProcessors.ApplyOrientation {
    /// Turn the pixels upright per the EXIF orientation.
    public static var applyOrientation: ImageProcessors.ApplyOrientation { ImageProcessors.ApplyOrientation() }
}

extension ImageProcessing where Self == ImageProcessors.Grayscale {
    /// Remove colour.
    public static var grayscale: ImageProcessors.Grayscale { ImageProcessors.Grayscale() }
}
