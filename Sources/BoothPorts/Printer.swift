import BoothCore

/// What the runtime and the control socket ask of the printer (BoothPrint's `PrintWorker` over
/// CUPS). Every call returns without waiting for CUPS or a disk: the work is done on the printer's
/// own thread, which renders each picture for `print.media`, journals the request durably before it
/// is submitted, and polls the destination's health and the jobs. When to print is the machine's
/// decision (``request(jpeg:captureID:source:graceMilliseconds:)`` on its `print` command,
/// ``skip(captureID:)`` on `skipPrint`); the printer is also a ``PictureSink`` (it notes where each
/// picture was saved, for a print asked after its bytes left memory).
public protocol Printer: PictureSink {
    /// Starts the printer's threads. Called once, before any request.
    func launch()
    /// `handler` is called after every change of the journal or of the printer's health, on the
    /// thread that made it, outside the printer's lock (the runtime re-shows the review's text).
    func observe(_ handler: @escaping @Sendable () -> Void)
    /// Asks for a print of `jpeg` (JPEG bytes). `captureID`: the picture's machine id (nil: a test
    /// print). Journaled at once; not submitted before `graceMilliseconds` (monotonic) have passed,
    /// so a ``skip(captureID:)`` within them keeps it from CUPS. `code`: the QR code the page carries
    /// in a corner (`picture.qr`), journaled with the request so a page rendered again after a restart has it too.
    func request(jpeg: [UInt8], captureID: UInt64?, source: String, graceMilliseconds: Int, code: PageCode?)
    /// The guest long-pressed in review: picture `captureID` is not printed (cancelled if asked).
    func skip(captureID: UInt64)
    /// Capture or picture `captureID` is on disk at `path`. With `promise` (`print.mode` prints this
    /// picture), its print is journaled durably before this returns, on the calling thread (the storage
    /// thread's, which never waits on CUPS): a restart prints it even if the booth is killed before the
    /// print is asked for.
    func noteSaved(captureID: UInt64, path: String, promise: PrintPromise?)
    /// The saved file of `captureID` (noted by ``noteSaved(captureID:path:)``), read back; nil when
    /// none was noted or it cannot be read.
    func savedPhoto(captureID: UInt64) -> [UInt8]?
    /// What the review screen says about printing `captureID` (`Printing…`, `Printed`, `Printer out
    /// of paper`…); nil when nothing was asked for it.
    func reviewText(captureID: UInt64) -> String?
    /// New `[print]` settings (reload); a new destination, copies, media or colour reconnects.
    func reconfigure(_ settings: Settings.Print)
    /// Stops the threads, waiting at most `timeoutSeconds` (seconds) for one stuck in CUPS.
    func stop(timeoutSeconds: Double)
    /// The printer's part of `status`.
    func status() -> PrinterStatus

    // The operator's commands (control socket).
    /// Every request the journal keeps, oldest first.
    var requests: [PrintEntry] { get }
    /// The paper counter (sheets), nil when not counted.
    var sheetsRemaining: Int? { get }
    /// `refill SHEETS`: sets the paper counter.
    func refill(sheets: Int)
    /// `prints cancel ID`. - Returns: what happened, nil when there is no live request `requestID`.
    func cancel(requestID: Int) -> String?
    /// `prints reprint ID`. - Returns: the new request's id, or why not (codes `not-found`, `limit`).
    func reprint(requestID: Int) -> Result<Int, PrinterRefusal>
    /// `prints purge`: forgets finished requests and deletes their pages. - Returns: how many.
    func purge() -> Int
    /// `prints resume`: submission goes on after a job failed at the printer.
    /// - Returns: what had stopped it (`print 3's job 12 cancelled at the printer`), nil when nothing had.
    func resume() -> String?
    /// `test-print` without a file: asks for a print of the printer's test chart.
    /// - Throws: when the chart cannot be made (its JPEG encoder failed).
    func requestTestChart(source: String) throws
    /// `test-print FILE`: checks that `jpeg` (the bytes of `file`) is a JPEG the page renderer reads
    /// (its header by `tjDecompressHeader3`, then a decode at 1/8 scale), then asks for its print.
    /// - Throws: ``PrinterRefusal`` with code `bad-file`, naming `file` and what is wrong.
    func requestTestPrint(jpeg: [UInt8], file: String) throws(PrinterRefusal)
}

