import BoothClock
import BoothPorts
import BoothSystem
import Glibc

/// systemd's service notification protocol (sd_notify(3)) without libsystemd: every message is
/// one datagram of newline-separated `KEY=VALUE` assignments (`READY=1`, `STATUS=…`,
/// `WATCHDOG=1`, `STOPPING=1`) sent to the AF_UNIX socket named by `$NOTIFY_SOCKET`; a name
/// starting with `@` is in the abstract namespace (the `@` becomes a leading NUL byte).
///
/// Sending never blocks the caller for long (`MSG_DONTWAIT`) and never fails the booth: a lost
/// notification is logged by the caller at most, systemd decides what it means.
public final class SystemdNotifier: Sendable {
    /// `$NOTIFY_SOCKET` as given: a path, or `@name` for the abstract namespace.
    public let socketPath: String
    /// How often systemd wants `WATCHDOG=1`: half of `$WATCHDOG_USEC`, in milliseconds;
    /// nil when the unit has no `WatchdogSec=` (or `$WATCHDOG_PID` names another process).
    public let watchdogIntervalMilliseconds: Int?
    private let address: [UInt8]

    /// - Parameters:
    ///   - socketPath: `$NOTIFY_SOCKET`; at most 107 bytes (`sockaddr_un.sun_path`).
    ///   - watchdogIntervalMilliseconds: how often to send `WATCHDOG=1` (nil: never).
    /// - Returns: nil when `socketPath` is empty, relative without `@`, or too long.
    public init?(socketPath: String, watchdogIntervalMilliseconds: Int?) {
        let bytes = Array(socketPath.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "@"),
              bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        self.socketPath = socketPath
        self.watchdogIntervalMilliseconds = watchdogIntervalMilliseconds
        address = first == UInt8(ascii: "@") ? [0] + bytes.dropFirst() : bytes
    }

    /// The notifier systemd asked for through the environment (`$NOTIFY_SOCKET`, `$WATCHDOG_USEC`,
    /// `$WATCHDOG_PID`), or nil when the daemon was not started by systemd with `Type=notify`.
    /// The variables are removed from the environment so that child processes do not inherit them.
    public static func fromEnvironment() -> SystemdNotifier? {
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        let socket = env("NOTIFY_SOCKET")
        var interval: Int?
        if let usec = env("WATCHDOG_USEC").flatMap(Int.init), usec > 0 {
            let forUs = env("WATCHDOG_PID").flatMap(Int32.init).map { $0 == getpid() } ?? true
            if forUs { interval = max(1, usec / 2000) }
        }
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { unsetenv(name) }
        guard let socket else { return nil }
        return SystemdNotifier(socketPath: socket, watchdogIntervalMilliseconds: interval)
    }

    /// Sends `message` (e.g. `"READY=1\nSTATUS=idle"`) as one datagram.
    /// Wraps `socket(AF_UNIX, SOCK_DGRAM)` and `sendto`.
    /// - Throws: ``FileError`` naming the call, its errno and the socket path.
    public func send(_ message: String) throws(FileError) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FileError(call: "socket", errno: errno, path: socketPath) }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in address.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count)
        let payload = Array(message.utf8)
        let sent = retryingEINTR {
            withUnsafePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    payload.withUnsafeBytes { buf in
                        Int32(sendto(fd, buf.baseAddress, buf.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), sa, length))
                    }
                }
            }
        }
        guard sent >= 0 else { throw FileError(call: "sendto", errno: errno, path: socketPath) }
    }

    /// `READY=1` with the state that was reached, e.g. `"idle · 134 photos"`.
    public func ready(status: String) throws(FileError) { try send("READY=1\nSTATUS=\(oneLine(status))") }
    /// `STATUS=…`: what `systemctl status` shows.
    public func status(_ text: String) throws(FileError) { try send("STATUS=\(oneLine(text))") }
    /// `WATCHDOG=1`: the main loop checked it is alive.
    public func watchdog() throws(FileError) { try send("WATCHDOG=1") }
    /// `STOPPING=1` when SIGTERM is being handled.
    public func stopping() throws(FileError) { try send("STOPPING=1\nSTATUS=stopping") }

    private func oneLine(_ s: String) -> String {
        String(s.map { $0 == "\n" ? " " : $0 })
    }
}
