import BoothClock
import BoothCore
import BoothPrint
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
///
/// Locks: the state the loop reads and writes (`shared`) is changed in memory and released before the
/// journal is written (encode, write, fsync, rename); the writes are serialized by a lock of their
/// own that only the print thread and control-socket threads take. A change returns once a journal
/// at least as new as it is on disk, so "journaled before submission" holds, and the loop's calls
/// (`request`, `skip`, `noteSaved`, `reviewText`, `status`) never wait for a disk.
public final class PrintWorker: Sendable {
    enum Op: Sendable {
        case request(jpeg: [UInt8], captureID: UInt64?, source: String, graceMilliseconds: Int)
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
        var stopping = false
        var reconnect = true
        var polls = 0
        /// Bumped by every change of the journal; the version `written` compares against.
        var journalVersion = 0
        /// Where recent captures were saved, for a print asked after their bytes left memory.
        var savedPaths: [UInt64: String] = [:]
        /// Requests not to be submitted before this monotonic instant (ns), by request id: a press-mode
        /// print waits out the long press that would skip it. In memory only: after a restart they may go.
        var notBefore: [Int: UInt64] = [:]
        /// When each request made in this run was journaled, on the worker's monotonic clock: its backlog
        /// age (a wall clock set by NTP mid-event neither drops nor keeps it). An earlier run's requests
        /// are not here; they are aged by the wall clock, which is all that survives a restart.
        var requestedMonotonic: [Int: MonotonicInstant] = [:]
    }

    private let shared: Mutex<Shared>
    /// The journal version on disk. Held while a journal is written, so writes are serialized and an
    /// older snapshot never replaces a newer one; never taken while `shared` is held.
    private let written = Mutex(0)
    /// Writes the journal's bytes to its path durably (AtomicFile: open, write, fsync, rename).
    private let writeJournal: @Sendable ([UInt8], String) throws -> Void
    /// Called after the journal or the printer's health changed (``observe(_:)``).
    private let observer = Mutex<(@Sendable () -> Void)?>(nil)
    private let wake = MonotonicCondition()
    private let done = Mutex(false)
    private let log: Logger
    /// Wall clock in seconds since 1970: the journal's times (and the backlog age of an earlier run's
    /// requests); tests inject one.
    private let now: @Sendable () -> Double
    /// The backlog age of this run's requests (``Shared/requestedMonotonic``); tests inject one.
    private let clock: any MonotonicClock

