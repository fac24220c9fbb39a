import BoothClock
import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage

// The booth as a systemd service: sd_notify datagrams, the watchdog's liveness check, removable
// media and a full disk. The mount tests need root (tmpfs mounts) and are skipped without it.

/// Listens on an AF_UNIX datagram socket as systemd does for `$NOTIFY_SOCKET`; keeps each datagram
/// with the time the kernel queued it (`SO_TIMESTAMP`, wall clock in seconds): the moment it was
/// sent, however late the listener's thread gets to read it on a loaded machine.
final class NotifyListener: Sendable {
    let address: String
    private let fd: Int32
    /// Datagrams read so far. Each is taken from the socket and recorded under this lock, so
    /// `drained` never sees one that is neither in the socket nor recorded.
    private let received = Mutex<[(at: Double, text: String)]>([])
    private let stop = Mutex(false)
    /// Set by the reading thread as it ends: the socket is closed only after (its number could be
    /// reused by another test's descriptor, which a late reader would then read from).
    private let finished = Mutex(false)
    /// `SO_TIMESTAMP` (asm-generic/socket.h; also the control message's type, `SCM_TIMESTAMP`).
    private static let soTimestamp: Int32 = 29

    /// - Parameter address: a path, or `@name` for the abstract namespace.
    init(_ address: String) throws {
        self.address = address
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FileError(call: "socket", errno: errno, path: address) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let r = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard r == 0 else { throw FileError(call: "bind", errno: errno, path: address) }
        var on: Int32 = 1
        guard setsockopt(fd, SOL_SOCKET, NotifyListener.soTimestamp, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw FileError(call: "setsockopt(SO_TIMESTAMP)", errno: errno, path: address)
        }
        let socketFD = fd
        let t = Thread { [self] in
            defer { finished.withLock { $0 = true } }
            while !stop.withLock({ $0 }) {
                var p = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 50) > 0 else { continue }
                received.withLock { list in
                    if let datagram = NotifyListener.receive(socketFD) { list.append(datagram) }
                }
            }
        }
        t.start()
    }

    /// One datagram without blocking, with the kernel's queueing time; nil when none is there.
    private static func receive(_ fd: Int32) -> (at: Double, text: String)? {
        var buf = [UInt8](repeating: 0, count: 4096)
        var control = [UInt8](repeating: 0, count: 64)
        var at = 0.0
        let n = buf.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { ctl -> Int in
                var iov = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &iov) { iovp -> Int in
                    var msg = msghdr()
                    msg.msg_iov = iovp
                    msg.msg_iovlen = 1
                    msg.msg_control = ctl.baseAddress
                    msg.msg_controllen = ctl.count
                    let n = recvmsg(fd, &msg, Int32(MSG_DONTWAIT))
                    // One control message: cmsghdr (len, level, type), then a timeval at the next size_t boundary.
                    let header = MemoryLayout<cmsghdr>.size
                    if n >= 0, msg.msg_controllen >= header + MemoryLayout<timeval>.size, let base = ctl.baseAddress {
                        let c = base.loadUnaligned(as: cmsghdr.self)
                        if c.cmsg_level == SOL_SOCKET && c.cmsg_type == NotifyListener.soTimestamp {
                            let tv = base.loadUnaligned(fromByteOffset: header, as: timeval.self)
                            at = Double(tv.tv_sec) + Double(tv.tv_usec) / 1e6
                        }
                    }
                    return n
                }
            }
        }
        guard n > 0 else { return nil }
        return (at, String(decoding: buf[0..<n], as: UTF8.self))
    }

    func close() {
        stop.withLock { $0 = true }
        waitUntil(10) { finished.withLock { $0 } }
        Glibc.close(fd)
        if !address.hasPrefix("@") { unlink(address) }
    }

    var messages: [String] { received.withLock { $0.map(\.text) } }
    /// When each datagram `text` was sent (queued by the kernel), wall-clock seconds.
    func times(of text: String) -> [Double] { received.withLock { $0.filter { $0.text == text }.map(\.at) } }

    /// True when every datagram sent so far is recorded: none waits in the socket (a datagram is
    /// queued there as it is sent) and none is half-read (reading and recording share the lock).
    var drained: Bool {
        received.withLock { _ in
            var one: UInt8 = 0
            return recv(fd, &one, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
        }
    }
}

