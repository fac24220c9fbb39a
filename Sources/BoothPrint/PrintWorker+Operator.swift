import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import FoundationEssentials
import Glibc
import Synchronization

/// What the operator asks of printing through `photoboothctl` (and a reload): refill, cancel, reprint, purge,
/// resume, test prints, the journal as `prints list` shows it, new `[print]` settings.
extension PrintWorker {
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
}
