import BoothClock
import BoothPorts
import BoothStorage
import BoothSystem
import Glibc
import Synchronization

/// One picture in the index.
/// One change the operator is alerted to (``PictureIndex/recordAlert(_:active:message:at:)``).
public struct AlertRow: Sendable, Equatable, Codable {
    public var id: Int64
    /// Seconds since 1970.
    public var at: Int64
    /// `fault:camera`, `fault:button`, `fault:storage`, `paper-low`, `paper-out`, `printer-unavailable`, `storage-low`,
    /// `camera-battery-low`, `test`.
    public var condition: String
    /// True: it began; false: it ended.
    public var active: Bool
    public var message: String
    public init(id: Int64, at: Int64, condition: String, active: Bool, message: String) {
        self.id = id
        self.at = at
        self.condition = condition
        self.active = active
        self.message = message
    }
}

public struct IndexedPicture: Sendable, Equatable {
    /// Its URL token (``PictureTokens``).
    public var token: String
    /// Its path under `storage.dir`: `2026-12-01/booth-000042-picture.jpg`.
    public var path: String
    /// The session number in its name.
    public var session: Int
    /// 0 for a session's composed picture (`booth-000042-picture.jpg`), else the capture's shot
    /// (`booth-000042-1.jpg`: a one-shot session's capture is its picture).
    public var shot: Int
    /// When it was saved: seconds since 1970 (UTC); the file's mtime when the index was rebuilt.
    public var savedAt: Int64
    /// The file's size in bytes when it was indexed.
    public var bytes: Int64

    public init(token: String, path: String, session: Int, shot: Int = 0, savedAt: Int64, bytes: Int64) {
        self.token = token
        self.path = path
        self.session = session
        self.shot = shot
        self.savedAt = savedAt
        self.bytes = bytes
    }
}

/// The pictures guests can take home, in SQLite (libsqlite3): the daemon records every saved
/// capture and picture (one transaction each: a one-shot session's capture is what its review shows), the gallery reads it at the same time (WAL mode: readers never
/// wait for the writer). `PRAGMA user_version` is the schema's version (``schemaVersion``).
/// A picture removed at a guest's request keeps its row, marked (`removed_at`), so it is not served
/// and a reconcile with the files does not bring it back; the stored file stays.
///
/// All calls are serialized on the connection's lock; they block on SQLite's I/O (a few ms, up to
/// the 2 s busy timeout), so call them from a thread of your own (a picture sink's, the gallery's
/// request threads), never the main loop or the cooperative pool.
public final class PictureIndex: Sendable {
    /// The schema this program writes and reads.
    public static let schemaVersion: Int64 = 1
    /// The database file.
    public let path: String
    /// Opened read-only (the gallery), else for writing (the daemon).
    public let readOnly: Bool
    // `@unchecked`: the connection is used only inside `connection`'s lock. nil after ``remake(photosDir:tokens:folderID:removals:)``
    // closed the old file's and could not open a new one.
    private struct Locked: @unchecked Sendable { var db: SQLiteConnection? }
    private let connection: Mutex<Locked>

    /// Opens the index at `path`. For writing, it is created when missing (its folder must exist),
    /// put in WAL mode, its schema made or checked, and its pages checked (`PRAGMA quick_check`).
    /// For reading (`readOnly`), the file must exist and have this schema.
    /// - Throws: ``IndexError``: `.open` (missing, permission), `.corrupt` (not a database, damaged
    ///   pages: ``openForWriting(path:photosDir:tokens:now:log:)`` moves it aside and rebuilds it),
    ///   `.newerSchema`, `.failed`.
    public init(path: String, readOnly: Bool = false) throws(IndexError) {
        self.path = path
        self.readOnly = readOnly
        connection = Mutex(Locked(db: try PictureIndex.open(path: path, readOnly: readOnly)))
    }

