import BoothCore
import BoothPorts
import FoundationEssentials
import Glibc

/// Where a print request is. `held` and `submitting`/`submitted` are live; the rest are final.
public enum PrintRequestState: String, Codable, Sendable, Equatable {
    /// Journaled, waiting for the printer to be ready and a pending slot to be free.
    case held
    /// Journaled as about to be submitted; the job id is not known yet (a crash here is resolved by the
    /// job's title in CUPS's job list).
    case submitting
    /// At CUPS as job `jobID`, not finished.
    case submitted
    /// The job completed: counted on the paper counter.
    case completed
    /// The printer or CUPS aborted the job: reported, not counted.
    case aborted
    /// Cancelled (at the printer, by `photoboothctl prints cancel`, or a long press): reported, not counted.
    case cancelled
    /// Dropped by the backlog policy (held too long, or older than the newest N): reported.
    case dropped
    /// Could not be submitted (the destination rejected it): reported.
    case failed

    public var isLive: Bool { self == .held || self == .submitting || self == .submitted }
}

/// One print request, as the journal keeps it.
public struct PrintRequest: Codable, Sendable, Equatable {
    /// The journal's number for it (`photoboothctl prints reprint ID`).
    public var id: Int
    /// The booth's capture id (this run only), nil for test prints and reprints.
    public var captureID: UInt64?
    /// What it is: `"session 12"`, `"test print"`, `"reprint of 3"`.
    public var source: String
    /// The rendered page (JPEG at the media's size) in the spool directory.
    public var file: String
    public var copies: Int
    public var media: String
    /// When it was requested, seconds since 1970 (wall clock: the backlog age survives a restart).
    public var requestedAt: Double
    public var state: PrintRequestState
    /// CUPS's job id, once submitted.
    public var jobID: Int?
    /// The job's `job-name`, unique per request: how a job submitted just before a crash is found again.
    public var title: String
    /// Why it ended as it did (dropped, aborted, failed), or nil.
    public var note: String?
    /// The request this one reprints, or nil.
    public var reprintOf: Int?
    /// When it reached its final state, seconds since 1970.
    public var finishedAt: Double?
    /// Jobs of this request that failed at the printer (aborted, or cancelled there, not by the booth),
    /// each held again; nil: none. The next job's title carries it (`photobooth-TAG-ID-N`).
    public var failedJobs: Int?
    /// True while the page at `file` is not written yet (the spool's file system was full): the request
    /// is held, not submitted, and the page is rendered again (from memory, or from `photo` after a
    /// restart) until it is written. Nil (absent in journals before it existed): the page is written.
    public var renderPending: Bool?
    /// The saved picture the page is rendered from (`storage.dir`), when known: a page not yet written
    /// is rendered from it after a restart.
    public var photo: String?
    /// The QR code's text (the picture's URL) and corner (`picture.qr`) its page carries, when it has one.
    public var codeText: String?
    public var codeCorner: String?

    public init(id: Int, captureID: UInt64?, source: String, file: String, copies: Int, media: String,
                requestedAt: Double, title: String, reprintOf: Int? = nil) {
        self.id = id
        self.captureID = captureID
        self.source = source
        self.file = file
        self.copies = copies
        self.media = media
        self.requestedAt = requestedAt
        self.state = .held
        self.title = title
        self.reprintOf = reprintOf
    }
}

/// What happens to requests held while the printer was unavailable.
public enum BacklogPolicy: Equatable, Sendable {
    /// Every one prints, oldest first.
    case all
    /// Only the newest `n` held requests; older ones are dropped.
    case newest(Int)
    /// Requests older than this many seconds are dropped.
    case maxAge(seconds: Double)
}

/// The print journal: every request, the paper counter. Pure: the runtime persists it (atomically,
/// before each submission) and feeds it CUPS's job list; these methods decide.
public struct PrintJournal: Codable, Sendable, Equatable {
    public var requests: [PrintRequest] = []
    public var nextID = 1
    /// Sheets left (nil: never set; `print.sheets` then seeds it).
    public var sheetsRemaining: Int?
    /// A random tag of this journal, part of every job title (so jobs of another booth on the same
    /// queue are never taken for ours).
    public var tag: String
    /// Requests completed since the journal began (`status`'s `printed`): not lowered when finished
    /// requests are forgotten or purged. Nil in journals from before it was kept (counted at load).
    public var printed: Int?
    /// Jobs that failed at the printer since the journal began (aborted, or cancelled at the printer);
    /// `status`'s `failed`. Nil in journals from before it was kept.
    public var failedJobs: Int?
    /// Why nothing is submitted: a job failed at the printer (`print 3's job 12 cancelled at the printer`),
    /// and no job has completed since nor has the operator resumed (`photoboothctl prints resume`).
    /// Nil: submitting. Kept across restarts, so a restart does not send the held backlog to a failing printer.
    public var stoppedAfterFailure: String?

