import CSQLite3
import Foundation

/// A small wrapper of the system SQLite, used under the owner's lock.
///
/// Why not GRDB: the index is four statements; the system library keeps the networking
/// layer's build light and gives direct control of WAL, the busy timeout and statement reuse.
final class SQLiteConnection {
    let path: String
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    init(path: String, readOnly: Bool) throws(CacheError) {
        self.path = path
        var db: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let status = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw CacheError(.cannotOpen, path: path, "cannot open the cache index: \(message)", code: status)
        }
        handle = db
        // Another process may hold the write lock briefly; wait for it rather than fail.
        sqlite3_busy_timeout(db, 15_000)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    func error(_ what: String, _ status: Int32) -> CacheError {
        let message = String(cString: sqlite3_errmsg(handle))
        let kind: CacheError.Kind = status == SQLITE_FULL ? .diskFull : status == SQLITE_READONLY ? .readOnly : .database
        return CacheError(kind, path: path, "\(what): \(message)", code: status)
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(CacheError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error \(status)"
            sqlite3_free(message)
            throw CacheError(status == SQLITE_FULL ? .diskFull : .database, path: path, "\(sql.prefix(40))…: \(text)", code: status)
        }
    }

    /// A value bound to a statement parameter.
    enum Value {
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])
        case data(Data)
        case null
    }

    /// One result row.
    struct Row {
        fileprivate let statement: OpaquePointer

        func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
        func text(_ column: Int32) -> String? {
            guard let pointer = sqlite3_column_text(statement, column) else { return nil }
            return String(cString: pointer)
        }
        func data(_ column: Int32) -> Data? {
            guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return Data() }
            return Data(bytes: pointer, count: count)
        }
    }

    /// Runs `sql` with `values`, calling `row` for each result row (stop by returning false).
    func query(_ sql: String, _ values: [Value] = [], row: (Row) throws -> Bool = { _ in true }) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .integer(let v): status = sqlite3_bind_int64(statement, index, v)
            case .real(let v): status = sqlite3_bind_double(statement, index, v)
            case .text(let v): status = sqlite3_bind_text(statement, index, v, -1, csqlite3_transient())
            case .blob(let v): status = v.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), csqlite3_transient()) }
            case .data(let v): status = v.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), csqlite3_transient()) }
            case .null: status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw error("bind", status) }
        }
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw error("step", status) }
            if try !row(Row(statement: statement)) { return }
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    private func prepared(_ sql: String) throws(CacheError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error("prepare", status) }
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in an immediate transaction (taking the write lock at once, so two
    /// processes queue instead of deadlocking), committing on success.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
