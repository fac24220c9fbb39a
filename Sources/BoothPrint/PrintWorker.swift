import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import FoundationEssentials
import Glibc
import Synchronization

/// Printing beside the session: renders pictures for the media, keeps the print journal, polls the
/// printer's health and the jobs' states, submits held requests oldest first within the pending
/// limit, and applies the backlog policy. libcups blocks, so all of it runs on a thread this worker
/// owns ("print"); the loop and the control socket only hand it requests and read its snapshot.
///
/// The journal (`print.journal`, JSON) is rewritten atomically before every submission and on every
/// change, so after a crash nothing is printed twice (a request caught between journal and CUPS is
/// found again by its job title) and nothing is forgotten (held requests wait, subject to the backlog).
/// Nothing is submitted unless its `submitting` entry is on disk: a journal that cannot be written
/// (a full disk) holds every request until it can (a reserve file beside it makes room); held
/// requests are looked up in CUPS's job list by title before they are submitted. A page the spool
/// has no room for is journaled as `renderPending` and written once there is room.
///
/// Locks: the state the loop reads and writes (`shared`) is changed in memory and released before the
/// journal is written (encode, write, fsync, rename); the writes are serialized by a lock of their
/// own that only the print thread and control-socket threads take. A change returns once a journal
/// at least as new as it is on disk, so "journaled before submission" holds, and the loop's calls
/// (`request`, `skip`, `noteSaved`, `reviewText`, `status`) never wait for a disk.
public final class PrintWorker: Printer {
    enum Op: Sendable {
        case request(jpeg: [UInt8], captureID: UInt64?, source: String, graceMilliseconds: Int, code: PageCode?)
        case skip(captureID: UInt64)
        case cancelJob(requestID: Int, jobID: Int)
    }

    struct Shared {
        var settings: Settings.Print
        var journal: PrintJournal
        var health: PrinterHealth = .unknown("not asked yet")
        var queueName: String?
        var lastError: String?
        var inbox: [Op] = []
        /// Pictures whose request the print thread took from the inbox and is rendering, not yet in the
        /// journal: held, as far as the review screen goes (between the two it would read as nothing asked).
        var rendering: Set<UInt64> = []
        var stopping = false
        var reconnect = true
        var polls = 0
        /// Bumped by every change of the journal; the version `written` compares against.
        var journalVersion = 0
        /// Where recent captures were saved, for a print asked after their bytes left memory.
        var savedPaths: [UInt64: String] = [:]
        /// Requests not to be submitted before this instant (ns) on the worker's monotonic clock, by
        /// request id: a press-mode print waits out the long press that would skip it. In memory only:
        /// after a restart they may go.
        var notBefore: [Int: UInt64] = [:]
        /// When each request made in this run was journaled, on the worker's monotonic clock: its backlog
        /// age (a wall clock set by NTP mid-event neither drops nor keeps it). An earlier run's requests
        /// are not here; they are aged by the wall clock, which is all that survives a restart.
        var requestedMonotonic: [Int: MonotonicInstant] = [:]
        /// Why the journal could not be written, while it cannot (nil: the journal on disk is current).
        var journalError: String?
        /// Rendered pages not yet written (the spool was full), by request id: written when there is space.
        var pendingPages: [Int: [UInt8]] = [:]
        /// Monotonic instant (ns) the poll of CUPS under way began (nil: none under way); a poll that
        /// does not end within ``PrintWorker/pollDeadlineSeconds(_:)`` turns the health unavailable.
        var pollSince: UInt64?
        /// The health readers last saw stale (the watcher tells the observer when it changes).
        var staleSeen = false
        /// ``PrintWorker/launch()`` was called.
        var launched = false
        /// The print thread was made (`pthread_create` succeeded) at ``PrintWorker/launch()``.
        var threadStarted = false
        /// The journal's reserve was released (the file system is full) and is not made again yet:
        /// pages wait in memory, the room is the journal's.
        var reserveReleased = false
        /// Requests promised with their picture's save whose page waits for the runtime's request (its
        /// bytes, code and grace): not rendered from the saved file in this run. In memory only: after a
        /// restart every promise is rendered from its picture.
        var awaitingRequest: Set<Int> = []
        /// Pictures whose print was skipped (a long press, the skip key) in this run, the latest 64: a
        /// promise or request that comes after the skip is not printed.
        var skipped: Set<UInt64> = []
        /// A promise made on the loop's thread waits for the "print-watch" thread to journal it.
        var persistAsked = false
        /// The held requests print.mode off keeps from the printer were logged (once per time it is off).
        var offNoted = false
    }

    private let shared: Mutex<Shared>
    /// The journal version on disk. Held while a journal is written, so writes are serialized and an
    /// older snapshot never replaces a newer one; never taken while `shared` is held.
    private let written = Mutex(0)
    /// Writes the journal's bytes to its path durably (AtomicFile: open, write, fsync, rename).
    private let writeJournal: @Sendable ([UInt8], String) throws -> Void
    /// Called after the journal or the printer's health changed (``observe(_:)``).
    private let observer = Mutex<(@Sendable () -> Void)?>(nil)
    /// The "print" thread (``threadMain(_:)``): renders, journals, polls CUPS and submits.
    private let printThread = WorkerThread(name: "print")
    /// The "print-watch" thread (``watchMain(_:)``); ends with the print thread.
    private let watchThread = WorkerThread(name: "print-watch")
    private let log: Logger
    /// Wall clock in seconds since 1970: the journal's times (and the backlog age of an earlier run's
    /// requests); tests inject one.
    private let now: @Sendable () -> Double
    /// The backlog age of this run's requests (``Shared/requestedMonotonic``) and the press-mode grace
    /// (``Shared/notBefore``); tests inject one. CUPS's liveness (a poll overdue) and the retries of the
    /// reserve and of pages are on the real clock (``Monotonic/now()``): they measure what the
    /// machine does, not the booth's timers.
    private let clock: any MonotonicClock

