import BoothCore

/// Syslog priority of a GPIO log line: the booth's ``LogPriority`` (`rawValue` is the syslog
/// number, as in the `<6>` prefix journald reads from stderr).
public typealias GPIOLogPriority = LogPriority

/// Where GPIO threads write their log lines: (priority, message). Called on the
/// owning thread (button or LED), so it must be cheap and thread-safe.
public typealias GPIOLog = @Sendable (GPIOLogPriority, String) -> Void
