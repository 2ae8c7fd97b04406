import Foundation

/// How much memory this process may really use: the cgroup limit in a container, physical
/// memory otherwise. Peers take physical memory and overrun a container's limit.
public enum MemoryLimits {
    /// The share of usable memory a memory cache takes by default: 20%.
    public static let defaultCacheFraction = 0.2

    /// 20% of ``usableMemory()``, computed once.
    public static let defaultCacheCostLimit: Int = Int(Double(usableMemory()) * defaultCacheFraction)

    /// The cgroup memory limit if there is one (v2 `memory.max`, v1 `memory.limit_in_bytes`),
    /// else physical memory, whichever is smaller.
    public static func usableMemory(root: String = "/") -> Int {
        let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        guard let limit = cgroupLimit(root: root) else { return physical }
        return min(limit, physical)
    }

    /// The cgroup of this process and its controller files, under `root` (tests pass a
    /// directory of sample files).
    struct Cgroup {
        /// `memory.max` or `memory.limit_in_bytes`.
        var limitFile: String
        /// `memory.current` or `memory.usage_in_bytes`.
        var usageFile: String
    }

    static func cgroup(root: String = "/") -> Cgroup? {
        let base = (root as NSString).appendingPathComponent("sys/fs/cgroup")
        let membership = (try? String(contentsOfFile: (root as NSString).appendingPathComponent("proc/self/cgroup"), encoding: .utf8)) ?? ""
        // v2: a single "0::/path" line.
        for line in membership.split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            let directory = (base as NSString).appendingPathComponent(path)
            let limit = (directory as NSString).appendingPathComponent("memory.max")
            if FileManager.default.fileExists(atPath: limit) {
                return Cgroup(limitFile: limit, usageFile: (directory as NSString).appendingPathComponent("memory.current"))
            }
            let top = (base as NSString).appendingPathComponent("memory.max")
            if FileManager.default.fileExists(atPath: top) {
                return Cgroup(limitFile: top, usageFile: (base as NSString).appendingPathComponent("memory.current"))
            }
        }
        // v1: "N:memory:/path" (or a list of controllers including memory).
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1].split(separator: ",").contains("memory") else { continue }
            for directory in [(base as NSString).appendingPathComponent("memory" + fields[2]), (base as NSString).appendingPathComponent("memory")] {
                let limit = (directory as NSString).appendingPathComponent("memory.limit_in_bytes")
                if FileManager.default.fileExists(atPath: limit) {
                    return Cgroup(limitFile: limit, usageFile: (directory as NSString).appendingPathComponent("memory.usage_in_bytes"))
                }
            }
        }
        return nil
    }

    /// The cgroup's memory limit in bytes, or nil when there is none ("max", or v1's huge value).
    public static func cgroupLimit(root: String = "/") -> Int? {
        guard let group = cgroup(root: root), let value = readNumber(group.limitFile) else { return nil }
        // cgroup v1 reports "no limit" as a page-aligned value near Int64.max.
        return value >= Int(Int64.max / 2) ? nil : value
    }

    /// The memory the cgroup uses now and its limit, or nil outside a limited cgroup.
    public static func cgroupUsage(root: String = "/") -> (used: Int, limit: Int)? {
        guard let group = cgroup(root: root), let limit = cgroupLimit(root: root), let used = readNumber(group.usageFile) else {
            return nil
        }
        return (used, limit)
    }

    private static func readNumber(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed == "max" { return Int(Int64.max) }
        return Int(trimmed)
    }
}
