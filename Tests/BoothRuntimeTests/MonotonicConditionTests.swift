import BoothClock
import BoothCore
import Foundation
import Synchronization
import Testing

/// `MonotonicCondition`: the waits the runtime's threads use, with deadlines on CLOCK_MONOTONIC.
/// (That a wall clock moved under them changes nothing is `hardware/system-tests/clock-test.sh`.)
@Suite struct MonotonicConditionTests {
    @Test func aTimedWaitEndsAtItsMonotonicDeadline() {
        let condition = MonotonicCondition()
        let start = Monotonic.now()
        condition.lock()
        let signalled = condition.wait(until: start.adding(milliseconds: 60))
        condition.unlock()
        let waited = Monotonic.now().milliseconds(since: start)
        #expect(!signalled)
        #expect(waited >= 60)
        #expect(waited < 2000)
    }

    @Test func aDeadlineInThePastTimesOutAtOnce() {
        let condition = MonotonicCondition()
        let start = Monotonic.now()
        condition.lock()
        let signalled = condition.wait(until: start.adding(milliseconds: -1000))
        let zero = condition.wait(milliseconds: 0)
        condition.unlock()
        #expect(!signalled)
        #expect(!zero)
        #expect(Monotonic.now().milliseconds(since: start) < 500)
    }

    @Test func aSignalEndsTheWaitBeforeItsDeadline() {
        let condition = MonotonicCondition()
        let flag = Mutex(false)
        let start = Monotonic.now()
        let t = Thread {
            usleep(30_000)
            condition.lock(); flag.withLock { $0 = true }; condition.signal(); condition.unlock()
        }
        t.start()
        condition.lock()
        var timedOut = false
        while !flag.withLock({ $0 }) && !timedOut {
            timedOut = !condition.wait(milliseconds: 10_000)
        }
        condition.unlock()
        #expect(!timedOut)
        #expect(flag.withLock { $0 })
        #expect(Monotonic.now().milliseconds(since: start) < 5000)
    }

    @Test func theOneMonotonicReadingAgreesWithClockGettime() {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let before = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        let now = Monotonic.now().nanoseconds
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let after = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        #expect(before <= now && now <= after)
    }
}