    /// - Parameters:
    ///   - settings: `[print]`.
    ///   - now: the wall clock, seconds since 1970.
    ///   - clock: the monotonic clock that ages this run's held requests (`print.backlog_max_age`) and
    ///     times the press-mode grace (`graceMilliseconds`).
    ///   - journalWriter: writes the journal's JSON bytes to a path, durably; nil: `AtomicFile.write`
    ///     (open, write, fsync, rename). Tests pass one that records or holds writes.
    public init(settings: Settings.Print, log: Logger, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                clock: any MonotonicClock = SystemClock(),
                journalWriter: (@Sendable (_ bytes: [UInt8], _ path: String) throws -> Void)? = nil) {
        self.log = log
        self.now = now
        self.clock = clock
        writeJournal = journalWriter ?? { bytes, path in try AtomicFile.write(bytes, to: path, durable: true, replace: true) }
        var journal = PrintWorker.loadJournal(settings.journal, log: log)
        // Capture ids count from 1 in every run: an earlier run's request is no capture of this one
        // (the review text and a long press must not find it).
        for i in journal.requests.indices { journal.requests[i].captureID = nil }
        if journal.sheetsRemaining == nil && settings.sheets > 0 { journal.sheetsRemaining = settings.sheets }
        // A journal from before the count: its kept completed requests.
        if journal.printed == nil { journal.printed = journal.requests.filter { $0.state == .completed }.count }
        let recovered = PrintWorker.recoverPages(&journal, settings: settings, log: log)
        shared = Mutex(Shared(settings: settings, journal: journal))
        for r in recovered {
            log.warning("print \(r.id): page \(r.file) found in the spool but not in the journal (it was asked for while the journal "
                        + "could not be written); held again as \(r.source)")
        }
        if !recovered.isEmpty { shared.withLock { $0.journalVersion += 1 } }
    }

    /// Pages of this journal's requests (`print-TAG-ID.jpg`) with an id the journal never recorded
    /// (at or above `nextID`: asked for while the journal could not be written, then the daemon stopped)
    /// become held requests again, with the same id and so the same job title: a job a run submitted
    /// for it would be found at CUPS by that title. Leftover temp files in the spool are removed.
    static func recoverPages(_ journal: inout PrintJournal, settings: Settings.Print, log: Logger? = nil) -> [PrintRequest] {
        for name in AtomicFile.sweepLeftoverTemps(in: settings.spool).kept {
            log?.warning("print spool: kept \(settings.spool)/\(name), left by a write that was cut short (not removed on "
                         + "\(FileSystemKind.of(settings.spool)?.name ?? "this file system"): its clusters may be half "
                         + "written); check the file system (fsck) with the booth stopped, then delete it")
        }
        let prefix = "print-\(journal.tag)-"
        let ids = listDirectory(settings.spool).compactMap { name -> Int? in
            guard name.hasPrefix(prefix), name.hasSuffix(".jpg") else { return nil }
            return Int(name.dropFirst(prefix.count).dropLast(4))
        }.filter { $0 >= journal.nextID && $0 < PrintJournal.maxID }.sorted()
        return ids.map { id in
            let file = "\(settings.spool)/\(prefix)\(id).jpg"
            var st = stat()
            let made = stat(file, &st) == 0 ? Double(st.st_mtim.tv_sec) : Date().timeIntervalSince1970
            journal.nextID = id
            return journal.add(captureID: nil, source: "recovered page \(id)", file: file, copies: settings.copies,
                               media: settings.media, now: made)
        }
    }

