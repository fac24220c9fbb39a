import BoothTestSupport
import BoothClock
import BoothCore
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime

// The runtime's waits (a reload's answer, a press's outcome, a snapshot's frame) on the daemon's own
// clock, SystemClock: a limit passes in real time, and a notify ends the wait at once.

@Suite("ClockCondition on the real clock")
struct ClockConditionTests {
    @Test("on SystemClock a wait nobody answers ends at its limit in real time, not before and not never")
    func systemClockTimesOutInRealTime() {
        let condition = ClockCondition(clock: SystemClock())
        let start = ContinuousClock.now
        let value: Int? = condition.wait(milliseconds: 200) { nil }
        let waited = ContinuousClock.now - start
        #expect(value == nil)
        #expect(waited >= .milliseconds(200), "ended before its limit: \(waited)")
        #expect(waited < .seconds(5), "did not end at its limit: \(waited)")
    }

    @Test("on SystemClock a notify after the value is set ends the wait at once, long before its limit")
    func systemClockNotifyWakes() {
        let condition = ClockCondition(clock: SystemClock())
        let ready = Mutex<Int?>(nil)
        let thread = Thread {
            usleep(100_000)
            ready.withLock { $0 = 7 }
            condition.notify()
        }
        thread.start()
        let start = ContinuousClock.now
        let value = condition.wait(milliseconds: 20_000) { ready.withLock { $0 } }
        #expect(value == 7)
        #expect(ContinuousClock.now - start < .seconds(10), "woken by the limit, not the notify")
    }
}
