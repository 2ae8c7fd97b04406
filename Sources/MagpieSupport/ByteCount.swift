/// Human-readable byte counts, as the CLI and the caches report them.
///
/// Uses decimal units (1 kB = 1000 bytes), as disk sizes and HTTP tools do:
/// `ByteCount.format(1_234_567)` is `"1.2 MB"`.
public enum ByteCount {
    private static let units = ["bytes", "kB", "MB", "GB", "TB", "PB"]

    /// Formats `bytes` with one decimal below 100 of a unit and none above.
    public static func format(_ bytes: Int64) -> String {
        if bytes < 1000 && bytes > -1000 {
            return bytes == 1 ? "1 byte" : "\(bytes) bytes"
        }
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let rounded = abs(value) < 100 ? (value * 10).rounded() / 10 : value.rounded()
        let text = abs(value) < 100 ? String(rounded) : String(Int64(rounded))
        return "\(text) \(units[unit])"
    }

    /// Formats `bytes` with one decimal below 100 of a unit and none above.
    public static func format(_ bytes: Int) -> String {
        format(Int64(bytes))
    }
}
