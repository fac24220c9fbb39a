import BoothClock
import BoothCore
import BoothPorts
import BoothTestSupport
import Synchronization
import Testing

/// A button whose thread can fail while `start` is still running (an input device unplugged as it
/// is opened): `failNextStarts` starts report `.failed` before they return.
private final class FlakyButton: ButtonDevice {
    let identity = "flaky input button (test)"
    let failNextStarts = Mutex(0)
    let starts = Mutex(0)
    private let handler = Mutex<(@Sendable (ButtonSignal) -> Void)?>(nil)
    private let running = Mutex(false)
    func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        starts.withLock { $0 += 1 }
        self.handler.withLock { $0 = handler }
        running.withLock { $0 = true }
        let fail = failNextStarts.withLock { n in defer { n = max(0, n - 1) }; return n > 0 }
        if fail { unplug() }
    }
    func stop() { running.withLock { $0 = false } }
    var isRunning: Bool { running.withLock { $0 } }
    func unplug() {
        running.withLock { $0 = false }
        handler.withLock { $0 }?(.failed("button input failed: input device unplugged (ENODEV)"))
    }
}

@Suite("Button retries")
struct ButtonRetryTests {
    /// The retry's start fails on the device's thread before it returns: the fault stays (no
    /// "recovered" with a dead button); the next retry that opens it recovers.
    @Test func aButtonThatFailsAsItStartsIsNotRecovered() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let button = FlakyButton()
        let booth = TestBooth(fastSettings(dir: dir), button: button, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await eventually { booth.state.isIdle && booth.logged("button: flaky input button") }, "\(booth.logText)")
        button.failNextStarts.withLock { $0 = 1 }
        button.unplug()
        #expect(await eventually { booth.state.faultReasons?[.button] != nil }, "\(booth.logText)")
        // The first retry (1 s) starts it, and it fails at once: still in fault.
        #expect(await booth.advance(untilMilliseconds: 5_000) { button.starts.withLock { $0 } >= 2 }, "\(booth.logText)")
        await booth.settle()
        #expect(booth.state.faultReasons?[.button] != nil, "a button that failed as it started is no recovery:\n\(booth.logText)")
        // The next retry opens it for good.
        #expect(await booth.advance(untilMilliseconds: 10_000) { booth.state.isIdle }, "\(booth.logText)")
        #expect(button.isRunning)
        #expect(button.starts.withLock { $0 } == 3)
    }
}
