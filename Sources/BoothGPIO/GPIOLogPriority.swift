/// Syslog priority of a GPIO log line; `rawValue` is the syslog number, as in the
/// `<6>` prefix journald reads from stderr.
public enum GPIOLogPriority: Int, Sendable, Comparable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    public static func < (a: GPIOLogPriority, b: GPIOLogPriority) -> Bool { a.rawValue < b.rawValue }
}

/// Where GPIO threads write their log lines: (priority, message). Called on the
/// owning thread (button or LED), so it must be cheap and thread-safe.
public typealias GPIOLog = @Sendable (GPIOLogPriority, String) -> Void
