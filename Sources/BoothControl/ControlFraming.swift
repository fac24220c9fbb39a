import BoothClock
import BoothSystem
import Glibc

/// Reads `\n`-terminated lines from a socket, at most `limit` bytes each. EINTR is retried; a receive
/// timeout (EAGAIN) or an error ends the stream.
struct LineReader {
    enum Item { case line([UInt8]), tooLong, end }
    let fd: Int32
    let limit: Int
    private var buffer: [UInt8] = []
    private var eof = false

    init(fd: Int32, limit: Int) {
        self.fd = fd
        self.limit = limit
    }

    mutating func next() -> Item {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                return line.count > limit ? .tooLong : .line(line)
            }
            if buffer.count > limit { return .tooLong }
            if eof { return .end }
            var chunk = [UInt8](repeating: 0, count: 16384)
            let n = retryingEINTR { chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }
            if n < 0 { return .end }
            if n == 0 {
                eof = true
                if buffer.isEmpty { return .end }
                // A last request without its newline still counts.
                let line = buffer
                buffer = []
                return line.count > limit ? .tooLong : .line(line)
            }
            buffer += chunk[0..<n]
        }
    }
}

/// Writes all of `bytes` to the socket `fd`: BoothSystem's ``writeAll(_:to:call:subject:using:)`` over
/// `send(2)` with MSG_NOSIGNAL (short writes continued, EINTR retried; a vanished peer is an error, not SIGPIPE).
/// - Returns: false when `send` failed (EPIPE, ECONNRESET…); what went before was sent.
@discardableResult
func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    do {
        try writeAll(bytes, to: fd, call: "send", subject: "control socket") { send($0, $1, $2, Int32(MSG_NOSIGNAL)) }
        return true
    } catch {
        return false
    }
}
