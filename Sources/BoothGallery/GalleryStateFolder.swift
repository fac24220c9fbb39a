import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import Glibc

/// `gallery.state`: what the gallery must not lose (the sync ledger `sync.sqlite`, the alerts'
/// cursor `alerts-cursor`, its own alerts not sent yet `alerts-own.json`, `sync-behind` while that
/// alert stands), apart from `gallery.cache`, which holds only what can be made again
/// (thumbnails, rclone's HOME and cache) and is safe to empty.
public enum GalleryStateFolder {
    /// Moves `name` from `cacheDir` into `stateDir` when `stateDir` has none and `cacheDir` has one
    /// (an older gallery kept it in the cache: an upgrade loses nothing), and makes `stateDir`
    /// (mode 0700) when missing. `rename(2)`; across file systems (`EXDEV`) a durable copy
    /// (``AtomicFile/write(_:to:durable:replace:mode:syncDirectory:)``, mode 0600), then `unlink(2)`
    /// of the old one; `stateDir` is fsynced after a rename. Call it before the file is opened, on the
    /// thread that uses it.
    /// - Returns: whether a file was moved.
    /// - Throws: ``FileError`` naming the call (`mkdir`, `rename`, `open`, `fsync`…) and the path.
    @discardableResult
    public static func adopt(_ name: String, from cacheDir: String, into stateDir: String) throws(FileError) -> Bool {
        try makeDirectories(stateDir)
        let old = "\(cacheDir)/\(name)", new = "\(stateDir)/\(name)"
        guard old != new, access(new, F_OK) != 0, errno == ENOENT, access(old, F_OK) == 0 else { return false }
        if rename(old, new) == 0 {
            try AtomicFile.syncDirectory(stateDir)
            return true
        }
        guard errno == EXDEV else { throw FileError(call: "rename", errno: errno, path: old) }
        let bytes = try AtomicFile.read(old)
        try AtomicFile.write(bytes, to: new, durable: true, replace: false, mode: 0o600)
        guard unlink(old) == 0 || errno == ENOENT else { throw FileError(call: "unlink", errno: errno, path: old) }
        return true
    }

    /// ``adopt(_:from:into:)`` for the sync ledger, a SQLite file: opened first where it is
    /// (``SyncLedger``), so a transaction a crash left in its journal is rolled back into it before
    /// the file alone is moved.
    /// - Throws: ``FileError`` from the move; an ``IndexError`` opening the old ledger is thrown as is.
    @discardableResult
    public static func adoptLedger(from cacheDir: String, into stateDir: String) throws -> Bool {
        let old = "\(cacheDir)/\(GallerySync.ledgerName)"
        if access("\(stateDir)/\(GallerySync.ledgerName)", F_OK) != 0, access(old, F_OK) == 0 {
            _ = try SyncLedger(path: old)  // closed again at once
        }
        return try adopt(GallerySync.ledgerName, from: cacheDir, into: stateDir)
    }
}
