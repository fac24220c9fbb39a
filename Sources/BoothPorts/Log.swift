import BoothCore
import Synchronization

/// Hands log lines with a syslog priority prefix (`<6>idle -> preview`), the form journald reads
/// (sd-daemon(3)), to its sink, one whole message at a time, so lines from several threads never
/// interleave. The stderr sink is `Logger(threshold:)` in StandardErrorLog.swift (one `write(2)` per message).
/// Thread-safe.
public final class Logger: Sendable {
    /// Lines above this priority (numerically greater, e.g. debug) are dropped.
    public let threshold: LogPriority
    private let sink: @Sendable (String) -> Void

    /// A logger handing each finished message (its lines with prefix and newline) to `sink`: tests'
    /// recorders, and the stderr writer (StandardErrorLog.swift).
    public init(threshold: LogPriority = .debug, sink: @escaping @Sendable (String) -> Void) {
        self.threshold = threshold
        self.sink = sink
    }

    /// Logs `message` at `priority`; multi-line messages are split, each line prefixed.
    public func log(_ priority: LogPriority, _ message: String) {
        guard priority <= threshold else { return }
        var out = ""
        for line in message.split(separator: "\n", omittingEmptySubsequences: false) {
            out += "<\(priority.rawValue)>\(line)\n"
        }
        sink(out)
    }

    public func error(_ m: String) { log(.error, m) }
    public func warning(_ m: String) { log(.warning, m) }
    public func notice(_ m: String) { log(.notice, m) }
    public func info(_ m: String) { log(.info, m) }
    public func debug(_ m: String) { log(.debug, m) }
}

/// Collects log lines in memory; for tests.
public final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])
    public init() {}
    /// A logger that records here.
    public func logger(threshold: LogPriority = .debug) -> Logger {
        Logger(threshold: threshold) { [self] line in
            lines.withLock { $0 += line.split(separator: "\n").map(String.init) }
        }
    }
    /// Every line so far, with its `<N>` prefix.
    public var all: [String] { lines.withLock { $0 } }
}

/// `n` and `noun`, plural unless `n` is 1: `1 capture`, `3 captures`, `0 faults` (the nouns used take an s).
public func counted(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }
