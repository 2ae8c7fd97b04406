/// A colour with straight alpha, 8 bits a channel.
public struct RGBAColor: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    /// A colour; opaque by default.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)

    /// `"#RRGGBBAA"`.
    public var description: String {
        "#" + [red, green, blue, alpha].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

extension ImageProcessors {
    /// Rounds the corners (antialiased, outside made transparent), with an optional border
    /// drawn along the rounded edge. ``circle(border:)`` crops to the centred square first and
    /// rounds it into a circle.
    public struct RoundedCorners: ImageProcessing {
        /// Corner radius in pixels; clamped to half the shorter side.
        public var radius: Double
        /// Border width in pixels (0 for none).
        public var borderWidth: Double
        /// Border colour.
        public var borderColor: RGBAColor
        /// Crop to a centred square and use half its side as the radius.
        public var isCircle: Bool

        /// Rounded corners of `radius` pixels, with an optional border.
        public init(radius: Double, borderWidth: Double = 0, borderColor: RGBAColor = .white) {
            self.radius = radius
            self.borderWidth = borderWidth
            self.borderColor = borderColor
            self.isCircle = false
        }

        /// A circle cut from the centred square, with an optional border.
        public static func circle(borderWidth: Double = 0, borderColor: RGBAColor = .white) -> RoundedCorners {
            var corners = RoundedCorners(radius: 0, borderWidth: borderWidth, borderColor: borderColor)
            corners.isCircle = true
            return corners
        }

        public var identifier: String {
            let shape = isCircle ? "circle(" : "roundedCorners(\(identifierNumber(radius))"
            let border = borderWidth > 0 ? "\(isCircle ? "" : ",")border=\(identifierNumber(borderWidth)),\(borderColor)" : ""
            return shape + border + ")"
        }

        public func process(_ image: Image) throws -> Image {
            guard radius >= 0, radius.isFinite, borderWidth >= 0, borderWidth.isFinite else {
                throw ImageError.invalidArgument("corner radius and border width must be positive, not \(radius) and \(borderWidth)")
            }
            var source = image
            if isCircle {
                let side = min(image.width, image.height)
                source = try ImageProcessors.Crop(
                    x: (image.width - side) / 2, y: (image.height - side) / 2, width: side, height: side
                ).process(image)
            }
            let r = isCircle ? Double(source.width) / 2 : min(radius, Double(min(source.width, source.height)) / 2)
            return try source.mapFrames { try Self.round($0, radius: r, border: borderWidth, color: borderColor) }
        }

        /// Signed distance from the pixel centre (x, y) to the rounded rectangle's edge (negative inside).
        @inline(__always)
        static func distance(_ px: Double, _ py: Double, _ w: Double, _ h: Double, _ r: Double) -> Double {
            let qx = abs(px - w / 2) - (w / 2 - r), qy = abs(py - h / 2) - (h / 2 - r)
            let ox = max(qx, 0), oy = max(qy, 0)
            return (ox * ox + oy * oy).squareRoot() + min(max(qx, qy), 0) - r
        }

        static func round(_ bitmap: Bitmap, radius r: Double, border: Double, color: RGBAColor) throws -> Bitmap {
            var out = bitmap.converted(to: .rgba8)
            let w = Double(out.width), h = Double(out.height), width = out.width
            let borderPremultiplied = (
                Double(color.red) * Double(color.alpha) / 255, Double(color.green) * Double(color.alpha) / 255,
                Double(color.blue) * Double(color.alpha) / 255, Double(color.alpha))
            let borderColor = [borderPremultiplied.0, borderPremultiplied.1, borderPremultiplied.2]
            // Pixels further than this inside the edge are untouched.
            let margin = border + 1
            out.pixels.withUnsafeMutableBufferPointer { p in
                for y in 0..<out.height {
                    let py = Double(y) + 0.5
                    let inCornerBand = py < r + 1 || py > h - r - 1
                    let inBorderBand = py < margin || py > h - margin
                    for x in 0..<width {
                        let px = Double(x) + 0.5
                        // Fast exit: well inside the straight part of the shape.
                        if !inBorderBand && px >= margin && px <= w - margin && (!inCornerBand || (px > r + 1 && px < w - r - 1)) {
                            continue
                        }
                        let d = distance(px, py, w, h, r)
                        let shape = max(0, min(1, 0.5 - d))
                        let inner = border > 0 ? max(0, min(1, 0.5 - (d + border))) : shape
                        let ring = shape - inner
                        if shape >= 1 && ring <= 0 { continue }
                        let i = (y * width + x) * 4
                        let a = Double(p[i + 3])
                        // Premultiplied: the image where it is inside the border, the border colour on the ring.
                        let outA = a * inner + borderPremultiplied.3 * ring
                        guard outA > 0.5 else {
                            p[i] = 0; p[i + 1] = 0; p[i + 2] = 0; p[i + 3] = 0
                            continue
                        }
                        for k in 0..<3 {
                            let premultiplied = Double(p[i + k]) * a / 255 * inner + borderColor[k] * ring
                            p[i + k] = UInt8(max(0, min(255, (premultiplied * 255 / outA).rounded())))
                        }
                        p[i + 3] = UInt8(max(0, min(255, outA.rounded())))
                    }
                }
            }
            return out
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.RoundedCorners {
    /// Rounded corners of `radius` pixels, with an optional border.
    public static func roundedCorners(
        radius: Double, borderWidth: Double = 0, borderColor: RGBAColor = .white
    ) -> ImageProcessors.RoundedCorners {
        ImageProcessors.RoundedCorners(radius: radius, borderWidth: borderWidth, borderColor: borderColor)
    }

    /// A circle cut from the centred square, with an optional border.
    public static func circle(borderWidth: Double = 0, borderColor: RGBAColor = .white) -> ImageProcessors.RoundedCorners {
        ImageProcessors.RoundedCorners.circle(borderWidth: borderWidth, borderColor: borderColor)
    }
}