extension Printer {
    public var sinkName: String { "printer" }
    public func pictureSaved(_ picture: SavedPicture) { noteSaved(captureID: picture.captureID, path: picture.path, promise: nil) }
    public func noteSaved(captureID: UInt64, path: String) { noteSaved(captureID: captureID, path: path, promise: nil) }
    public func request(jpeg: [UInt8], captureID: UInt64?, source: String) {
        request(jpeg: jpeg, captureID: captureID, source: source, graceMilliseconds: 0, code: nil)
    }
    public func request(jpeg: [UInt8], captureID: UInt64?, source: String, graceMilliseconds: Int) {
        request(jpeg: jpeg, captureID: captureID, source: source, graceMilliseconds: graceMilliseconds, code: nil)
    }
    public func stop() { stop(timeoutSeconds: 5) }
}

/// The print `print.mode` promises for a picture, journaled with its save
/// (``Printer/noteSaved(captureID:path:promise:)``): what it is (`"session 12"`) and its page's QR code.
public struct PrintPromise: Sendable, Equatable {
    public var source: String
    public var code: PageCode?
    public init(source: String, code: PageCode?) {
        self.source = source
        self.code = code
    }
}

/// A QR code on a printed page: `text` (the picture's URL) encoded, drawn in `corner` of the page
/// (``PictureQRSetting``, never `.off` here).
public struct PageCode: Sendable, Equatable {
    public var text: String
    public var corner: PictureQRSetting
    public init(text: String, corner: PictureQRSetting) {
        self.text = text
        self.corner = corner
    }
}

/// Why the printer refused an operator's command: `code` for scripts (`not-found`, `limit`, `bad-file`),
/// `message` for people.
public struct PrinterRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var message: String
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
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
    /// Requests completed since the journal began (not lowered by `prints purge` or forgotten requests).
    public var completed: Int
    public var lastError: String?
    /// Jobs that failed at the printer since the journal began (aborted, or cancelled there); each
    /// request held again. Nil from a daemon before it was counted.
    public var failed: Int?

    public init(mode: String, destination: String, queue: String?, health: String, reasons: [String], message: String?,
                sheetsRemaining: Int?, held: Int, outstanding: Int, completed: Int, lastError: String?, failed: Int? = nil) {
        self.failed = failed
        self.mode = mode
        self.destination = destination
        self.queue = queue
        self.health = health
        self.reasons = reasons
        self.message = message
        self.sheetsRemaining = sheetsRemaining
        self.held = held
        self.outstanding = outstanding
        self.completed = completed
        self.lastError = lastError
    }
}

/// A print request as `prints list` shows it.
public struct PrintEntry: Codable, Sendable, Equatable {
    public var id: Int
    /// `session 12`, `test print`, `reprint of 3`.
    public var source: String
    /// `held`, `submitting`, `submitted`, `completed`, `aborted`, `cancelled`, `dropped`, `failed`.
    public var state: String
    /// CUPS job id, once submitted.
    public var jobID: Int?
    public var copies: Int
    /// The PWG media name it was rendered for.
    public var media: String
    /// When requested, `YYYY-MM-DD HH:MM:SS` local time.
    public var requestedAt: String
    public var note: String?

    public init(id: Int, source: String, state: String, jobID: Int?, copies: Int, media: String,
                requestedAt: String, note: String?) {
        self.id = id
        self.source = source
        self.state = state
        self.jobID = jobID
        self.copies = copies
        self.media = media
        self.requestedAt = requestedAt
        self.note = note
    }
}