    // MARK: Journal file

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
    private func persist(_ journal: PrintJournal, version: Int, path: String) -> Bool {
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
    private func mutate<T>(_ body: (inout Shared) -> T) -> T { mutateDurably(body).0 }

    /// ``mutate(_:)``, also telling whether the change is on disk (true when it changed nothing).
    private func mutateDurably<T>(_ body: (inout Shared) -> T) -> (T, Bool) {
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
    private func persistNow() {
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
    private func ensureReserve(_ settings: Settings.Print, nextTry: inout UInt64) {
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
    private func persistIfBehind() -> Bool {
        let (journal, version, path) = shared.withLock { s in (s.journal, s.journalVersion, s.settings.journal) }
        guard written.withLock({ $0 }) < version else { return true }
        let ok = persist(journal, version: version, path: path)
        if ok { changed() }
        return ok
    }

    /// Tells the observer, outside the lock (it reads ``reviewText(captureID:)``).
    private func changed() {
        observer.withLock { $0 }?()
    }

    /// Calls `handler` after every change of the journal or of the printer's health, on the thread
    /// that made it (the print thread, or a control-socket thread for refill, cancel, reprint,
    /// purge), outside the worker's lock. The runtime re-shows the review screen when its text changed.
    public func observe(_ handler: @escaping @Sendable () -> Void) {
        observer.withLock { $0 = handler }
    }

    // MARK: From the loop and the control socket

    /// Starts the "print" thread.
    public func launch() {
        shared.withLock { $0.launched = true }
        if printThread.start({ [self] w in threadMain(w) }) {
            shared.withLock { $0.threadStarted = true }
        } else {
            log.error("print: no thread for printing (pthread_create failed: the thread limit); prints wait in the journal")
        }
        if !watchThread.start({ [self] w in watchMain(w) }) {
            log.error("print: no thread watching CUPS's answers (pthread_create failed: the thread limit)")
        }
    }

    /// Tells the observer when the health turns stale (a poll overdue) or fresh again: the print
    /// thread cannot, while it waits in libcups. Ends with the print thread.
    private func watchMain(_ w: WorkerThread) {
        while !printThread.hasEnded {
            // Every 250 ms, or at once for a promise to journal; the print thread's end finishes this one at once.
            let wake = w.waitForWork(until: Monotonic.now().adding(milliseconds: 250)) { shared.withLock { $0.persistAsked } }
            guard wake != .stop else { return }
            if shared.withLock({ s in defer { s.persistAsked = false }; return s.persistAsked }) { persistIfBehind() }
            let flipped = shared.withLock { s -> Bool in
                let stale = overdueSeconds(s) != nil
                defer { s.staleSeen = stale }
                return stale != s.staleSeen
            }
            if flipped {
                let (stale, h) = shared.withLock { ($0.staleSeen, currentHealth($0)) }
                if stale, case let .unavailable(_, m) = h { log.warning("printer unavailable: cups-unreachable (\(m))") }
                else { log.notice("printer: CUPS answers again") }
                changed()
            }
        }
    }

    /// Stops the thread (within one libcups timeout); the journal is on disk already.
    /// A thread still waiting in libcups then (CUPS hangs) leaves its inbox: the requests in it are
    /// rendered and journaled by the calling thread, so they print after the restart.
    public func stop(timeoutSeconds: Double = 5) {
        let launched = shared.withLock { s in defer { s.stopping = true }; return s.launched }
        // Wakes the thread, which sees `stopping` at the top of its loop.
        let ended = printThread.finish(timeoutMilliseconds: Int64(max(0, timeoutSeconds) * 1000))
        // A thread that was never made ended nothing: its inbox is journaled here too.
        guard launched, !ended || !shared.withLock({ $0.threadStarted }) else { return }
        let (ops, settings) = shared.withLock { s in defer { s.inbox = [] }; return (s.inbox, s.settings) }
        let requests = ops.filter { if case .request = $0 { true } else { false } }
        guard !requests.isEmpty else { return }
        log.warning("print thread did not stop within \(timeoutSeconds) s (CUPS not answering?); "
                    + "\(counted(requests.count, "request")) in its inbox journaled by the stopping thread")
        var renderer: PrintRenderer?
        for op in ops { handle(op, settings: settings, renderer: &renderer, connection: nil) }
        persistNow()
    }

    /// Asks for a print of `jpeg`: a session's picture (`captureID` is the picture's id: the composed
    /// picture's, or the capture's for one shot without a composer), or a test print with `captureID` nil.
    /// - Parameter graceMilliseconds: the request is journaled at once but not submitted before this
    ///   long has passed (monotonic clock), so a `skip` within it keeps it from CUPS altogether.
    /// A picture saved already (a press-mode print) has its print promised at once
    /// (``noteSaved(captureID:path:promise:)``), journaled by the "print-watch" thread, which never waits
    /// on CUPS: a print thread stuck in libcups does not keep it from the disk.
    public func request(jpeg: [UInt8], captureID: UInt64?, source: String, graceMilliseconds: Int, code: PageCode?) {
        let promised = shared.withLock { s -> Bool in
            guard let id = captureID, let path = s.savedPaths[id], !s.skipped.contains(id),
                  promiseLocked(&s, captureID: id, path: path, promise: PrintPromise(source: source, code: code)) != nil
            else { return false }
            s.persistAsked = true
            return true
        }
        post(.request(jpeg: jpeg, captureID: captureID, source: source, graceMilliseconds: graceMilliseconds, code: code))
        if promised { watchThread.wake() }
    }

    /// The guest long-pressed in review: picture `captureID` is not printed (cancelled if already asked).
    public func skip(captureID: UInt64) {
        shared.withLock { s in
            s.skipped.insert(captureID)
            if s.skipped.count > 64, let oldest = s.skipped.min() { s.skipped.remove(oldest) }
        }
        post(.skip(captureID: captureID))
    }

    /// Capture or picture `captureID` is on disk at `path` (a press-mode print comes after the save).
    /// A request for it whose page is not written yet takes the path, so the page can be rendered from
    /// the saved picture after a restart. With `promise` (`print.mode` prints this picture), the print is
    /// journaled durably before this returns, on the calling thread (the storage thread, which never
    /// waits on CUPS): a held request rendered from the runtime's bytes in this run, from `path` after a
    /// restart (``PrintJournal/promise(captureID:source:photo:spool:copies:media:code:now:)``). A print
    /// asked for before the save is journaled then too. Nothing is promised for a picture already skipped.
    public func noteSaved(captureID: UInt64, path: String, promise: PrintPromise?) {
        let (pending, promised) = shared.withLock { s -> (Bool, PrintRequest?) in
            s.savedPaths[captureID] = path
            if s.savedPaths.count > 32, let oldest = s.savedPaths.keys.min() { s.savedPaths[oldest] = nil }
            var pending = false
            for i in s.journal.requests.indices where s.journal.requests[i].captureID == captureID
                && s.journal.requests[i].renderPending == true && s.journal.requests[i].photo == nil {
                s.journal.requests[i].photo = path
                pending = true
            }
            if pending { s.journalVersion += 1 }
            guard let promise, !s.skipped.contains(captureID) else { return (pending, nil) }
            return (pending, promiseLocked(&s, captureID: captureID, path: path, promise: promise))
        }
        if promise != nil, persistIfBehind(), let promised {
            log.info("print \(promised.id) (\(promised.source)): journaled with the picture's save (\(path)); held")
        }
        if pending || promised != nil { signal() }
    }

    /// Journals (in memory) the print promised for saved picture `captureID`; nil when one is journaled.
    private func promiseLocked(_ s: inout Shared, captureID: UInt64, path: String, promise: PrintPromise) -> PrintRequest? {
        guard let r = s.journal.promise(captureID: captureID, source: promise.source, photo: path, spool: s.settings.spool,
                                        copies: s.settings.copies, media: s.settings.media, code: promise.code, now: now())
        else { return nil }
        s.journalVersion += 1
        s.requestedMonotonic[r.id] = clock.now()
        s.awaitingRequest.insert(r.id)
        return r
    }

    /// The saved photo of capture `captureID`, if it was noted and is readable.
    public func savedPhoto(captureID: UInt64) -> [UInt8]? {
        guard let path = shared.withLock({ $0.savedPaths[captureID] }),
              let data = FileManager.default.contents(atPath: path) else { return nil }
        return Array(data)
    }

    /// New `[print]` settings (reload). A new destination, copies, media or colour reconnects (and so
    /// checks the options against the destination again). `print.sheets` seeds the paper count when the
    /// journal has none yet, as at start (the journal is then rewritten, on the calling thread).
    public func reconfigure(_ settings: Settings.Print) {
        mutate { s in
            let old = s.settings
            if old.destination != settings.destination || old.copies != settings.copies || old.media != settings.media
                || old.color != settings.color { s.reconnect = true }
            s.settings = settings
            if s.journal.sheetsRemaining == nil && settings.sheets > 0 { s.journal.sheetsRemaining = settings.sheets }
        }
        signal()
    }

    /// `photoboothctl refill SHEETS`: sets the paper counter.
    public func refill(sheets: Int) {
        mutate { $0.journal.sheetsRemaining = sheets }
        log.notice("paper refilled: \(counted(sheets, "sheet"))")
        signal()
    }

    /// `photoboothctl prints cancel ID`: a held request is cancelled at once, a submitted one at CUPS.
    /// - Returns: what happened, for the reply; nil when there is no live request `id`.
    public func cancel(requestID id: Int) -> String? {
        let outcome: (String, Op?)? = mutate { s in
            guard let r = s.journal.request(id), r.state.isLive else { return nil }
            if r.state == .held {
                s.journal.finish(id, .cancelled, note: "cancelled by the operator", now: now())
                return ("request \(id) cancelled", nil)
            }
            guard let job = r.jobID else { return ("request \(id) is being submitted; cancel again in a moment", nil) }
            return ("cancelling job \(job) of request \(id)", .cancelJob(requestID: id, jobID: job))
        }
        guard let outcome else { return nil }
        if let op = outcome.1 { post(op) }
        log.notice("prints cancel: \(outcome.0)")
        return outcome.0
    }

    /// `photoboothctl prints reprint ID`: a new request for the same page, within `print.reprint_limit`.
    /// - Returns: the new request's id, or why not.
    public func reprint(requestID id: Int) -> Result<Int, PrinterRefusal> {
        let s = shared.withLock { $0 }
        guard let r = s.journal.request(id) else { return .failure(PrinterRefusal(code: "not-found", message: "no print request \(id)")) }
        // With printing off nothing is printed, now or whenever it is next on (a surprise print): refused, as test-print is.
        guard s.settings.mode != .off else {
            return .failure(PrinterRefusal(code: "printing-off", message: "print.mode is off: nothing is printed, reprints included "
                                           + "(nothing queued); set print.mode to auto or press, then reprint \(id) again"))
        }
        let original = r.reprintOf ?? id
        guard s.journal.reprints(of: original) < s.settings.reprintLimit else {
            return .failure(PrinterRefusal(code: "limit", message: "request \(original) was reprinted \(s.settings.reprintLimit) time(s) already (print.reprint_limit)"))
        }
        guard FileManager.default.fileExists(atPath: r.file) else {
            return .failure(PrinterRefusal(code: "not-found", message: "the page of request \(id) is gone (\(r.file)); purged?"))
        }
        let new = mutate { s in
            let id = s.journal.add(captureID: nil, source: "reprint of \(original)", file: r.file, copies: s.settings.copies,
                                   media: r.media, now: now(), reprintOf: original).id
            s.requestedMonotonic[id] = clock.now()
            return id
        }
        log.notice("print \(new): reprint of \(original) requested")
        signal()
        return .success(new)
    }

    /// `photoboothctl prints purge`: forgets finished requests and deletes their pages.
    /// - Returns: how many were forgotten.
    public func purge() -> Int {
        let (n, files) = mutate { s -> (Int, [String]) in
            let live = Set(s.journal.requests.filter { $0.state.isLive }.map(\.file))
            let files = s.journal.requests.filter { !$0.state.isLive && !live.contains($0.file) }.map(\.file)
            return (s.journal.purge(), files)
        }
        for f in Set(files) { unlink(f) }
        log.notice("prints purge: \(counted(n, "finished request")) forgotten")
        return n
    }

    /// `photoboothctl prints resume`: submission goes on after a failed job (``PrintJournal/resume()``).
    public func resume() -> String? {
        let why = mutate { $0.journal.resume() }
        if let why { log.notice("prints resume: printing resumed (it stopped as \(why))") }
        signal()
        return why
    }

    /// The journal as it is now.
    public var journal: PrintJournal { shared.withLock { $0.journal } }
    /// Every request the journal keeps, as `prints list` shows them.
    public var requests: [PrintEntry] { journal.requests.map(PrintEntry.init) }
    /// The paper counter (sheets), nil when not counted.
    public var sheetsRemaining: Int? { shared.withLock { $0.journal.sheetsRemaining } }

    /// `test-print FILE`: refused unless `jpeg` is a whole JPEG the renderer reads (header by
    /// `tjDecompressHeader3`, then ``JPEGDecoder/validate(_:)``); else asked for as `test print of FILE`.
    /// - Throws: ``PrinterRefusal`` `bad-file`, naming `file`, what is wrong and what is allowed.
    public func requestTestPrint(jpeg: [UInt8], file: String) throws(PrinterRefusal) {
        func refuse(_ why: String) -> PrinterRefusal {
            PrinterRefusal(code: "bad-file", message: "\(file): \(why); test-print takes a JPEG file (nothing printed)")
        }
        guard !jpeg.isEmpty else { throw refuse("the file is empty") }
        do {
            let decoder = try JPEGDecoder()
            _ = try decoder.header(jpeg)
            guard decoder.validate(jpeg) else { throw refuse("not a whole JPEG (its data is truncated or corrupt)") }
        } catch let refusal as PrinterRefusal {
            throw refusal
        } catch {
            throw refuse("not a JPEG (\(error))")
        }
        request(jpeg: jpeg, captureID: nil, source: "test print of \(file)")
    }

    /// `test-print` without a file: a print of ``testChart()``.
    /// - Throws: ``JPEGError`` when the chart cannot be encoded.
    public func requestTestChart(source: String) throws {
        request(jpeg: try PrintWorker.testChart(), captureID: nil, source: source)
    }
    /// The printer's health as last polled, or unavailable (`cups-unreachable`) when the poll has not
    /// ended for ``pollDeadlineSeconds`` (CUPS hangs: the print thread waits in libcups).
    public var health: PrinterHealth { shared.withLock { currentHealth($0) } }

    /// How long a poll of CUPS may take before the health readers call the printer unavailable:
    /// max(3 × `print.poll_interval`, 10 s), seconds.
    public static func pollDeadlineSeconds(_ settings: Settings.Print) -> Double {
        max(3 * Double(settings.pollIntervalMilliseconds) / 1000, 10)
    }

    /// The health as readers see it: the polled one, unless the poll is overdue.
    private func currentHealth(_ s: Shared) -> PrinterHealth {
        guard let late = overdueSeconds(s) else { return s.health }
        return .unavailable(reasons: ["cups-unreachable"],
                            message: "CUPS has not answered for \(Int(late)) s (a poll may take \(Int(PrintWorker.pollDeadlineSeconds(s.settings))) s)")
    }

    /// Seconds the poll under way has taken, when over the deadline (and the worker is not stopping).
    private func overdueSeconds(_ s: Shared) -> Double? {
        guard !s.stopping, let since = s.pollSince else { return nil }
        let elapsed = Double(Monotonic.now().nanoseconds &- since) / 1e9
        return elapsed > PrintWorker.pollDeadlineSeconds(s.settings) ? elapsed : nil
    }
    /// Health polls done (tests wait on it).
    public var polls: Int { shared.withLock { $0.polls } }

    /// What the review screen says about printing capture `captureID` (nil: nothing asked for it).
    public func reviewText(captureID: UInt64) -> String? {
        shared.withLock { s in
            var request = s.journal.requests.last { $0.captureID == captureID }
            if request == nil, s.rendering.contains(captureID)
                || s.inbox.contains(where: { if case .request(_, captureID, _, _, _) = $0 { true } else { false } }) {
                // Asked for, not yet taken by the print thread (it waits in libcups) or being rendered: held,
                // as far as the guest goes.
                request = PrintRequest(id: 0, captureID: captureID, source: "", file: "", copies: 1, media: "", requestedAt: 0, title: "")
            }
            // A press-mode print waiting out the long press with room at the printer goes out next: printing.
            let next = request.map { r in
                s.notBefore[r.id] != nil && s.journal.outstanding < s.settings.pendingLimit
                    && s.journal.paperShort(sheetsPerCopy: s.settings.sheetsPerPicture) == nil
            } ?? false
            return reviewPrintText(health: currentHealth(s), request: request, sentNext: next)
        }
    }

    /// Printer fields for `status`.
    public func status() -> PrinterStatus {
        shared.withLock { s in
            var message: String?
            let health = currentHealth(s)
            if case let .unavailable(_, m) = health, !m.isEmpty { message = m }
            if case let .unknown(m) = health { message = m }
            return PrinterStatus(mode: s.settings.mode.rawValue, destination: s.settings.destination, queue: s.queueName,
                                 health: health.name, reasons: health.reasons, message: message,
                                 sheetsRemaining: s.journal.sheetsRemaining,
                                 held: s.journal.requests.filter { $0.state == .held }.count,
                                 outstanding: s.journal.outstanding,
                                 completed: s.journal.printed ?? 0,
                                 lastError: s.lastError, failed: s.journal.failedJobs ?? 0)
        }
    }

    private func post(_ op: Op) {
        shared.withLock { $0.inbox.append(op) }
        signal()
    }

    /// Wakes the print thread for another round (never called with `shared` held: the thread's wait
    /// reads `shared` under the worker's lock).
    private func signal() { printThread.wake() }

    // MARK: The print thread

    private func threadMain(_ w: WorkerThread) {
        var connection: CUPSConnection?
        var renderer: PrintRenderer?
        var nextReserveTry: UInt64 = 0
        var nextPageTry: UInt64 = 0
        defer { watchThread.finish(timeoutMilliseconds: 0) }
        while true {
            let (ops, stopping, settings, reconnect) = shared.withLock { s in
                defer { s.inbox = []; s.reconnect = false }
                for case let .request(_, captureID?, _, _, _) in s.inbox { s.rendering.insert(captureID) }
                return (s.inbox, s.stopping, s.settings, s.reconnect)
            }
            if reconnect { connection = nil }
            // Requests asked for before a stop are journaled (held) before the thread ends: a print
            // asked for at the last moment is printed after the restart, never forgotten.
            for op in ops {
                handle(op, settings: settings, renderer: &renderer, connection: connection)
                if case let .request(_, captureID?, _, _, _) = op { _ = shared.withLock { $0.rendering.remove(captureID) } }
            }
            if ops.contains(where: { if case .request = $0 { true } else { false } }) {
                persistNow()
            }
            // A journal an earlier write could not store, the journal's reserve, then pages the spool
            // had no room for: those only while the reserve is there (the room it gave is the journal's).
            if persistIfBehind() { ensureReserve(settings, nextTry: &nextReserveTry) }
            if !shared.withLock({ $0.reserveReleased }), Monotonic.now().nanoseconds >= nextPageTry {
                if !writePendingPages(settings: settings, renderer: &renderer) {
                    nextPageTry = Monotonic.now().nanoseconds + 2_000_000_000
                }
                persistIfBehind()
            }
            if stopping {
                reportUnjournaled()
                return
            }
            poll(settings: settings, connection: &connection)
            // The next poll, or sooner when a request's grace ends before it (on the worker's clock); at
            // once when something was asked for, or a stop, meanwhile.
            var seconds = Double(settings.pollIntervalMilliseconds) / 1000
            if let graceEnds = shared.withLock({ $0.notBefore.values.min() }) {
                let t = clock.now().nanoseconds
                seconds = min(seconds, graceEnds > t ? max(0.01, Double(graceEnds - t) / 1e9) : 0.01)
            }
            _ = w.waitForWork(until: Monotonic.now().adding(milliseconds: Int64((seconds * 1000).rounded(.up)))) {
                shared.withLock { !$0.inbox.isEmpty || $0.stopping }
            }
        }
    }

    private func handle(_ op: Op, settings: Settings.Print, renderer: inout PrintRenderer?, connection: CUPSConnection?) {
        switch op {
        case let .request(jpeg, captureID, source, grace, code):
            // Parsed once, when the settings were made (``Settings/Print/mediaSize``).
            guard let media = settings.mediaSize else {
                let problem = "'\(settings.media)' is not a PWG media name with a size"
                log.error("print of \(source) not rendered: print.media: \(problem); nothing printed")
                shared.withLock { $0.lastError = "print.media: \(problem)" }
                return
            }
            do {
                let size = try PrintRenderer.pageSize(for: media, dpi: settings.dpi)
                if renderer == nil { renderer = try PrintRenderer() }
                guard let renderer else { return }
                let (page, codeDrawn) = try renderer.renderPage(jpeg, to: size, code: code, dpi: settings.dpi)
                if let code, !codeDrawn {
                    log.warning("print of \(source): its QR code (\(code.text)) does not fit the page (\(size) px on \(settings.media)); printed without it")
                }
                // Journaled in memory here; the thread writes the journal once after the whole batch
                // of requests, before it polls and submits (a burst costs one write, not one each).
                // Marked renderPending until its page is written: a journal another thread writes
                // meanwhile never names a page that is not there.
                let r = shared.withLock { s -> PrintRequest? in
                    // A print promised with the picture's save (``noteSaved(captureID:path:promise:)``) is
                    // this request: its page is rendered from these bytes; one skipped meanwhile stays so.
                    let promised = captureID.flatMap { id in s.journal.requests.last { $0.captureID == id && $0.renderPending == true } }
                    if let promised, let id = captureID {
                        s.awaitingRequest.remove(promised.id)
                        guard promised.state == .held, !s.skipped.contains(id) else {
                            // Skipped before its page was made: ended here, or the pending-page pass
                            // would render it from the saved picture and send it before the skip's op.
                            if promised.state == .held {
                                _ = s.journal.finish(promised.id, .cancelled, note: "skipped by a long press", now: now())
                                s.journalVersion += 1
                            }
                            return nil
                        }
                    }
                    let i: Int
                    if let promised, let at = s.journal.requests.firstIndex(where: { $0.id == promised.id }) {
                        i = at
                    } else {
                        let file = "\(settings.spool)/print-\(s.journal.tag)-\(s.journal.nextID).jpg"
                        let r = s.journal.add(captureID: captureID, source: source, file: file, copies: settings.copies,
                                              media: settings.media, now: now())
                        s.requestedMonotonic[r.id] = clock.now()
                        i = s.journal.requests.count - 1
                        s.journal.requests[i].renderPending = true
                        s.journal.requests[i].photo = captureID.flatMap { s.savedPaths[$0] }
                    }
                    s.journal.requests[i].codeText = code?.text ?? s.journal.requests[i].codeText
                    s.journal.requests[i].codeCorner = code?.corner.rawValue ?? s.journal.requests[i].codeCorner
                    let r = s.journal.requests[i]
                    if grace > 0 { s.notBefore[r.id] = clock.now().nanoseconds + UInt64(max(0, grace)) * 1_000_000 }
                    return r
                }
                guard let r else {
                    log.info("print of \(source): skipped before its page was rendered; not printed")
                    return
                }
                if shared.withLock({ $0.reserveReleased }) {
                    shared.withLock { $0.pendingPages[r.id] = page }
                    log.warning("print \(r.id) (\(source)): the file system is full; page kept in memory, written once there is room (held)")
                } else if let failure = writePage(page, for: r) {
                    shared.withLock { s in
                        s.pendingPages[r.id] = page
                        s.lastError = "page not written: \(failure)"
                    }
                    log.error("print \(r.id) (\(source)): page not written to \(r.file) (\(failure)); held, written when there is room")
                } else {
                    log.info("print \(r.id) (\(source)): held, \(size) px on \(settings.media)"
                             + " — guest sees: \(reviewText(captureID: captureID ?? .max) ?? "-")")
                }
            } catch {
                log.error("print of \(source) not rendered: \(error)")
                shared.withLock { $0.lastError = "print of \(source) not rendered: \(error)" }
            }
        case let .skip(captureID):
            let live = shared.withLock { s in s.journal.requests.filter { $0.captureID == captureID && $0.state.isLive } }
            for r in live {
                if r.state == .held {
                    mutate { _ = $0.journal.finish(r.id, .cancelled, note: "skipped by a long press", now: now()) }
                    log.info("print \(r.id): skipped by a long press")
                } else if let job = r.jobID {
                    cancelJob(requestID: r.id, jobID: job, note: "skipped by a long press", connection: connection)
                }
            }
        case let .cancelJob(requestID, jobID):
            cancelJob(requestID: requestID, jobID: jobID, note: "cancelled by the operator", connection: connection)
        }
    }

    /// Writes `page` as request `r`'s file (AtomicFile, durable) and clears its `renderPending` in memory
    /// (the journal is written after). - Returns: nil, or why it was not written.
    private func writePage(_ page: [UInt8], for r: PrintRequest) -> String? {
        do {
            try makeDirectories(directoryName(of: r.file))
            try AtomicFile.write(page, to: r.file, durable: true, replace: true)
        } catch {
            return "\(error)"
        }
        shared.withLock { s in
            s.pendingPages[r.id] = nil
            if let i = s.journal.requests.firstIndex(where: { $0.id == r.id }) {
                s.journal.requests[i].renderPending = nil
                s.journalVersion += 1
            }
        }
        return nil
    }

    /// How long a print promised with its picture's save waits for the runtime's request before its page is
    /// rendered from the saved picture, ms.
    static let awaitingRequestMilliseconds = 60_000

    /// Writes the pages of held requests the spool had no room for: from memory, or rendered again from
    /// the saved picture (after a restart). Stops at the first that fails (the spool is still full).
    /// A page that can never be made (no picture known, the picture unreadable) fails its request.
    /// - Returns: false when a write failed (still no room: the thread tries again 2 s later, so a full
    ///   disk does not cost a render every poll).
    @discardableResult
    private func writePendingPages(settings: Settings.Print, renderer: inout PrintRenderer?) -> Bool {
        let (pending, inMemory) = shared.withLock { s -> ([PrintRequest], Set<Int>) in
            let pending = s.journal.requests.filter { $0.state == .held && $0.renderPending == true }
            let ids = Set(pending.map(\.id))
            s.pendingPages = s.pendingPages.filter { ids.contains($0.key) }
            return (pending, Set(s.pendingPages.keys))
        }
        // A promise waits for the runtime's request (its bytes, code and grace), which comes within a moment of the
        // save; one whose request never came (its session ended at the compose deadline, its picture not read back)
        // is rendered from its picture after ``awaitingRequestMilliseconds``, not left unprinted until a restart.
        let t = clock.now()
        let overdue = shared.withLock { s in
            s.awaitingRequest.filter { id in
                s.requestedMonotonic[id].map { t.milliseconds(since: $0) >= Double(PrintWorker.awaitingRequestMilliseconds) } ?? true
            }
        }
        for id in overdue.sorted() {
            shared.withLock { _ = $0.awaitingRequest.remove(id) }
            log.notice("print \(id): no request for its promised picture in \(PrintWorker.awaitingRequestMilliseconds / 1000) s; "
                       + "rendered from the saved picture")
        }
        for r in pending where !shared.withLock({ $0.awaitingRequest.contains(r.id) }) {
            var page = inMemory.contains(r.id) ? shared.withLock { $0.pendingPages[r.id] } : nil
            if page == nil {
                guard let photo = r.photo else {
                    // In this run the picture's save may still be noted; after a restart it cannot be.
                    if r.captureID != nil { continue }
                    mutate { _ = $0.journal.finish(r.id, .failed, note: "its page was never written (the spool was full) and no saved picture is known", now: now()) }
                    log.error("print \(r.id) (\(r.source)): its page was never written (the spool was full) and no saved picture is known; not printed")
                    continue
                }
                do {
                    guard let data = FileManager.default.contents(atPath: photo) else {
                        throw PrintError(call: "read", message: "\(photo) unreadable", destination: "")
                    }
                    // The request's own media (journaled; it may be from before a reload).
                    guard let media = r.media == settings.media ? settings.mediaSize : MediaSize(pwg: r.media) else {
                        throw PrintError(call: "render", message: "media \(r.media) unknown", destination: "")
                    }
                    if renderer == nil { renderer = try PrintRenderer() }
                    guard let renderer else { return true }
                    var code: PageCode?
                    if let text = r.codeText, let corner = r.codeCorner.flatMap(PictureQRSetting.init(rawValue:)) {
                        code = PageCode(text: text, corner: corner)
                    }
                    page = try renderer.render(Array(data), to: PrintRenderer.pageSize(for: media, dpi: settings.dpi),
                                               code: code, dpi: settings.dpi)
                } catch {
                    mutate { _ = $0.journal.finish(r.id, .failed, note: "page not rendered from \(photo): \(error)", now: now()) }
                    log.error("print \(r.id) (\(r.source)): page not rendered from \(photo): \(error); not printed")
                    continue
                }
            }
            guard let page else { continue }
            if let failure = writePage(page, for: r) {
                shared.withLock { s in
                    if r.photo == nil || s.pendingPages.count < 8 { s.pendingPages[r.id] = page }
                }
                log.debug("print \(r.id): page still not written: \(failure)")
                return false
            }
            if inMemory.contains(r.id) || r.photo == nil {
                log.notice("print \(r.id) (\(r.source)): page written to \(r.file) (the spool had room again); held")
            } else {
                log.notice("print \(r.id) (\(r.source)): page rendered from \(r.photo ?? "") and written to \(r.file); held")
            }
        }
        return true
    }

    /// At a stop: requests the journal on disk does not hold (it could not be written) are lost with
    /// this run, unless their page is in the spool (recovered at the next start); each is named.
    private func reportUnjournaled() {
        let (journalError, pending) = shared.withLock { s in
            (s.journalError, s.journal.requests.filter { $0.state == .held && $0.renderPending == true && $0.photo == nil })
        }
        guard let journalError else {
            for r in pending {
                log.error("print \(r.id) (\(r.source)): its page was never written and no saved picture is known; not printed after the restart")
            }
            return
        }
        log.error("print journal not written at the stop (\(journalError)): requests since the last write are printed after "
                  + "the restart only if their page is in the spool; no job was submitted without a journaled entry")
    }

    private func cancelJob(requestID: Int, jobID: Int, note: String, connection: CUPSConnection?) {
        guard let connection else {
            log.warning("print \(requestID): job \(jobID) not cancelled, CUPS not reachable")
            return
        }
        // Who cancels is journaled first: a kill right after the cancel must not leave a cancelled job whose request
        // has no note, which the restart reads as cancelled at the printer (held again, printing stopped).
        let previous = mutate { s -> String?? in
            guard let i = s.journal.requests.firstIndex(where: { $0.id == requestID }) else { return nil }
            defer { s.journal.requests[i].note = note }
            return .some(s.journal.requests[i].note)
        }
        do {
            try connection.cancel(job: jobID)
            log.info("print \(requestID): job \(jobID) cancelled (\(note))")
        } catch {
            if let previous {
                mutate { s in
                    if let i = s.journal.requests.firstIndex(where: { $0.id == requestID }) { s.journal.requests[i].note = previous }
                }
            }
            log.warning("print \(requestID): cancelling job \(jobID) failed: \(error)")
        }
    }

    private func poll(settings: Settings.Print, connection: inout CUPSConnection?) {
        let active = settings.mode != .off || shared.withLock { s in s.journal.requests.contains { $0.state.isLive } }
        guard active else { return }
        shared.withLock { $0.pollSince = Monotonic.now().nanoseconds }
        defer { shared.withLock { $0.pollSince = nil } }
        defer { shared.withLock { $0.polls += 1 } }
        if connection == nil {
            do {
                let c = try CUPSConnection(destination: settings.destination)
                connection = c
                shared.withLock { $0.queueName = c.queueName }
                let options = jobOptions(settings)
                if let rejected = try c.rejectedOption(options.filter { $0.0 != "print-scaling" }) {
                    // Held, nothing submitted, until the settings change (a reload reconnects).
                    setHealth(.unavailable(reasons: ["option-rejected"], message: rejected.description))
                    let first = shared.withLock { s in defer { s.lastError = rejected.description }; return s.lastError != rejected.description }
                    if first { log.error("print: \(rejected); prints are held (fix print.\(settingName(rejected.option)) and reload)") }
                    connection = nil
                    return
                }
                log.info("print: destination \(c.queueName) via \(settings.destination.isEmpty ? "the CUPS default" : "print.destination")")
            } catch {
                setHealth(.unavailable(reasons: ["cups-unreachable"], message: error.description))
                shared.withLock { $0.lastError = error.description }
                return
            }
        }
        guard let c = connection else { return }
        let queue: Result<PrinterAttributes, PrintError>
        do { queue = .success(try c.queueAttributes()) } catch { queue = .failure(error) }
        var device: Result<PrinterAttributes, PrintError>?
        if case let .success(q) = queue, let uri = q.deviceURI, uri.hasPrefix("ipp://") || uri.hasPrefix("ipps://") {
            do { device = .success(try CUPSConnection.deviceAttributes(uri: uri)) } catch { device = .failure(error) }
        }
        var health = PrinterHealth.classify(queue: queue, device: device)
        if case .failure = queue { connection = nil }
        let sheets = shared.withLock { $0.journal.sheetsRemaining }
        if let sheets, sheets > 0, sheets <= settings.paperWarning {
            switch health {
            case .ready, .unknown: health = .warning(reasons: ["paper-low"])
            case let .warning(r): health = .warning(reasons: r + ["paper-low"])
            case .unavailable: break
            }
        }
        // A job needing more sheets than are counted is held (the oldest first, so none jumps it): a
        // refill says paper was loaded. Shown as unavailable with the numbers.
        if let short = shared.withLock({ $0.journal.paperShort(sheetsPerCopy: settings.sheetsPerPicture) }) {
            let reason = short.counted == 0 ? "paper-out" : "paper-count"
            let message = "not enough paper: print \(short.request.id) needs \(counted(short.needs, "sheet")), \(short.counted) counted"
                + " — refill (photoboothctl refill SHEETS)"
            switch health {
            case let .unavailable(r, m): health = .unavailable(reasons: r + [reason], message: m.isEmpty ? message : m)
            default: health = .unavailable(reasons: [reason], message: message)
            }
        } else if sheets == 0 {
            // Nothing can print until a refill: out of paper, whether or not a request waits.
            let message = "0 sheets counted — refill (photoboothctl refill SHEETS)"
            switch health {
            case let .unavailable(r, m): health = .unavailable(reasons: r + ["paper-out"], message: m.isEmpty ? message : m)
            default: health = .unavailable(reasons: ["paper-out"], message: message)
            }
        }
        if let why = shared.withLock({ $0.journal.stoppedAfterFailure }) {
            let message = "printing stopped: \(why); held requests wait until a job completes or photoboothctl prints resume"
            switch health {
            case let .unavailable(r, m): health = .unavailable(reasons: r + ["job-failed"], message: m.isEmpty ? message : m)
            default: health = .unavailable(reasons: ["job-failed"], message: message)
            }
        }
        setHealth(health)

        // Jobs: reconcile the journal with CUPS's list.
        // Held requests too: one whose title CUPS lists was submitted by a run that could not journal it.
        if connection != nil, shared.withLock({ s in s.journal.requests.contains { $0.state.isLive } }) {
            do {
                let jobs = try c.jobs()
                let changes = mutate { $0.journal.reconcile(jobs: jobs, sheetsPerCopy: settings.sheetsPerPicture, now: now()) }
                for ch in changes { report(ch.request, from: ch.from) }
            } catch {
                log.warning("print: job list not read: \(error)")
            }
        }
        // Backlog, then submission.
        let policy: BacklogPolicy = switch settings.backlog {
        case .all: .all
        case .newest: .newest(settings.backlogNewest)
        case .maxAge: .maxAge(seconds: Double(settings.backlogMaxAgeMilliseconds) / 1000)
        }
        let dropped = mutate { s in
            let t = clock.now()
            s.requestedMonotonic = s.requestedMonotonic.filter { s.journal.request($0.key)?.state.isLive == true }
            return s.journal.applyBacklog(policy, now: now(),
                                          heldSeconds: s.requestedMonotonic.mapValues { t.milliseconds(since: $0) / 1000 })
        }
        for r in dropped { log.warning("print \(r.id) (\(r.source)) dropped: \(shared.withLock { $0.journal.request(r.id)?.note } ?? "")") }
        forgetOldFinished()
        // A stop asked for while this poll waited in libcups: nothing more is submitted by this thread.
        guard connection != nil, !shared.withLock({ $0.stopping }) else { return }
        // print.mode off prints nothing, not even requests journaled before it was set off (a start
        // with printing off never prints a surprise): they wait, held, until printing is on again.
        guard settings.mode != .off else {
            let held = shared.withLock { s in s.offNoted ? 0 : s.journal.held.count }
            if held > 0 {
                shared.withLock { $0.offNoted = true }
                log.notice("print.mode is off: \(counted(held, "held request")) not printed (printed once print.mode is auto or press; "
                           + "photoboothctl prints cancel ID drops one)")
            }
            return
        }
        shared.withLock { $0.offNoted = false }
        let next = shared.withLock { s in
            let t = clock.now().nanoseconds
            s.notBefore = s.notBefore.filter { $0.value > t }
            return s.journal.toSubmit(pendingLimit: settings.pendingLimit, health: s.health).filter { s.notBefore[$0.id] == nil }
        }
        for r in next {
            // Each job takes its sheets from the count: the next one must still fit (shown at the next poll).
            if let short = shared.withLock({ $0.journal.paperShort(sheetsPerCopy: settings.sheetsPerPicture) }), short.request.id == r.id { break }
            guard submit(r, settings: settings, connection: c) else { break }
        }
    }

    /// The `print.` key behind an IPP job option.
    private func settingName(_ option: String) -> String {
        switch option {
        case "print-color-mode": "color"
        default: option
        }
    }

    /// Keeps the journal at `PrintJournal.finishedKept` finished requests: older ones are forgotten
    /// (journal written first) and their pages deleted unless a kept request prints the same file.
    private func forgetOldFinished() {
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

    private func jobOptions(_ settings: Settings.Print) -> [(String, String)] { JobOptions(settings).pairs }

    /// - Returns: false when the journal could not be written (nothing more is submitted this poll).
    @discardableResult
    private func submit(_ r: PrintRequest, settings: Settings.Print, connection: CUPSConnection) -> Bool {
        guard let page = FileManager.default.contents(atPath: r.file) else {
            mutate { _ = $0.journal.finish(r.id, .failed, note: "page \(r.file) missing", now: now()) }
            log.error("print \(r.id): page \(r.file) missing; not printed")
            return true
        }
        // Journaled as submitting, on disk, before CUPS sees it: without that entry a restart could
        // not know the job exists (it is found again by its title), so nothing is submitted.
        let (_, durable) = mutateDurably { s in
            if let i = s.journal.requests.firstIndex(where: { $0.id == r.id }) { s.journal.requests[i].state = .submitting }
        }
        guard durable else {
            shared.withLock { s in
                if let i = s.journal.requests.firstIndex(where: { $0.id == r.id }) { s.journal.requests[i].state = .held }
                s.journalVersion += 1
            }
            changed()
            log.warning("print \(r.id) (\(r.source)): not submitted: the journal could not be written; held")
            return false
        }
        // The request's own copies and media, set by name.
        var job = JobOptions(settings)
        job.copies = r.copies
        job.media = r.media
        let options = job.pairs
        // A request held from before a reload keeps its copies and media (its page was rendered for
        // that media): checked again, and failed (reported) rather than sent where it cannot print.
        if let rejected = try? connection.rejectedOption(options.filter { $0.0 != "print-scaling" }) {
            mutate { _ = $0.journal.finish(r.id, .failed, note: rejected.description, now: now()) }
            log.error("print \(r.id) (\(r.source)): not submitted: \(rejected)")
            return true
        }
        do {
            let job = try connection.submit(jpeg: Array(page), title: r.title, options: options)
            mutate { s in
                if let i = s.journal.requests.firstIndex(where: { $0.id == r.id }) {
                    s.journal.requests[i].state = .submitted
                    s.journal.requests[i].jobID = job
                }
            }
            log.info("print \(r.id) (\(r.source)): submitted as job \(job) to \(connection.queueName), \(r.copies) × \(r.media)")
        } catch {
            // Not at CUPS: held again (a job created before the failure was cancelled).
            mutate { s in
                if let i = s.journal.requests.firstIndex(where: { $0.id == r.id }) { s.journal.requests[i].state = .held }
                s.lastError = error.description
            }
            log.warning("print \(r.id): not submitted, held: \(error)")
        }
        return true
    }

    /// The paper left, for the log: `12 sheets left`, `1 sheet left`, or `paper not counted` (no `print.sheets`,
    /// no `refill`).
    static func paperText(_ sheets: Int?) -> String {
        guard let sheets else { return "paper not counted" }
        return "\(counted(sheets, "sheet")) left"
    }

    private func report(_ r: PrintRequest, from: PrintRequestState) {
        switch r.state {
        case .completed:
            let sheets = shared.withLock { $0.journal.sheetsRemaining }
            log.info("print \(r.id) (\(r.source)): job \(r.jobID ?? 0) completed; \(PrintWorker.paperText(sheets))")
        case .aborted, .cancelled, .failed, .dropped:
            log.warning("print \(r.id) (\(r.source)): job \(r.jobID ?? 0) \(r.state.rawValue)\(r.note.map { " (\($0))" } ?? "") — not counted")
        case .held where r.failedJobs != nil && from != .submitting && from != .held:
            log.warning("print \(r.id) (\(r.source)): \(r.note ?? "job failed") — not counted; nothing more is submitted until a job "
                        + "completes or photoboothctl prints resume")
        case .held:
            log.warning("print \(r.id): was being submitted when the booth stopped and never reached CUPS; held again")
        case .submitted, .submitting:
            if from == .submitting { log.info("print \(r.id): found at CUPS as job \(r.jobID ?? 0) after a restart") }
            if from == .held {
                log.warning("print \(r.id): found at CUPS as job \(r.jobID ?? 0) (submitted by a run that could not journal it); not submitted again")
            }
        }
    }

    private func setHealth(_ new: PrinterHealth) {
        let old = shared.withLock { s in defer { s.health = new }; return s.health }
        guard old != new else { return }
        changed()
        switch new {
        case .ready: log.notice("printer ready")
        case let .warning(r): log.warning("printer warning: \(r.joined(separator: ", "))")
        case let .unavailable(r, m): log.warning("printer unavailable: \(r.joined(separator: ", "))\(m.isEmpty ? "" : " (\(m))")")
        case let .unknown(m): log.notice("printer state unknown: \(m)")
        }
    }
}

// PrinterStatus (the printer fields of `status`) is the printer port's: BoothPorts/Printer.swift.
