import CSQLite

/// What the gallery's sync has copied to a remote (`gallery.sync_remote`), by picture token: a
/// SQLite file of the gallery's own in `gallery.state` (the index is the daemon's and read-only to
/// the gallery), one row a picture at a remote. Written with `synchronous = FULL`: a copy recorded
/// is still recorded after a power cut, so it is not sent again. Used from one thread (the sync's).
public final class SyncLedger {
    public let path: String
    private let db: SQLiteConnection

    /// Opens `path`, created with its table when missing (its folder must exist).
    /// - Throws: ``IndexError`` (`.open`, `.corrupt`, `.failed`) with SQLite's message.
    public init(path: String) throws(IndexError) {
        self.path = path
        db = try SQLiteConnection(path: path, readOnly: false)
        try db.execute("PRAGMA synchronous = FULL")
        try db.execute("""
            CREATE TABLE IF NOT EXISTS synced (
                remote TEXT NOT NULL,
                token TEXT NOT NULL,
                copied_at INTEGER NOT NULL,
                PRIMARY KEY (remote, token)
            )
            """)
    }

    /// The tokens recorded as copied to `remote`.
    public func copied(to remote: String) throws(IndexError) -> Set<String> {
        var out: Set<String> = []
        try db.query("SELECT token FROM synced WHERE remote = ?", [.text(remote)]) { r in out.insert(r.text(0)) }
        return out
    }

    /// Records `token` as copied to `remote` at `at` (seconds since 1970), durably.
    public func recordCopied(_ token: String, to remote: String, at: Int64) throws(IndexError) {
        try db.query("INSERT OR REPLACE INTO synced (remote, token, copied_at) VALUES (?, ?, ?)", [.text(remote), .text(token), .int(at)])
    }

    /// Forgets `token` at `remote` (deleted there), durably.
    public func forget(_ token: String, at remote: String) throws(IndexError) {
        try db.query("DELETE FROM synced WHERE remote = ? AND token = ?", [.text(remote), .text(token)])
    }
}
