public import Foundation

/// Generated sample images for the demo, the CLI's `samples` command and the proxy's demo
/// gallery: deterministic pictures that exercise each codec (a photo-like landscape, a
/// transparent badge, an animated spinner, a rotated portrait).
public enum SampleImages {
    /// One sample: a file name and the image with the encoder to write it.
    public struct Sample: Sendable {
        public var fileName: String
        public var image: Image
        public var encoder: any ImageEncoding
        public var summary: String
    }

    public static func all() throws -> [Sample] {
        let landscape = try self.landscape(width: 800, height: 500)
        var portrait = Image(bitmap: landscape.bitmap.applying(.left), format: nil, orientation: .right)
        portrait.orientation = .right
        return [
            Sample(fileName: "landscape.jpg", image: landscape, encoder: .jpeg(quality: 0.85),
                   summary: "800x500 photo-like scene, baseline JPEG q85"),
            Sample(fileName: "landscape-progressive.jpg", image: landscape, encoder: .jpeg(quality: 0.85, progressive: true),
                   summary: "the same scene as a progressive JPEG"),
            Sample(fileName: "landscape.webp", image: landscape, encoder: .webp(quality: 0.8),
                   summary: "the same scene as lossy WebP q80"),
            Sample(fileName: "portrait-exif6.jpg", image: portrait, encoder: .jpeg(quality: 0.85),
                   summary: "stored on its side with EXIF orientation 6 (turn 90° clockwise)"),
            Sample(fileName: "badge.png", image: try badge(size: 256), encoder: .png(),
                   summary: "256x256 RGBA badge with soft transparent edges"),
            Sample(fileName: "spinner.gif", image: try spinner(size: 96, frames: 12), encoder: .gif(),
                   summary: "96x96 animated spinner, 12 frames of 80 ms, transparent background"),
        ]
    }

    /// A hash-based noise value in 0..<1 for pixel (x, y), stable across runs and platforms.
    private static func noise(_ x: Int, _ y: Int) -> Double {
        var h = UInt64(truncatingIfNeeded: x &* 374_761_393 &+ y &* 668_265_263)
        h = (h ^ (h >> 13)) &* 1_274_126_177
        h ^= h >> 16
        return Double(h & 0xFFFF) / 65536
    }

    /// Sky, sun, two ranges of hills and a lake, with a little grain.
    public static func landscape(width: Int, height: Int) throws -> Image {
        let bitmap = try Bitmap.make(width: width, height: height, format: .rgb8) { buffer in
            for y in 0..<height {
                let v = Double(y) / Double(height)
                for x in 0..<width {
                    let u = Double(x) / Double(width)
                    var r = 90 + 120 * v, g = 150 + 70 * v, b = 235 - 20 * v  // sky
                    let sun = (u - 0.72) * (u - 0.72) * 2.6 + (v - 0.25) * (v - 0.25)
                    if sun < 0.006 { (r, g, b) = (255, 236, 170) } else if sun < 0.02 {
                        let t = (sun - 0.006) / 0.014
                        r = r * t + 255 * (1 - t); g = g * t + 220 * (1 - t); b = b * t + 160 * (1 - t)
                    }
                    let far = 0.55 + 0.07 * sin(u * 9.0) + 0.03 * sin(u * 23.0 + 1)
                    if v > far { (r, g, b) = (70 + 40 * u, 110 + 30 * v, 90) }
                    let near = 0.68 + 0.06 * sin(u * 5.0 + 2) + 0.02 * sin(u * 31.0)
                    if v > near { (r, g, b) = (50 + 30 * v, 130 - 40 * v + 20 * u, 50) }
                    if v > 0.86 { (r, g, b) = (40 + 30 * u, 90 + 40 * v, 160 + 40 * u) }  // lake
                    let grain = (noise(x, y) - 0.5) * 18
                    let i = (y * width + x) * 3
                    buffer[i] = UInt8(max(0, min(255, r + grain)))
                    buffer[i + 1] = UInt8(max(0, min(255, g + grain)))
                    buffer[i + 2] = UInt8(max(0, min(255, b + grain)))
                }
            }
        }
        return Image(bitmap: bitmap)
    }

    /// A rounded square with a diagonal gradient and an antialiased ring, on transparency.
    public static func badge(size: Int) throws -> Image {
        let bitmap = try Bitmap.make(width: size, height: size, format: .rgba8) { buffer in
            let s = Double(size), radius = s * 0.2, inset = s * 0.06
            for y in 0..<size {
                for x in 0..<size {
                    let px = Double(x) + 0.5, py = Double(y) + 0.5
                    // Distance outside the rounded square (negative inside).
                    let qx = max(abs(px - s / 2) - (s / 2 - inset - radius), 0)
                    let qy = max(abs(py - s / 2) - (s / 2 - inset - radius), 0)
                    let outside = (qx * qx + qy * qy).squareRoot() - radius
                    let coverage = max(0, min(1, 0.5 - outside))
                    let t = (px + py) / (2 * s)
                    var r = 240 - 120 * t, g = 90 + 60 * t, b = 60 + 180 * t
                    let ring = abs(((px - s / 2) * (px - s / 2) + (py - s / 2) * (py - s / 2)).squareRoot() - s * 0.28)
                    let ringCoverage = max(0, min(1, s * 0.03 - ring))
                    r += (255 - r) * ringCoverage; g += (255 - g) * ringCoverage; b += (255 - b) * ringCoverage
                    let i = (y * size + x) * 4
                    buffer[i] = UInt8(r); buffer[i + 1] = UInt8(g); buffer[i + 2] = UInt8(b)
                    buffer[i + 3] = UInt8((coverage * 255).rounded())
                }
            }
        }
        return Image(bitmap: bitmap)
    }