@Suite(.serialized) struct SystemdNotifyTests {
    @Test func eachMessageIsOneDatagramToAPathOrAnAbstractSocket() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        for address in ["\(dir)/notify", "@photobooth-test-\(getpid())"] {
            let listener = try NotifyListener(address)
            defer { listener.close() }
            let n = try #require(SystemdNotifier(socketPath: address, watchdogIntervalMilliseconds: 500))
            try n.ready(status: "idle · 0 photos")
            try n.status("fault · camera: gone\nreally")
            try n.watchdog()
            try #require(await eventually { listener.messages.count == 3 }, "\(listener.messages)")
            #expect(listener.messages == ["READY=1\nSTATUS=idle · 0 photos", "STATUS=fault · camera: gone really",
                                          "WATCHDOG=1"])
        }
        #expect(SystemdNotifier(socketPath: "relative/sock", watchdogIntervalMilliseconds: nil) == nil)
        #expect(SystemdNotifier(socketPath: "/" + String(repeating: "x", count: 200), watchdogIntervalMilliseconds: nil) == nil)
        let nobody = try #require(SystemdNotifier(socketPath: "\(dir)/nobody-listens", watchdogIntervalMilliseconds: nil))
        #expect(throws: FileError.self) { try nobody.watchdog() }
    }

    @Test func environmentGivesHalfTheWatchdogTimeoutAndIsCleared() {
        setenv("NOTIFY_SOCKET", "@x", 1)
        setenv("WATCHDOG_USEC", "3000000", 1)
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        let n = SystemdNotifier.fromEnvironment()
        #expect(n?.socketPath == "@x")
        #expect(n?.watchdogIntervalMilliseconds == 1500)
        #expect(getenv("NOTIFY_SOCKET") == nil && getenv("WATCHDOG_USEC") == nil && getenv("WATCHDOG_PID") == nil)
        setenv("NOTIFY_SOCKET", "@x", 1)
        setenv("WATCHDOG_USEC", "3000000", 1)
        setenv("WATCHDOG_PID", "1", 1)
        #expect(SystemdNotifier.fromEnvironment()?.watchdogIntervalMilliseconds == nil, "the watchdog is another process's")
        #expect(SystemdNotifier.fromEnvironment() == nil, "no NOTIFY_SOCKET: not under systemd")
    }

    @Test func theBoothSendsReadyStatusOnEachChangeAndWatchdogWhileAlive() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let listener = try NotifyListener("\(dir)/notify")
        defer { listener.close() }
        var options = RuntimeOptions()
        options.systemd = SystemdNotifier(socketPath: listener.address, watchdogIntervalMilliseconds: 100)
        let booth = TestBooth(fastSettings(dir: dir), options: options)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { listener.messages.contains("READY=1\nSTATUS=idle · 0 photos") },
                     "READY once idle: \(listener.messages)\n\(booth.logText)")
        booth.button.press()
        try #require(await eventually { listener.messages.contains("STATUS=idle · 1 photo") }, "\(listener.messages)")
        #expect(listener.messages.contains { $0.hasPrefix("STATUS=review") }, "each state change: \(listener.messages)")
        #expect(listener.messages.filter { $0.hasPrefix("READY=1") }.count == 1)
        try #require(await eventually { listener.times(of: "WATCHDOG=1").count >= 5 })
        let beats = listener.times(of: "WATCHDOG=1")
        #expect(beats.allSatisfy { $0 > 1_700_000_000 }, "each beat carries the kernel's send time: \(beats)")
        let gaps = zip(beats.dropFirst(), beats).map { ($0 - $1) * 1000 }
        #expect(gaps.allSatisfy { $0 < 400 }, "WATCHDOG=1 about every 100 ms: \(gaps)")
        booth.shutdownAndWait()
        #expect(await eventually { listener.messages.contains("STOPPING=1\nSTATUS=stopping") })
    }

    @Test func aStuckMainLoopStopsTheWatchdog() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let listener = try NotifyListener("\(dir)/notify")
        defer { listener.close() }
        var options = RuntimeOptions()
        options.systemd = SystemdNotifier(socketPath: listener.address, watchdogIntervalMilliseconds: 100)
        // 2 s after start: about 20 beats before it, whatever the start-up costs on a loaded machine.
        options.stallLoopAfterMilliseconds = 2000
        // The loop stays stalled for good: this booth's thread is left behind, sleeping.
        let booth = TestBooth(fastSettings(dir: dir), options: options)
        booth.start()
        try #require(await eventually { booth.logged("main loop stalled on purpose") }, "\(booth.logText)")
        // Every WATCHDOG=1 the loop sent before it stalled is queued in the socket already (it was
        // sent before the line above was logged); once the listener has read them all, count.
        try #require(await eventually { listener.drained }, "the listener reads what is queued")
        let settled = listener.times(of: "WATCHDOG=1").count
        #expect(settled >= 3, "alive before the stall")
        try await Task.sleep(for: .milliseconds(1000))
        let later = listener.times(of: "WATCHDOG=1").count
        #expect(later == settled, "no WATCHDOG=1 once the loop is stuck: \(later - settled) sent in 1 s")
    }
}