    /// A connection to `path` as ``init(path:readOnly:)`` describes.
    private static func open(path: String, readOnly: Bool) throws(IndexError) -> SQLiteConnection {
        let db = try SQLiteConnection(path: path, readOnly: readOnly)
        let version = try db.integer("PRAGMA user_version")
        if version > PictureIndex.schemaVersion {
            throw IndexError(.newerSchema, "index \(path): schema version \(version) is newer than this program's \(PictureIndex.schemaVersion) (a newer booth wrote it)")
        }
        if readOnly {
            guard version == PictureIndex.schemaVersion else {
                throw IndexError(.open, "index \(path): not made yet (schema version \(version)); the daemon makes it at its start")
            }
        } else {
            let check = try db.text("PRAGMA quick_check") ?? ""
            guard check == "ok" else { throw IndexError(.corrupt, "index \(path): quick_check: \(check)") }
            _ = try db.text("PRAGMA journal_mode = WAL")
            // The gallery reads through a group that may not create files here: the -wal and -shm stay.
            db.persistWAL()
            // FULL: each committed transaction is on the disk before COMMIT returns (WAL's NORMAL may lose the last ones at a power cut).
            try db.execute("PRAGMA synchronous = FULL")
            if version == 0 {
                try db.transaction { () throws(IndexError) in
                    try db.execute("""
                        CREATE TABLE IF NOT EXISTS pictures (
                            token TEXT PRIMARY KEY NOT NULL,
                            path TEXT NOT NULL UNIQUE,
                            session INTEGER NOT NULL,
                            shot INTEGER NOT NULL,
                            saved_at INTEGER NOT NULL,
                            bytes INTEGER NOT NULL,
                            removed_at INTEGER
                        );
                        CREATE INDEX IF NOT EXISTS pictures_saved ON pictures (saved_at);
                        PRAGMA user_version = \(PictureIndex.schemaVersion);
                        """)
                }
            }
            // The list's rule (``listedRule``) asks for a session's other rows; an index of 1.0 made it too.
            try db.execute("CREATE INDEX IF NOT EXISTS pictures_session ON pictures (session)")
            // The operator's alerts (``recordAlert(_:active:message:at:)``): the daemon writes each change, the gallery sends them.
            try db.execute("""
                CREATE TABLE IF NOT EXISTS alerts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    at INTEGER NOT NULL,
                    condition TEXT NOT NULL,
                    active INTEGER NOT NULL,
                    message TEXT NOT NULL
                )
                """)
        }
        return db
    }

    private func with<T>(_ body: (SQLiteConnection) throws(IndexError) -> T) throws(IndexError) -> T {
        try connection.withLock { (l: inout Locked) throws(IndexError) -> T in
            guard let db = l.db else {
                throw IndexError(.open, "index \(path): its file was deleted and could not be made again (photoboothctl gallery rebuild tries again)")
            }
            return try body(db)
        }
    }

    /// True when the file at ``path`` is no longer the one this connection reads and writes: deleted,
    /// renamed or replaced while open (SQLite's unix VFS compares the path's inode with the open
    /// file's: `sqlite3_file_control` with `SQLITE_FCNTL_HAS_MOVED`). Also true when the connection was
    /// closed by a ``remake(photosDir:tokens:folderID:removals:)`` that could not open a new file.
    public func hasMoved() -> Bool {
        connection.withLock { l in l.db?.hasMoved() ?? true }
    }

