import Glibc
import Synchronization

/// An open file descriptor that this object owns: closed exactly once, by ``close()`` or when the object
/// goes away, whichever comes first, so a descriptor number the kernel has since handed to someone else is
/// never closed a second time. Thread-safe.
///
/// Keep the object alive while its number is in use (Swift may release an object after its last use,
/// not at the end of its scope): `defer { file.close() }` right after opening does both.
public final class FileDescriptor: Sendable {
    private let fd: Atomic<Int32>

    /// Takes ownership of `rawValue` (an open descriptor, or -1 for none).
    public init(owning rawValue: Int32) {
        fd = Atomic(rawValue)
    }

    /// Opens `path` (EINTR retried). Wraps `open(2)`; `O_CLOEXEC` is always added.
    /// - Parameters:
    ///   - flags: `O_RDONLY`, `O_WRONLY | O_CREAT | O_TRUNC`, …
    ///   - mode: permission bits for a file `O_CREAT` makes (less the umask).
    /// - Throws: ``SystemCallError`` from `open`, with `path` as its subject.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(SystemCallError) -> FileDescriptor {
        let raw = retryingEINTR { Glibc.open(path, flags | O_CLOEXEC, mode) }
        guard raw >= 0 else { throw SystemCallError(call: "open", errno: errno, subject: path) }
        return FileDescriptor(owning: raw)
    }

    /// The descriptor number, -1 once closed. Valid only while this object is alive and not closed.
    public var rawValue: Int32 { fd.load(ordering: .acquiring) }

    /// True until ``close()``.
    public var isOpen: Bool { rawValue >= 0 }

    /// Closes the descriptor if it is still open. Wraps `close(2)`, never retried on EINTR (on Linux the
    /// descriptor is gone whatever close returns).
    /// - Returns: true when this call closed it, false when it was closed already.
    @discardableResult
    public func close() -> Bool {
        let raw = fd.exchange(-1, ordering: .acquiringAndReleasing)
        guard raw >= 0 else { return false }
        _ = Glibc.close(raw)
        return true
    }

    deinit { close() }
}
