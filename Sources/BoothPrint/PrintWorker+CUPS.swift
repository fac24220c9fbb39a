import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import FoundationEssentials
import Glibc
import Synchronization

/// CUPS polling and the printer's health: the poll of the queue, the device and the job list (the journal
/// reconciled with it), the backlog policy, the health readers see (unavailable when a poll is overdue) and
/// `status`'s printer fields.
extension PrintWorker {
    /// The printer's health as last polled, or unavailable (`cups-unreachable`) when the poll has not
    /// ended for ``pollDeadlineSeconds`` (CUPS hangs: the print thread waits in libcups).
    public var health: PrinterHealth { shared.withLock { currentHealth($0) } }

    /// How long a poll of CUPS may take before the health readers call the printer unavailable:
    /// max(3 × `print.poll_interval`, 10 s), seconds.
    public static func pollDeadlineSeconds(_ settings: Settings.Print) -> Double {
        max(3 * Double(settings.pollIntervalMilliseconds) / 1000, 10)
    }

    /// The health as readers see it: the polled one, unless the poll is overdue.
    func currentHealth(_ s: Shared) -> PrinterHealth {
        guard let late = overdueSeconds(s) else { return s.health }
        return .unavailable(reasons: ["cups-unreachable"],
                            message: "CUPS has not answered for \(Int(late)) s (a poll may take \(Int(PrintWorker.pollDeadlineSeconds(s.settings))) s)")
    }

    /// Seconds the poll under way has taken, when over the deadline (and the worker is not stopping).
    func overdueSeconds(_ s: Shared) -> Double? {
        guard !s.stopping, let since = s.pollSince else { return nil }
        let elapsed = Double(Monotonic.now().nanoseconds &- since) / 1e9
        return elapsed > PrintWorker.pollDeadlineSeconds(s.settings) ? elapsed : nil
    }

    /// Health polls done (tests wait on it).
    public var polls: Int { shared.withLock { $0.polls } }

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

    func poll(settings: Settings.Print, connection: inout CUPSConnection?) {
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
    func settingName(_ option: String) -> String {
        switch option {
        case "print-color-mode": "color"
        default: option
        }
    }

    func setHealth(_ new: PrinterHealth) {
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