    /// Makes the index again at ``path`` when its file was deleted or replaced while open
    /// (``hasMoved()``); the daemon's mend, as at its start: the connection to the old file is
    /// closed; the old file's `-wal` and `-shm` at the path are removed (also when another file was renamed
    /// over it: that file is read as it is, not through the old file's log); a file that is not a database or is damaged is moved aside (`.corrupt-<seconds>`);
    /// then the file is opened or made (WAL, the schema) and reconciled, in one transaction, with
    /// the photos under `photosDir` and `removals` (``RemovedPictures``): the same tokens, so every
    /// URL is the same. The old file's alerts are not carried over. Blocks on SQLite and the file
    /// system (a first index of thousands of photos: one transaction).
    /// - Returns: nil when the file is still the open one (nothing done), else the pictures served and taken down now.
    /// - Throws: ``IndexError`` when no file could be made (the folder gone, permission): every call
    ///   then throws `.open` until a later `remake` succeeds.
    public func remake(photosDir: String, tokens: PictureTokens, folderID: String, removals: [String: Int64],
                       now: Int64 = Int64(time(nil))) throws(IndexError) -> (served: Int, removed: Int)? {
        guard !readOnly else { return nil }
        let made = try connection.withLock { (l: inout Locked) throws(IndexError) -> Bool in
            if let db = l.db, !db.hasMoved() { return false }
            // Listed under the lock, as in rebuild: a picture the sink records meanwhile waits and is not lost.
            let files = PictureIndex.pictureFiles(in: photosDir, tokens: tokens, folderID: folderID)
            // Closed first (sqlite3_close_v2): the old file's -wal and -shm are let go before a new file's are made.
            l.db = nil
            // The -wal and -shm at the path are the old file's, whether the path is empty or holds a file renamed
            // over it (that file's own lay beside its old name): kept, the new file would be read through the old
            // file's log (its rows, or a damaged mix). The old file's connections (the gallery's) keep theirs open.
            for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
            let db: SQLiteConnection
            do throws(IndexError) {
                db = try PictureIndex.open(path: path, readOnly: false)
            } catch {
                guard error.kind == .corrupt else { throw error }
                PictureIndex.moveAside(path, now: now)
                db = try PictureIndex.open(path: path, readOnly: false)
            }
            try db.transaction { () throws(IndexError) in
                _ = try PictureIndex.record(files, in: db)
                _ = try PictureIndex.mark(removals, in: db)
            }
            l.db = db
            return true
        }
        return made ? try counts() : nil
    }

    /// Records `picture` (one transaction). A path already indexed with the same token keeps its row;
    /// with another token (another photo under the same name: a folder emptied, its numbers started
    /// again) the row becomes the new photo's, served again, and the old token answers nothing.
    /// - Returns: true when the row is new or changed.
    @discardableResult
    public func record(_ picture: IndexedPicture) throws(IndexError) -> Bool {
        try recordAll([picture]) > 0
    }

    /// ``record(_:)`` for every picture, in one transaction (a rebuild of thousands costs one fsync).
    /// - Returns: the rows new or changed.
    @discardableResult
    public func recordAll(_ pictures: [IndexedPicture]) throws(IndexError) -> Int {
        guard !pictures.isEmpty else { return 0 }
        return try with { db throws(IndexError) in
            try db.transaction { () throws(IndexError) -> Int in try PictureIndex.record(pictures, in: db) }
        }
    }

    /// The upsert of ``recordAll(_:)``, inside the caller's transaction.
    private static func record(_ pictures: [IndexedPicture], in db: SQLiteConnection) throws(IndexError) -> Int {
        var changed = 0
        for picture in pictures {
            try db.query("""
                INSERT INTO pictures (token, path, session, shot, saved_at, bytes) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(path) DO UPDATE SET token = excluded.token, session = excluded.session, shot = excluded.shot,
                    saved_at = excluded.saved_at, bytes = excluded.bytes, removed_at = NULL
                WHERE pictures.token != excluded.token
                """,
                         [.text(picture.token), .text(picture.path), .int(Int64(picture.session)), .int(Int64(picture.shot)),
                          .int(picture.savedAt), .int(picture.bytes)])
            changed += db.changes
        }
        return changed
    }

    /// The marks of ``applyRemovals(_:)``, inside the caller's transaction.
    private static func mark(_ removals: [String: Int64], in db: SQLiteConnection) throws(IndexError) -> Int {
        var marked = 0
        for (token, at) in removals.sorted(by: { $0.key < $1.key }) {
            try db.query("UPDATE pictures SET removed_at = ? WHERE token = ? AND removed_at IS NULL", [.int(at), .text(token)])
            marked += db.changes
        }
        return marked
    }

