/// The printer's health, as the booth shows it and decides by it.
///
/// Reasons are IPP `printer-state-reasons` keywords without their `-error`/`-warning`/`-report`
/// suffix (`media-empty`, `media-needed`, `offline`, `paused`…).
public enum PrinterHealth: Equatable, Sendable, Codable {
    /// Idle or printing, nothing wrong.
    case ready
    /// Printing works but needs attention soon (media-low, marker-supply-low, the paper count low).
    case warning(reasons: [String])
    /// Printing cannot go on (media-empty, media-needed, media-jam, offline, paused, stopped,
    /// not accepting jobs, unreachable): requests are held.
    case unavailable(reasons: [String], message: String)
    /// The printer reports nothing useful while idle (e.g. a dye-sub through Gutenprint,
    /// which reports only during a job); requests are submitted and their jobs watched.
    case unknown(String)

    /// `ready`, `warning`, `unavailable` or `unknown`.
    public var name: String {
        switch self {
        case .ready: "ready"
        case .warning: "warning"
        case .unavailable: "unavailable"
        case .unknown: "unknown"
        }
    }

    /// The reasons, empty for ready and unknown.
    public var reasons: [String] {
        switch self {
        case .ready, .unknown: []
        case let .warning(r), let .unavailable(r, _): r
        }
    }

    /// Whether a held request may be submitted now (everything but unavailable).
    public var allowsSubmission: Bool {
        if case .unavailable = self { return false }
        return true
    }

    /// Reasons that stop printing.
    public static let blocking: Set<String> = ["media-empty", "media-needed", "media-jam", "offline", "paused",
                                               "stopped", "shutdown", "door-open", "cover-open", "input-tray-missing",
                                               "marker-supply-empty", "toner-empty"]
    /// Reasons that only warn.
    public static let warning: Set<String> = ["media-low", "marker-supply-low", "toner-low", "paper-low"]

    /// `media-empty-error` → `media-empty`.
    public static func keyword(_ reason: String) -> String {
        for suffix in ["-error", "-warning", "-report"] where reason.hasSuffix(suffix) {
            return String(reason.dropLast(suffix.count))
        }
        return reason
    }

    /// Classifies the queue's attributes (from cupsd) together with the printer's own (asked at its
    /// device URI while idle, since cupsd learns a remote printer's state only during a job).
    /// - Parameters:
    ///   - queue: the queue's attributes, or the error asking cupsd for them.
    ///   - device: the printer's own attributes, the error reaching it, or nil when it has no IPP URI.
    public static func classify(queue: Result<PrinterAttributes, PrintError>,
                                device: Result<PrinterAttributes, PrintError>?) -> PrinterHealth {
        let q: PrinterAttributes
        switch queue {
        case let .failure(e): return .unavailable(reasons: ["cups-unreachable"], message: e.description)
        case let .success(a): q = a
        }
        var reasons = q.reasons.map(keyword)
        if q.state == 5 && !reasons.contains("paused") { reasons.append("stopped") }
        if !q.acceptingJobs { reasons.append("not-accepting-jobs") }
        var message = q.message
        switch device {
        case let .failure(e)?:
            reasons.append("offline")
            message = "the printer does not answer: \(e.message)"
        case let .success(d)?:
            reasons += d.reasons.map(keyword)
            if d.state == 5 && !reasons.contains("stopped") { reasons.append("stopped") }
            if message.isEmpty { message = d.message }
        case nil:
            break
        }
        var seen: Set<String> = []
        reasons = reasons.filter { seen.insert($0).inserted }
        let stopping = reasons.filter { PrinterHealth.blocking.contains($0) || $0 == "not-accepting-jobs" || $0 == "cups-unreachable" }
        if !stopping.isEmpty { return .unavailable(reasons: stopping, message: message) }
        let warn = reasons.filter { PrinterHealth.warning.contains($0) }
        if !warn.isEmpty { return .warning(reasons: warn) }
        if device == nil && q.state == 3 && q.reasons.isEmpty {
            return .unknown("the printer has no IPP address to ask while idle; its state is known only during a job")
        }
        return .ready
    }
}
