import BoothCore
import BoothPorts

/// When to try again to open a device that is no fault when it fails, with the fault retries' backoff:
/// 1 s, doubling to 30 s (``BoothMachine/firstRetryMilliseconds``, ``BoothMachine/maxRetryMilliseconds``).
/// The LED is never a fault (the booth runs without it), nor is one source of several of the button
/// (photoboothd's `ButtonSet`), so they are retried from the runtime's tick, not through the machine.
/// A value type, kept in its user's state.
public struct DeviceRetry: Sendable, Equatable {
    /// When the next attempt is due (CLOCK_MONOTONIC); nil when none is pending.
    public private(set) var nextAttempt: MonotonicInstant?
    /// The wait after the next failure, ms.
    public private(set) var delayMilliseconds = BoothMachine.firstRetryMilliseconds

    public init() {}

    /// An attempt at `now` failed: the next one is due after the current delay, which then doubles
    /// (at most 30 s). Returns the wait, ms, for the log.
    public mutating func failed(at now: MonotonicInstant) -> Int {
        let wait = delayMilliseconds
        nextAttempt = now.adding(milliseconds: Int64(wait))
        delayMilliseconds = min(delayMilliseconds * 2, BoothMachine.maxRetryMilliseconds)
        return wait
    }

    /// The line opened, or no LED is configured: nothing pending, the next failure waits 1 s again.
    public mutating func reset() { self = DeviceRetry() }

    /// True when an attempt is pending and due at `now`.
    public func isDue(at now: MonotonicInstant) -> Bool {
        guard let nextAttempt else { return false }
        return now >= nextAttempt
    }
}
