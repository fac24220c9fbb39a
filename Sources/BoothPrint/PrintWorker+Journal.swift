import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import BoothSystem
import FoundationEssentials
import Glibc
import Synchronization

/// The print journal on disk (`print.journal`): reading it at start, writing it durably after every change
/// (serialized, newest version wins), its reserve file for a full disk, forgetting old finished requests, and
/// the observer told of every change.
extension PrintWorker {
    static func loadJournal(_ path: String, log: Logger) -> PrintJournal {
        let fresh = PrintJournal(tag: String(UUID().uuidString.prefix(8)).lowercased())
        // A write cut short (a crash, a power cut) leaves its temp file beside the journal: never read, removed
        // (on vfat and exFAT kept as .kept-*, see AtomicFile.TempSweep).
        for file in [path, reservePath(path)] {
            let swept = AtomicFile.sweepLeftoverTemps(of: file)
            for name in swept.removed { log.info("print journal: removed \(name), left by a write that was cut short") }
            for name in swept.kept {
                log.warning("print journal: kept \(name), left by a write that was cut short (not removed on "
                            + "\(FileSystemKind.of(directoryName(of: file))?.name ?? "this file system"): its clusters may be "
                            + "half written); check the file system (fsck) with the booth stopped, then delete it")
            }
        }
        guard let data = FileManager.default.contents(atPath: path) else { return fresh }
        do {
            return try PrintJournal.decode(data)
        } catch {
            let aside = path + ".unreadable"
            _ = rename(path, aside)
            log.error("print journal \(path) unreadable (\(error)); moved to \(aside), starting a new one")
            return fresh
        }
    }

    /// Writes `journal` (change number `version`) to `path` unless a newer one is on disk already
    /// (it holds this change too: snapshots are taken in version order). Serialized by `written`;
    /// called without `shared` held.
    /// - Returns: true when this version (or a newer one) is on disk; false when the write failed
    ///   (logged once per reason; the print thread writes again on every turn until it succeeds).
    @discardableResult
    func persist(_ journal: PrintJournal, version: Int, path: String) -> Bool {
        var released = false
        let failure = written.withLock { onDisk -> String? in
            guard version > onDisk else { return nil }
            do {
                let data = try AtomicFile.jsonEncoder(pretty: true).encode(journal)
                try makeDirectories(directoryName(of: path))
                do {
                    try writeJournal(Array(data), path)
                } catch let error as FileError where error.isNoSpace && unlink(PrintWorker.reservePath(path)) == 0 {
                    // The file system is full: the reserve beside the journal makes room for it.
                    released = true
                    try writeJournal(Array(data), path)
                }
                onDisk = version
                return nil
            } catch {
                return "\(error)"
            }
        }
        if released {
            shared.withLock { $0.reserveReleased = true }
            log.warning("print journal: the file system is full; its reserve (\(formatBytes(UInt64(PrintWorker.reserveBytes)))) was released to write it")
        }
        let before = shared.withLock { s in
            defer {
                s.journalError = failure
                if let failure { s.lastError = "print journal not written: \(failure)" }
            }
            return s.journalError
        }
        if let failure {
            if failure != before {
                log.error("print journal not written to \(path): \(failure); nothing is submitted until it is (retried every poll)")
            } else {
                log.debug("print journal still not written: \(failure)")
            }
        } else if before != nil {
            log.notice("print journal written again to \(path)")
        }
        return failure == nil
    }

    /// Changes the shared state under its lock, then writes the journal with the lock released;
    /// returns once this change (or a newer one) is on disk, or the write failed. A change that leaves
    /// the journal as it was (a poll that drops nothing) writes nothing.
    func mutate<T>(_ body: (inout Shared) -> T) -> T { mutateDurably(body).0 }

    /// ``mutate(_:)``, also telling whether the change is on disk (true when it changed nothing).
    func mutateDurably<T>(_ body: (inout Shared) -> T) -> (T, Bool) {
        let (out, snapshot) = shared.withLock { s -> (T, (PrintJournal, Int, String)?) in
            let before = s.journal
            let out = body(&s)
            guard s.journal != before else { return (out, nil) }
            s.journalVersion += 1
            return (out, (s.journal, s.journalVersion, s.settings.journal))
        }
        var durable = true
        if let (journal, version, path) = snapshot { durable = persist(journal, version: version, path: path) }
        changed()
        return (out, durable)
    }