@Suite struct LivenessCheckTests {
    func inputs(_ clock: ManualClock, state: BoothState = .idle, since: MonotonicInstant? = nil,
                camera: Heartbeat = Heartbeat(), storage: Heartbeat = Heartbeat(), button: Bool = true) -> LivenessCheck.Inputs {
        LivenessCheck.Inputs(now: clock.now(), state: state, stateSince: since ?? clock.now(),
                             config: coreConfig(from: Settings.defaults), camera: camera, storage: storage,
                             buttonRunning: button)
    }

    @Test func aWorkerThreadIsAliveWhileTurningOrWaitingAndStuckOtherwise() {
        let clock = ManualClock()
        let check = LivenessCheck()
        let camera = Heartbeat()
        camera.turn(at: clock.now())
        clock.advance(milliseconds: check.cameraLimitMilliseconds - 1)
        #expect(check.problem(inputs(clock, camera: camera)) == nil, "turned within the limit")
        clock.advance(milliseconds: 2)
        #expect(check.problem(inputs(clock, camera: camera))?.contains("camera thread stuck") == true)
        camera.waiting()
        #expect(check.problem(inputs(clock, camera: camera)) == nil, "deliberately idle")
        let storage = Heartbeat()
        storage.turn(at: clock.now())
        clock.advance(milliseconds: check.storageLimitMilliseconds + 1)
        #expect(check.problem(inputs(clock, camera: camera, storage: storage))?.contains("storage thread stuck") == true)
    }

    @Test func aStoppedButtonMustBeARecordedFault() {
        let clock = ManualClock()
        let check = LivenessCheck()
        #expect(check.problem(inputs(clock, button: false)) != nil)
        #expect(check.problem(inputs(clock, state: .fault(reasons: [.button: "line gone"]), button: false)) == nil)
        #expect(check.problem(inputs(clock, state: .fault(reasons: [.camera: "gone"]), button: false)) != nil)
    }

    @Test func aSessionStepBeyondItsDeadlineIsStuckButIdleNeverIs() {
        let clock = ManualClock()
        let check = LivenessCheck()
        let start = clock.now()
        let review = Settings.defaults.session.reviewMilliseconds
        clock.advance(milliseconds: review + check.stateSlackMilliseconds - 1)
        #expect(check.problem(inputs(clock, state: .review(pictureID: 1), since: start)) == nil)
        clock.advance(milliseconds: 2)
        #expect(check.problem(inputs(clock, state: .review(pictureID: 1), since: start))?.contains("state review") == true)
        clock.advance(milliseconds: 86_400_000)
        #expect(check.problem(inputs(clock, state: .idle, since: start)) == nil)
    }
}