    /// The picture of `token`, unless removed; nil for an unknown token.
    public func picture(token: String) throws(IndexError) -> IndexedPicture? {
        guard PictureTokens.isWellFormed(token) else { return nil }
        return try with { db throws(IndexError) in
            var found: IndexedPicture?
            try db.query("SELECT token, path, session, shot, saved_at, bytes FROM pictures WHERE token = ? AND removed_at IS NULL", [.text(token)]) { r in
                found = PictureIndex.row(r)
            }
            return found
        }
    }

    /// The picture of `token`, removed or not (for admin look-ups); nil for an unknown token.
    public func any(token: String) throws(IndexError) -> (IndexedPicture, removed: Bool)? {
        guard PictureTokens.isWellFormed(token) else { return nil }
        return try with { db throws(IndexError) in
            var found: (IndexedPicture, Bool)?
            try db.query("SELECT token, path, session, shot, saved_at, bytes, removed_at IS NOT NULL FROM pictures WHERE token = ?", [.text(token)]) { r in
                found = (PictureIndex.row(r), r.int(6) != 0)
            }
            return found
        }
    }

    /// The picture whose path under `storage.dir` is `path`, removed or not (for admin look-ups).
    public func picture(path: String) throws(IndexError) -> (IndexedPicture, removed: Bool)? {
        try with { db throws(IndexError) in
            var found: (IndexedPicture, Bool)?
            try db.query("SELECT token, path, session, shot, saved_at, bytes, removed_at IS NOT NULL FROM pictures WHERE path = ?", [.text(path)]) { r in
                found = (PictureIndex.row(r), r.int(6) != 0)
            }
            return found
        }
    }

    /// The newest `limit` pictures not removed, newest first, from `offset`.
    public func recent(limit: Int, offset: Int = 0) throws(IndexError) -> [IndexedPicture] {
        try with { db throws(IndexError) in
            var out: [IndexedPicture] = []
            try db.query("SELECT token, path, session, shot, saved_at, bytes FROM pictures WHERE removed_at IS NULL ORDER BY saved_at DESC, session DESC LIMIT ? OFFSET ?",
                         [.int(Int64(limit)), .int(Int64(offset))]) { r in
                out.append(PictureIndex.row(r))
            }
            return out
        }
    }

    /// Which rows the gallery's list and slideshow show, one per session: its composed picture
    /// (shot 0), or, for a session with none, its capture when it is the only one (a one-shot
    /// session's capture is its picture). A session's picture taken down hides its captures too.
    static let listedRule = """
        removed_at IS NULL AND (shot = 0 OR (shot = 1 AND NOT EXISTS (SELECT 1 FROM pictures q
            WHERE q.session = pictures.session AND substr(q.path, 1, 11) = substr(pictures.path, 1, 11) AND (q.shot = 0 OR q.shot >= 2))))
        """

    /// The pictures the list shows (``listedRule``), newest first: `limit` of them from `offset`.
    /// `savedSince` (seconds since 1970) leaves out those saved before it (`gallery.expiry`).
    public func listed(limit: Int, offset: Int = 0, savedSince: Int64? = nil) throws(IndexError) -> [IndexedPicture] {
        try with { db throws(IndexError) in
            var out: [IndexedPicture] = []
            try db.query("SELECT token, path, session, shot, saved_at, bytes FROM pictures WHERE saved_at >= ? AND \(PictureIndex.listedRule) "
                         + "ORDER BY saved_at DESC, session DESC LIMIT ? OFFSET ?",
                         [.int(savedSince ?? Int64.min), .int(Int64(limit)), .int(Int64(offset))]) { r in
                out.append(PictureIndex.row(r))
            }
            return out
        }
    }