    /// Writes the journal as it is now (after a batch of requests changed it in memory).
    func persistNow() {
        let (journal, version, path) = shared.withLock { s -> (PrintJournal, Int, String) in
            s.journalVersion += 1
            return (s.journal, s.journalVersion, s.settings.journal)
        }
        persist(journal, version: version, path: path)
        changed()
    }

    /// Bytes kept in a file beside the journal (`print.journal` + `.reserve`) and released when the
    /// journal cannot be written for lack of space, so a full disk (photos, spool and journal share it)
    /// still journals what is asked and submitted; made again once there is room, before pages the spool
    /// had no room for are written.
    static let reserveBytes = 1 << 20

    static func reservePath(_ journal: String) -> String { journal + ".reserve" }

    /// Makes the reserve file if it is missing and the file system has room for it and as much again;
    /// otherwise (or after a failure) tries again 5 s later.
    func ensureReserve(_ settings: Settings.Print, nextTry: inout UInt64) {
        let path = PrintWorker.reservePath(settings.journal)
        let t = Monotonic.now().nanoseconds
        // Only for a booth that prints (or has printed): a booth with printing off gets no file.
        guard t >= nextTry, !settings.journal.isEmpty, settings.mode != .off || access(settings.journal, F_OK) == 0,
              access(path, F_OK) != 0 else { return }
        // Room: at least the reserve's size left after it is made.
        var fs = statvfs()
        if statvfs(directoryName(of: path), &fs) == 0, UInt64(fs.f_bavail) * UInt64(fs.f_frsize) < UInt64(2 * PrintWorker.reserveBytes) {
            nextTry = t + 5_000_000_000
            return
        }
        do {
            try makeDirectories(directoryName(of: path))
            try AtomicFile.write([UInt8](repeating: 0, count: PrintWorker.reserveBytes), to: path, durable: true, replace: true)
            let wasReleased = shared.withLock { s in defer { s.reserveReleased = false }; return s.reserveReleased }
            if wasReleased { log.notice("print journal: reserve \(path) made again (the file system has room)") }
            else { log.debug("print journal: reserve \(path) made") }
        } catch {
            nextTry = t + 5_000_000_000
            log.debug("print journal: reserve \(path) not made (\(error)); tried again in 5 s")
        }
    }

    /// Writes the journal if the one on disk is older than the one in memory (an earlier write failed).
    /// - Returns: whether the journal on disk is current.
    @discardableResult
    func persistIfBehind() -> Bool {
        let (journal, version, path) = shared.withLock { s in (s.journal, s.journalVersion, s.settings.journal) }
        guard written.withLock({ $0 }) < version else { return true }
        let ok = persist(journal, version: version, path: path)
        if ok { changed() }
        return ok
    }

    /// Tells the observer, outside the lock (it reads ``reviewText(captureID:)``).
    func changed() {
        observer.withLock { $0 }?()
    }

    /// Calls `handler` after every change of the journal or of the printer's health, on the thread
    /// that made it (the print thread, or a control-socket thread for refill, cancel, reprint,
    /// purge), outside the worker's lock. The runtime re-shows the review screen when its text changed.
    public func observe(_ handler: @escaping @Sendable () -> Void) {
        observer.withLock { $0 = handler }
    }

    /// Keeps the journal at `PrintJournal.finishedKept` finished requests: older ones are forgotten
    /// (journal written first) and their pages deleted unless a kept request prints the same file.
    func forgetOldFinished() {
        let (gone, files) = mutate { s -> ([PrintRequest], [String]) in
            let gone = s.journal.forgetFinished(keeping: PrintJournal.finishedKept)
            let kept = Set(s.journal.requests.map(\.file))
            return (gone, gone.map(\.file).filter { !kept.contains($0) })
        }
        for f in Set(files) { unlink(f) }
        if let last = gone.last {
            log.debug("print journal: \(counted(gone.count, "finished request")) up to \(last.id) forgotten"
                      + " (the newest \(PrintJournal.finishedKept) are kept), \(counted(Set(files).count, "page")) deleted")
        }
    }
}
