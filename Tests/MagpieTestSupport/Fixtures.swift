public import Foundation
import CDeflate

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

    /// The reference pixels `reference/<name>`: RGBA, all frames concatenated (stored
    /// zlib-compressed, inflated here with libdeflate).
    public static func reference(_ name: String) throws -> [UInt8] {
        let compressed = [UInt8](try Data(contentsOf: root.appendingPathComponent("reference").appendingPathComponent(name)))
        guard let inflater = libdeflate_alloc_decompressor() else { throw FixtureError.cannotInflate(name) }
        defer { libdeflate_free_decompressor(inflater) }
        var capacity = max(1 << 16, compressed.count * 8)
        while capacity <= 1 << 30 {
            var output = [UInt8](repeating: 0, count: capacity)
            var produced = 0
            let result = output.withUnsafeMutableBytes { out in
                compressed.withUnsafeBytes { input in
                    libdeflate_zlib_decompress(inflater, input.baseAddress, input.count, out.baseAddress, out.count, &produced)
                }
            }
            if result == LIBDEFLATE_SUCCESS { return Array(output.prefix(produced)) }
            guard result == LIBDEFLATE_INSUFFICIENT_SPACE else { throw FixtureError.cannotInflate(name) }
            capacity *= 4
        }
        throw FixtureError.cannotInflate(name)
    }

    /// A reference file could not be read.
    public enum FixtureError: Error {
        case cannotInflate(String)
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

    /// What a processor must produce from a fixture, with Pillow's result as the reference.
    public struct ProcessingEntry: Decodable, Sendable, CustomStringConvertible {
        public var name: String
        public var source: String
        /// The operation in the CLI's words: "resize 80x60 fit", "blur 3", "corners 20"...
        public var operation: String
        public var width: Int
        public var height: Int
        public var reference: String
        public var compare: String
        public var minPSNR: Double?
        public var note: String?

        public var description: String { name }
    }

    private struct Manifest: Decodable {
        var fixtures: [Entry]
        var processing: [ProcessingEntry]
    }

    private static let manifest: Manifest? = {
        guard let data = try? Data(contentsOf: root.appendingPathComponent("manifest.json")) else { return nil }
        return try? JSONDecoder().decode(Manifest.self, from: data)
    }()

    /// Every manifest entry.
    public static var all: [Entry] { manifest?.fixtures ?? [] }

    /// The processing references.
    public static var processing: [ProcessingEntry] { manifest?.processing ?? [] }

    /// Fixtures that must decode.
    public static var good: [Entry] { all.filter { $0.reference != nil } }
    /// Fixtures that must fail with a typed error.
    public static var bad: [Entry] { all.filter { $0.errors != nil } }
    /// The entry for `file`.
    public static func entry(_ file: String) -> Entry? { all.first { $0.file == file } }
}
