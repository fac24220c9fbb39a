import BoothCore
import BoothPorts

/// When to try again to open an LED line that could not be opened, with the fault retries' backoff:
/// 1 s, doubling to 30 s (``BoothMachine/firstRetryMilliseconds``, ``BoothMachine/maxRetryMilliseconds``).
/// The LED is never a fault (the booth runs without it), so the runtime retries it from its tick,
/// not through the machine. A value type, kept in the loop's state.
struct LEDRetry: Sendable, Equatable {
    /// When the next attempt is due (CLOCK_MONOTONIC); nil when none is pending.
    private(set) var nextAttempt: MonotonicInstant?
    /// The wait after the next failure, ms.
    private(set) var delayMilliseconds = BoothMachine.firstRetryMilliseconds

    /// An attempt at `now` failed: the next one is due after the current delay, which then doubles
    /// (at most 30 s). Returns the wait, ms, for the log.
    mutating func failed(at now: MonotonicInstant) -> Int {
        let wait = delayMilliseconds
        nextAttempt = now.adding(milliseconds: Int64(wait))
        delayMilliseconds = min(delayMilliseconds * 2, BoothMachine.maxRetryMilliseconds)
        return wait
    }

    /// The line opened, or no LED is configured: nothing pending, the next failure waits 1 s again.
    mutating func reset() { self = LEDRetry() }

    /// True when an attempt is pending and due at `now`.
    func isDue(at now: MonotonicInstant) -> Bool {
        guard let nextAttempt else { return false }
        return now >= nextAttempt
    }
}