    /// Twelve dots on a circle; the bright one goes round.
    public static func spinner(size: Int, frames count: Int) throws -> Image {
        var frames: [ImageFrame] = []
        let s = Double(size)
        for f in 0..<count {
            let bitmap = try Bitmap.make(width: size, height: size, format: .rgba8) { buffer in
                buffer.update(repeating: 0)
                for dot in 0..<12 {
                    let angle = Double(dot) / 12 * 2 * Double.pi
                    let cx = s / 2 + cos(angle) * s * 0.35, cy = s / 2 + sin(angle) * s * 0.35
                    let age = (dot - f + 12 * 4) % 12
                    let shade = UInt8(255 - min(age, 11) * 18)
                    let radius = s * 0.07
                    for y in max(0, Int(cy - radius - 1))..<min(size, Int(cy + radius + 2)) {
                        for x in max(0, Int(cx - radius - 1))..<min(size, Int(cx + radius + 2)) {
                            let d = ((Double(x) + 0.5 - cx) * (Double(x) + 0.5 - cx) + (Double(y) + 0.5 - cy) * (Double(y) + 0.5 - cy)).squareRoot()
                            guard d <= radius else { continue }
                            let i = (y * size + x) * 4
                            buffer[i] = 30; buffer[i + 1] = shade / 2 + 60; buffer[i + 2] = shade; buffer[i + 3] = 255
                        }
                    }
                }
            }
            frames.append(ImageFrame(bitmap: bitmap, duration: .milliseconds(80)))
        }
        return try Image(frames: frames, loopCount: 0)
    }
}

extension SampleImages {
    /// The inputs of the decode benchmarks and of `scripts/compare-peers.sh`: the same bytes
    /// every time, made by Magpie's encoders from the generated scenes.
    public static func benchmarkInputs() throws -> [(name: String, data: Data)] {
        let large = try landscape(width: 4000, height: 3000)
        let hd = try landscape(width: 1920, height: 1080)
        let hdAlpha = Image(bitmap: try withAlphaGradient(hd.bitmap))
        let panorama = try landscape(width: 960, height: 360)
        var frames: [ImageFrame] = []
        for i in 0..<20 {
            let frame = try crop(panorama.bitmap, x: i * 24, width: 480)
            frames.append(ImageFrame(bitmap: frame, duration: .milliseconds(50)))
        }
        let animation = try Image(frames: frames, loopCount: 0)
        return [
            ("jpeg-4000x3000-baseline.jpg", try large.encoded(using: .jpeg(quality: 0.85))),
            ("jpeg-4000x3000-progressive.jpg", try large.encoded(using: .jpeg(quality: 0.85, progressive: true))),
            ("png-1920x1080-rgb.png", try hd.encoded(using: .png())),
            ("png-1920x1080-rgba.png", try hdAlpha.encoded(using: .png())),
            ("gif-480x360-20-frames.gif", try animation.encoded(using: .gif())),
            ("webp-4000x3000-lossy.webp", try large.encoded(using: .webp(quality: 0.8))),
            ("webp-480x360-20-frames.webp", try animation.encoded(using: .webp(quality: 0.8))),
            ("rgba-4000x3000.png", try Image(bitmap: try withAlphaGradient(large.bitmap)).encoded(using: .png(compressionLevel: 1))),
            ("rgb-1920x1080.png", try hd.encoded(using: .png(compressionLevel: 1))),
        ]
    }

    private static func withAlphaGradient(_ bitmap: Bitmap) throws -> Bitmap {
        let width = bitmap.width
        return try Bitmap.make(width: bitmap.width, height: bitmap.height, format: .rgba8) { out in
            bitmap.pixels.withUnsafeBufferPointer { rgb in
                for i in 0..<(bitmap.width * bitmap.height) {
                    out[i * 4] = rgb[i * 3]; out[i * 4 + 1] = rgb[i * 3 + 1]; out[i * 4 + 2] = rgb[i * 3 + 2]
                    out[i * 4 + 3] = UInt8(255 - (i % width) * 200 / width)
                }
            }
        }
    }

    private static func crop(_ bitmap: Bitmap, x: Int, width: Int) throws -> Bitmap {
        let c = bitmap.format.channels
        return try Bitmap.make(width: width, height: bitmap.height, format: bitmap.format) { out in
            for y in 0..<bitmap.height {
                for i in 0..<(width * c) { out[y * width * c + i] = bitmap.pixels[(y * bitmap.width + x) * c + i] }
            }
        }
    }
}