    /// Every picture the list shows (``listedRule``), newest first by `saved_at`, then by rowid (the
    /// later recorded first): a total order, so a position (a `saved_at` and a rowid) names one
    /// place in it whatever is added before it. Each with its rowid.
    public func listedInOrder() throws(IndexError) -> [(rowid: Int64, picture: IndexedPicture)] {
        try with { db throws(IndexError) in
            var out: [(rowid: Int64, picture: IndexedPicture)] = []
            try db.query("SELECT token, path, session, shot, saved_at, bytes, rowid FROM pictures WHERE \(PictureIndex.listedRule) "
                         + "ORDER BY saved_at DESC, rowid DESC") { r in
                out.append((r.int(6), PictureIndex.row(r)))
            }
            return out
        }
    }

    /// The listed pictures recorded after the row `cursor` (SQLite's rowid: it grows with each new
    /// row), oldest first, at most `limit`, each with its rowid: the slideshow's new pictures.
    public func listed(after cursor: Int64, limit: Int) throws(IndexError) -> [(rowid: Int64, picture: IndexedPicture)] {
        try with { db throws(IndexError) in
            var out: [(Int64, IndexedPicture)] = []
            try db.query("SELECT token, path, session, shot, saved_at, bytes, rowid FROM pictures WHERE rowid > ? AND \(PictureIndex.listedRule) "
                         + "ORDER BY rowid LIMIT ?", [.int(cursor), .int(Int64(limit))]) { r in
                out.append((r.int(6), PictureIndex.row(r)))
            }
            return out
        }
    }

    /// Every picture served (not taken down), oldest first (by rowid): what the sync copies.
    public func served() throws(IndexError) -> [IndexedPicture] {
        try with { db throws(IndexError) in
            var out: [IndexedPicture] = []
            try db.query("SELECT token, path, session, shot, saved_at, bytes FROM pictures WHERE removed_at IS NULL ORDER BY rowid") { r in
                out.append(PictureIndex.row(r))
            }
            return out
        }
    }

    /// Records that `condition` (`fault:camera`, `paper-low`, `test`…) began (`active`) or ended, at
    /// `at` (seconds since 1970), with the operator's words: one row, durably (the index's
    /// `synchronous = FULL`), read by the gallery's ``alerts(after:limit:)``. - Returns: the row's id.
    @discardableResult
    public func recordAlert(_ condition: String, active: Bool, message: String, at: Int64) throws(IndexError) -> Int64 {
        try with { db throws(IndexError) in
            try db.transaction { () throws(IndexError) -> Int64 in
                try db.query("INSERT INTO alerts (at, condition, active, message) VALUES (?, ?, ?, ?)",
                             [.int(at), .text(condition), .int(active ? 1 : 0), .text(message)])
                return try db.integer("SELECT last_insert_rowid()")
            }
        }
    }

    /// The conditions active now, by the latest row of each, with their messages (the daemon's
    /// starting point after a restart: nothing said twice). `test` rows are never active.
    public func activeAlerts() throws(IndexError) -> [String: String] {
        try with { db throws(IndexError) in
            var out: [String: String] = [:]
            try db.query("SELECT condition, active, message FROM alerts WHERE id IN (SELECT max(id) FROM alerts GROUP BY condition)") { r in
                if r.int(1) != 0 && r.text(0) != "test" { out[r.text(0)] = r.text(2) }
            }
            return out
        }
    }

    /// The rows that began the conditions active now (each condition's latest row, when it is a
    /// beginning), oldest first: what a gallery starting without a cursor announces. `test` rows are
    /// never active; none from an index made before the alerts table.
    public func activeAlertRows() throws(IndexError) -> [AlertRow] {
        try with { db throws(IndexError) in
            guard try db.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alerts'") > 0 else { return [] }
            var out: [AlertRow] = []
            try db.query("SELECT id, at, condition, active, message FROM alerts WHERE id IN (SELECT max(id) FROM alerts GROUP BY condition) "
                         + "AND active != 0 AND condition != 'test' ORDER BY id") { r in
                out.append(AlertRow(id: r.int(0), at: r.int(1), condition: r.text(2), active: r.int(3) != 0, message: r.text(4)))
            }
            return out
        }
    }

