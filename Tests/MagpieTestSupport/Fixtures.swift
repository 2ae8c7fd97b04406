public import Foundation

/// The committed fixtures under `Tests/Fixtures`, made by `scripts/make-fixtures.py` (Pillow),
/// and their manifest: what decoding each file must give.
public enum Fixtures {
    /// `Tests/Fixtures`, found from this source file so that no resource bundle is needed.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The file `images/<name>`.
    public static func url(_ name: String) -> URL {
        root.appendingPathComponent("images").appendingPathComponent(name)
    }

    /// The bytes of `images/<name>`.
    public static func data(_ name: String) throws -> Data {
        try Data(contentsOf: url(name))
    }

    /// The reference pixels `reference/<name>`: RGBA, all frames concatenated.
    public static func reference(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent("reference").appendingPathComponent(name)))
    }

    /// One manifest entry: a good fixture (with `reference`) or a bad one (with `errors`).
    public struct Entry: Decodable, Sendable, CustomStringConvertible {
        public var file: String
        public var format: String?
        public var width: Int?
        public var height: Int?
        public var frames: Int?
        public var orientation: Int?
        public var compare: String?
        public var reference: String?
        public var hasAlpha: Bool?
        public var loopCount: Int?
        public var durations: [Int]?
        public var uprightReference: String?
        public var uprightWidth: Int?
        public var uprightHeight: Int?
        public var errors: [String]?
        public var note: String?
        public var declaredWidth: Int?
        public var declaredHeight: Int?

        public var description: String { file }
        /// Whether pixels must match exactly (PNG, GIF, lossless WebP) or by PSNR (JPEG, lossy WebP).
        public var isExact: Bool { compare == "exact" }
    }

    private struct Manifest: Decodable {
        var fixtures: [Entry]
    }

    /// Every manifest entry.
    public static let all: [Entry] = {
        do {
            let data = try Data(contentsOf: root.appendingPathComponent("manifest.json"))
            return try JSONDecoder().decode(Manifest.self, from: data).fixtures
        } catch {
            return []
        }
    }()

    /// Fixtures that must decode.
    public static var good: [Entry] { all.filter { $0.reference != nil } }
    /// Fixtures that must fail with a typed error.
    public static var bad: [Entry] { all.filter { $0.errors != nil } }
    /// The entry for `file`.
    public static func entry(_ file: String) -> Entry? { all.first { $0.file == file } }
}
