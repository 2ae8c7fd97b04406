extension ImageProcessors {
    /// Resizes with Lanczos-3 resampling (see ``Resampler``), keeping or filling the aspect ratio.
    ///
    /// - ``ContentMode/fit``: the largest size inside `size` with the image's aspect ratio; a
    ///   dimension of 0 leaves that side free (`.resize(width: 320)`).
    /// - ``ContentMode/fill``: the image covers `size`, the overflow is cropped at ``anchor``.
    /// - ``ContentMode/exact``: exactly `size`, stretching if need be.
    ///
    /// Images smaller than the target stay as they are unless ``upscale`` is set.
    public struct Resize: ImageProcessing {
        /// How the image is fitted to the target size.
        public enum ContentMode: String, Hashable, Sendable, CaseIterable {
            /// Inside the target, aspect ratio kept.
            case fit
            /// Covering the target, aspect ratio kept, overflow cropped.
            case fill
            /// Exactly the target, aspect ratio not kept.
            case exact
        }

        /// Where a ``ContentMode/fill`` keeps the image when cropping the overflow.
        public enum Anchor: String, Hashable, Sendable, CaseIterable {
            case center, top, bottom, left, right
        }

        /// The target size; 0 leaves a side free in ``ContentMode/fit``.
        public var size: PixelSize
        /// How the image is fitted. ``ContentMode/fit`` by default.
        public var contentMode: ContentMode
        /// What ``ContentMode/fill`` keeps. ``Anchor/center`` by default.
        public var anchor: Anchor
        /// Whether a smaller image may be enlarged. `false` by default.
        public var upscale: Bool

        /// A resize to `size`.
        public init(size: PixelSize, contentMode: ContentMode = .fit, anchor: Anchor = .center, upscale: Bool = false) {
            self.size = size
            self.contentMode = contentMode
            self.anchor = anchor
            self.upscale = upscale
        }

        public var identifier: String {
            var text = "resize(\(size),\(contentMode.rawValue)"
            if contentMode == .fill { text += ",\(anchor.rawValue)" }
            return text + (upscale ? ",upscale)" : ")")
        }

        /// Throws for sizes that make no sense for the content mode.
        func validate() throws(ImageError) {
            guard size.width >= 0, size.height >= 0, size.width > 0 || size.height > 0 else {
                throw .invalidArgument("resize needs a positive width or height, not \(size)")
            }
            if contentMode != .fit, size.width == 0 || size.height == 0 {
                throw .invalidArgument("\(contentMode.rawValue) needs both a width and a height, not \(size)")
            }
        }

        /// The output size and the source region for an input of `input` pixels.
        func plan(for input: PixelSize) throws(ImageError) -> (PixelSize, Resampler.Region) {
            try validate()
            let w = Double(input.width), h = Double(input.height)
            let full = Resampler.Region(x: 0, y: 0, width: w, height: h)
            switch contentMode {
            case .exact:
                if !upscale && (size.width > input.width || size.height > input.height) {
                    let target = PixelSize(width: min(size.width, input.width), height: min(size.height, input.height))
                    return (target, full)
                }
                return (size, full)
            case .fit:
                let sx = size.width > 0 ? Double(size.width) / w : .infinity
                let sy = size.height > 0 ? Double(size.height) / h : .infinity
                var scale = min(sx, sy)
                if !upscale { scale = min(scale, 1) }
                let target = PixelSize(width: max(1, Int((w * scale).rounded())), height: max(1, Int((h * scale).rounded())))
                return (target, full)
            case .fill:
                var target = size
                var scale = max(Double(size.width) / w, Double(size.height) / h)
                if !upscale && scale > 1 {
                    // Keep the target's aspect ratio at the largest size the image allows.
                    let shrink = 1 / scale
                    target = PixelSize(
                        width: max(1, Int((Double(size.width) * shrink).rounded())),
                        height: max(1, Int((Double(size.height) * shrink).rounded())))
                    scale = 1
                }
                let regionWidth = min(w, Double(target.width) / scale)
                let regionHeight = min(h, Double(target.height) / scale)
                var x = (w - regionWidth) / 2, y = (h - regionHeight) / 2
                switch anchor {
                case .center: break
                case .top: y = 0
                case .bottom: y = h - regionHeight
                case .left: x = 0
                case .right: x = w - regionWidth
                }
                return (target, Resampler.Region(x: x, y: y, width: regionWidth, height: regionHeight))
            }
        }

        public func process(_ image: Image) throws -> Image {
            let (target, region) = try plan(for: image.size)
            return try image.mapFrames { try Resampler.resample($0, region: region, to: target) }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Resize {
    /// Resize to `size` (see ``ImageProcessors/Resize``).
    public static func resize(
        size: PixelSize, contentMode: ImageProcessors.Resize.ContentMode = .fit,
        anchor: ImageProcessors.Resize.Anchor = .center, upscale: Bool = false
    ) -> ImageProcessors.Resize {
        ImageProcessors.Resize(size: size, contentMode: contentMode, anchor: anchor, upscale: upscale)
    }

    /// Resize to a width, the height following the aspect ratio.
    public static func resize(width: Int, upscale: Bool = false) -> ImageProcessors.Resize {
        ImageProcessors.Resize(size: PixelSize(width: width, height: 0), upscale: upscale)
    }

    /// Resize to a height, the width following the aspect ratio.
    public static func resize(height: Int, upscale: Bool = false) -> ImageProcessors.Resize {
        ImageProcessors.Resize(size: PixelSize(width: 0, height: height), upscale: upscale)
    }
}
