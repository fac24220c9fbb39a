import BoothClock
import BoothCore
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime

// The event loop on a manual clock: what the runtime tests' advance(milliseconds:) stands on.

/// An event loop running on a thread of its own, recording what it handles.
private final class RunningLoop: Sendable {
    let clock = ManualClock(start: MonotonicInstant(nanoseconds: 5_000_000_000))
    let loop: EventLoop
    private let handled = Mutex<[BoothEvent]>([])
    private let ticks = Mutex(0)
    private let finished = Mutex(false)

    init(tickEveryMilliseconds: Int? = nil) {
        loop = EventLoop(clock: clock)
        let loop = self.loop
        Thread { [self] in
            loop.run(tickEveryMilliseconds: tickEveryMilliseconds, tick: { self.ticks.withLock { $0 += 1 } }) { event in
                self.handled.withLock { $0.append(event) }
            }
            finished.withLock { $0 = true }
        }.start()
    }

    var events: [BoothEvent] { handled.withLock { $0 } }
    var tickCount: Int { ticks.withLock { $0 } }

    /// Waits (real time, up to 10 s) until the loop has handled everything due on its clock now.
    func settle() async -> Bool {
        let now = clock.now()
        return await eventually(timeoutSeconds: 10) { loop.isIdle(at: now) }
    }

    func stop() {
        loop.stop()
        waitUntil(5) { finished.withLock { $0 } }
    }
}

@Suite struct ManualClockLoopTests {
    @Test("a timer on a manual clock fires when the clock reaches it, not before, at its deadline")
    func timerFiresWhenTheClockIsAdvancedToIt() async throws {
        let running = RunningLoop()
        defer { running.stop() }
        let start = running.clock.now()
        running.loop.schedule(token: 7, milliseconds: 60_000)
        try #require(await running.settle(), "the loop waits for its timer")
        #expect(running.events.isEmpty)

        running.clock.advance(milliseconds: 59_999)
        try #require(await running.settle())
        #expect(running.events.isEmpty, "not due yet")

        // Without the clock waking it, the loop would sleep out the rest of a real minute first.
        running.clock.advance(milliseconds: 1)
        try #require(await running.settle(), "the loop woke when the clock moved")
        #expect(running.events == [.timer(token: 7, at: start.adding(milliseconds: 60_000))])
    }

    @Test("events posted and timers due are all handled before the loop counts as idle at an instant")
    func idleMeansEverythingDueWasHandled() async throws {
        let running = RunningLoop()
        defer { running.stop() }
        try #require(await running.settle())
        let start = running.clock.now()
        running.loop.post(.longPress(id: 1))
        running.loop.post(.longPress(id: 2), afterMilliseconds: 100)
        running.loop.schedule(token: 3, milliseconds: 200)
        running.clock.advance(milliseconds: 250)
        try #require(await running.settle())
        #expect(running.events == [.longPress(id: 1), .longPress(id: 2), .timer(token: 3, at: start.adding(milliseconds: 200))])
        #expect(running.loop.pendingTimerCount == 0)
    }

    @Test("the loop's tick follows the manual clock: once per second of it")
    func tickFollowsTheClock() async throws {
        let running = RunningLoop(tickEveryMilliseconds: 1000)
        defer { running.stop() }
        try #require(await running.settle())
        #expect(running.tickCount == 0)
        for second in 1...3 {
            running.clock.advance(milliseconds: 1000)
            try #require(await running.settle())
            #expect(running.tickCount == second)
        }
    }

    @Test("a loop on the real clock never reports idle (the test-only report is for manual clocks)")
    func realClockLoopIsNeverIdle() {
        let loop = EventLoop(clock: SystemClock())
        #expect(!loop.isIdle(at: MonotonicInstant(nanoseconds: 0)))
    }

    @Test("a manual clock tells its observers after each advance, and never goes back")
    func manualClockObserversAndAdvanceTo() {
        let clock = ManualClock(start: MonotonicInstant(nanoseconds: 1_000))
        let seen = Mutex<[UInt64]>([])
        clock.onAdvance { seen.withLock { $0.append(clock.now().nanoseconds) } }
        clock.advance(milliseconds: 2)
        clock.advance(to: MonotonicInstant(nanoseconds: 500))  // earlier: no move, no call
        clock.advance(to: MonotonicInstant(nanoseconds: 5_000_000))
        clock.advance(milliseconds: -5)  // taken as 0
        #expect(clock.now() == MonotonicInstant(nanoseconds: 5_000_000))
        #expect(seen.withLock { $0 } == [2_001_000, 5_000_000, 5_000_000])
    }
}
