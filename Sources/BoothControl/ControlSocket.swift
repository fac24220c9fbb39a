import BoothCore
import BoothPorts
import BoothRuntime
import BoothClock
import BoothStorage
import BoothSystem
import CSysShims
import FoundationEssentials
import Glibc
import Synchronization

/// A failed socket call (`socket`, `bind`, `connect`…): which call, errno, and the socket path.
/// The same shape as a failed file call, and described the same way.
public typealias SocketError = SystemCallError

/// The daemon's end of the control socket: a unix stream socket, mode 0660, group `photobooth` when that group
/// exists. Accepts on a thread it owns (never the concurrency pool) and serves each connection on a thread of
/// its own (at most ``maxConnections`` at once). Each peer is checked with `SO_PEERCRED` against a
/// ``PeerPolicy``; a refused peer gets one `not-allowed` reply and is closed. A request line that is not JSON,
/// not a request, or longer than ``ControlProtocol/maxRequestBytes`` gets an error reply; nothing of it
/// reaches the booth.
public final class ControlServer: Sendable {
    /// The socket path.
    public let path: String
    /// Connections served at once; more get a `busy` reply.
    public static let maxConnections = 8
    /// An idle connection is closed after this many seconds without a request.
    public static let idleTimeoutSeconds = 30

    private let mode: mode_t
    private let policy: PeerPolicy
    private let log: Logger
    private let handler: @Sendable (ControlRequest, PeerCredentials) -> [UInt8]
    private let listener = Mutex<Int32>(-1)
    private let stopping = Mutex(false)
    private let connections = Mutex(0)
    /// The accept thread ("control").
    private let acceptor = WorkerThread(name: "control")
    /// The instance lock: given to `init`, or taken by `start()`.
    private let lock: Mutex<ControlSocketLock?>
    /// The socket file this server bound (device, inode): the only file `stop()` removes.
    private let boundFile = Mutex<(dev: UInt64, ino: UInt64)?>(nil)

    /// - Parameters:
    ///   - path: where to bind (its directory is created if missing).
    ///   - mode: the socket file's mode (0660; tests widen it to reach the peer check from another uid).
    ///   - policy: who may talk.
    ///   - lock: the instance lock for `path`, when the caller took it already (photoboothd takes it before
    ///     it opens anything); nil: `start()` takes it.
    ///   - handler: answers one well-formed request with one reply line (JSON and `\n`); runs on the
    ///     connection's thread.
    public init(path: String, mode: mode_t = 0o660, policy: PeerPolicy = PeerPolicy(), lock: ControlSocketLock? = nil,
                log: Logger, handler: @escaping @Sendable (ControlRequest, PeerCredentials) -> [UInt8]) {
        self.path = path
        self.lock = Mutex(lock)
        self.mode = mode
        self.policy = policy
        self.log = log
        self.handler = handler
    }

    /// Takes the instance lock (``ControlSocketLock``) unless held, binds and listens, then starts the accept
    /// thread. A stale socket file (nobody answers, nobody holds the lock) is replaced; a live one is an error.
    /// - Throws: ``ControlSocketLock/Failure``: `held` when another photoboothd holds the lock; `failed` with the
    ///   ``SocketError`` from `mkdir`, `open`, `flock`, `socket`, `bind`, `listen`, `chmod` (`bind` `EADDRINUSE` when
    ///   a daemon without the lock answers at `path`).
    public func start() throws(ControlSocketLock.Failure) {
        let held = lock.withLock { $0 != nil }
        if !held {
            let taken = try ControlSocketLock(socketPath: path)
            lock.withLock { $0 = taken }
        }
        do {
            try bindAndListen()
        } catch {
            // Taken here, released here: a server that did not start holds nothing.
            if !held { lock.withLock { $0?.release(); $0 = nil } }
            throw .failed(error)
        }
    }

    private func bindAndListen() throws(SocketError) {
        var addr = try ControlServer.address(path)
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw SocketError(call: "bind", errno: EEXIST, path: path)
            }
            if let probe = try? ControlClient.connect(path) {
                close(probe)
                throw SocketError(call: "bind", errno: EADDRINUSE, path: path)
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", errno: errno, path: path) }
        // The socket file is created by bind with the umask applied: keep it closed until chmod.
        let oldMask = umask(0o177)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let bindErrno = errno
        umask(oldMask)
        guard bound == 0 else { close(fd); throw SocketError(call: "bind", errno: bindErrno, path: path) }
        if let gid = policy.groupID(policy.groupName) { _ = chown(path, uid_t.max, gid) }
        guard chmod(path, mode) == 0 else { let e = errno; close(fd); unlink(path); throw SocketError(call: "chmod", errno: e, path: path) }
        guard listen(fd, 16) == 0 else { let e = errno; close(fd); unlink(path); throw SocketError(call: "listen", errno: e, path: path) }
        var mine = stat()
        if lstat(path, &mine) == 0 { boundFile.withLock { $0 = (UInt64(mine.st_dev), UInt64(mine.st_ino)) } }
        listener.withLock { $0 = fd }
        guard acceptor.start({ [self] w in acceptLoop(fd, w) }) else {
            listener.withLock { $0 = -1 }
            close(fd); unlink(path)
            throw SocketError(call: "pthread_create", errno: EAGAIN, path: path)
        }
        log.info("control socket: \(path)")
    }