    /// The note of a job CUPS or the printer cancelled (not the booth: its own cancels note who asked).
    public static let cancelledAtPrinter = "cancelled at the printer"
    /// The end of the note of a request whose job failed at the printer (`job 12 aborted at the printer; held again`).
    static let heldAgainSuffix = "; held again"

    public init(tag: String) {
        self.tag = tag
        printed = 0
    }

    /// A new held request for `file`; returns it (also appended).
    public mutating func add(captureID: UInt64?, source: String, file: String, copies: Int, media: String,
                             now: Double, reprintOf: Int? = nil) -> PrintRequest {
        let id = nextID
        nextID += 1
        let r = PrintRequest(id: id, captureID: captureID, source: source, file: file, copies: copies, media: media,
                             requestedAt: now, title: "photobooth-\(tag)-\(id)", reprintOf: reprintOf)
        requests.append(r)
        return r
    }

    /// A print `print.mode` promised for saved picture `captureID` (at `photo`), journaled with the save
    /// before its page is rendered: a held request whose page is `renderPending`, rendered from `photo`
    /// (by the runtime's request in this run, from the file after a restart). Nil when the journal has a
    /// request for `captureID` already (asked for before the save: that one is the print).
    /// - Parameters:
    ///   - spool: `print.spool`, where the page will be written (`print-TAG-ID.jpg`).
    ///   - now: the wall clock, seconds since 1970.
    public mutating func promise(captureID: UInt64, source: String, photo: String, spool: String, copies: Int,
                                 media: String, code: PageCode?, now: Double) -> PrintRequest? {
        guard !requests.contains(where: { $0.captureID == captureID }) else { return nil }
        var r = add(captureID: captureID, source: source, file: "\(spool)/print-\(tag)-\(nextID).jpg", copies: copies,
                    media: media, now: now)
        r.renderPending = true
        r.photo = photo
        r.codeText = code?.text
        r.codeCorner = code?.corner.rawValue
        requests[requests.count - 1] = r
        return r
    }

    /// The request with journal id `id`, or nil when there is none.
    public func request(_ id: Int) -> PrintRequest? { requests.first { $0.id == id } }

    /// Jobs out at CUPS (submitting or submitted).
    public var outstanding: Int { requests.filter { $0.state == .submitting || $0.state == .submitted }.count }

    /// Sheets the jobs out at CUPS will take off the paper counter when they complete.
    public func sheetsCommitted(sheetsPerCopy: Int) -> Int {
        requests.filter { $0.state == .submitting || $0.state == .submitted }.reduce(0) { $0 + $1.copies * sheetsPerCopy }
    }

    /// The oldest held request whose page is written, when it needs more sheets than the paper counter
    /// leaves after the jobs out at CUPS: `needs` sheets (copies × `sheetsPerCopy`), `counted` left for it.
    /// Nil when the paper is not counted (`sheetsRemaining` nil) or the next request fits.
    public func paperShort(sheetsPerCopy: Int) -> (request: PrintRequest, needs: Int, counted: Int)? {
        guard let sheets = sheetsRemaining, let next = held.first(where: { $0.renderPending != true }) else { return nil }
        let counted = max(0, sheets - sheetsCommitted(sheetsPerCopy: sheetsPerCopy))
        let needs = next.copies * sheetsPerCopy
        return needs > counted ? (next, needs, counted) : nil
    }

    /// Held requests, oldest first.
    public var held: [PrintRequest] { requests.filter { $0.state == .held }.sorted { ($0.requestedAt, $0.id) < ($1.requestedAt, $1.id) } }

    /// Marks request `id` final with `state`; returns it as it was before, or nil if unknown.
    @discardableResult
    public mutating func finish(_ id: Int, _ state: PrintRequestState, note: String?, now: Double) -> PrintRequest? {
        guard let i = requests.firstIndex(where: { $0.id == id }) else { return nil }
        let before = requests[i]
        requests[i].state = state
        requests[i].note = note
        requests[i].finishedAt = now
        return before
    }

