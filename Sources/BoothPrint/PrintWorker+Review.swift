import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import FoundationEssentials
import Glibc
import Synchronization

/// What the review screen says about a picture's print: the wording (``reviewPrintText(health:request:sentNext:)``)
/// and the worker's answer for one picture.
extension PrintWorker {
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
}

/// What the review screen says about printing, from the printer's health and this picture's request
/// (nil when printing is off or nothing was asked for this picture). `sentNext`: the held request goes
/// out as soon as its press-mode grace (`button.long_press`) ends, nothing ahead of it: "Printing…".
public func reviewPrintText(health: PrinterHealth, request: PrintRequest?, sentNext: Bool = false) -> String? {
    guard let request else { return nil }
    switch request.state {
    case .completed: return "Printed"
    case .cancelled where request.note == PrintJournal.cancelledAtPrinter: return "Printing failed — your photo is saved"
    case .cancelled: return "Not printing"
    case .dropped, .aborted, .failed: return "Printing failed — your photo is saved"
    case .held, .submitting, .submitted:
        // Its own job failed (held again): a failure. Another's job failed and nothing is sent until the
        // printer prints again: this one was never tried, so it waits on the operator, not failed.
        if request.failedJobs != nil { return "Printing failed — your photo is saved" }
        if request.state == .held && health.reasons.contains("job-failed") { return "Printer needs attention — your photo is saved" }
        if case let .unavailable(reasons, _) = health {
            if reasons.contains("media-empty") || reasons.contains("media-needed") {
                return "Out of paper — your photo is saved"
            }
            if reasons.contains("media-jam") { return "Paper jam — your photo is saved" }
            if reasons.contains("paper-out") { return "Out of paper — your photo is saved" }
            if reasons.contains("paper-count") { return "Not enough paper — your photo is saved" }
            if reasons.contains("option-rejected") { return "Printer not set up for this print — your photo is saved" }
            if reasons.contains("offline") || reasons.contains("cups-unreachable") { return "Printer offline — your photo is saved" }
            return "Printer paused — your photo is saved"
        }
        return request.state == .held && !sentNext ? "Waiting to print…" : "Printing…"
    }
}