    /// Stops accepting, removes the socket file if it is the one this server bound (never another daemon's),
    /// then releases the instance lock; connections being served finish their current request.
    public func stop() {
        guard !stopping.withLock({ s in defer { s = true }; return s }) else { return }
        acceptor.finish(timeoutMilliseconds: 2000)
        if let mine = boundFile.withLock({ $0 }) {
            var st = stat()
            if lstat(path, &st) == 0, UInt64(st.st_dev) == mine.dev, UInt64(st.st_ino) == mine.ino { unlink(path) }
        }
        lock.withLock { $0?.release() }
    }

    static func address(_ path: String) throws(SocketError) -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard bytes.count < capacity else { throw SocketError(call: "bind", errno: ENAMETOOLONG, path: path) }
        withUnsafeMutableBytes(of: &addr.sun_path) { buf in
            for (i, b) in bytes.enumerated() { buf[i] = b }
            buf[bytes.count] = 0
        }
        return addr
    }

    private func acceptLoop(_ fd: Int32, _ worker: WorkerThread) {
        defer {
            close(fd)
            listener.withLock { $0 = -1 }
        }
        while !worker.isStopping {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = retryingEINTR { poll(&p, 1, 250) }
            if r < 0 {
                log.error("control socket: poll failed: \(SystemCallError.text(of: errno)); control socket closed")
                return
            }
            if r == 0 { continue }
            let client = retryingEINTR { accept(fd, nil, nil) }
            if client < 0 {
                if errno == EAGAIN || errno == ECONNABORTED { continue }
                // EMFILE and the like: wait a little rather than spin.
                log.warning("control socket: accept failed: \(SystemCallError.text(of: errno))")
                usleep(100_000)
                continue
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let admitted = connections.withLock { n -> Bool in
                guard n < ControlServer.maxConnections else { return false }
                n += 1
                return true
            }
            guard admitted else {
                sendAll(client, ControlReply<NoResult>(error: ControlFailure(code: "busy", message: "photoboothd is busy with \(ControlServer.maxConnections) other control connections; try again")).line())
                close(client)
                continue
            }
            let started = OSThread.start(name: "control-client") { [self] in
                serve(client)
                close(client)
                connections.withLock { $0 -= 1 }
            }
            if !started {
                log.warning("control socket: no thread for a connection (pthread_create failed); closed it")
                close(client)
                connections.withLock { $0 -= 1 }
            }
        }
    }

    /// Serves one connection: checks the peer, then answers request lines until EOF, an idle timeout or an
    /// oversized line.
    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: ControlServer.idleTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let peer: PeerCredentials
        do {
            peer = try PeerCredentials.of(fd: fd)
        } catch {
            sendAll(fd, ControlReply<NoResult>(error: ControlFailure(code: "not-allowed", message: "cannot tell who is connecting: \(error)")).line())
            return
        }
        if let refusal = policy.refusal(for: peer) {
            log.warning("control socket: refused pid \(peer.pid) uid \(peer.uid): not root and not in group \(policy.groupName)")
            // Read (and drop) the request first: closing with unread input resets the connection,
            // and the peer would see ECONNRESET or EPIPE instead of the reason.
            var short = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &short, socklen_t(MemoryLayout<timeval>.size))
            var reader = LineReader(fd: fd, limit: ControlProtocol.maxRequestBytes)
            _ = reader.next()
            sendAll(fd, ControlReply<NoResult>(error: ControlFailure(code: "not-allowed", message: refusal)).line())
            return
        }
        var reader = LineReader(fd: fd, limit: ControlProtocol.maxRequestBytes)
        while !stopping.withLock({ $0 }) {
            switch reader.next() {
            case .end:
                return
            case .tooLong:
                sendAll(fd, ControlReply<NoResult>(error: ControlFailure(
                    code: "too-large", message: "request longer than \(ControlProtocol.maxRequestBytes) bytes; connection closed")).line())
                return
            case let .line(bytes):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                if !sendAll(fd, answer(bytes, peer)) { return }
            }
        }
    }

    /// The reply line for one request line.
    func answer(_ bytes: [UInt8], _ peer: PeerCredentials) -> [UInt8] {
        let request: ControlRequest
        do {
            request = try JSONDecoder().decode(ControlRequest.self, from: Data(bytes))
        } catch {
            return ControlReply<NoResult>(error: ControlFailure(
                code: "bad-request",
                message: "not a request: expected one JSON object per line like {\"protocol\":\(ControlProtocol.version),\"command\":\"status\"}")).line()
        }
        guard request.version == ControlProtocol.version else {
            return ControlReply<NoResult>(error: ControlFailure(
                code: "unsupported-protocol",
                message: "protocol \(request.version) not supported; this photoboothd speaks protocol \(ControlProtocol.version) (\(photoboothVersion))")).line()
        }
        guard ControlProtocol.Command(rawValue: request.command) != nil else {
            return ControlReply<NoResult>(error: ControlFailure(
                code: "unknown-command",
                message: "unknown command '\(request.command)'; known: \(ControlProtocol.Command.allCases.map(\.rawValue).joined(separator: ", "))")).line()
        }
        return handler(request, peer)
    }
}