    /// The alert rows after id `cursor`, oldest first, at most `limit`; none from an index made
    /// before the alerts table (an older daemon's).
    public func alerts(after cursor: Int64, limit: Int) throws(IndexError) -> [AlertRow] {
        try with { db throws(IndexError) in
            guard try db.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alerts'") > 0 else { return [] }
            var out: [AlertRow] = []
            try db.query("SELECT id, at, condition, active, message FROM alerts WHERE id > ? ORDER BY id LIMIT ?", [.int(cursor), .int(Int64(limit))]) { r in
                out.append(AlertRow(id: r.int(0), at: r.int(1), condition: r.text(2), active: r.int(3) != 0, message: r.text(4)))
            }
            return out
        }
    }

    /// The highest alert id (0 with none, or no alerts table).
    public func lastAlertID() throws(IndexError) -> Int64 {
        try with { db throws(IndexError) in
            guard try db.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alerts'") > 0 else { return 0 }
            return try db.integer("SELECT coalesce(max(id), 0) FROM alerts")
        }
    }

    /// The highest rowid in the index (0 when empty): the slideshow's cursor. It falls when the
    /// index was made again (``rebuild(photosDir:tokens:folderID:removals:)``, a damaged file rebuilt).
    public func lastRowID() throws(IndexError) -> Int64 {
        try with { db throws(IndexError) in try db.integer("SELECT coalesce(max(rowid), 0) FROM pictures") }
    }

    private static func row(_ r: SQLiteConnection.Row) -> IndexedPicture {
        IndexedPicture(token: r.text(0), path: r.text(1), session: Int(r.int(2)), shot: Int(r.int(3)), savedAt: r.int(4), bytes: r.int(5))
    }

    /// Files served (not removed), and removed.
    public func counts() throws(IndexError) -> (served: Int, removed: Int) {
        try with { db throws(IndexError) in
            (Int(try db.integer("SELECT count(*) FROM pictures WHERE removed_at IS NULL")),
             Int(try db.integer("SELECT count(*) FROM pictures WHERE removed_at IS NOT NULL")))
        }
    }

    /// Marks the picture of `token` removed at `at` (seconds since 1970): no longer served; the file stays.
    /// - Returns: false when no such picture is served.
    @discardableResult
    public func remove(token: String, at: Int64) throws(IndexError) -> Bool {
        guard PictureTokens.isWellFormed(token) else { return false }
        return try with { db throws(IndexError) in
            try db.transaction { () throws(IndexError) -> Bool in
                try db.query("UPDATE pictures SET removed_at = ? WHERE token = ? AND removed_at IS NULL", [.int(at), .text(token)])
                return db.changes > 0
            }
        }
    }

    /// Marks every picture of `removals` (token → when, seconds since 1970) removed, in one
    /// transaction: the removals kept beside the index (``RemovedPictures``) put back into an index
    /// made anew. Tokens the index lacks are skipped.
    /// - Returns: the rows newly marked.
    @discardableResult
    public func applyRemovals(_ removals: [String: Int64]) throws(IndexError) -> Int {
        guard !removals.isEmpty else { return 0 }
        return try with { db throws(IndexError) in
            try db.transaction { () throws(IndexError) -> Int in try PictureIndex.mark(removals, in: db) }
        }
    }

