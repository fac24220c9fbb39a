import CSysShims
import Glibc

/// A failed system call: which call, the errno it set, and what it was about (a device, a path, a
/// port). The one error type every module throws for a failed call (swift-system's `Errno`, swift-nio's
/// `IOError`); library errors (SQLite, libcurl, libjpeg, CUPS, libgphoto2, libcamera) keep their own types.
///
/// Its ``description`` reads `/srv/photos/x.jpg: open failed: No such file or directory (errno 2, ENOENT)`.
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C call that failed, e.g. `"open"`, `"renameat2"`, `"VIDIOC_S_FMT"`, `"gpiod_chip_open"`.
    public var call: String
    /// The errno it set (0 when the failure carries none).
    public var errno: Int32
    /// What the call was about: a path, a device node, a port; empty when nothing in particular.
    public var subject: String

    /// A failed `call` on `subject` with `errno`.
    public init(call: String, errno: Int32, subject: String) {
        self.call = call
        self.errno = errno
        self.subject = subject
    }

    /// A failed `call` on the file at `path` (the storage port's words: ``path``).
    public init(call: String, errno: Int32, path: String) {
        self.init(call: call, errno: errno, subject: path)
    }

    /// `call` failed just now on `subject`: reads the calling thread's `errno`.
    public static func last(_ call: String, _ subject: String) -> SystemCallError {
        SystemCallError(call: call, errno: Glibc.errno, subject: subject)
    }

    /// The subject when it is a path (FileError's field name).
    public var path: String {
        get { subject }
        set { subject = newValue }
    }

    /// True for ENOSPC or EDQUOT: the file system is full.
    public var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }

    /// The errno's symbolic name, `"ENOENT"` (glibc's `strerrorname_np`), `"errno 999"` for a number without one.
    public var errnoName: String { Self.name(of: errno) }

    /// strerror's text for the errno, `"No such file or directory"`.
    public var reason: String { Self.reason(of: errno) }

    /// The errno in words with its number and name: `No such file or directory (errno 2, ENOENT)`.
    public var errnoText: String { Self.text(of: errno) }

    /// `subject: call failed: reason (errno N, ENAME)`; without a subject, `call failed: …`.
    public var description: String {
        (subject.isEmpty ? "" : "\(subject): ") + "\(call) failed: \(errnoText)"
    }

    /// The symbolic name of `errno`, `"ENOENT"`; `"errno N"` when glibc has none. Wraps `strerrorname_np`.
    public static func name(of errno: Int32) -> String {
        guard let name = pb_errno_name(errno) else { return "errno \(errno)" }
        return String(cString: name)
    }

    /// strerror's text for `errno`, `"No such file or directory"`. Wraps `strerror` (glibc's text for a
    /// known number is static, so this is safe from any thread).
    public static func reason(of errno: Int32) -> String {
        guard let text = strerror(errno) else { return "error \(errno)" }
        return String(cString: text)
    }

    /// `No such file or directory (errno 2, ENOENT)`: strerror's text, the number and the name, for
    /// messages that name the call in their own words.
    public static func text(of errno: Int32) -> String {
        let name = pb_errno_name(errno).map { ", " + String(cString: $0) } ?? ""
        return "\(reason(of: errno)) (errno \(errno)\(name))"
    }
}
