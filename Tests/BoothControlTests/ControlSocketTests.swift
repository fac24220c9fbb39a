import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothControl
@testable import BoothRuntime

/// Sends raw bytes on a fresh connection, ends its sending side, and reads every reply line until the server
/// closes; returns the first (nil when the server closed without one).
func rawExchange(_ path: String, _ bytes: [UInt8]) throws -> String? {
    try rawExchangeAll(path, bytes).first
}

func rawExchangeAll(_ path: String, _ bytes: [UInt8]) throws -> [String] {
    let fd = try ControlClient.connect(path)
    defer { close(fd) }
    _ = sendAll(fd, bytes)
    shutdown(fd, Int32(SHUT_WR))
    var reader = LineReader(fd: fd, limit: ControlProtocol.maxReplyBytes)
    var lines: [String] = []
    while case let .line(reply) = reader.next() { lines.append(String(decoding: reply, as: UTF8.self)) }
    return lines
}

/// A server on a socket in a fresh directory that counts the requests reaching its handler.
final class CountingServer: Sendable {
    let dir = makeTempDir()
    let calls = Calls()
    let server: ControlServer
    var path: String { server.path }

    init(mode: mode_t = 0o660, policy: PeerPolicy = PeerPolicy()) throws {
        let calls = self.calls
        server = ControlServer(path: "\(dir)/ctl/control", mode: mode, policy: policy, log: LogRecorder().logger()) { request, _ in
            calls.list.withLock { $0.append(request.command) }
            return ControlReply(result: PressReply(stateBefore: "idle", stateAfter: "preview", ignored: nil)).line()
        }
        try server.start()
    }

    func close() {
        server.stop()
        removeTree(dir)
    }
}

/// The commands a test handler saw.
final class Calls: Sendable {
    let list = Mutex<[String]>([])
}

@Suite(.serialized) struct ControlSocketTests {
    @Test func garbageGetsErrorRepliesAndNeverReachesTheBooth() throws {
        let s = try CountingServer(); defer { s.close() }
        let cases: [(bytes: [UInt8], code: String)] = [
            (Array("hello there\n".utf8), "bad-request"),
            (Array("{\"protocol\":1}\n".utf8), "bad-request"),
            ([0xFF, 0xFE, 0x00, 0x01, 0x0A], "bad-request"),
            (Array("[1,2,3]\n".utf8), "bad-request"),
            (Array("{\"protocol\":99,\"command\":\"press\"}\n".utf8), "unsupported-protocol"),
            (Array("{\"protocol\":1,\"command\":\"self-destruct\"}\n".utf8), "unknown-command"),
            ([UInt8](repeating: UInt8(ascii: "a"), count: ControlProtocol.maxRequestBytes + 10) + [0x0A], "too-large"),
            ([UInt8](repeating: UInt8(ascii: "{"), count: ControlProtocol.maxRequestBytes * 3), "too-large"),
        ]
        for c in cases {
            let reply = try #require(try rawExchange(s.path, c.bytes))
            #expect(reply.contains("\"ok\":false"))
            #expect(reply.contains("\"code\":\"\(c.code)\""), "reply: \(reply)")
        }
        #expect(s.calls.list.withLock { $0 }.isEmpty, "no malformed request reaches the handler")
        // A peer that connects and leaves without a word.
        close(try ControlClient.connect(s.path))
        // Garbage does not end a connection: the good request after it on the same connection is served.
        let replies = try rawExchangeAll(s.path, Array("garbage\n{\"protocol\":1,\"command\":\"press\"}\n".utf8))
        #expect(replies.count == 2)
        #expect(replies.first?.contains("bad-request") == true)
        #expect(replies.last?.contains("\"ok\":true") == true)
        #expect(s.calls.list.withLock { $0 } == ["press"])
        let client = try ControlClient(socket: s.path)
        let press = try client.send(ControlRequest(.press), expecting: PressReply.self)
        #expect(press.stateBefore == "idle")
        #expect(s.calls.list.withLock { $0 } == ["press", "press"])
    }

    @Test func socketFileIs0660() throws {
        let s = try CountingServer(); defer { s.close() }
        var st = stat()
        #expect(stat(s.path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o660)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
    }

