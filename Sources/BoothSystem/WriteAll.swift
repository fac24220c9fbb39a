import Glibc

/// Writes all of `bytes` to `fd`: a short write is continued from where it stopped and EINTR is retried
/// (``retryingEINTR(_:)``), so a pipe or socket that takes a part at a time, or a signal mid-write, loses
/// nothing. The one write-all loop of the booth.
///
/// - Parameters:
///   - call: the call's name for the error (`"write"`, `"send"`).
///   - subject: what `fd` is (a path, `"stderr"`), for the error.
///   - write: the call that writes once: `write(2)` by default; `send(2)` with `MSG_NOSIGNAL` for a
///     socket whose peer may vanish. Returns the bytes taken, or -1 with errno set.
/// - Throws: ``SystemCallError`` with the errno of the first write that failed (EPIPE, ENOSPC, EAGAIN on a
///   non-blocking descriptor…), or EIO for a write that took no byte and set no error; what went
///   before it was written.
public func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, call: String = "write", subject: String = "",
                     using write: (Int32, UnsafeRawPointer, Int) -> Int = { Glibc.write($0, $1, $2) }) throws(SystemCallError) {
    guard let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
        let n = retryingEINTR { write(fd, base + offset, bytes.count - offset) }
        if n < 0 { throw SystemCallError(call: call, errno: errno, subject: subject) }
        if n == 0 { throw SystemCallError(call: call, errno: EIO, subject: subject) }
        offset += n
    }
}

/// ``writeAll(_:to:call:subject:using:)`` for an array of bytes.
public func writeAll(_ bytes: [UInt8], to fd: Int32, call: String = "write", subject: String = "",
                     using write: (Int32, UnsafeRawPointer, Int) -> Int = { Glibc.write($0, $1, $2) }) throws(SystemCallError) {
    let result = bytes.withUnsafeBytes { buffer in
        Result { () throws(SystemCallError) in try writeAll(buffer, to: fd, call: call, subject: subject, using: write) }
    }
    try result.get()
}
