import BoothCore
import BoothPorts
import BoothRuntime
import BoothClock
import BoothStorage
import CSysShims
import FoundationEssentials
import Glibc
import Synchronization

/// A failed socket call (`socket`, `bind`, `connect`…): which call, errno, and the socket path.
/// The same shape as a failed file call, and described the same way.
public typealias SocketError = FileError

/// Where the control socket lives.
public enum ControlSocketPath {
    /// The system booth's socket (systemd, root).
    public static let system = "/run/photobooth/control"
    /// The group whose members may use the socket.
    public static let groupName = "photobooth"

    /// The per-user socket: `$XDG_RUNTIME_DIR/photobooth/control`, or `/tmp/photobooth-<uid>/control`
    /// when `XDG_RUNTIME_DIR` is not set.
    public static func user(environment: [String: String] = ProcessInfo.processInfo.environment,
                            uid: uid_t = geteuid()) -> String {
        if let dir = environment["XDG_RUNTIME_DIR"], !dir.isEmpty { return "\(dir)/photobooth/control" }
        return "/tmp/photobooth-\(uid)/control"
    }

    /// The daemon's socket: `/run/photobooth/control` as root without `--simulate`, else ``user(environment:uid:)``.
    public static func forDaemon(simulated: Bool, uid: uid_t = geteuid(),
                                 environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        !simulated && uid == 0 ? system : user(environment: environment, uid: uid)
    }

    /// Where `photoboothctl` looks, in order: the system socket, then the per-user one.
    public static func candidatesForClient(environment: [String: String] = ProcessInfo.processInfo.environment,
                                           uid: uid_t = geteuid()) -> [String] {
        [system, user(environment: environment, uid: uid)]
    }
}

/// The peer of a control connection, from `SO_PEERCRED` (what the kernel recorded at `connect`).
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: uid_t
    public var gid: gid_t
    public init(pid: Int32, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// Reads `SO_PEERCRED` of a connected unix socket. Wraps `getsockopt(SO_PEERCRED)`.
    public static func of(fd: Int32) throws(SocketError) -> PeerCredentials {
        var pid: Int32 = 0
        var uid: UInt32 = 0, gid: UInt32 = 0
        guard pb_peer_credentials(fd, &pid, &uid, &gid) == 0 else {
            throw SocketError(call: "getsockopt(SO_PEERCRED)", errno: errno, path: "fd \(fd)")
        }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }
}

/// Who may talk to the daemon: root, the daemon's own user, or a user whose groups (supplementary ones
/// included, from `getgrouplist`) contain the group `photobooth`.
public struct PeerPolicy: Sendable {
    /// The group (`photobooth`).
    public var groupName: String
    /// The daemon's effective uid (its own user may always talk to it).
    public var daemonUID: uid_t
    /// The group's id, nil when the group does not exist. Wraps `getgrnam_r`.
    public var groupID: @Sendable (String) -> gid_t?
    /// A user's groups: primary `gid` plus supplementary ones; nil when the uid has no passwd entry.
    /// Wraps `getpwuid_r` and `getgrouplist`.
    public var groups: @Sendable (uid_t, gid_t) -> [gid_t]?
    /// A user name for messages (`getpwuid_r`), nil when unknown.
    public var userName: @Sendable (uid_t) -> String?

    public init(groupName: String = ControlSocketPath.groupName, daemonUID: uid_t = geteuid(),
                groupID: @escaping @Sendable (String) -> gid_t? = SystemUsers.groupID,
                groups: @escaping @Sendable (uid_t, gid_t) -> [gid_t]? = SystemUsers.groups,
                userName: @escaping @Sendable (uid_t) -> String? = SystemUsers.userName) {
        self.groupName = groupName
        self.daemonUID = daemonUID
        self.groupID = groupID
        self.groups = groups
        self.userName = userName
    }

    /// nil when `peer` may use the socket; else the refusal, saying what to do.
    public func refusal(for peer: PeerCredentials) -> String? {
        if peer.uid == 0 || peer.uid == daemonUID { return nil }
        let who = userName(peer.uid).map { "user '\($0)' (uid \(peer.uid))" } ?? "uid \(peer.uid)"
        guard let gid = groupID(groupName) else {
            return "\(who) may not use photoboothd's control socket: only root and members of group '\(groupName)' may, "
                + "and that group does not exist here (install.sh creates it: sudo groupadd --system \(groupName))"
        }
        if let list = groups(peer.uid, peer.gid), list.contains(gid) { return nil }
        let name = userName(peer.uid) ?? "USER"
        return "\(who) may not use photoboothd's control socket: only root and members of group '\(groupName)' may. "
            + "Add the user to the group (sudo adduser \(name) \(groupName)) and log in again, or use sudo."
    }
}

/// Lookups in the system's user and group databases (NSS), for ``PeerPolicy``.
public enum SystemUsers {
    /// The gid of group `name` (`getgrnam_r`), nil when there is no such group.
    @Sendable public static func groupID(_ name: String) -> gid_t? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &group, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return group.gr_gid
    }

    /// The user name of `uid` (`getpwuid_r`), nil when unknown.
    @Sendable public static func userName(_ uid: uid_t) -> String? {
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, result != nil, let name = pw.pw_name else { return nil }
        return String(cString: name)
    }

    /// `gid` and the supplementary groups of `uid` (`getgrouplist` on its user name); nil when `uid` has no
    /// passwd entry (then it is in no group but `gid`).
    @Sendable public static func groups(_ uid: uid_t, _ gid: gid_t) -> [gid_t]? {
        guard let name = userName(uid) else { return nil }
        var count: Int32 = 64
        while true {
            var list = [gid_t](repeating: 0, count: Int(count))
            var n = count
            if getgrouplist(name, gid, &list, &n) >= 0 { return Array(list[0..<Int(n)]) }
            if n <= count { count *= 2 } else { count = n }
            if count > 65536 { return nil }
        }
    }
}

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
                log.error("control socket: poll failed: \(String(cString: strerror(errno))); control socket closed")
                return
            }
            if r == 0 { continue }
            let client = retryingEINTR { accept(fd, nil, nil) }
            if client < 0 {
                if errno == EAGAIN || errno == ECONNABORTED { continue }
                // EMFILE and the like: wait a little rather than spin.
                log.warning("control socket: accept failed: \(String(cString: strerror(errno)))")
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

/// Writes all of `bytes` (EINTR retried, MSG_NOSIGNAL: a vanished peer is an error, not SIGPIPE).
@discardableResult
func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = retryingEINTR { bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) } }
        if n < 0 { return false }
        offset += n
    }
    return true
}

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