    @Test func aSecondServerOnALiveSocketIsRefusedAndAStaleOneIsReplaced() throws {
        let s = try CountingServer(); defer { s.close() }
        let second = ControlServer(path: s.path, log: LogRecorder().logger()) { _, _ in [] }
        #expect(throws: ControlSocketLock.Failure.held(lockPath: s.path + ".lock", socketPath: s.path, pid: getpid())) {
            try second.start()
        }
        // The refused one removes nothing when it stops: the first stays reachable (issue 13).
        second.stop()
        _ = try ControlClient(socket: s.path).send(ControlRequest(.hello), expecting: PressReply.self)
        // A daemon without the lock (an older photoboothd) answering there: refused too, its socket kept.
        let lockless = try CountingServer()
        defer { lockless.close() }
        unlink(lockless.path + ".lock")
        let third = ControlServer(path: lockless.path, log: LogRecorder().logger()) { _, _ in [] }
        #expect(throws: ControlSocketLock.Failure.failed(SocketError(call: "bind", errno: EADDRINUSE, path: lockless.path))) {
            try third.start()
        }
        third.stop()
        _ = try ControlClient(socket: lockless.path).send(ControlRequest(.hello), expecting: PressReply.self)
        // A stale socket file (nobody listening) is replaced.
        let staleDir = makeTempDir(); defer { removeTree(staleDir) }
        let stalePath = "\(staleDir)/control"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = try ControlServer.address(stalePath)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        close(fd)
        let fresh = ControlServer(path: stalePath, log: LogRecorder().logger()) { _, _ in ControlReply(result: NoResult()).line() }
        try fresh.start()
        defer { fresh.stop() }
        _ = try ControlClient(socket: stalePath).send(ControlRequest(.hello), expecting: NoResult.self)
    }

    /// A daemon's control socket whose `hello` says `stopping`, holding the lock as photoboothd does.
    private func daemon(stopping: Bool?, in dir: String) throws -> ControlServer {
        var info = DaemonInfo(version: "test", protocolVersion: ControlProtocol.version, pid: getpid(), configPath: "/dev/null", simulated: true)
        info.stopping = stopping
        let reply = ControlReply(result: info).line()
        let server = ControlServer(path: "\(dir)/control", log: LogRecorder().logger()) { _, _ in reply }
        try server.start()
        return server
    }

    @Test("a restart while the old daemon is stopping waits for its lock, then takes it")
    func restartWaitsForAStoppingDaemon() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let old = try daemon(stopping: true, in: dir)
        defer { old.stop() }
        let clock = ManualClock()
        let tries = Mutex(0)
        var said: [String] = []
        // The old daemon ends (its socket removed, its lock released) during the third wait.
        let lock = try ControlSocketLock.take(socketPath: "\(dir)/control", clock: clock, sleep: { ms in
            clock.advance(milliseconds: Int(ms))
            if tries.withLock({ $0 += 1; return $0 }) == 3 { old.stop() }
        }, log: { said.append($0) })
        lock.release()
        #expect(tries.withLock { $0 } == 3)
        #expect(said.count == 2)
        #expect(said.first?.contains("(pid \(getpid())) is stopping on the control socket \(dir)/control: waiting up to 10 s") == true, "\(said)")
        #expect(said.last?.contains("released \(dir)/control.lock after 300 ms of waiting; starting") == true, "\(said)")
    }

    @Test("a daemon still stopping when the wait runs out: refused, saying it waited")
    func stoppingDaemonThatDoesNotEnd() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let old = try daemon(stopping: true, in: dir)
        defer { old.stop() }
        let clock = ManualClock()
        #expect(throws: ControlSocketLock.Failure.stillStopping(lockPath: "\(dir)/control.lock", socketPath: "\(dir)/control",
                                                               pid: getpid(), waitedMilliseconds: ControlSocketLock.stoppingWaitMilliseconds)) {
            _ = try ControlSocketLock.take(socketPath: "\(dir)/control", clock: clock,
                                           sleep: { clock.advance(milliseconds: Int($0)) }, log: { _ in })
        }
    }

    @Test("a running daemon (not stopping, or one that does not say) is refused at once, without waiting")
    func runningDaemonIsRefusedAtOnce() throws {
        for stopping in [false, nil] as [Bool?] {
            let dir = makeTempDir(); defer { removeTree(dir) }
            let old = try daemon(stopping: stopping, in: dir)
            defer { old.stop() }
            let waits = Mutex(0)
            #expect(throws: ControlSocketLock.Failure.held(lockPath: "\(dir)/control.lock", socketPath: "\(dir)/control", pid: getpid())) {
                _ = try ControlSocketLock.take(socketPath: "\(dir)/control", clock: ManualClock(),
                                               sleep: { _ in waits.withLock { $0 += 1 } }, log: { _ in })
            }
            #expect(waits.withLock { $0 } == 0)
        }
    }

    @Test("a lock holder that does not answer on its socket (closed as it ends) is waited for")
    func silentLockHolderIsWaitedFor() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let held = try ControlSocketLock(socketPath: "\(dir)/control")
        let clock = ManualClock()
        var said: [String] = []
        let lock = try ControlSocketLock.take(socketPath: "\(dir)/control", clock: clock, sleep: { ms in
            clock.advance(milliseconds: Int(ms))
            held.release()
        }, log: { said.append($0) })
        lock.release()
        #expect(said.first?.contains("holds \(dir)/control.lock and does not answer on the control socket") == true, "\(said)")
    }

    @Test func clientExplainsANotRunningDaemon() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        #expect(throws: ControlClientError.notRunning(paths: ["\(dir)/control"])) {
            try ControlClient(socket: "\(dir)/control").send(ControlRequest(.status), expecting: NoResult.self)
        }
    }

    // MARK: Peer policy

    func policy(groups: [uid_t: [gid_t]], groupExists: Bool = true) -> PeerPolicy {
        PeerPolicy(groupName: "photobooth", daemonUID: 0,
                   groupID: { _ in groupExists ? 990 : nil },
                   groups: { uid, gid in groups[uid].map { [gid] + $0 } },
                   userName: { uid in uid == 1000 ? "anna" : nil })
    }

    @Test func policyAdmitsRootTheDaemonsUserAndGroupMembersOnly() {
        let p = policy(groups: [1000: [27, 990], 1001: [27]])
        #expect(p.refusal(for: PeerCredentials(pid: 1, uid: 0, gid: 0)) == nil)
        #expect(p.refusal(for: PeerCredentials(pid: 1, uid: 1000, gid: 1000)) == nil, "a supplementary group counts")
        #expect(p.refusal(for: PeerCredentials(pid: 1, uid: 1002, gid: 990)) != nil,
                "a uid without a passwd entry is judged by nothing but its listed groups")
        let refusal = p.refusal(for: PeerCredentials(pid: 1, uid: 1001, gid: 1001))
        #expect(refusal?.contains("uid 1001 may not use photoboothd's control socket") == true)
        #expect(refusal?.contains("sudo adduser USER photobooth") == true)
        let own = PeerPolicy(daemonUID: 1234, groupID: { _ in nil }, groups: { _, _ in nil }, userName: { _ in nil })
        #expect(own.refusal(for: PeerCredentials(pid: 1, uid: 1234, gid: 1234)) == nil)
        let noGroup = policy(groups: [1000: [990]], groupExists: false)
        #expect(noGroup.refusal(for: PeerCredentials(pid: 1, uid: 1000, gid: 1000))?.contains("does not exist") == true)
    }

    @Test func systemLookupsFindRoot() {
        #expect(SystemUsers.userName(0) == "root")
        #expect(SystemUsers.groupID("root") == 0)
        #expect(SystemUsers.groups(0, 0)?.contains(0) == true)
    }

    // MARK: A real second uid

    /// Runs `argv` as uid/gid 65534 with no supplementary groups (setpriv), returning exit status and output.
    func runAsNobody(_ argv: [String]) throws -> (status: Int32, output: String)? {
        guard access("/usr/bin/setpriv", X_OK) == 0, geteuid() == 0 else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"] + argv
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static let pythonClient = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(sys.argv[1])
        except PermissionError:
            print("EACCES"); sys.exit(0)
        s.sendall(b'{"protocol":1,"command":"press"}\\n')
        print(s.makefile().readline().strip())
        """

    @Test func aPeerOutsideTheGroupIsRefusedByThePeerCheck() throws {
        guard access("/usr/bin/python3", X_OK) == 0 else {
            Issue.record("missing prerequisite: /usr/bin/python3 (apt-get install python3), the client run under another uid"); return
        }
        // Mode 0666 lets uid 65534 past the file permissions, so the SO_PEERCRED check is what refuses it.
        let s = try CountingServer(mode: 0o666, policy: PeerPolicy(groupName: "photobooth-test-absent-group")); defer { s.close() }
        chmod(s.dir, 0o755); chmod("\(s.dir)/ctl", 0o755)
        guard let (status, output) = try runAsNobody(["/usr/bin/python3", "-c", Self.pythonClient, s.path]) else {
            Issue.record("missing prerequisite: root and /usr/bin/setpriv (util-linux) to run a client as uid 65534"); return
        }
        #expect(status == 0, "client output: \(output)")
        #expect(output.contains("\"code\":\"not-allowed\""), "client output: \(output)")
        #expect(output.contains("uid 65534") || output.contains("nobody"))
        #expect(s.calls.list.withLock { $0 }.isEmpty, "the refused request never reaches the booth")
    }

    @Test func theDefaultModeKeepsOtherUsersOutAndPhotoboothctlSaysWhy() throws {
        let s = try CountingServer(); defer { s.close() }
        chmod(s.dir, 0o755); chmod("\(s.dir)/ctl", 0o755)
        guard access("/usr/bin/python3", X_OK) == 0 else {
            Issue.record("missing prerequisite: /usr/bin/python3 (apt-get install python3)"); return
        }
        if let (_, output) = try runAsNobody(["/usr/bin/python3", "-c", Self.pythonClient, s.path]) {
            #expect(output.contains("EACCES"), "a 0660 socket refuses others at connect: \(output)")
        }
        let ctl = "\(packageRoot())/.build/debug/photoboothctl"
        guard access(ctl, X_OK) == 0 else {
            Issue.record("missing prerequisite: \(ctl) not built (swift build first)"); return
        }
        guard let (status, output) = try runAsNobody([ctl, "status", "--socket", s.path]) else {
            Issue.record("missing prerequisite: root and /usr/bin/setpriv (util-linux)"); return
        }
        if output.contains("Permission denied") && output.contains("exec") {
            Issue.record("uid 65534 cannot execute \(ctl): the checkout must be readable and searchable by others"); return
        }
        #expect(status == ExitCode.noPermission, "output: \(output)")
        #expect(output.contains("permission denied"))
        #expect(output.contains("photobooth"))
        #expect(s.calls.list.withLock { $0 }.isEmpty)
    }
}
