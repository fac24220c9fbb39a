import BoothClock
import BoothCore
import BoothRuntime
import BoothStorage
import BoothSystem
import FoundationEssentials
import Glibc

/// Why `photoboothctl` could not get an answer, with what to do about it.
public enum ControlClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No socket, or nobody listening: the daemon is not running.
    case notRunning(paths: [String])
    /// The socket refused us (file permissions, or the daemon's peer check).
    case notAllowed(path: String, message: String)
    /// The daemon answered with an error.
    case failed(ControlFailure)
    /// The connection broke or the reply was not understood.
    case broken(path: String, message: String)

    public var description: String {
        switch self {
        case let .notRunning(paths):
            return "photoboothd is not running (no control socket answers at \(paths.joined(separator: " or "))). "
                + "Start it (sudo systemctl start photoboothd, or photoboothd --simulate), or name its socket with --socket PATH."
        case let .notAllowed(path, message):
            return "\(path): \(message)"
        case let .failed(failure):
            return failure.message
        case let .broken(path, message):
            return "\(path): \(message)"
        }
    }
}

/// The `photoboothctl` end: connects, sends one request line, reads one reply line.
public struct ControlClient: Sendable {
    /// The socket path used.
    public let path: String

    /// Picks the socket: `explicit` when given, else the first of
    /// ``ControlSocketPath/candidatesForClient(environment:uid:)`` that exists.
    /// - Throws: ``ControlClientError/notRunning(paths:)`` when none exists.
    public init(socket explicit: String?) throws(ControlClientError) {
        if let explicit {
            path = explicit
            return
        }
        let candidates = ControlSocketPath.candidatesForClient()
        guard let found = candidates.first(where: { access($0, F_OK) == 0 }) else {
            throw .notRunning(paths: candidates)
        }
        path = found
    }

    /// Connects to `path`. Wraps `socket` and `connect`. - Throws: ``SocketError``.
    public static func connect(_ path: String) throws(SocketError) -> Int32 {
        var addr = try ControlServer.address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", errno: errno, path: path) }
        // A connect interrupted by a signal goes on in the background: tried again, it may say
        // EISCONN (connected after all) or EALREADY (still connecting: a Unix socket connects at once).
        let r = retryingEINTR { withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } }
        if r == 0 || errno == EISCONN { return fd }
        let e = errno
        close(fd)
        throw SocketError(call: "connect", errno: e, path: path)
    }

    /// Sends `request` and decodes the reply's result as `Result`.
    /// - Parameter timeoutSeconds: how long to wait for the reply.
    /// - Throws: ``ControlClientError``.
    public func send<Result: Codable & Sendable>(_ request: ControlRequest, expecting: Result.Type,
                                                 timeoutSeconds: Int = 10) throws(ControlClientError) -> Result {
        let fd: Int32
        do {
            fd = try ControlClient.connect(path)
        } catch {
            switch error.errno {
            case ENOENT, ECONNREFUSED: throw .notRunning(paths: [path])
            case EACCES, EPERM:
                let group = ControlSocketPath.groupName
                let name = SystemUsers.userName(geteuid()) ?? "USER"
                throw .notAllowed(path: path, message: "permission denied: the control socket is for root and group '\(group)'. "
                                  + "Add yourself to the group (sudo adduser \(name) \(group)) and log in again, or use sudo.")
            default: throw .broken(path: path, message: "\(error)")
            }
        }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let data = try? ControlProtocol.encoder().encode(request) else {
            throw .broken(path: path, message: "request not encodable")
        }
        // A refused peer gets its reply at once and the connection is closed; a failed send is read past.
        _ = sendAll(fd, Array(data) + [0x0A])
        var reader = LineReader(fd: fd, limit: ControlProtocol.maxReplyBytes)
        guard case let .line(bytes) = reader.next() else {
            throw .broken(path: path, message: "photoboothd closed the connection without a reply (or did not answer within \(timeoutSeconds) s)")
        }
        let reply: ControlReply<Result>
        do {
            reply = try JSONDecoder().decode(ControlReply<Result>.self, from: Data(bytes))
        } catch {
            throw .broken(path: path, message: "reply not understood (\(error)); is photoboothd the same version as photoboothctl (\(photoboothVersion))?")
        }
        if let failure = reply.error {
            if failure.code == "not-allowed" { throw .notAllowed(path: path, message: failure.message) }
            throw .failed(failure)
        }
        guard reply.ok, let result = reply.result else { throw .broken(path: path, message: "reply without a result") }
        return result
    }
}