    /// - Parameters:
    ///   - settings: `[print]`.
    ///   - now: the wall clock, seconds since 1970.
    ///   - clock: the monotonic clock that ages this run's held requests (`print.backlog_max_age`).
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
        shared = Mutex(Shared(settings: settings, journal: journal))
    }

    // MARK: Journal file

    static func loadJournal(_ path: String, log: Logger) -> PrintJournal {
        let fresh = PrintJournal(tag: String(UUID().uuidString.prefix(8)).lowercased())
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
    private func persist(_ journal: PrintJournal, version: Int, path: String) {
        written.withLock { onDisk in
            guard version > onDisk else { return }
            do {
                let data = try ControlProtocol.encoder(pretty: true).encode(journal)
                try makeDirectories(directoryName(of: path))
                try writeJournal(Array(data), path)
                onDisk = version
            } catch {
                log.error("print journal not written to \(path): \(error)")
            }
        }
    }

    /// Changes the shared state under its lock, then writes the journal with the lock released;
    /// returns once this change (or a newer one) is on disk. A change that leaves the journal as it
    /// was (a poll that drops nothing) writes nothing.
    private func mutate<T>(_ body: (inout Shared) -> T) -> T {
        let (out, snapshot) = shared.withLock { s -> (T, (PrintJournal, Int, String)?) in
            let before = s.journal
            let out = body(&s)
            guard s.journal != before else { return (out, nil) }
            s.journalVersion += 1
            return (out, (s.journal, s.journalVersion, s.settings.journal))
        }
        if let (journal, version, path) = snapshot { persist(journal, version: version, path: path) }
        changed()
        return out
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
        OSThread.start(name: "print") { [self] in threadMain() }
    }

    /// Stops the thread (within one libcups timeout); the journal is on disk already.
    public func stop(timeoutSeconds: Double = 5) {
        shared.withLock { $0.stopping = true }
        signal()
        let deadline = Monotonic.now().adding(milliseconds: Int64(timeoutSeconds * 1000))
        while !done.withLock({ $0 }) && Monotonic.now() < deadline { usleep(10_000) }
    }

    /// Asks for a print of `jpeg`: a session's picture (`captureID` is the picture's id: the composed
    /// picture's, or the capture's for one shot without a composer), or a test print with `captureID` nil.
    /// - Parameter graceMilliseconds: the request is journaled at once but not submitted before this
    ///   long has passed (monotonic clock), so a `skip` within it keeps it from CUPS altogether.
    public func request(jpeg: [UInt8], captureID: UInt64?, source: String, graceMilliseconds: Int = 0) {
        post(.request(jpeg: jpeg, captureID: captureID, source: source, graceMilliseconds: graceMilliseconds))
    }

    /// The guest long-pressed in review: picture `captureID` is not printed (cancelled if already asked).
    public func skip(captureID: UInt64) { post(.skip(captureID: captureID)) }

    /// Capture or picture `captureID` is on disk at `path` (a press-mode print comes after the save).
    public func noteSaved(captureID: UInt64, path: String) {
        shared.withLock { s in
            s.savedPaths[captureID] = path
            if s.savedPaths.count > 32, let oldest = s.savedPaths.keys.min() { s.savedPaths[oldest] = nil }
        }
    }

    /// The saved photo of capture `captureID`, if it was noted and is readable.
    public func savedPhoto(captureID: UInt64) -> [UInt8]? {
        guard let path = shared.withLock({ $0.savedPaths[captureID] }),
              let data = FileManager.default.contents(atPath: path) else { return nil }
        return Array(data)
    }

    /// New `[print]` settings (reload). A new destination, copies, media or colour reconnects (and so
    /// checks the options against the destination again).
    public func reconfigure(_ settings: Settings.Print) {
        shared.withLock { s in
            let old = s.settings
            if old.destination != settings.destination || old.copies != settings.copies || old.media != settings.media
                || old.color != settings.color { s.reconnect = true }
            s.settings = settings
        }
        signal()
    }

    /// `photoboothctl refill SHEETS`: sets the paper counter.
    public func refill(sheets: Int) {
        mutate { $0.journal.sheetsRemaining = sheets }
        log.notice("paper refilled: \(sheets) sheets")
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
    public func reprint(requestID id: Int) -> Result<Int, ControlFailure> {
        let s = shared.withLock { $0 }
        guard let r = s.journal.request(id) else { return .failure(ControlFailure(code: "not-found", message: "no print request \(id)")) }
        let original = r.reprintOf ?? id
        guard s.journal.reprints(of: original) < s.settings.reprintLimit else {
            return .failure(ControlFailure(code: "limit", message: "request \(original) was reprinted \(s.settings.reprintLimit) time(s) already (print.reprint_limit)"))
        }
        guard FileManager.default.fileExists(atPath: r.file) else {
            return .failure(ControlFailure(code: "not-found", message: "the page of request \(id) is gone (\(r.file)); purged?"))
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
        log.notice("prints purge: \(n) finished requests forgotten")
        return n
    }

    /// The journal as it is now.
    public var journal: PrintJournal { shared.withLock { $0.journal } }
    /// The printer's health as last polled.
    public var health: PrinterHealth { shared.withLock { $0.health } }
    /// Health polls done (tests wait on it).
    public var polls: Int { shared.withLock { $0.polls } }

    /// What the review screen says about printing capture `captureID` (nil: nothing asked for it).
    public func reviewText(captureID: UInt64) -> String? {
        shared.withLock { s in
            reviewPrintText(health: s.health, request: s.journal.requests.last { $0.captureID == captureID })
        }
    }

    /// Printer fields for `status`.
    public func status() -> PrinterStatus {
        shared.withLock { s in
            var message: String?
            if case let .unavailable(_, m) = s.health, !m.isEmpty { message = m }
            if case let .unknown(m) = s.health { message = m }
            return PrinterStatus(mode: s.settings.mode.rawValue, destination: s.settings.destination, queue: s.queueName,
                                 health: s.health.name, reasons: s.health.reasons, message: message,
                                 sheetsRemaining: s.journal.sheetsRemaining,
                                 held: s.journal.requests.filter { $0.state == .held }.count,
                                 outstanding: s.journal.outstanding,
                                 completed: s.journal.requests.filter { $0.state == .completed }.count,
                                 lastError: s.lastError)
        }
    }

    private func post(_ op: Op) {
        shared.withLock { $0.inbox.append(op) }
        signal()
    }

    private func signal() {
        wake.lock()
        wake.signal()
        wake.unlock()
    }

    // MARK: The print thread

    private func threadMain() {
        var connection: CUPSConnection?
        var renderer: PrintRenderer?
        defer { done.withLock { $0 = true } }
        while true {
            let (ops, stopping, settings, reconnect) = shared.withLock { s in
                defer { s.inbox = []; s.reconnect = false }
                return (s.inbox, s.stopping, s.settings, s.reconnect)
            }
            if reconnect { connection = nil }
            // Requests asked for before a stop are journaled (held) before the thread ends: a print
            // asked for at the last moment is printed after the restart, never forgotten.
            for op in ops { handle(op, settings: settings, renderer: &renderer, connection: connection) }
            if ops.contains(where: { if case .request = $0 { true } else { false } }) {
                persistNow()
            }
            if stopping { return }
            poll(settings: settings, connection: &connection)
            wake.lock()
            let (idle, graceEnds) = shared.withLock { ($0.inbox.isEmpty && !$0.stopping, $0.notBefore.values.min()) }
            if idle {
                // The next poll, or sooner when a request's grace ends before it.
                var seconds = Double(settings.pollIntervalMilliseconds) / 1000
                if let graceEnds {
                    let t = SystemClock.monotonicNow().nanoseconds
                    seconds = min(seconds, graceEnds > t ? max(0.01, Double(graceEnds - t) / 1e9) : 0.01)
                }
                _ = wake.wait(milliseconds: seconds * 1000)
            }
            wake.unlock()
        }
    }

    private func handle(_ op: Op, settings: Settings.Print, renderer: inout PrintRenderer?, connection: CUPSConnection?) {
        switch op {
        case let .request(jpeg, captureID, source, grace):
            let media: MediaSize
            switch MediaSize.parse(settings.media) {
            case let .success(m): media = m
            case let .failure(p):
                log.error("print of \(source) not rendered: print.media: \(p.message); nothing printed")
                shared.withLock { $0.lastError = "print.media: \(p.message)" }
                return
            }
            do {
                let size = try PrintRenderer.pageSize(for: media, dpi: settings.dpi)
                if renderer == nil { renderer = try PrintRenderer() }
                guard let renderer else { return }
                let page = try renderer.render(jpeg, to: size)
                let id = shared.withLock { $0.journal.nextID }
                let file = "\(settings.spool)/print-\(shared.withLock { $0.journal.tag })-\(id).jpg"
                try makeDirectories(settings.spool)
                try AtomicFile.write(page, to: file, durable: true, replace: true)
                // Journaled in memory here; the thread writes the journal once after the whole batch
                // of requests, before it polls and submits (a burst costs one write, not one each).
                let r = shared.withLock { s in
                    let r = s.journal.add(captureID: captureID, source: source, file: file, copies: settings.copies,
                                          media: settings.media, now: now())
                    s.requestedMonotonic[r.id] = clock.now()
                    if grace > 0 { s.notBefore[r.id] = SystemClock.monotonicNow().nanoseconds + UInt64(max(0, grace)) * 1_000_000 }
                    return r
                }
                log.info("print \(r.id) (\(source)): held, \(size) px on \(settings.media)"
                         + " — guest sees: \(reviewText(captureID: captureID ?? .max) ?? "-")")
            } catch {
                log.error("print of \(source) not rendered: \(error)")
                shared.withLock { $0.lastError = "render: \(error)" }
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

    private func cancelJob(requestID: Int, jobID: Int, note: String, connection: CUPSConnection?) {
        guard let connection else {
            log.warning("print \(requestID): job \(jobID) not cancelled, CUPS not reachable")
            return
        }
        do {
            try connection.cancel(job: jobID)
            mutate { s in
                if let i = s.journal.requests.firstIndex(where: { $0.id == requestID }) { s.journal.requests[i].note = note }
            }
            log.info("print \(requestID): job \(jobID) cancelled (\(note))")
        } catch {
            log.warning("print \(requestID): cancelling job \(jobID) failed: \(error)")
        }
    }

    private func poll(settings: Settings.Print, connection: inout CUPSConnection?) {
        let active = settings.mode != .off || shared.withLock { s in s.journal.requests.contains { $0.state.isLive } }
        guard active else { return }
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
        if let sheets, sheets <= settings.paperWarning {
            switch health {
            case .ready, .unknown: health = .warning(reasons: ["paper-low"])
            case let .warning(r): health = .warning(reasons: r + ["paper-low"])
            case .unavailable: break
            }
        }
        setHealth(health)

        // Jobs: reconcile the journal with CUPS's list.
        if connection != nil, shared.withLock({ $0.journal.outstanding > 0 }) {
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
        guard connection != nil else { return }
        let next = shared.withLock { s in
            let t = SystemClock.monotonicNow().nanoseconds
            s.notBefore = s.notBefore.filter { $0.value > t }
            return s.journal.toSubmit(pendingLimit: settings.pendingLimit, health: s.health).filter { s.notBefore[$0.id] == nil }
        }
        for r in next { submit(r, settings: settings, connection: c) }
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

    private func jobOptions(_ settings: Settings.Print) -> [(String, String)] {
        [("copies", String(settings.copies)), ("media", settings.media),
         ("print-color-mode", settings.color.rawValue), ("print-scaling", "none")]
    }

    private func submit(_ r: PrintRequest, settings: Settings.Print, connection: CUPSConnection) {
        guard let page = FileManager.default.contents(atPath: r.file) else {
            mutate { _ = $0.journal.finish(r.id, .failed, note: "page \(r.file) missing", now: now()) }
            log.error("print \(r.id): page \(r.file) missing; not printed")
            return
        }
        // Journaled as submitting before CUPS sees it.
        mutate { s in
            if let i = s.journal.requests.firstIndex(where: { $0.id == r.id }) { s.journal.requests[i].state = .submitting }
        }
        var options = jobOptions(settings)
        options[0] = ("copies", String(r.copies))
        options[1] = ("media", r.media)
        // A request held from before a reload keeps its copies and media (its page was rendered for
        // that media): checked again, and failed (reported) rather than sent where it cannot print.
        if let rejected = try? connection.rejectedOption(options.filter { $0.0 != "print-scaling" }) {
            mutate { _ = $0.journal.finish(r.id, .failed, note: rejected.description, now: now()) }
            log.error("print \(r.id) (\(r.source)): not submitted: \(rejected)")
            return
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
    }

    /// The paper left, for the log: `12 sheets left`, `1 sheet left`, or `paper not counted` (no `print.sheets`,
    /// no `refill`).
    static func paperText(_ sheets: Int?) -> String {
        guard let sheets else { return "paper not counted" }
        return sheets == 1 ? "1 sheet left" : "\(sheets) sheets left"
    }

    private func report(_ r: PrintRequest, from: PrintRequestState) {
        switch r.state {
        case .completed:
            let sheets = shared.withLock { $0.journal.sheetsRemaining }
            log.info("print \(r.id) (\(r.source)): job \(r.jobID ?? 0) completed; \(PrintWorker.paperText(sheets))")
        case .aborted, .cancelled, .failed, .dropped:
            log.warning("print \(r.id) (\(r.source)): job \(r.jobID ?? 0) \(r.state.rawValue)\(r.note.map { " (\($0))" } ?? "") — not counted")
        case .held:
            log.warning("print \(r.id): was being submitted when the booth stopped and never reached CUPS; held again")
        case .submitted, .submitting:
            if from == .submitting { log.info("print \(r.id): found at CUPS as job \(r.jobID ?? 0) after a restart") }
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

/// Printer fields of `status`.
public struct PrinterStatus: Codable, Sendable, Equatable {
    /// `print.mode`.
    public var mode: String
    /// `print.destination` as configured (empty: the CUPS default).
    public var destination: String
    /// The queue CUPS resolved, once connected.
    public var queue: String?
    /// `ready`, `warning`, `unavailable`, `unknown`.
    public var health: String
    /// The reasons (`media-empty`, `offline`, `paper-low`…).
    public var reasons: [String]
    public var message: String?
    /// The paper counter.
    public var sheetsRemaining: Int?
    /// Requests held in the journal.
    public var held: Int
    /// Jobs out at CUPS.
    public var outstanding: Int
    /// Requests completed among those the journal keeps (every live one and the newest `PrintJournal.finishedKept` finished).
    public var completed: Int
    public var lastError: String?
}
