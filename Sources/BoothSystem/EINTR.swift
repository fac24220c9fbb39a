import Glibc

/// Runs `call` again while it fails with EINTR (returns a negative value with `errno == EINTR`): the
/// one place the booth retries an interrupted system call. Any other result, failures included, is
/// returned as it is, with `errno` as the call left it. For calls that return -1 and set `errno`
/// (`read`, `write`, `open`, `poll`, `accept`, `connect`, `flock`, `send`, `recv`, …); a call with a
/// timeout starts over with its whole timeout (the booth's loops recheck their own deadlines).
@inlinable
public func retryingEINTR<T: BinaryInteger>(_ call: () throws -> T) rethrows -> T {
    while true {
        let r = try call()
        if r < 0 && errno == EINTR { continue }
        return r
    }
}
