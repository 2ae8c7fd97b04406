package import Foundation

/// Deterministic values for the crash and two-process tests: a key's bytes follow from the key
/// alone, so any reader can check a value it did not write.
package enum StressData {
    /// Between 64 bytes and about 140 KB (a third inline, the rest in files), from the key.
    package static func value(for key: String) -> Data {
        var hash = key.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        let length = hash % 3 == 0 ? 64 + Int(hash % 4000) : 20_000 + Int(hash % 120_000)
        var bytes = [UInt8](repeating: 0, count: length)
        for i in 0..<length {
            hash = hash &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[i] = UInt8(truncatingIfNeeded: hash >> 33)
        }
        return Data(bytes)
    }
}
