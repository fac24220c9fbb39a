import BoothCore
import BoothSystem

extension Logger {
    /// A logger writing to stderr (fd 2), each message in one `write(2)` where the pipe takes it whole
    /// (``writeAll(_:to:call:subject:using:)``: short writes continued, EINTR retried; a write that fails
    /// drops the rest of that message, never blocks the booth).
    public convenience init(threshold: LogPriority = .info) {
        self.init(threshold: threshold, sink: { line in try? writeAll(Array(line.utf8), to: 2, subject: "stderr") })
    }
}
