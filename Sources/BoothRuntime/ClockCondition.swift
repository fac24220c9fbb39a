import BoothClock
import BoothCore
import Synchronization

/// A wait for something another thread does, limited by a deadline on the runtime's injected clock:
/// what replaced the runtime's sleep-and-look loops (a reload's answer, a control press's outcome, a
/// snapshot's frame). A waiter checks its predicate under the condition's lock; whoever changes what
/// the predicate reads calls ``notify()`` afterwards (never while holding a lock the predicate takes).
///
/// On ``SystemClock`` (and any clock but a manual one) the timed wait is `pthread_cond_clockwait` on
/// `CLOCK_MONOTONIC` for what is left until the deadline (``MonotonicCondition``). On a ``ManualClock``
/// the deadline is reached only when a test advances the clock: every advance wakes the waiters, so a
/// test sees a timeout without any real waiting.
final class ClockCondition: Sendable {
    private let condition = MonotonicCondition()
    private let clock: any MonotonicClock
    private let manual: Bool
    private let waiting = Mutex(0)

    init(clock: any MonotonicClock) {
        self.clock = clock
        manual = clock is ManualClock
        if let manual = clock as? ManualClock {
            let condition = self.condition
            manual.onAdvance { condition.lock(); condition.broadcast(); condition.unlock() }
        }
    }

    /// Wakes every waiter to check its predicate again. Any thread; takes the condition's lock briefly.
    func notify() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `ready` gives a value or the injected clock reaches `deadline`, whichever is first.
    /// `ready` runs on the calling thread under the condition's lock, once at first and again after each
    /// ``notify()`` or clock advance. Blocks the calling thread: one the booth owns, never the loop's.
    /// - Returns: `ready`'s value, nil when the deadline came first.
    func wait<T>(until deadline: MonotonicInstant, _ ready: () -> T?) -> T? {
        waiting.withLock { $0 += 1 }
        condition.lock()
        defer {
            condition.unlock()
            waiting.withLock { $0 -= 1 }
        }
        while true {
            if let value = ready() { return value }
            let now = clock.now()
            if now >= deadline { return nil }
            if manual {
                condition.wait()
            } else {
                condition.wait(milliseconds: deadline.milliseconds(since: now))
            }
        }
    }

    /// Threads in ``wait(until:_:)`` now, their deadlines set (a test moves a manual clock once they wait).
    var waiters: Int { waiting.withLock { $0 } }

    /// ``wait(until:_:)`` for at most `milliseconds` from now on the injected clock.
    func wait<T>(milliseconds: Int64, _ ready: () -> T?) -> T? {
        wait(until: clock.now().adding(milliseconds: milliseconds), ready)
    }
}
