import Foundation

/// The SQLite index of a disk cache, its statements, and what this process knows of it
/// (totals, access times not yet written). Every method takes the lock; callers never hold it
/// across file I/O.
final class IndexStore: @unchecked Sendable {  // `connection` and the state are used only under `lock`
    private let lock = NSLock()
    private let connection: SQLiteConnection
    let readOnly: Bool
    private var pendingAccess: [[UInt8]: Double] = [:]
    private(set) var totals = (count: 0, size: Int64(0))

    static let schema = """
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = NORMAL;
        CREATE TABLE IF NOT EXISTS entries (
            key BLOB PRIMARY KEY,
            file TEXT,
            inline BLOB,
            size INTEGER NOT NULL,
            accessed REAL NOT NULL,
            modified REAL NOT NULL,
            expires REAL,
            metadata BLOB
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS entries_accessed ON entries(accessed);
        """

    init(path: String, readOnly: Bool) throws {
        self.readOnly = readOnly
        connection = try SQLiteConnection(path: path, readOnly: readOnly)
        if !readOnly { try connection.execute(Self.schema) }
        try refreshTotals()
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// One row of the index.
    struct Row: Sendable {
        var key: [UInt8]
        var file: String?
        var inline: Data?
        var size: Int64
        var accessed: Double
        var modified: Double
        var expires: Double?
        var metadata: Data?
    }

    private static func row(_ key: [UInt8], _ r: SQLiteConnection.Row) -> Row {
        Row(key: key, file: r.text(0), inline: r.isNull(1) ? nil : r.data(1), size: r.int(2), accessed: r.double(3),
            modified: r.double(4), expires: r.isNull(5) ? nil : r.double(5), metadata: r.data(6))
    }

    func lookup(_ key: [UInt8]) throws -> Row? {
        try locked {
            var found: Row?
            try connection.query(
                "SELECT file, inline, size, accessed, modified, expires, metadata FROM entries WHERE key = ?", [.blob(key)]
            ) { r in
                found = Self.row(key, r)
                return false
            }
            return found
        }
    }

    /// Inserts or replaces `row`; returns the file of the row it replaced, if any.
    func upsert(_ row: Row) throws -> String? {
        try locked {
            try connection.transaction {
                var old: (file: String?, size: Int64)?
                try connection.query("SELECT file, size FROM entries WHERE key = ?", [.blob(row.key)]) { r in
                    old = (r.text(0), r.int(1))
                    return false
                }
                try connection.query(
                    "INSERT OR REPLACE INTO entries (key, file, inline, size, accessed, modified, expires, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [.blob(row.key), row.file.map { .text($0) } ?? .null, row.inline.map { .data($0) } ?? .null,
                     .integer(row.size), .real(row.accessed), .real(row.modified), row.expires.map { .real($0) } ?? .null,
                     row.metadata.map { .data($0) } ?? .null])
                pendingAccess[row.key] = nil
                if let old {
                    totals.size += row.size - old.size
                } else {
                    totals.count += 1
                    totals.size += row.size
                }
                return old?.file
            }
        }
    }

    /// Removes the rows for `keys`; returns their files.
    func delete(_ keys: [[UInt8]]) throws -> [String] {
        guard !keys.isEmpty else { return [] }
        return try locked {
            try connection.transaction {
                var files: [String] = []
                for key in keys {
                    var old: (file: String?, size: Int64)?
                    try connection.query("SELECT file, size FROM entries WHERE key = ?", [.blob(key)]) { r in
                        old = (r.text(0), r.int(1))
                        return false
                    }
                    guard let old else { continue }
                    try connection.query("DELETE FROM entries WHERE key = ?", [.blob(key)])
                    if let file = old.file { files.append(file) }
                    totals.count -= 1
                    totals.size -= old.size
                    pendingAccess[key] = nil
                }
                return files
            }
        }
    }

    /// Deletes every row; returns their files.
    func deleteAll() throws -> [String] {
        try locked {
            try connection.transaction {
                var files: [String] = []
                try connection.query("SELECT file FROM entries WHERE file IS NOT NULL") { r in
                    if let file = r.text(0) { files.append(file) }
                    return true
                }
                try connection.execute("DELETE FROM entries")
                totals = (0, 0)
                pendingAccess.removeAll()
                return files
            }
        }
    }

    /// Notes a read. Access times reach the index in batches (at maintenance, before a trim,
    /// on close, or every 4,096 reads), so a read never waits for a write transaction.
    func noteAccess(_ key: [UInt8], at time: Double) throws {
        let flush = locked { () -> Bool in
            pendingAccess[key] = time
            return pendingAccess.count >= 4096
        }
        if flush { try flushAccess() }
    }

    /// Writes the noted access times.
    func flushAccess() throws {
        guard !readOnly else { return }
        try locked {
            guard !pendingAccess.isEmpty else { return }
            let pending = pendingAccess
            pendingAccess.removeAll()
            try connection.transaction {
                for (key, time) in pending {
                    try connection.query("UPDATE entries SET accessed = ? WHERE key = ? AND accessed < ?", [.real(time), .blob(key), .real(time)])
                }
            }
        }
    }

    /// Re-reads the count and size, which other processes may have changed.
    func refreshTotals() throws {
        try locked {
            try connection.query("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries") { r in
                totals = (Int(r.int(0)), r.int(1))
                return false
            }
        }
    }

    var currentTotals: (count: Int, size: Int64) { locked { totals } }

    /// Rows in `sql` order (key, file, size), for trimming.
    func candidates(_ sql: String, _ values: [SQLiteConnection.Value]) throws -> [(key: [UInt8], file: String?, size: Int64)] {
        try locked {
            var rows: [(key: [UInt8], file: String?, size: Int64)] = []
            try connection.query(sql, values) { r in
                rows.append(([UInt8](r.data(0) ?? Data()), r.text(1), r.int(2)))
                return true
            }
            return rows
        }
    }

    /// Every key starting with `prefix`, by a range scan of the primary key.
    func keys(withPrefix prefix: [UInt8]) throws -> [[UInt8]] {
        try locked {
            var keys: [[UInt8]] = []
            let collect: (SQLiteConnection.Row) -> Bool = { r in
                keys.append([UInt8](r.data(0) ?? Data()))
                return true
            }
            if let upper = Self.upperBound(prefix) {
                try connection.query("SELECT key FROM entries WHERE key >= ? AND key < ? ORDER BY key", [.blob(prefix), .blob(upper)], row: collect)
            } else {
                try connection.query("SELECT key FROM entries WHERE key >= ? ORDER BY key", [.blob(prefix)], row: collect)
            }
            return keys
        }
    }

    /// The smallest byte string greater than every string starting with `prefix`, or nil.
    static func upperBound(_ prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }

    /// Every file name the index refers to.
    func referencedFiles() throws -> Set<String> {
        try locked {
            var files = Set<String>()
            try connection.query("SELECT file FROM entries WHERE file IS NOT NULL") { r in
                if let file = r.text(0) { files.insert(file) }
                return true
            }
            return files
        }
    }

    /// Every row with a file, for verification: key, file, size.
    func fileRows() throws -> [(key: [UInt8], file: String, size: Int64)] {
        try candidates("SELECT key, file, size FROM entries WHERE file IS NOT NULL", []).compactMap { row in
            row.file.map { (row.key, $0, row.size) }
        }
    }
}
