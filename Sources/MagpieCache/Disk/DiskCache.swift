public import Foundation
import MagpieSupport

/// A crash-safe cache of byte values on disk: an SQLite index (WAL) plus one file per large
/// value, small values inline in the index (YYDiskCache, SDImageCache).
///
/// Writes are atomic: the value goes to a temporary file, is renamed into place, and only then
/// is its index row committed, so a reader never sees half a value and a crash at any point
/// leaves either the old value or the new one. Opening the cache repairs what a crash left:
/// rows whose files are gone and files no row names. File names are the MD5 of the key plus a
/// random suffix: no path derived from a key reaches the file system.
///
/// Limits (size, count, age, free-space headroom) are enforced least-recently-used first,
/// after writes that pass them and periodically while the cache is open; a trim goes down to
/// ``Configuration/trimTarget`` of the limit so it does not run again on the next write.
///
/// ```swift
/// let cache = try DiskCache(directory: URL(fileURLWithPath: "/var/cache/magpie"))
/// try await cache.setData(data, forKey: url.absoluteString)
/// let hit = try await cache.data(forKey: url.absoluteString)
/// ```
///
/// Safe for many tasks at once and for several processes on one directory. Every method runs
/// its I/O off the caller's thread.
public final class DiskCache: Sendable {
    /// Limits and behaviour; the defaults are written next to each property.
    public struct Configuration: Sendable {
        /// The most bytes of values. 512 MB by default.
        public var sizeLimit: Int64 = 512 * 1024 * 1024
        /// The most entries. No limit (nil) by default.
        public var countLimit: Int?
        /// Entries not read for this long are removed. 7 days by default (SDImageCache's).
        public var ageLimit: Duration? = .seconds(7 * 24 * 3600)
        /// A trim goes down to this share of the limit it enforces. 0.7 by default.
        public var trimTarget: Double = 0.7
        /// Keep at least this many bytes free on the disk, trimming the cache to make room
        /// and refusing a write that would pass it. 0 (no headroom) by default.
        public var minimumFreeSpace: Int64 = 0
        /// Values up to this size live inside the index, not in files. 20 KB by default.
        public var inlineThreshold: Int = 20 * 1024
        /// How often limits are enforced while the cache is open. 60 seconds by default.
        public var maintenanceInterval: Duration = .seconds(60)
        /// Directories searched after this one, read-only: another Magpie cache, or a folder
        /// of files named as SDImageCache names them. None by default.
        public var extraDirectories: [URL] = []
        /// Open without writing anything (reads only). `false` by default.
        public var readOnly = false
        /// fsync each value before it is committed (survives power loss, slower). `false` by
        /// default: a process crash still never leaves a half value.
        public var durableWrites = false
        /// The wall clock for access and expiry times (tests pass their own).
        public var now: @Sendable () -> Date = { Date() }

        /// The defaults.
        public init() {}
    }

    /// What the index knows of one entry.
    public struct Entry: Sendable {
        public var key: String
        public var size: Int64
        public var accessDate: Date
        public var modificationDate: Date
        public var expirationDate: Date?
        public var metadata: Data?
        /// The file holding the value, or nil when it is stored inline.
        public var fileURL: URL?
    }

    /// The cache's directory.
    public let directory: URL
    /// The settings it was opened with.
    public let configuration: Configuration
    let index: IndexStore
    private let queue = DispatchQueue(label: "magpie.disk-cache", attributes: .concurrent)
    private let extras: [ExtraDirectory]
    let maintenance = LockedValue<Task<Void, Never>?>(nil)
    let dataPath: String
    let temporaryPath: String

    /// Opens (creating if needed) the cache in `directory` and repairs what an earlier crash left.
    public init(directory: URL, configuration: Configuration = .init()) throws {
        self.directory = directory
        self.configuration = configuration
        dataPath = directory.appendingPathComponent("data").path
        temporaryPath = directory.appendingPathComponent("tmp").path
        if !configuration.readOnly {
            try FileIO.makeDirectory(dataPath)
            try FileIO.makeDirectory(temporaryPath)
        }
        index = try IndexStore(path: directory.appendingPathComponent("index.sqlite").path, readOnly: configuration.readOnly)
        extras = configuration.extraDirectories.compactMap { ExtraDirectory(url: $0) }
        if !configuration.readOnly {
            _ = try repair(grace: 60)
            startMaintenance()
        }
    }

    deinit {
        maintenance.withLock { $0?.cancel() }
        try? index.flushAccess()
    }

    // MARK: - Running off the caller's thread

    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    private func checkWritable() throws(CacheError) {
        if configuration.readOnly { throw CacheError(.readOnly, path: directory.path, "the cache was opened read-only") }
    }