    /// Makes the index again from the files under `photosDir`, in place and in one transaction
    /// (readers see the old rows or the new, never none; the files are listed under the index's
    /// lock, so a picture the daemon records meanwhile waits and is not lost): every row dropped,
    /// every capture and picture file added with its token (the same as before: they come from the
    /// secret), then marked removed again: the index's own marks and `removals`. A date folder or
    /// picture that is a symbolic link is skipped (``pictureFiles(in:tokens:folderID:log:)``), said in `log`.
    /// - Returns: the rows now in the index, served and removed.
    public func rebuild(photosDir: String, tokens: PictureTokens, folderID: String,
                        removals: [String: Int64], log: Logger? = nil) throws(IndexError) -> (served: Int, removed: Int) {
        try with { db throws(IndexError) in
            let files = PictureIndex.pictureFiles(in: photosDir, tokens: tokens, folderID: folderID, log: log)
            try db.transaction { () throws(IndexError) in
                var marks = removals
                try db.query("SELECT token, removed_at FROM pictures WHERE removed_at IS NOT NULL", []) { r in
                    if marks[r.text(0)] == nil { marks[r.text(0)] = r.int(1) }
                }
                try db.execute("DELETE FROM pictures")
                _ = try PictureIndex.record(files, in: db)
                _ = try PictureIndex.mark(marks, in: db)
            }
        }
        return try counts()
    }

    /// Changes by other connections since this one's last look (`PRAGMA data_version`): a reader
    /// compares it between polls to see the daemon's new pictures.
    public func dataVersion() throws(IndexError) -> Int64 {
        try with { db throws(IndexError) in try db.integer("PRAGMA data_version") }
    }

    /// Adds every capture and picture file under `photosDir` (date folders, `booth-NNNNNN-K.jpg`,
    /// `booth-NNNNNN-picture.jpg`) that the index lacks, with its token, its session and its file's mtime; a removed picture stays removed.
    /// - Returns: the pictures added.
    @discardableResult
    public func reconcile(photosDir: String, tokens: PictureTokens, folderID: String) throws(IndexError) -> Int {
        try reconcile(photosDir: photosDir, tokens: tokens, folderID: folderID, removals: [:]).added
    }

    /// ``reconcile(photosDir:tokens:folderID:)`` and ``applyRemovals(_:)`` in one transaction: an
    /// index made anew never serves, even for a moment, a picture taken down earlier. A symbolic
    /// link is skipped, said in `log`.
    public func reconcile(photosDir: String, tokens: PictureTokens, folderID: String,
                          removals: [String: Int64], log: Logger? = nil) throws(IndexError) -> (added: Int, marked: Int) {
        let files = PictureIndex.pictureFiles(in: photosDir, tokens: tokens, folderID: folderID, log: log)
        guard !files.isEmpty || !removals.isEmpty else { return (0, 0) }
        return try with { db throws(IndexError) in
            try db.transaction { () throws(IndexError) -> (added: Int, marked: Int) in
                (try PictureIndex.record(files, in: db), try PictureIndex.mark(removals, in: db))
            }
        }
    }

