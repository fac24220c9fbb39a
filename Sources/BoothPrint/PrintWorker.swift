import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import BoothSystem
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
///
/// This file holds the worker's core: its state, the loop's calls and the print thread. Its other concerns
/// are extensions of their own, whose shared members are therefore internal, not private: the journal file and
/// its reserve (PrintWorker+Journal.swift), the operator's calls (+Operator), the spool (+Spool), CUPS polling
/// and health (+CUPS), submission (+Submission) and the review screen's wording (+Review).
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

    let shared: Mutex<Shared>
    /// The journal version on disk. Held while a journal is written, so writes are serialized and an
    /// older snapshot never replaces a newer one; never taken while `shared` is held.
    let written = Mutex(0)
    /// Writes the journal's bytes to its path durably (AtomicFile: open, write, fsync, rename).
    let writeJournal: @Sendable ([UInt8], String) throws -> Void
    /// Called after the journal or the printer's health changed (``observe(_:)``).
    let observer = Mutex<(@Sendable () -> Void)?>(nil)
    /// The "print" thread (``threadMain(_:)``): renders, journals, polls CUPS and submits.
    let printThread = WorkerThread(name: "print")
    /// The "print-watch" thread (``watchMain(_:)``); ends with the print thread.
    let watchThread = WorkerThread(name: "print-watch")
    let log: Logger
    /// Wall clock in seconds since 1970: the journal's times (and the backlog age of an earlier run's
    /// requests); tests inject one.
    let now: @Sendable () -> Double
    /// The backlog age of this run's requests (``Shared/requestedMonotonic``) and the press-mode grace
    /// (``Shared/notBefore``); tests inject one. CUPS's liveness (a poll overdue) and the retries of the
    /// reserve and of pages are on the real clock (``Monotonic/now()``): they measure what the
    /// machine does, not the booth's timers.
    let clock: any MonotonicClock

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
    func watchMain(_ w: WorkerThread) {
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
    func promiseLocked(_ s: inout Shared, captureID: UInt64, path: String, promise: PrintPromise) -> PrintRequest? {
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

    func post(_ op: Op) {
        shared.withLock { $0.inbox.append(op) }
        signal()
    }

    /// Wakes the print thread for another round (never called with `shared` held: the thread's wait
    /// reads `shared` under the worker's lock).
    func signal() { printThread.wake() }

    // MARK: The print thread

    func threadMain(_ w: WorkerThread) {
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

    func handle(_ op: Op, settings: Settings.Print, renderer: inout PrintRenderer?, connection: CUPSConnection?) {
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

}

// PrinterStatus (the printer fields of `status`) is the printer port's: BoothPorts/Printer.swift.