    /// Applies the backlog policy to held requests; returns those dropped (now `dropped`).
    /// - Parameters:
    ///   - now: the wall clock, seconds since 1970.
    ///   - heldSeconds: how long each request made in this run has been held, in seconds on the monotonic
    ///     clock, by id. A request not in it (an earlier run's) is aged by the wall clock, `now - requestedAt`,
    ///     never below 0; `max-age` uses these ages.
    public mutating func applyBacklog(_ policy: BacklogPolicy, now: Double, heldSeconds: [Int: Double] = [:]) -> [PrintRequest] {
        let held = self.held
        var drop: [(PrintRequest, String)] = []
        switch policy {
        case .all: break
        case let .newest(n):
            if held.count > n {
                drop = held.prefix(held.count - n).map { ($0, "only the newest \(n) held prints are kept") }
            }
        case let .maxAge(seconds):
            drop = held.filter { (heldSeconds[$0.id] ?? max(0, now - $0.requestedAt)) > seconds }
                .map { ($0, "held longer than \(Int(seconds)) s (the guest is gone)") }
        }
        return drop.compactMap { r, note in finish(r.id, .dropped, note: note, now: now).map { _ in r } }
    }

    /// The held requests to submit now, oldest first: none while `health` forbids it, else as many as
    /// the pending limit leaves room for.
    public func toSubmit(pendingLimit: Int, health: PrinterHealth) -> [PrintRequest] {
        guard health.allowsSubmission, stoppedAfterFailure == nil else { return [] }
        return Array(held.filter { $0.renderPending != true }.prefix(max(0, pendingLimit - outstanding)))
    }

    /// One change `reconcile` made.
    public struct Change: Equatable, Sendable {
        public var request: PrintRequest
        public var from: PrintRequestState
    }

    /// Brings live requests in line with CUPS's job list: a finished job finishes its
    /// request (completed ones take `sheetsPerCopy × copies` off the paper counter); a `submitting`
    /// request whose title (`job-name`) is in the list takes that job's id; one whose title is not was
    /// never submitted and is held again. A held request whose title is in the list was submitted by a
    /// run that could not journal it (a full disk, a crash): it takes that job, and is never submitted
    /// again. A submitted job CUPS no longer lists is taken as completed (CUPS forgets finished jobs
    /// only) — never submitted again. A job that failed at the printer (aborted, or cancelled there and
    /// not by the booth) holds its request again, under a new title, and stops submission
    /// (``stoppedAfterFailure``) until a job completes or the operator resumes (``resume()``): one
    /// failing printer costs one job, not the whole held backlog.
    public mutating func reconcile(jobs: [CUPSJob], sheetsPerCopy: Int, now: Double) -> [Change] {
        var changes: [Change] = []
        for i in requests.indices where requests[i].state.isLive {
            if requests[i].state == .held && !jobs.contains(where: { $0.title == requests[i].title }) { continue }
            let before = requests[i]
            let job: CUPSJob?
            if let id = before.jobID {
                job = jobs.first { $0.id == id }
            } else {
                job = jobs.first { $0.title == before.title }
            }
            if let job {
                requests[i].jobID = job.id
                requests[i].state = .submitted
                switch job.state {
                case .completed: requests[i].state = .completed
                case .aborted: requests[i].state = .aborted; requests[i].note = "aborted by the printer or CUPS"
                case .cancelled:
                    // A note the booth's own cancel left says who asked; the one an earlier failed job left
                    // ("…; held again") does not: that job's request was failed by the printer again.
                    let boothNote = before.note.flatMap { $0.hasSuffix(PrintJournal.heldAgainSuffix) ? nil : $0 }
                    requests[i].state = .cancelled; requests[i].note = boothNote ?? PrintJournal.cancelledAtPrinter
                case .pending, .held, .processing, .stopped: break
                }
                if requests[i].state == .aborted || requests[i].note == PrintJournal.cancelledAtPrinter && requests[i].state == .cancelled {
                    let what = requests[i].state == .aborted ? "aborted at the printer" : PrintJournal.cancelledAtPrinter
                    let attempts = (before.failedJobs ?? 0) + 1
                    requests[i].state = .held
                    requests[i].jobID = nil
                    requests[i].failedJobs = attempts
                    requests[i].title = "photobooth-\(tag)-\(before.id)-\(attempts)"
                    requests[i].note = "job \(job.id) \(what)\(PrintJournal.heldAgainSuffix)"
                    failedJobs = (failedJobs ?? 0) + 1
                    stoppedAfterFailure = "print \(before.id)'s job \(job.id) \(what)"
                }
            } else if before.state == .submitting {
                requests[i].state = .held
            } else {
                requests[i].state = .completed
                requests[i].note = "job \(before.jobID ?? 0) no longer listed by CUPS"
            }
            if !requests[i].state.isLive { requests[i].finishedAt = now }
            if requests[i].state == .completed {
                printed = (printed ?? 0) + 1
                stoppedAfterFailure = nil   // the printer proved itself
                if let s = sheetsRemaining { sheetsRemaining = max(0, s - requests[i].copies * sheetsPerCopy) }
            }
            if requests[i] != before { changes.append(Change(request: requests[i], from: before.state)) }
        }
        return changes
    }

