import CSysShims
import FoundationEssentials
import Glibc

/// Durable and atomic file writes: a temp file in the same directory, written whole, fsynced,
/// renamed into place, and the directory fsynced, so a crash or power cut leaves either the
/// old state or the new one, and a failure (ENOSPC included) leaves no partial file.
public enum AtomicFile {
    /// The encoder of the JSON files written with ``write(_:to:durable:replace:syncDirectory:)`` (the
    /// print journal, the stats): keys sorted, slashes unescaped, pretty when `pretty`.
    public static func jsonEncoder(pretty: Bool = true) -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// Prefix of temp files; leftovers are removed (on vfat and exFAT kept) by ``sweepLeftoverTemps(in:fileSystem:)``.
    public static let tempPrefix = ".tmp-"
    /// The last part of this process's temp names: its pid and a random tag, `4242-9f3ac1d0`, the same for the
    /// whole run. The tag tells this run's temps (writes in progress, never swept) from an earlier boot's
    /// that had the same pid (a kiosk's daemon often gets the same pid at every boot).
    public static let processTag = "\(getpid())-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)

    /// Prefix a leftover temp gets when it is kept on vfat or exFAT (``TempSweep``): never removed by the booth.
    public static let keptPrefix = ".kept-"

    /// Writes `bytes` to `path` atomically: the temp file written and fsynced, renamed, then its directory
    /// and the file under its new name fsynced (the second fsync is what vfat needs; the order is vfat's
    /// too, see the comment inside).
    /// - Parameters:
    ///   - durable: fsync the file and the directory (photos); false for throwaway files (preview).
    ///   - replace: replace an existing file (wraps `rename`); false fails with EEXIST instead
    ///     (wraps `renameat2(RENAME_NOREPLACE)`; where the file system lacks it, `link` + `unlink`).
    ///   - mode: the new file's permission bits (0644; 0600 for a secret), less the umask.
    ///   - syncDirectory: fsyncs the directory after the rename (default ``syncDirectory(_:)``); injected by tests.
    /// - Returns: nil when the write is complete (durable included). Only for a new file (`replace`
    ///   false, `durable` true) whose fsync after the rename, or its directory's, failed *after* the rename
    ///   made it visible: that fsync's error. The file is in place under its final name (do not write it again), only the
    ///   durability of its directory entry is not confirmed; the caller logs it as a warning.
    /// - Throws: ``SystemCallError`` naming the failed call (`open`, `write`, `fsync`, `renameat2`…) when the
    ///   file was not put in place (no partial file is left); when replacing, also the directory's
    ///   `open`/`fsync` failing after the rename (writing again is harmless there).
    @discardableResult
    public static func write(_ bytes: [UInt8], to path: String, durable: Bool = true, replace: Bool = false, mode: mode_t = 0o644,
                             syncDirectory: (String) throws(SystemCallError) -> Void = syncDirectory) throws(SystemCallError) -> SystemCallError? {
        let dir = directoryName(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? path
        let temp = "\(dir)/\(tempPrefix)\(base).\(processTag)"
        // Open until the end (closed when `file` goes): the file is fsynced again after the rename (below).
        let file = try FileDescriptor.open(temp, O_WRONLY | O_CREAT | O_TRUNC, mode: mode)
        defer { file.close() }
        let fd = file.rawValue
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        do {
            try writeAll(bytes, to: fd, subject: temp)
            if durable, fsync(fd) != 0 { throw SystemCallError(call: "fsync", errno: errno, path: temp) }
        }
        // Replacing: the old file held open across the rename, so its clusters are freed only when this is
        // closed, after the new entry is durable (vfat frees them as the replaced inode goes, and a device may
        // keep that FAT write and lose the entry's; ext4 frees an open unlinked inode at its last close too).
        var replaced = FileDescriptor(owning: -1)
        defer { replaced.close() }
        if replace {
            replaced = FileDescriptor(owning: open(path, O_RDONLY | O_CLOEXEC))
            guard rename(temp, path) == 0 else { throw SystemCallError(call: "rename", errno: errno, path: path) }
        } else if pb_rename_noreplace(temp, path) != 0 {
            let e = errno
            guard e == EINVAL || e == ENOSYS else { throw SystemCallError(call: "renameat2", errno: e, path: path) }
            guard link(temp, path) == 0 else { throw SystemCallError(call: "link", errno: errno, path: path) }
            unlink(temp)
        }
        ok = true
        guard durable else { return nil }
        do throws(SystemCallError) {
            // vfat keeps a file's size and first cluster in its directory entry, and a rename makes a new
            // entry that the kernel fills in only when it writes the inode back: without the file's fsync
            // after the rename, a power cut after the directory's fsync leaves the new name at 0 bytes and
            // the data in lost clusters (seen in hardware/scenarios/powercut.sh). The order matters there
            // too. A new name: the directory first (the temp's entry gone, the new one still empty), then
            // the file (the new entry filled), so a cut between leaves an empty file, never two entries on
            // the same clusters. Replacing: the file first (the target's entry moves to the new clusters as
            // the old ones are freed), then the directory; a cut between can leave the temp's entry on the
            // new clusters too, which the start-up sweep keeps (TempSweep). On ext4 and exFAT either order
            // costs at most the journal commit the directory's fsync makes anyway.
            if replace {
                if fsync(fd) != 0 { throw SystemCallError(call: "fsync", errno: errno, path: path) }
                replaced.close()
                try syncDirectory(dir)
            } else {
                try syncDirectory(dir)
                if fsync(fd) != 0 { throw SystemCallError(call: "fsync", errno: errno, path: path) }
            }
            return nil
        } catch {
            // Replacing: writing again is harmless, so the caller hears of it as a failure. A new file
            // is visible under its final name now: it must not be written again (a duplicate under the
            // next number), so the error is returned instead. Not retried: on Linux a failed fsync's
            // error is reported once, and a second fsync's success would not prove the entry durable.
            if replace { throw error }
            return error
        }
    }

    /// fsyncs a directory so a rename in it is durable.
    /// - Throws: ``SystemCallError`` from `open` or `fsync`.
    public static func syncDirectory(_ dir: String) throws(SystemCallError) {
        let directory = try FileDescriptor.open(dir, O_RDONLY | O_DIRECTORY)
        defer { directory.close() }
        if fsync(directory.rawValue) != 0 && errno != EINVAL { throw SystemCallError(call: "fsync", errno: errno, path: dir) }
    }

    /// What a sweep of leftover temp files did: names removed, and names kept. On vfat and exFAT nothing is
    /// removed: after a power cut the file system may not have been checked (a stick mounted as it is), and
    /// a temp's cluster chain may then be half written (unlinking it made the kernel set the file system
    /// read-only in hardware/scenarios/powercut.sh) or shared with the photo it was renamed to (unlinking it
    /// would free the photo's data). A kept temp is renamed `.kept-<name>.<pid>` (a rename frees no
    /// clusters), so no later sweep takes it for a fresh one; `kept` lists those new names (the temp's own
    /// name when it could not be renamed). Temps of this process (ending in ``processTag``) are never swept:
    /// they may be writes in progress.
    public struct TempSweep: Sendable, Equatable {
        /// Names (in the swept directory) of the temps unlinked.
        public var removed: [String] = []
        /// Names the kept temps have now (`.kept-…`), or their `.tmp-` names when the rename failed.
        public var kept: [String] = []
        /// A sweep result; empty lists by default (nothing found).
        public init(removed: [String] = [], kept: [String] = []) { self.removed = removed; self.kept = kept }
    }

    /// Removes the temp files left by interrupted writes in `dir` (not recursive), `.tmp-<name>.<tag>`, with
    /// `unlink(2)`. On vfat and exFAT (`fileSystem`, default: `statfs` of `dir`) each is renamed
    /// `.kept-<name>.<pid>` instead: see ``TempSweep``.
    public static func sweepLeftoverTemps(in dir: String, fileSystem: FileSystemKind? = nil) -> TempSweep {
        sweep(dir, fileSystem: fileSystem) { $0.hasPrefix(tempPrefix) }
    }

    /// Removes the temp files an interrupted ``write(_:to:durable:replace:syncDirectory:)`` of `path` left
    /// beside it (`.tmp-<name>.<tag>`, ``processTag``), of any process; other files of its directory are left
    /// alone (it may be shared). On vfat and exFAT they are kept (``TempSweep``).
    public static func sweepLeftoverTemps(of path: String, fileSystem: FileSystemKind? = nil) -> TempSweep {
        let stem = tempPrefix + (path.split(separator: "/").last.map(String.init) ?? path) + "."
        return sweep(directoryName(of: path), fileSystem: fileSystem) { name in
            // The writer's tag: `<pid>` (earlier versions) or `<pid>-<hex>` (``processTag``).
            let tag = name.dropFirst(stem.count)
            return name.hasPrefix(stem) && !tag.isEmpty && tag.allSatisfy { $0.isHexDigit || $0 == "-" }
        }
    }

    private static func sweep(_ dir: String, fileSystem: FileSystemKind?, _ isTemp: (String) -> Bool) -> TempSweep {
        let fat = (fileSystem ?? FileSystemKind.of(dir))?.isFAT ?? false
        // This process's own temps may be writes in progress on another thread (a sweep also runs when
        // storage is retried or storage.dir moves): never touched.
        let own = ".\(processTag)"
        var out = TempSweep()
        for name in listDirectory(dir) where isTemp(name) && !name.hasSuffix(own) {
            if fat {
                // `.kept-<name>.<pid>`, or with `.2`, `.3`… when a kept file of that pid exists (pids repeat across boots).
                let base = keptPrefix + name.dropFirst(tempPrefix.count)
                var keptAs: String?
                for n in 1...100 {
                    let candidate = n == 1 ? base : "\(base).\(n)"
                    if pb_rename_noreplace("\(dir)/\(name)", "\(dir)/\(candidate)") == 0 { keptAs = candidate; break }
                    if errno != EEXIST { break }
                }
                out.kept.append(keptAs ?? name)
            } else if unlink("\(dir)/\(name)") == 0 {
                out.removed.append(name)
            }
        }
        return out
    }

    /// Reads a whole file. - Throws: ``SystemCallError`` from `open` or `read`.
    public static func read(_ path: String) throws(SystemCallError) -> [UInt8] {
        let file = try FileDescriptor.open(path, O_RDONLY)
        defer { file.close() }
        let fd = file.rawValue
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = retryingEINTR { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) } }
            if n < 0 {
                throw SystemCallError(call: "read", errno: errno, path: path)
            }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return out
    }
}