// Root only (CI runs as root): as root, a refused tmpfs mount fails the test (#require), never skips it.
@Suite(.serialized, .enabled(if: geteuid() == 0, "needs root to mount a tmpfs"))
struct StorageMediaTests {
    @Test func removableMediaGoneIsAStorageFaultAndNothingIsWrittenToTheEmptyMountPoint() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let media = "\(dir)/media"
        mkdir(media, 0o755)
        try #require(run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", media]).0 == 0)
        defer { run("/bin/umount", ["-l", media]) }
        var settings = fastSettings(dir: dir)
        settings.storage.dir = "\(media)/photos"
        settings.storage.mount = media
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming && booth.state.isIdle })
        booth.button.press()
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 1 }, "\(booth.logText)")
        try #require(await booth.finishSession(completed: 1), "\(booth.logText)")

        try #require(run("/bin/umount", ["-l", media]).0 == 0)
        // The loop's tick (each second) checks the mount.
        try #require(await booth.advance(milliseconds: 1000))
        try #require(await eventually { booth.state.faultReasons?[.storage] != nil },
                     "media gone -> fault(storage):\n\(booth.logText)")
        #expect(booth.state.faultReasons?[.storage]?.contains("not mounted at \(media)") == true)
        booth.button.press()
        // The press was handled (and refused) before the check, or the check proves nothing.
        try #require(await eventually { booth.logged("press ignored: booth in fault") }, "\(booth.logText)")
        #expect(listDirectory(media).isEmpty, "nothing written to the SD card under the empty mount point")

        try #require(run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", media]).0 == 0)
        try #require(await booth.advance(untilMilliseconds: 60_000) { booth.state.isIdle }, "recovers once mounted again:\n\(booth.logText)")
    }

    @Test func aFullDiskRefusesSessionsAndAFailedWriteLeavesNoPartialFile() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let disk = "\(dir)/disk"
        mkdir(disk, 0o755)
        try #require(run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk]).0 == 0)
        defer { run("/bin/umount", ["-l", disk]) }
        var settings = fastSettings(dir: dir)
        settings.storage.dir = "\(disk)/photos"
        settings.storage.minFreeBytes = 300_000
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming && booth.state.isIdle })

        // Below min_free: refused with the reason, no session.
        let filler = "\(disk)/filler"
        try AtomicFile.write([UInt8](repeating: 7, count: 800_000), to: filler, durable: false)
        booth.button.press()
        try #require(await eventually { booth.logged("press refused", "Storage almost full") }, "\(booth.logText)")
        #expect(booth.runtime.counters.sessions == 0)
        unlink(filler)
        booth.button.press()
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 1 }, "recovers once freed:\n\(booth.logText)")
        try #require(await booth.finishSession(completed: 1), "\(booth.logText)")

        // Completely full with min_free 0: the write fails with ENOSPC, no partial or temp file stays,
        // the capture is kept and saved once space is freed.
        let saved = savedCaptures(in: settings.storage.dir)
        booth.runtime.storage.setMinFree(0)
        let fd = open(filler, O_WRONLY | O_CREAT, 0o644)
        let chunk = [UInt8](repeating: 1, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        close(fd)
        try #require(await eventually { booth.state.isIdle })
        booth.button.press()
        // The failed save is a fault once the review ends.
        try #require(await eventually { booth.logged("fault (storage): storage full") }, "\(booth.logText)")
        try #require(await booth.advance(milliseconds: settings.session.reviewMilliseconds))
        try #require(await eventually { booth.state.faultReasons?[.storage] != nil }, "\(booth.logText)")
        #expect(booth.state.faultReasons?[.storage]?.contains("storage full") == true)
        let files = savedCaptures(in: settings.storage.dir)
        #expect(files == saved, "no partial file: \(files)")
        let folder = (saved[0] as NSString).deletingLastPathComponent
        #expect(!listDirectory(folder).contains { $0.hasPrefix(AtomicFile.tempPrefix) }, "no temp file")
        unlink(filler)
        // The storage fault's retries (1 s, doubling) save it.
        try #require(await booth.advance(untilMilliseconds: 60_000) { savedCaptures(in: settings.storage.dir).count == 2 },
                     "the held capture is saved once space is freed:\n\(booth.logText)")
        #expect(savedCaptures(in: settings.storage.dir).allSatisfy(decodesFully))
    }
}