    /// How many finished requests the journal keeps, newest first, for `photoboothctl prints list` and
    /// reprints. Older ones are forgotten as new ones finish, so a booth that runs all season keeps a
    /// journal (and a memory footprint) of bounded size; the soak test found it growing by one request
    /// per session.
    public static let finishedKept = 100

    /// Forgets the oldest finished requests (lowest ids) beyond the newest `keeping`; live requests are
    /// never forgotten.
    /// - Returns: the forgotten requests, oldest first (the caller deletes pages no kept request uses).
    public mutating func forgetFinished(keeping: Int) -> [PrintRequest] {
        let finished = requests.filter { !$0.state.isLive }.map(\.id).sorted()
        guard finished.count > max(0, keeping) else { return [] }
        let forget = Set(finished.prefix(finished.count - max(0, keeping)))
        let gone = requests.filter { forget.contains($0.id) }.sorted { $0.id < $1.id }
        requests.removeAll { forget.contains($0.id) }
        return gone
    }

    /// `photoboothctl prints resume`: submission goes on after a failed job (``stoppedAfterFailure``).
    /// - Returns: what had stopped it, nil when nothing had.
    public mutating func resume() -> String? {
        defer { stoppedAfterFailure = nil }
        return stoppedAfterFailure
    }

    /// Forgets finished requests; returns how many.
    public mutating func purge() -> Int {
        let before = requests.count
        requests.removeAll { !$0.state.isLive }
        return before - requests.count
    }

    /// Reprints of request `id` so far.
    public func reprints(of id: Int) -> Int { requests.filter { $0.reprintOf == id }.count }

    /// The most copies a request may ask for in a journal file: `print.copies`'s own bound (``Settings/Print/copiesRange``).
    public static let maxCopies = Settings.Print.copiesRange.upperBound
    /// The highest request id a journal file may use (`nextID` included); far above a booth's lifetime of prints.
    public static let maxID = Int(Int32.max)

    /// A journal file's JSON (`PrintWorker` writes it with `JSONEncoder`), checked so that counting on from it
    /// cannot overflow: `nextID` in 1…``maxID`` and above every request's id, ids positive, `copies` in
    /// 1…``maxCopies``, `sheetsRemaining` not negative.
    /// - Throws: `DecodingError` for bytes that are not a journal; ``PrintJournalError`` for a journal with
    ///   values out of those ranges (a corrupt or hand-edited file).
    public static func decode(_ data: Data) throws -> PrintJournal {
        let journal = try JSONDecoder().decode(PrintJournal.self, from: data)
        guard (1...maxID).contains(journal.nextID) else {
            throw PrintJournalError("nextID \(journal.nextID) is outside 1…\(maxID)")
        }
        if let sheets = journal.sheetsRemaining, sheets < 0 {
            throw PrintJournalError("sheetsRemaining \(sheets) is negative")
        }
        for r in journal.requests {
            guard r.id >= 1, r.id < journal.nextID else {
                throw PrintJournalError("request id \(r.id) is outside 1…\(journal.nextID - 1) (nextID \(journal.nextID))")
            }
            guard Settings.Print.copiesRange.contains(r.copies) else {
                throw PrintJournalError("request \(r.id) has \(r.copies) copies, outside \(Settings.Print.copiesRange.lowerBound)…\(maxCopies)")
            }
        }
        return journal
    }
}

/// A journal file whose values are out of range (see ``PrintJournal/decode(_:)``).
public struct PrintJournalError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the field.
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { "print journal: \(message)" }
}
