import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import FoundationEssentials
import Glibc
import Synchronization

/// Submission to CUPS: a held request journaled as `submitting` on disk before CUPS sees it, its job's options,
/// cancelling a job, and the log lines of each request's end.
extension PrintWorker {
    func cancelJob(requestID: Int, jobID: Int, note: String, connection: CUPSConnection?) {
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

    func jobOptions(_ settings: Settings.Print) -> [(String, String)] { JobOptions(settings).pairs }

    /// - Returns: false when the journal could not be written (nothing more is submitted this poll).
    @discardableResult
    func submit(_ r: PrintRequest, settings: Settings.Print, connection: CUPSConnection) -> Bool {
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

    func report(_ r: PrintRequest, from: PrintRequestState) {
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
}
