import BoothCore
import BoothPorts
import Glibc

extension Logger {
    /// A logger writing to stderr (fd 2), each message in one `write(2)` where the pipe takes it whole
    /// (short writes are continued, EINTR retried by ``retryingEINTR(_:)``; a write that fails drops
    /// the rest of that message, never blocks the booth).
    public convenience init(threshold: LogPriority = .info) {
        self.init(threshold: threshold, sink: { line in writeAll(Array(line.utf8), to: 2) })
    }
}

/// Writes `bytes` to `fd` whole, continuing short writes; stops at the first failure (`write(2)`).
private func writeAll(_ bytes: [UInt8], to fd: Int32) {
    var offset = 0
    while offset < bytes.count {
        let n = retryingEINTR { bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) } }
        if n <= 0 { return }
        offset += n
    }
}
