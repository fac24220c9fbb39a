import CSQLite
import Glibc

/// A failed SQLite call or an index that cannot be used, with the words to log.
public struct IndexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in the terms an operator acts on.
    public enum Kind: Sendable, Equatable {
        /// The file could not be opened (missing for a reader, permission, a directory that is not there).
        case open
        /// The file is not an SQLite database, or its pages are damaged (SQLITE_NOTADB, SQLITE_CORRUPT,
        /// `PRAGMA quick_check` not ok): the daemon moves it aside and rebuilds it from the photos.
        case corrupt
        /// Its `user_version` is newer than this program knows (a newer booth wrote it).
        case newerSchema
        /// Another connection held the lock longer than the busy timeout.
        case busy
        /// Any other failed call.
        case failed
    }

    public var kind: Kind
    /// `index /var/lib/photobooth/gallery/index.sqlite: prepare "SELECT …": no such table: pictures`.
    public var message: String
    public var description: String { message }

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// From SQLite's result code: SQLITE_CORRUPT and SQLITE_NOTADB are `.corrupt`, SQLITE_BUSY and
    /// SQLITE_LOCKED `.busy`, SQLITE_CANTOPEN and SQLITE_PERM `.open`.
    static func from(code: Int32, _ message: String) -> IndexError {
        switch code & 0xff {
        case SQLITE_CORRUPT, SQLITE_NOTADB: IndexError(.corrupt, message)
        case SQLITE_BUSY, SQLITE_LOCKED: IndexError(.busy, message)
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY: IndexError(.open, message)
        default: IndexError(.failed, message)
        }
    }
}

/// One SQLite connection (`sqlite3_open_v2`), used by one thread at a time (the caller's: the
/// index's users serialize their calls). Statements are prepared per call; the index's queries are
/// few and small.
final class SQLiteConnection {
    let path: String
    private var db: OpaquePointer?

    /// Opens `path`: read-write (created when missing) or read-only (`SQLITE_OPEN_READONLY`; the file
    /// must exist). A busy timeout of `busyMilliseconds` (`sqlite3_busy_timeout`) lets a reader wait
    /// out the writer's short transactions.
    /// - Throws: ``IndexError`` (`.open`, `.corrupt`) with SQLite's message.
    init(path: String, readOnly: Bool, busyMilliseconds: Int32 = 2000) throws(IndexError) {
        self.path = path
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let why = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close(handle)
            throw IndexError.from(code: rc, "index \(path): open: \(why)")
        }
        db = handle
        sqlite3_busy_timeout(handle, busyMilliseconds)
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { sqlite3_close_v2(db) }

    private func failure(_ rc: Int32, _ step: String) -> IndexError {
        let why = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return IndexError.from(code: rc, "index \(path): \(step): \(why)")
    }

    /// Runs `sql` (one or more statements without results; `sqlite3_exec`).
    func execute(_ sql: String) throws(IndexError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw failure(rc, "\"\(sql.prefix(60))\"") }
    }

    /// A value bound to a statement's `?`.
    enum Value {
        case int(Int64)
        case text(String)
        case null
    }

    /// Runs one statement with `values` bound in order and calls `row` for each result row.
    func query(_ sql: String, _ values: [Value] = [], row: (Row) throws(IndexError) -> Void = { _ in }) throws(IndexError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw failure(rc, "prepare \"\(sql.prefix(60))\"") }
        defer { sqlite3_finalize(statement) }
        // SQLITE_TRANSIENT: SQLite copies the text before the call returns.
        let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let b: Int32
            switch value {
            case .int(let v): b = sqlite3_bind_int64(statement, index, v)
            case .text(let s): b = sqlite3_bind_text(statement, index, s, -1, transient)
            case .null: b = sqlite3_bind_null(statement, index)
            }
            guard b == SQLITE_OK else { throw failure(b, "bind") }
        }
        while true {
            let s = sqlite3_step(statement)
            if s == SQLITE_DONE { return }
            guard s == SQLITE_ROW else { throw failure(s, "step \"\(sql.prefix(60))\"") }
            try row(Row(statement: statement))
        }
    }

    /// The single integer `sql` answers (`PRAGMA user_version`, `SELECT count(*)`); 0 for no row.
    func integer(_ sql: String, _ values: [Value] = []) throws(IndexError) -> Int64 {
        var v: Int64 = 0
        try query(sql, values) { r in v = r.int(0) }
        return v
    }

    /// The first column of the first row as text; nil for no row.
    func text(_ sql: String) throws(IndexError) -> String? {
        var v: String?
        try query(sql) { r in if v == nil { v = r.text(0) } }
        return v
    }

    /// `body` inside `BEGIN IMMEDIATE … COMMIT` (rolled back when it throws): one transaction per write.
    func transaction<T>(_ body: () throws(IndexError) -> T) throws(IndexError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Keeps the -wal and -shm files when the last connection closes (`SQLITE_FCNTL_PERSIST_WAL`), so a
    /// reader that may not create files in the folder can still open the database in WAL mode.
    func persistWAL() {
        var on: Int32 = 1
        _ = sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    /// True when the database file's path no longer names the open file: deleted, renamed or replaced
    /// (`sqlite3_file_control` with `SQLITE_FCNTL_HAS_MOVED`; false when the VFS cannot tell).
    func hasMoved() -> Bool {
        var moved: Int32 = 0
        return sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE (`sqlite3_changes`).
    var changes: Int { Int(sqlite3_changes(db)) }

    /// One result row's columns, valid inside the `row` closure only.
    struct Row {
        let statement: OpaquePointer
        func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func text(_ column: Int32) -> String {
            guard let p = sqlite3_column_text(statement, column) else { return "" }
            return String(cString: p)
        }
    }
}
