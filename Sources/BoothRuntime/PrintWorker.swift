import BoothCore
import BoothPrint
import Foundation
import Synchronization

/// Printing beside the session: renders pictures for the media, keeps the print journal, polls the
/// printer's health and the jobs' states, submits held requests oldest first within the pending
/// limit, and applies the backlog policy. libcups blocks, so all of it runs on a thread this worker
/// owns ("print"); the loop and the control socket only hand it requests and read its snapshot.
///
/// The journal (`print.journal`, JSON) is rewritten atomically before every submission and on every
/// change, so after a crash nothing is printed twice (a request caught between journal and CUPS is
/// found again by its job title) and nothing is forgotten (held requests wait, subject to the backlog).
public final class PrintWorker: Sendable {
    enum Op: Sendable {
        case request(jpeg: [UInt8], captureID: UInt64?, source: String)
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
        /// Where recent captures were saved, for a print asked after their bytes left memory.
        var savedPaths: [UInt64: String] = [:]
    }

    private let shared: Mutex<Shared>
    private let wake = NSCondition()
    private let done = Mutex(false)
    private let log: Logger
    /// Wall clock in seconds since 1970 (the backlog age survives restarts); tests inject one.
    private let now: @Sendable () -> Double

    /// - Parameters:
    ///   - settings: `[print]`.
    ///   - now: the wall clock, seconds since 1970.
    public init(settings: Settings.Print, log: Logger, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.log = log
        self.now = now
        var journal = PrintWorker.loadJournal(settings.journal, log: log)
        if journal.sheetsRemaining == nil && settings.sheets > 0 { journal.sheetsRemaining = settings.sheets }
        shared = Mutex(Shared(settings: settings, journal: journal))
    }

    // MARK: Journal file

    static func loadJournal(_ path: String, log: Logger) -> PrintJournal {
        let fresh = PrintJournal(tag: String(UUID().uuidString.prefix(8)).lowercased())
        guard let data = FileManager.default.contents(atPath: path) else { return fresh }
        do {
            return try JSONDecoder().decode(PrintJournal.self, from: data)
        } catch {
            let aside = path + ".unreadable"
            _ = rename(path, aside)
            log.error("print journal \(path) unreadable (\(error)); moved to \(aside), starting a new one")
            return fresh
        }
    }

    /// Writes the journal atomically (wraps AtomicFile.write: open, write, fsync, rename).
    private func save(_ s: Shared) {
        do {
            let data = try ControlProtocol.encoder(pretty: true).encode(s.journal)
            try makeDirectories(directoryName(of: s.settings.journal))
            try AtomicFile.write(Array(data), to: s.settings.journal, durable: true, replace: true)
        } catch {
            log.error("print journal not written to \(s.settings.journal): \(error)")
        }
    }

    /// Runs `body` on the shared state and rewrites the journal file when the journal changed (a poll
    /// that changes nothing costs no write and no fsync).
    private func mutate<T>(_ body: (inout Shared) -> T) -> T {
        shared.withLock { s in
            let before = s.journal
            let out = body(&s)
            if s.journal != before { save(s) }
            return out
        }
    }

    // MARK: From the loop and the control socket

    /// Starts the "print" thread.
    public func launch() {
        let t = Thread { [self] in threadMain() }
        t.name = "print"
        t.start()
    }

    /// Stops the thread (within one libcups timeout); the journal is on disk already.
    public func stop(timeoutSeconds: Double = 5) {
        shared.withLock { $0.stopping = true }
        signal()
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        while !done.withLock({ $0 }) && Date() < deadline { usleep(10_000) }
    }

    /// Asks for a print of `jpeg` (a capture, or a test print with `captureID` nil).
    public func request(jpeg: [UInt8], captureID: UInt64?, source: String) {
        post(.request(jpeg: jpeg, captureID: captureID, source: source))
    }

    /// The guest long-pressed in review: capture `captureID` is not printed (cancelled if already asked).
    public func skip(captureID: UInt64) { post(.skip(captureID: captureID)) }

    /// Capture `captureID` is on disk at `path` (a press-mode print comes after the save).
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

    /// New `[print]` settings (reload). A new destination reconnects.
    public func reconfigure(_ settings: Settings.Print) {
        shared.withLock { s in
            if s.settings.destination != settings.destination { s.reconnect = true }
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
            s.journal.add(captureID: nil, source: "reprint of \(original)", file: r.file, copies: s.settings.copies,
                          media: r.media, now: now(), reprintOf: original).id
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
                shared.withLock { save($0) }
            }
            if stopping { return }
            poll(settings: settings, connection: &connection)
            wake.lock()
            if shared.withLock({ $0.inbox.isEmpty && !$0.stopping }) {
                _ = wake.wait(until: Date(timeIntervalSinceNow: Double(settings.pollIntervalMilliseconds) / 1000))
            }
            wake.unlock()
        }
    }

    private func handle(_ op: Op, settings: Settings.Print, renderer: inout PrintRenderer?, connection: CUPSConnection?) {
        switch op {
        case let .request(jpeg, captureID, source):
            guard let media = MediaSize(pwg: settings.media) else {
                log.error("print.media \(settings.media) has no size in its name (like na_index-4x6_4x6in); nothing printed")
                return
            }
            do {
                if renderer == nil { renderer = try PrintRenderer() }
                guard let renderer else { return }
                let page = try renderer.render(jpeg, to: media.pixels(dpi: settings.dpi))
                let id = shared.withLock { $0.journal.nextID }
                let file = "\(settings.spool)/print-\(shared.withLock { $0.journal.tag })-\(id).jpg"
                try makeDirectories(settings.spool)
                try AtomicFile.write(page, to: file, durable: true, replace: true)
                // Journaled in memory here; the thread writes the journal once after the whole batch
                // of requests, before it polls and submits (a burst costs one write, not one each).
                let r = shared.withLock { s in
                    s.journal.add(captureID: captureID, source: source, file: file, copies: settings.copies,
                                  media: settings.media, now: now())
                }
                log.info("print \(r.id) (\(source)): held, \(media.pixels(dpi: settings.dpi)) px on \(settings.media)"
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
                    setHealth(.unavailable(reasons: ["option-rejected"], message: rejected.description))
                    shared.withLock { $0.lastError = rejected.description }
                    log.error("print: \(rejected)")
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
        let dropped = mutate { $0.journal.applyBacklog(policy, now: now()) }
        for r in dropped { log.warning("print \(r.id) (\(r.source)) dropped: \(shared.withLock { $0.journal.request(r.id)?.note } ?? "")") }
        forgetOldFinished()
        guard connection != nil else { return }
        let next = shared.withLock { $0.journal.toSubmit(pendingLimit: settings.pendingLimit, health: $0.health) }
        for r in next { submit(r, settings: settings, connection: c) }
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

    private func report(_ r: PrintRequest, from: PrintRequestState) {
        switch r.state {
        case .completed:
            let sheets = shared.withLock { $0.journal.sheetsRemaining }
            log.info("print \(r.id) (\(r.source)): job \(r.jobID ?? 0) completed; \(sheets.map(String.init) ?? "?") sheets left")
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