    static func keyBytes(_ key: String) -> [UInt8] { Array(key.utf8) }
    private var now: Double { configuration.now().timeIntervalSince1970 }

    // MARK: - Reading

    /// The value for `key`, or nil when absent or expired; searched in the extra directories
    /// after this one.
    public func data(forKey key: String) async throws -> Data? {
        try await run { try self.readData(key) }
    }

    func readData(_ key: String) throws -> Data? {
        let bytes = Self.keyBytes(key)
        for attempt in 0..<2 {
            guard let row = try index.lookup(bytes) else { break }
            if let expires = row.expires, expires <= now {
                try removeKeys([bytes])
                return nil
            }
            if let inline = row.inline {
                try index.noteAccess(bytes, at: now)
                return inline
            }
            guard let file = row.file else { break }
            if let data = try FileIO.read((dataPath as NSString).appendingPathComponent(file)) {
                try index.noteAccess(bytes, at: now)
                return data
            }
            // The file went between the lookup and the read: a concurrent overwrite; look again.
            if attempt == 1 { try removeKeys([bytes]) }
        }
        for extra in extras {
            if let data = try extra.data(forKey: key) { return data }
        }
        return nil
    }

    /// Removes the entry for `key` if it has expired; returns whether it did. (Reads hide and
    /// remove expired entries too; this tells a caller that one was there.)
    @discardableResult
    public func removeIfExpired(_ key: String) async throws -> Bool {
        try await run {
            let bytes = Self.keyBytes(key)
            guard let row = try self.index.lookup(bytes), let expires = row.expires, expires <= self.now else { return false }
            try self.removeKeys([bytes])
            return true
        }
    }

    /// What the index holds for `key` (size, dates, expiry, metadata, file), or nil.
    public func entry(forKey key: String) async throws -> Entry? {
        try await run {
            guard let row = try self.index.lookup(Self.keyBytes(key)) else { return nil }
            if let expires = row.expires, expires <= self.now { return nil }
            return Entry(
                key: key, size: row.size, accessDate: Date(timeIntervalSince1970: row.accessed),
                modificationDate: Date(timeIntervalSince1970: row.modified),
                expirationDate: row.expires.map { Date(timeIntervalSince1970: $0) }, metadata: row.metadata,
                fileURL: row.file.map { URL(fileURLWithPath: (self.dataPath as NSString).appendingPathComponent($0)) })
        }
    }

    /// The metadata stored with `key` (HTTP validators, content type), or nil.
    public func metadata(forKey key: String) async throws -> Data? {
        try await entry(forKey: key)?.metadata
    }

    /// Whether an unexpired value for `key` exists here or in an extra directory.
    public func contains(_ key: String) async throws -> Bool {
        try await run {
            if let row = try self.index.lookup(Self.keyBytes(key)) {
                if let expires = row.expires, expires <= self.now { return false }
                return true
            }
            return self.extras.contains { $0.contains(key) }
        }
    }

    /// A file holding the value, for large values read as a stream (nil when absent). Inline
    /// values are written to a temporary file first. The file stays valid until the entry is
    /// overwritten or removed; copy it if you need it longer.
    public func fileURL(forKey key: String) async throws -> URL? {
        guard let entry = try await entry(forKey: key) else { return nil }
        if let url = entry.fileURL { return url }
        guard let data = try await data(forKey: key) else { return nil }
        let url = URL(fileURLWithPath: temporaryPath).appendingPathComponent("read-\(FileIO.uniqueSuffix())")
        try FileIO.writeNew(data, to: url.path, sync: false)
        return url
    }

    // MARK: - Writing

    /// Stores `data` for `key`, replacing any value, with an optional expiry and metadata.
    public func setData(_ data: Data, forKey key: String, expires: Date? = nil, metadata: Data? = nil) async throws {
        try checkWritable()
        try await run { try self.write(data, key: key, expires: expires, metadata: metadata) }
    }

    /// Moves (or copies, across file systems) the file at `source` into the cache for `key`:
    /// large downloads are stored without being read into memory.
    public func setFile(at source: URL, forKey key: String, expires: Date? = nil, metadata: Data? = nil) async throws {
        try checkWritable()
        try await run {
            guard let size = FileIO.size(source.path) else {
                throw CacheError(.io, path: source.path, "no file to store")
            }
            try self.makeRoom(for: size)
            let name = Self.fileName(for: key)
            let target = (self.dataPath as NSString).appendingPathComponent(name)
            if Foundation.rename(source.path, target) != 0 {
                let staging = (self.temporaryPath as NSString).appendingPathComponent(name + ".tmp")
                do {
                    try FileManager.default.copyItem(atPath: source.path, toPath: staging)
                } catch {
                    FileIO.remove(staging)
                    throw CacheError(.io, path: source.path, "cannot copy into the cache: \(error.localizedDescription)")
                }
                try FileIO.rename(staging, target)
            }
            try self.commit(key: key, file: name, inline: nil, size: size, expires: expires, metadata: metadata)
        }
    }

