import BoothClock
import BoothCore
import BoothStorage
import BoothSystem
import FoundationEssentials
import Glibc
import Synchronization

/// One photoboothd per control socket: an exclusive `flock` on `<socket>.lock` beside the socket, taken before
/// the socket is bound and held until ``release()`` (the daemon holds it for its whole life; the kernel drops it
/// when the process ends, however it ends). The lock file holds the owner's pid, for the refusal message; it is
/// never deleted (deleting a lock file another process may be opening races with it).
public final class ControlSocketLock: Sendable {
    /// The lock file: the socket path with `.lock` appended.
    public let path: String
    private let fd: Mutex<Int32>

    /// Why the lock could not be taken.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Another process holds it: another photoboothd serves this socket. `pid`: the one written in the file.
        case held(lockPath: String, socketPath: String, pid: Int32?)
        /// The lock file could not be opened or locked (`open`, `flock`).
        case failed(SocketError)
        /// Another process holds it and was stopping (or did not answer on the socket), and still held it
        /// after `waitedMilliseconds`.
        case stillStopping(lockPath: String, socketPath: String, pid: Int32?, waitedMilliseconds: Int64)

        public var description: String {
            switch self {
            case let .held(lockPath, socketPath, pid):
                return "another photoboothd\(pid.map { " (pid \($0))" } ?? "") is running on the control socket \(socketPath) "
                    + "(it holds \(lockPath)); stop it first, or give this one another --socket PATH"
            case let .failed(e):
                return "\(e)"
            case let .stillStopping(lockPath, socketPath, pid, waited):
                return "another photoboothd\(pid.map { " (pid \($0))" } ?? "") on the control socket \(socketPath) still holds "
                    + "\(lockPath) after \(waited / 1000) s of waiting for it to stop; wait for it to end, or give this one another --socket PATH"
            }
        }
    }

    /// How long ``take(socketPath:waitingUpTo:clock:sleep:log:)`` waits for a daemon that is stopping, ms.
    public static let stoppingWaitMilliseconds: Int64 = 10_000
    /// How often it tries the lock again meanwhile, ms.
    static let retryMilliseconds: Int64 = 100

    /// Takes the lock as ``init(socketPath:)`` does, but waits for a daemon that is stopping: a restart by hand
    /// (`kill -TERM old; photoboothd …`) must not find the old one's lock and give up while the old one
    /// releases its devices. When another process holds the lock, its daemon is asked `hello` on the socket:
    /// one that answers and is not stopping is refused at once (``Failure/held(lockPath:socketPath:pid:)``); one
    /// that says it is stopping, or does not answer (its socket closed, or no reply), is waited for, the lock
    /// tried again every 100 ms up to `limitMilliseconds` on `clock`, each step logged through `log`.
    /// - Parameters:
    ///   - sleep: waits the given milliseconds between tries (tests move a ``ManualClock`` instead).
    /// - Throws: ``Failure``: `held` for a running daemon, `stillStopping` when the wait ran out, `failed` as `init`.
    public static func take(socketPath: String, waitingUpTo limitMilliseconds: Int64 = stoppingWaitMilliseconds,
                            clock: any MonotonicClock = SystemClock(),
                            sleep: (Int64) -> Void = { ms in usleep(UInt32(ms) * 1000) },
                            log: (String) -> Void) throws(Failure) -> ControlSocketLock {
        let first: Failure
        do { return try ControlSocketLock(socketPath: socketPath) } catch { first = error }
        guard case let .held(lockPath, _, pid) = first else { throw first }
        let who = "another photoboothd\(pid.map { " (pid \($0))" } ?? "")"
        let answer: Result<DaemonInfo, ControlClientError>
        do {
            answer = .success(try ControlClient(socket: socketPath).send(ControlRequest(.hello), expecting: DaemonInfo.self,
                                                                          timeoutSeconds: 2))
        } catch {
            answer = .failure(error)
        }
        switch answer {
        case .success(let info) where info.stopping == true:
            log("\(who) is stopping on the control socket \(socketPath): waiting up to \(limitMilliseconds / 1000) s for it to end")
        case .success, .failure(.notAllowed):
            throw first  // running (or not ours to ask): refused at once
        case .failure(let error):
            log("\(who) holds \(lockPath) and does not answer on the control socket \(socketPath) (\(error)): waiting up to "
                + "\(limitMilliseconds / 1000) s for its lock")
        }
        let start = clock.now()
        while true {
            let waited = Int64(clock.now().milliseconds(since: start))
            do {
                let lock = try ControlSocketLock(socketPath: socketPath)
                log("\(who) released \(lockPath) after \(waited) ms of waiting; starting")
                return lock
            } catch {
                guard case .held = error else { throw error }
            }
            if waited >= limitMilliseconds {
                throw .stillStopping(lockPath: lockPath, socketPath: socketPath, pid: pid, waitedMilliseconds: waited)
            }
            sleep(min(retryMilliseconds, limitMilliseconds - waited))
        }
    }

    /// Opens (creating, mode 0600) and locks `<socketPath>.lock` without waiting; its directory is created if
    /// missing. Wraps `open`, `flock(LOCK_EX | LOCK_NB)`, `ftruncate` and `pwrite` (the pid).
    /// - Throws: ``Failure/held(lockPath:socketPath:pid:)`` when another process holds the lock, else ``Failure/failed(_:)``.
    public init(socketPath: String) throws(Failure) {
        path = socketPath + ".lock"
        let dir = directoryName(of: socketPath)
        if access(dir, F_OK) != 0 {
            do { try makeDirectories(dir) } catch { throw .failed(SocketError(call: "mkdir", errno: error.errno, path: dir)) }
            // The per-user directory is private; the system one lets the group reach the socket.
            chmod(dir, socketPath == ControlSocketPath.system ? 0o755 : 0o700)
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .failed(SocketError(call: "open", errno: errno, path: path)) }
        if retryingEINTR({ flock(fd, LOCK_EX | LOCK_NB) }) != 0 {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK { throw .held(lockPath: path, socketPath: socketPath, pid: ControlSocketLock.owner(path)) }
            throw .failed(SocketError(call: "flock", errno: e, path: path))
        }
        var pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pid.withUnsafeMutableBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        self.fd = Mutex(fd)
    }

    /// The pid written in the lock file `path`, if it holds one.
    static func owner(_ path: String) -> Int32? {
        guard let bytes = try? AtomicFile.read(path) else { return nil }
        return Int32(String(decoding: bytes, as: UTF8.self).trimmingWhitespace())
    }

    /// Releases the lock (closes the file; the file stays). Idempotent.
    public func release() {
        fd.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { release() }
}
