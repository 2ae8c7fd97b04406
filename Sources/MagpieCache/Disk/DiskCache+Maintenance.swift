import Foundation
import MagpieSupport

extension DiskCache {
    /// What ``verify()`` found and mended.
    public struct Repair: Sendable, Equatable {
        /// Index rows whose file was missing (removed).
        public var rowsWithoutFiles = 0
        /// Rows whose file had another size than recorded (removed).
        public var sizeMismatches = 0
        /// Files in the cache that no row named (deleted).
        public var filesWithoutRows = 0
        /// Temporary files left by interrupted writes (deleted).
        public var temporaryFiles = 0

        /// Whether anything was wrong.
        public var isClean: Bool { self == Repair() }
    }

    // MARK: - Limits

    func overLimits(_ totals: (count: Int, size: Int64)) -> Bool {
        totals.size > configuration.sizeLimit || totals.count > (configuration.countLimit ?? .max)
    }

    /// Removes expired and too-old entries, then trims size and count to their targets.
    func enforceLimits() throws {
        let time = configuration.now().timeIntervalSince1970
        try index.flushAccess()
        let expired = try index.candidates(
            "SELECT key, file, size FROM entries WHERE expires IS NOT NULL AND expires <= ?", [.real(time)])
        try removeKeys(expired.map(\.key))
        if let age = configuration.ageLimit {
            try trimSync(olderThan: time - age.seconds)
        }
        let totals = index.currentTotals
        if totals.size > configuration.sizeLimit {
            try trimSync(toSize: Int64(Double(configuration.sizeLimit) * configuration.trimTarget))
        }
        if let limit = configuration.countLimit, totals.count > limit {
            try trimSync(toCount: Int(Double(limit) * configuration.trimTarget))
        }
    }

    /// Removes least-recently-used entries until the values take at most `size` bytes.
    func trimSync(toSize size: Int64) throws {
        try index.flushAccess()
        while index.currentTotals.size > size {
            let batch = try index.candidates("SELECT key, file, size FROM entries ORDER BY accessed ASC LIMIT 256", [])
            guard !batch.isEmpty else { return }
            var remaining = index.currentTotals.size
            var victims: [[UInt8]] = []
            for row in batch where remaining > size {
                victims.append(row.key)
                remaining -= row.size
            }
            try removeKeys(victims)
        }
    }

    /// Removes least-recently-used entries until at most `count` remain.
    func trimSync(toCount count: Int) throws {
        try index.flushAccess()
        let excess = index.currentTotals.count - max(0, count)
        guard excess > 0 else { return }
        let victims = try index.candidates("SELECT key, file, size FROM entries ORDER BY accessed ASC LIMIT ?", [.integer(Int64(excess))])
        try removeKeys(victims.map(\.key))
    }

    /// Removes entries last read before `time` (seconds since 1970).
    func trimSync(olderThan time: Double) throws {
        let victims = try index.candidates("SELECT key, file, size FROM entries WHERE accessed < ?", [.real(time)])
        try removeKeys(victims.map(\.key))
    }

    /// Removes least-recently-used entries until the values take at most `size` bytes.
    public func trim(toSize size: Int64) async throws {
        try await run { try self.trimSync(toSize: size) }
    }

    /// Removes least-recently-used entries until at most `count` remain.
    public func trim(toCount count: Int) async throws {
        try await run { try self.trimSync(toCount: count) }
    }

    /// Removes entries not read for longer than `age`.
    public func trim(toAge age: Duration) async throws {
        try await run {
            try self.index.flushAccess()
            try self.trimSync(olderThan: self.configuration.now().timeIntervalSince1970 - age.seconds)
        }
    }

    // MARK: - Periodic maintenance

    /// Enforces the limits now (the periodic task does the same every interval).
    public func performMaintenance() async throws {
        try await run {
            try self.index.refreshTotals()
            try self.enforceLimits()
        }
    }

    func startMaintenance() {
        let interval = configuration.maintenanceInterval
        let task = Task.detached(priority: .background) { [weak self] in
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                guard let cache = self else { return }
                try? await cache.performMaintenance()
            }
        }
        maintenance.withLock { $0 = task }
    }

    // MARK: - Repair

    /// Checks every entry against its file and size, removes what is broken, deletes stray
    /// and temporary files, and says what it found.
    public func verify() async throws -> Repair {
        try await run { try self.repair(grace: 0, checkSizes: true) }
    }

    /// Mends what a crash can leave. Files younger than `grace` seconds are spared: another
    /// process may be between renaming a file and committing its row.
    func repair(grace: Double, checkSizes: Bool = false) throws -> Repair {
        var report = Repair()
        let cutoff = configuration.now().addingTimeInterval(-grace)
        for name in FileIO.list(temporaryPath) {
            let path = (temporaryPath as NSString).appendingPathComponent(name)
            if (FileIO.modificationDate(path) ?? .distantPast) <= cutoff {
                FileIO.remove(path)
                report.temporaryFiles += 1
            }
        }
        var broken: [[UInt8]] = []
        for row in try index.fileRows() {
            let path = (dataPath as NSString).appendingPathComponent(row.file)
            guard let size = FileIO.size(path) else {
                broken.append(row.key)
                report.rowsWithoutFiles += 1
                continue
            }
            if checkSizes && size != row.size {
                broken.append(row.key)
                report.sizeMismatches += 1
            }
        }
        try removeKeys(broken)
        let referenced = try index.referencedFiles()
        for name in FileIO.list(dataPath) where !referenced.contains(name) {
            let path = (dataPath as NSString).appendingPathComponent(name)
            if (FileIO.modificationDate(path) ?? .distantPast) <= cutoff {
                FileIO.remove(path)
                report.filesWithoutRows += 1
            }
        }
        try index.refreshTotals()
        return report
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// A read-only directory searched after the main cache: another Magpie cache, or a plain
/// folder of files named as SDImageCache names them.
struct ExtraDirectory: Sendable {
    let url: URL
    let cache: DiskCache?

    init?(url: URL) {
        self.url = url
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("index.sqlite").path) {
            var configuration = DiskCache.Configuration()
            configuration.readOnly = true
            configuration.ageLimit = nil
            guard let cache = try? DiskCache(directory: url, configuration: configuration) else { return nil }
            self.cache = cache
        } else {
            cache = nil
        }
    }

    /// SDImageCache's names: the MD5 of the key, with the URL's path extension when it has one.
    private func candidates(_ key: String) -> [String] {
        let digest = MD5.hex(key)
        var names = [digest]
        let ext = URL(string: key)?.pathExtension ?? ""
        if !ext.isEmpty { names.insert(digest + "." + ext, at: 0) }
        return names.map { url.appendingPathComponent($0).path }
    }

    func data(forKey key: String) throws -> Data? {
        if let cache { return try cache.readData(key) }
        for path in candidates(key) {
            if let data = try FileIO.read(path) { return data }
        }
        return nil
    }

    func contains(_ key: String) -> Bool {
        if let cache { return (try? cache.index.lookup(DiskCache.keyBytes(key))) != nil }
        return candidates(key).contains { FileManager.default.fileExists(atPath: $0) }
    }
}