/// The directory part of `path` ("." when it has none).
public func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
}

/// Creates `path` and its missing parents (mode 0755). - Throws: ``SystemCallError`` from `mkdir`.
public func makeDirectories(_ path: String) throws(SystemCallError) {
    var built = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        let parent = built.isEmpty ? "/" : built
        built += "/\(part)"
        if mkdir(built, 0o755) == 0 {
            // The new entry is durable only once its parent is synced (a new date folder after
            // midnight must survive a power cut with the photo in it).
            try? AtomicFile.syncDirectory(parent)
        } else if errno != EEXIST {
            throw SystemCallError(call: "mkdir", errno: errno, path: built)
        }
    }
}

/// An exclusive `flock(2)` on a folder, held until ``release()`` or the end of the lock's life: the edits of
/// a file that is replaced by ``AtomicFile/write(_:to:durable:replace:mode:syncDirectory:)`` (a new inode
/// each time, so a lock on the file itself would not hold across writers) take it on the file's folder, and
/// read the file again under it. Only readable access to the folder is needed; nothing is created in it.
public final class FolderLock {
    private let folder: FileDescriptor

    /// Locks `folder`, waiting up to `seconds` for another holder: `flock(LOCK_EX | LOCK_NB)` tried every
    /// 20 ms. A bounded retry is the wait here: `flock(2)` has no timed form (a blocking one would hang on a
    /// holder that never lets go) and the kernel gives no event when another process releases a lock.
    /// - Throws: ``SystemCallError`` from `open` (the folder missing or unreadable) or from `flock`: `EWOULDBLOCK`
    ///   when another process held it for all of `seconds`.
    public init(_ folder: String, waitingUpTo seconds: Int) throws(SystemCallError) {
        self.folder = try FileDescriptor.open(folder, O_RDONLY | O_DIRECTORY)
        let fd = self.folder.rawValue
        var tries = max(1, seconds * 50)
        while retryingEINTR({ flock(fd, LOCK_EX | LOCK_NB) }) != 0 {
            let e = errno
            tries -= 1
            guard e == EWOULDBLOCK, tries > 0 else {
                self.folder.close()
                throw SystemCallError(call: "flock", errno: e, path: folder)
            }
            usleep(20_000)
        }
    }

    /// Releases the lock (closes the folder's descriptor). Idempotent.
    public func release() {
        folder.close()
    }
}
