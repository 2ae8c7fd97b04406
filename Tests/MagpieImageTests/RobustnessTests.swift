import Foundation
import MagpieImage
import MagpieTestSupport
import Testing

/// A small in-process fuzz pass: seeded mutations and truncations of every good fixture
/// must decode or fail with an ImageError; never crash, hang or throw anything else.
@Suite("Robustness")
struct RobustnessTests {
    /// 100 by default; set MAGPIE_MUTATIONS for a longer run.
    static let mutationsPerFixture = ProcessInfo.processInfo.environment["MAGPIE_MUTATIONS"].flatMap(Int.init) ?? 100

    static func mutate(_ data: Data, _ rng: inout SeededGenerator) -> Data {
        var bytes = [UInt8](data)
        switch rng.next() % 4 {
        case 0:  // flip a few bytes
            for _ in 0..<(1 + Int(rng.next() % 4)) where !bytes.isEmpty {
                bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
        case 1:  // truncate
            bytes = Array(bytes.prefix(Int(rng.next() % UInt64(max(1, bytes.count)))))
        case 2:  // overwrite a run
            if bytes.count > 16 {
                let start = Int(rng.next() % UInt64(bytes.count - 8))
                for i in start..<min(bytes.count, start + 1 + Int(rng.next() % 32)) { bytes[i] = UInt8(truncatingIfNeeded: rng.next()) }
            }
        default:  // header fields: bytes 6...30 carry sizes in most formats
            if bytes.count > 30 {
                bytes[6 + Int(rng.next() % 24)] = [0x00, 0xFF, 0x7F, 0x80][Int(rng.next() % 4)]
            }
        }
        return Data(bytes)
    }

    @Test("Mutated fixtures never crash", arguments: Fixtures.good.filter { !$0.file.hasPrefix("other/") })
    func mutations(_ entry: Fixtures.Entry) throws {
        let original = try Fixtures.data(entry.file)
        // FNV-1a of the name: a seed that differs per fixture and never between runs.
        let seed = entry.file.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        var rng = SeededGenerator(seed: seed)
        var options = ImageDecodingOptions()
        options.maxPixelCount = 4_000_000
        options.maxTotalPixelCount = 20_000_000
        var rejected = 0
        for _ in 0..<Self.mutationsPerFixture {
            let data = Self.mutate(original, &rng)
            do {
                _ = try ImageInfo(data: data)
                _ = try Image(data: data, options: options)
            } catch is ImageError {
                rejected += 1
            } catch {
                Issue.record("\(entry.file): non-ImageError \(error)")
            }
        }
        // Truncations alone make up a quarter of the mutations, so some must be rejected.
        #expect(rejected > 0)
    }
}

/// Inputs the fuzzers found (scripts/fuzz.sh): each must decode or fail with an ImageError.
@Suite("Fuzzer regressions")
struct FuzzRegressionTests {
    static var files: [String] {
        let directory = Fixtures.url("fuzz")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { "fuzz/\($0)" }
    }

    @Test("Every fuzzer finding decodes safely, whole and in pieces", arguments: Self.files)
    func finding(_ file: String) throws {
        let data = try Fixtures.data(file)
        var options = ImageDecodingOptions()
        options.maxPixelCount = 4_000_000
        options.maxTotalPixelCount = 16_000_000
        var outcomes = 0
        for decode in [{ try Image(data: data, options: options) }, {
            let decoder = IncrementalImageDecoder(options: options, configuration: .init(minimumPreviewInterval: .zero))
            for offset in stride(from: 0, to: data.count, by: 97) {
                try decoder.append(data.subdata(in: offset..<min(offset + 97, data.count)))
                _ = try decoder.preview()
            }
            return try decoder.finish()
        }] as [() throws -> Image] {
            do {
                _ = try decode()
            } catch is ImageError {
            } catch {
                Issue.record("\(file): non-ImageError \(error)")
            }
            outcomes += 1
        }
        #expect(outcomes == 2)
    }
}