    /// The capture and picture files under `photosDir` as index rows, oldest session first. Only
    /// what lies in `photosDir` itself (`lstat`): a date folder or picture that is a symbolic link
    /// (to a folder elsewhere, to any file) or not a plain folder or file is skipped, and `log`
    /// says how many and names the first 5 (the gallery could serve a file outside storage.dir).
    static func pictureFiles(in photosDir: String, tokens: PictureTokens, folderID: String, log: Logger? = nil) -> [IndexedPicture] {
        var out: [IndexedPicture] = []
        var skipped: [String] = []
        for folder in listDirectory(photosDir).sorted() where PhotoStore.isDateFolder(folder) {
            var fst = stat()
            guard lstat("\(photosDir)/\(folder)", &fst) == 0 else { continue }
            guard (fst.st_mode & S_IFMT) == S_IFDIR else { skipped.append(folder); continue }
            for name in listDirectory("\(photosDir)/\(folder)") {
                guard let shot = PictureIndex.shot(in: name) else { continue }
                var st = stat()
                guard lstat("\(photosDir)/\(folder)/\(name)", &st) == 0 else { continue }
                guard (st.st_mode & S_IFMT) == S_IFREG else { skipped.append("\(folder)/\(name)"); continue }
                guard st.st_size > 0 else { continue }
                let relative = "\(folder)/\(name)"
                out.append(IndexedPicture(token: tokens.token(for: PictureTokens.identity(folder: folderID, path: relative, bytes: Int64(st.st_size))),
                                          path: relative,
                                          session: PhotoFileName.sessionNumber(in: name) ?? 0, shot: shot,
                                          savedAt: Int64(st.st_mtim.tv_sec), bytes: Int64(st.st_size)))
            }
        }
        if !skipped.isEmpty {
            log?.warning("gallery: \(skipped.count) date folder\(skipped.count == 1 ? " or picture is a symbolic link or not a plain one" : "s or pictures are symbolic links or not plain ones")"
                         + " under \(photosDir), so not indexed (a picture is served only from inside storage.dir): "
                         + skipped.prefix(5).joined(separator: ", ") + (skipped.count > 5 ? ", …" : ""))
        }
        return out.sorted { ($0.session, $0.shot) < ($1.session, $1.shot) }
    }

    /// 0 for `booth-N-picture.jpg`, K for `booth-N-K.jpg` (K 1 to 99), nil for any other name
    /// (temps, kept leftovers, other files).
    public static func shot(in name: String) -> Int? {
        guard PhotoFileName.sessionNumber(in: name) != nil else { return nil }
        if PhotoFileName.isPicture(name) { return 0 }
        let stem = name.dropLast(4)
        guard let dash = stem.lastIndex(of: "-") else { return nil }
        let digits = stem[stem.index(after: dash)...]
        guard (1...2).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let k = Int(digits), k >= 1 else { return nil }
        return k
    }

    /// Moves a damaged index at `path` aside as `<path>.corrupt-<now>` (seconds since 1970), with its
    /// `-wal` and `-shm` (`rename(2)` each; one that is missing or cannot be moved is left as it is), so a
    /// new file can be made at `path`. - Returns: the name it was moved to.
    @discardableResult
    static func moveAside(_ path: String, now: Int64) -> String {
        let aside = "\(path).corrupt-\(now)"
        rename(path, aside)
        for suffix in ["-wal", "-shm"] { rename(path + suffix, aside + suffix) }
        return aside
    }

    /// The daemon's index: opened for writing, or, when it is not a database or damaged, moved aside
    /// (`index.sqlite.corrupt-<seconds since 1970>`, with its -wal and -shm) and made anew; then
    /// reconciled with the picture files (the same tokens: they come from the secret) and `removals`
    /// (``RemovedPictures``) marked again. nil when even
    /// a new one cannot be made (logged; the booth runs without its gallery).
    public static func openForWriting(path: String, photosDir: String, tokens: PictureTokens, folderID: String,
                                      removals: [String: Int64] = [:], now: Int64 = Int64(time(nil)), log: Logger) -> PictureIndex? {
        var index: PictureIndex?
        do {
            index = try PictureIndex(path: path)
        } catch where error.kind == .corrupt {
            let aside = moveAside(path, now: now)
            log.warning("gallery: \(error); moved aside as \(aside) and made anew from the photos (the same URLs)")
        } catch {
            log.error("gallery: \(error); the gallery has no index (guests cannot get their photos)")
            return nil
        }
        do {
            let opened = try index ?? PictureIndex(path: path)
            let (added, marked) = try opened.reconcile(photosDir: photosDir, tokens: tokens, folderID: folderID, removals: removals, log: log)
            if added > 0 { log.notice("gallery: index \(path): \(added) photos on disk added") }
            if marked > 0 { log.notice("gallery: index \(path): \(marked) photos taken down earlier marked again") }
            return opened
        } catch {
            log.error("gallery: \(error); the gallery has no index (guests cannot get their photos)")
            return nil
        }
    }
}
