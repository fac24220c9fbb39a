import BoothTestSupport
import BoothCore
import BoothPorts
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothWiring

// The runtime's waits for its own loop (a reload's answer, a control press's outcome) are on its injected
// clock, and no signal handler waits: shown on a ManualClock with a booth whose loop never runs, so
// nothing ever answers and only the clock ends the waits. No test here sleeps for the limits it checks.

/// A booth whose loop is never started, on a manual clock, whose config file now has a new countdown.
private final class SilentBooth: Sendable {
    let dir = makeTempDir("reload-wait")
    let clock = ManualClock.startingNow()
    let logs = LogRecorder()
    let runtime: BoothRuntime

    /// - Parameter shutter: the camera is a ``ShutterCamera`` (never launched: it has no frame for a snapshot).
    init(shutter: Bool = false) throws {
        let settings = try Settings.defaults.with(overrides: [
            ("storage.dir", "\(dir)/photos"), ("storage.session_file", "\(dir)/session-number"), ("preview.file", ""),
            ("storage.min_free", "0B"), ("print.journal", "\(dir)/journal.json"), ("print.spool", "\(dir)/spool"),
        ]).get()
        let changed = try settings.with(overrides: [("session.countdown", "5s")]).get()
        let clock = self.clock
        let factory = shutter
            ? DeviceFactory(cameraSource: { _, _, _ in ShutterCamera(clock: clock) }, button: { _ in NoButton() },
                            led: { _ in nil }, displays: { _, _, _ in [] })
            : DeviceFactory(camera: { _ in TestCamera(name: "sim", clock: clock) }, button: { _ in NoButton() },
                            led: { _ in nil }, displays: { _, _, _ in [] })
        runtime = BoothRuntime(settings: settings, options: RuntimeOptions(), factory: factory, clock: clock,
                               log: logs.logger(threshold: .debug), reloader: { .success(changed) })
    }

    deinit { removeTree(dir) }

    var timedOut: Bool { logs.all.contains { $0.contains("the main loop did not answer within 10 s") } }
}

/// Runs `body` on a thread of its own; `result` is its value once it returned.
private final class Background<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    init(_ body: @escaping @Sendable () -> T) {
        let thread = Thread { [self] in let v = body(); self.value.withLock { $0 = v } }
        thread.start()
    }
    var result: T? { value.withLock { $0 } }
}

@Suite("the runtime's waits on its injected clock")
struct ReloadWaitTests {
    @Test("a reload the loop does not answer times out when the booth's clock reaches its 10 s, not before")
    func reloadTimesOutOnTheClock() async throws {
        let booth = try SilentBooth()
        let reload = Background { booth.runtime.requestReload() }
        // Once it waits (its deadline taken from the booth's clock), the clock moves.
        try #require(await eventually(timeoutSeconds: 5) { booth.runtime.reloads.answers.waiters == 1 })
        booth.clock.advance(milliseconds: 9_990)
        try await Task.sleep(for: .milliseconds(100))
        #expect(reload.result == nil, "still waiting at 9.99 s on the booth's clock")
        booth.clock.advance(milliseconds: 10)
        #expect(await eventually(timeoutSeconds: 5) { reload.result != nil })
        guard case let .accepted(reply)? = reload.result else { Issue.record("\(String(describing: reload.result))"); return }
        #expect(!reply.appliedNow)
        #expect(reply.changes?.map(\.key) == ["session.countdown"])
        #expect(booth.timedOut, "\(booth.logs.all)")
        // No real 10 s wait: the answer came within the 5 s `eventually` after the last advance. (A bound on
        // the whole test's real time failed under a loaded parallel run: 15 s of waiting for threads to run.)
    }

    @Test("SIGHUP's handler returns at once; its reload waits on the reload thread, and a SIGTERM after it is handled at once")
    func signalPathReturnsAtOnce() async throws {
        let booth = try SilentBooth()
        let log = booth.logs.logger()
        handleSignal(SIGHUP, runtime: booth.runtime, log: log)
        // It returned while the booth's clock, which alone ends the reload's wait, has not moved: the handler
        // did not wait for the loop (a handler that did would never get here).
        #expect(!booth.timedOut)
        handleSignal(SIGTERM, runtime: booth.runtime, log: log)
        #expect(booth.runtime.isStopping, "SIGTERM is not queued behind the reload")
        // The reload itself waits on the reload thread until the booth's clock reaches its limit.
        try #require(await eventually(timeoutSeconds: 5) { booth.runtime.reloads.answers.waiters == 1 })
        booth.clock.advance(milliseconds: 10_000)
        #expect(await eventually(timeoutSeconds: 5) { booth.timedOut }, "\(booth.logs.all)")
    }

    @Test("a control press the loop does not handle times out on the booth's clock")
    func pressTimesOutOnTheClock() async throws {
        let booth = try SilentBooth()
        let press = Background { booth.runtime.pressWithOutcome(timeoutSeconds: 2) }
        try #require(await eventually(timeoutSeconds: 5) { booth.runtime.admin.pressAnswers.waiters == 1 })
        booth.clock.advance(milliseconds: 1_990)
        try await Task.sleep(for: .milliseconds(100))
        #expect(press.result == nil, "still waiting at 1.99 s on the booth's clock")
        booth.clock.advance(milliseconds: 10)
        #expect(await eventually(timeoutSeconds: 5) { press.result != nil })
        #expect(press.result?.stateAfter == nil)
        #expect(press.result?.stateBefore == "idle")
    }

    @Test("a snapshot with no frame asks again every 50 ms of the booth's clock and gives up at its limit, not before")
    func snapshotWaitsOnTheClock() async throws {
        let booth = try SilentBooth(shutter: true)
        let frames = booth.runtime.admin.liveFrames.arrived
        let snapshot = Background { booth.runtime.snapshotJPEG(timeoutSeconds: 5) }
        try #require(await eventually(timeoutSeconds: 5) { frames.waiters == 1 })
        booth.clock.advance(milliseconds: 4_960)
        try #require(await eventually(timeoutSeconds: 5) { frames.waiters == 1 }, "asked again, waiting again")
        #expect(snapshot.result == nil, "still waiting at 4.96 s on the booth's clock")
        booth.clock.advance(milliseconds: 40)
        #expect(await eventually(timeoutSeconds: 5) { snapshot.result != nil })
        #expect(snapshot.result == .some(nil), "no frame: nil")
    }
}