    static func fileName(for key: String) -> String {
        MD5.hex(key) + "-" + FileIO.uniqueSuffix()
    }

    func write(_ data: Data, key: String, expires: Date?, metadata: Data?) throws {
        if data.count <= configuration.inlineThreshold {
            try makeRoom(for: Int64(data.count))
            try commit(key: key, file: nil, inline: data, size: Int64(data.count), expires: expires, metadata: metadata)
            return
        }
        try makeRoom(for: Int64(data.count))
        let name = Self.fileName(for: key)
        let staging = (temporaryPath as NSString).appendingPathComponent(name + ".tmp")
        let target = (dataPath as NSString).appendingPathComponent(name)
        try FileIO.writeNew(data, to: staging, sync: configuration.durableWrites)
        do {
            try FileIO.rename(staging, target)
        } catch {
            FileIO.remove(staging)
            throw error
        }
        do {
            try commit(key: key, file: name, inline: nil, size: Int64(data.count), expires: expires, metadata: metadata)
        } catch {
            FileIO.remove(target)
            throw error
        }
    }

    /// Commits the index row, then removes the file of the value it replaced and trims if a
    /// limit is passed.
    private func commit(key: String, file: String?, inline: Data?, size: Int64, expires: Date?, metadata: Data?) throws {
        let time = now
        let row = IndexStore.Row(
            key: Self.keyBytes(key), file: file, inline: inline, size: size, accessed: time, modified: time,
            expires: expires?.timeIntervalSince1970, metadata: metadata)
        if let old = try index.upsert(row), old != file {
            FileIO.remove((dataPath as NSString).appendingPathComponent(old))
        }
        if overLimits(index.currentTotals) { try enforceLimits() }
    }

    /// Makes sure writing `size` bytes keeps the free-space headroom, trimming if needed.
    private func makeRoom(for size: Int64) throws {
        guard configuration.minimumFreeSpace > 0, let free = FileIO.freeSpace(directory.path) else { return }
        var shortfall = configuration.minimumFreeSpace - (free - size)
        guard shortfall > 0 else { return }
        let totals = index.currentTotals
        try trimSync(toSize: max(0, totals.size - shortfall))
        shortfall = configuration.minimumFreeSpace - ((FileIO.freeSpace(directory.path) ?? free) - size)
        if shortfall > 0 {
            throw CacheError(
                .insufficientSpace, path: directory.path,
                "writing \(ByteCount.format(size)) would leave less than \(ByteCount.format(configuration.minimumFreeSpace)) free")
        }
    }

    // MARK: - Removing

    /// Removes the value for `key`.
    public func removeValue(forKey key: String) async throws {
        try checkWritable()
        try await run { try self.removeKeys([Self.keyBytes(key)]) }
    }

    func removeKeys(_ keys: [[UInt8]]) throws {
        guard !configuration.readOnly else { return }
        for file in try index.delete(keys) {
            FileIO.remove((dataPath as NSString).appendingPathComponent(file))
        }
    }

    /// Removes every value.
    public func removeAll() async throws {
        try checkWritable()
        try await run {
            for file in try self.index.deleteAll() {
                FileIO.remove((self.dataPath as NSString).appendingPathComponent(file))
            }
        }
    }

    // MARK: - Prefix queries (served by the index's key order, not a scan)

    /// Every key starting with `prefix`, in byte order.
    public func keys(withPrefix prefix: String) async throws -> [String] {
        try await run {
            try self.index.keys(withPrefix: Self.keyBytes(prefix)).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// How many keys start with `prefix`.
    public func count(withPrefix prefix: String) async throws -> Int {
        try await keys(withPrefix: prefix).count
    }

    /// Removes every entry whose key starts with `prefix`; returns how many.
    @discardableResult
    public func removeAll(withPrefix prefix: String) async throws -> Int {
        try checkWritable()
        return try await run {
            let keys = try self.index.keys(withPrefix: Self.keyBytes(prefix))
            try self.removeKeys(keys)
            return keys.count
        }
    }

    // MARK: - Totals

    /// The bytes of all values (as of this process's last look at the index).
    public var totalSize: Int64 {
        get async throws {
            try await run {
                try self.index.refreshTotals()
                return self.index.currentTotals.size
            }
        }
    }

    /// The number of entries.
    public var totalCount: Int {
        get async throws {
            try await run {
                try self.index.refreshTotals()
                return self.index.currentTotals.count
            }
        }
    }
}
