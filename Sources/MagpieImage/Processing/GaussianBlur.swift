import CImageKernels

extension ImageProcessors {
    /// Gaussian blur by three box blurs (each a horizontal and a vertical pass with running
    /// sums, so the cost does not grow with the radius), colour premultiplied by alpha so that
    /// transparent pixels do not bleed. Then, as YYImage's blur does, an optional saturation
    /// change and tint colour.
    public struct GaussianBlur: ImageProcessing {
        /// The Gaussian's standard deviation in pixels (as Pillow's and CSS's blur radius).
        public var radius: Double
        /// Colour saturation after the blur: 1 unchanged, 0 gray, above 1 more vivid.
        public var saturation: Double
        /// A colour laid over the result with its alpha (for frosted-glass effects), or nil.
        public var tint: RGBAColor?

        /// A blur of standard deviation `radius`.
        public init(radius: Double, saturation: Double = 1, tint: RGBAColor? = nil) {
            self.radius = radius
            self.saturation = saturation
            self.tint = tint
        }

        public var identifier: String {
            var text = "gaussianBlur(\(identifierNumber(radius))"
            if saturation != 1 { text += ",saturation=\(identifierNumber(saturation))" }
            if let tint { text += ",tint=\(tint)" }
            return text + ")"
        }

        public func process(_ image: Image) throws -> Image {
            guard radius >= 0, radius.isFinite, saturation >= 0, saturation.isFinite else {
                throw ImageError.invalidArgument("blur radius and saturation must be positive, not \(radius) and \(saturation)")
            }
            return try image.mapFrames { bitmap in
                var out = try Self.blur(bitmap, sigma: radius)
                if saturation != 1 || tint != nil { Self.adjust(&out, saturation: saturation, tint: tint) }
                return out
            }
        }

        /// Box radii whose three passes approximate a Gaussian of standard deviation `sigma`
        /// (the two nearest odd widths, mixed so that the variance matches).
        static func boxRadii(sigma: Double) -> [Int] {
            let ideal = (12 * sigma * sigma / 3 + 1).squareRoot()
            var lower = Int(ideal)
            if lower % 2 == 0 { lower -= 1 }
            lower = max(lower, 1)
            let upper = lower + 2
            let m = ((12 * sigma * sigma - 3 * Double(lower * lower) - 12 * Double(lower) - 9) / (-4 * Double(lower) - 4)).rounded()
            return (0..<3).map { Double($0) < m ? (lower - 1) / 2 : (upper - 1) / 2 }
        }

        static func blur(_ bitmap: Bitmap, sigma: Double) throws -> Bitmap {
            let radii = boxRadii(sigma: sigma).filter { $0 > 0 }
            guard !radii.isEmpty else { return bitmap }
            let w = bitmap.width, h = bitmap.height, c = bitmap.format.channels
            var a = bitmap.pixels
            if c == 4 { a.withUnsafeMutableBufferPointer { if let p = $0.baseAddress { mg_premultiply(p, w * h) } } }
            var b = try Bitmap.zeroedPixels(width: w, height: h, channels: c)
            var line = [Int32](repeating: 0, count: max(w, h) * c)
            for radius in radii {
                for vertical in [false, true] {
                    a.withUnsafeBufferPointer { input in
                        b.withUnsafeMutableBufferPointer { output in
                            line.withUnsafeMutableBufferPointer { scratch in
                                guard let i = input.baseAddress, let o = output.baseAddress, let s = scratch.baseAddress else { return }
                                mg_box_blur(i, o, Int32(w), Int32(h), Int32(c), Int32(min(radius, max(w, h))), vertical ? 1 : 0, s)
                            }
                        }
                    }
                    swap(&a, &b)
                }
            }
            if c == 4 { a.withUnsafeMutableBufferPointer { if let p = $0.baseAddress { mg_unpremultiply(p, w * h) } } }
            return Bitmap(unchecked: w, height: h, format: bitmap.format, pixels: a)
        }

        /// Saturation and tint on colour pixels (gray images become RGB when tinted).
        static func adjust(_ bitmap: inout Bitmap, saturation: Double, tint: RGBAColor?) {
            if bitmap.format == .gray8 && tint != nil { bitmap = bitmap.converted(to: .rgb8) }
            let c = bitmap.format.channels
            guard c >= 3 else { return }
            let count = bitmap.width * bitmap.height
            let ta = Double(tint?.alpha ?? 0) / 255
            let tr = Double(tint?.red ?? 0), tg = Double(tint?.green ?? 0), tb = Double(tint?.blue ?? 0)
            bitmap.pixels.withUnsafeMutableBufferPointer { p in
                for i in 0..<count {
                    var r = Double(p[i * c]), g = Double(p[i * c + 1]), b = Double(p[i * c + 2])
                    if saturation != 1 {
                        let luma = 0.299 * r + 0.587 * g + 0.114 * b
                        r = luma + (r - luma) * saturation
                        g = luma + (g - luma) * saturation
                        b = luma + (b - luma) * saturation
                    }
                    if ta > 0 {
                        r = r * (1 - ta) + tr * ta
                        g = g * (1 - ta) + tg * ta
                        b = b * (1 - ta) + tb * ta
                    }
                    p[i * c] = UInt8(max(0, min(255, r.rounded())))
                    p[i * c + 1] = UInt8(max(0, min(255, g.rounded())))
                    p[i * c + 2] = UInt8(max(0, min(255, b.rounded())))
                }
            }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.GaussianBlur {
    /// A Gaussian blur of standard deviation `radius`, with optional saturation and tint.
    public static func gaussianBlur(radius: Double, saturation: Double = 1, tint: RGBAColor? = nil) -> ImageProcessors.GaussianBlur {
        ImageProcessors.GaussianBlur(radius: radius, saturation: saturation, tint: tint)
    }
}

extension Bitmap {
    /// The preview blur: strong while little has arrived, weaker as `progress` (0...1) grows.
    func progressiveBlur(progress: Double) -> Bitmap {
        let radius = Double(min(width, height)) / 40 * max(0.15, 1 - progress)
        return (try? ImageProcessors.GaussianBlur.blur(self, sigma: min(radius, 24))) ?? self
    }
}
