import BoothCore
import CSysShims
import Glibc

/// The booth's one reading of `CLOCK_MONOTONIC`: every timer, deadline, wait and measured duration uses
/// it (through the runtime's injected ``MonotonicInstant`` clocks in tests). The wall clock (`Date()`,
/// `time(nil)`) is only for what a person reads as a date: folder names, file dates, log and stats
/// stamps, the footer's {date}. A Raspberry Pi has no real-time clock: its wall clock starts wherever
/// fake-hwclock left it and jumps when NTP arrives, so a wait on it could last hours or no time at all.
public enum Monotonic {
    /// Now on `CLOCK_MONOTONIC` (nanoseconds since boot). The corresponding C function is
    /// `clock_gettime(CLOCK_MONOTONIC)`, via `pb_monotonic_ns`.
    @Sendable public static func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: pb_monotonic_ns()) }

    /// Blocks the calling thread (one the booth owns, never the cooperative pool) for `nanoseconds` on
    /// `CLOCK_MONOTONIC`: `nanosleep`, resumed with what is left when a signal interrupts it (EINTR).
    /// Returns at once for 0.
    public static func sleep(nanoseconds: UInt64) {
        guard nanoseconds > 0 else { return }
        var ts = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var rest = timespec()
        while nanosleep(&ts, &rest) == -1 && errno == EINTR { ts = rest }
    }
}

/// A mutex and a condition variable whose timed waits end at a ``MonotonicInstant``: the drop-in for
/// Foundation's `NSCondition`, whose `wait(until: Date)` waits on `CLOCK_REALTIME` (a wall clock set back
/// by an hour stretches it by an hour). Use it like `NSCondition`: `lock()`, test the predicate in a
/// loop around `wait`, `unlock()`; `signal()`/`broadcast()` with the lock held or not.
///
/// The timed wait wraps `pthread_cond_clockwait(…, CLOCK_MONOTONIC, …)` (glibc 2.30+); the rest wrap
/// `pthread_mutex_*` and `pthread_cond_*`.
public final class MonotonicCondition: @unchecked Sendable {
    // The pthread objects live at fixed addresses (they must not move); @unchecked Sendable because
    // pthread mutexes and conditions are made to be shared between threads.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        // glibc's pthread_mutex_init and pthread_cond_init with default attributes always return 0.
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// `pthread_mutex_lock`.
    public func lock() { pthread_mutex_lock(mutex) }
    /// `pthread_mutex_unlock`.
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Wakes one waiter (`pthread_cond_signal`).
    public func signal() { pthread_cond_signal(cond) }
    /// Wakes every waiter (`pthread_cond_broadcast`).
    public func broadcast() { pthread_cond_broadcast(cond) }

    /// Waits (lock held) until signalled, or spuriously (`pthread_cond_wait`).
    public func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits (lock held) until signalled, spuriously, or until `CLOCK_MONOTONIC` reaches `deadline`.
    /// - Returns: false when the deadline had passed (the wait timed out), true otherwise; like
    ///   `NSCondition.wait(until:)`.
    @discardableResult
    public func wait(until deadline: MonotonicInstant) -> Bool {
        pb_cond_wait_monotonic(cond, mutex, deadline.nanoseconds) != ETIMEDOUT
    }

    /// Waits (lock held) for at most `milliseconds` on `CLOCK_MONOTONIC` (``wait(until:)`` from now).
    /// - Returns: false when it timed out.
    @discardableResult
    public func wait(milliseconds: Double) -> Bool {
        let nanoseconds = milliseconds > 0 ? UInt64(min(milliseconds, 1e12) * 1_000_000) : 0
        return wait(until: MonotonicInstant(nanoseconds: Monotonic.now().nanoseconds &+ nanoseconds))
    }
}

/// Milliseconds from `now` until `deadline`, rounded up, for `poll`'s timeout: 0 when it has passed,
/// -1 (wait without limit) when nil.
public func pollTimeout(until deadline: MonotonicInstant?, now: MonotonicInstant) -> Int32 {
    guard let deadline else { return -1 }
    if deadline <= now { return 0 }
    return Int32(clamping: (deadline.nanoseconds - now.nanoseconds + 999_999) / 1_000_000)
}
