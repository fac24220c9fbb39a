import BoothCore

/// The real clock: `clock_gettime(CLOCK_MONOTONIC)`.
public struct SystemClock: MonotonicClock {
    public init() {}
    public func now() -> MonotonicInstant { SystemClock.monotonicNow() }

    /// `clock_gettime(CLOCK_MONOTONIC)` as a ``MonotonicInstant`` (``Monotonic/now()``, the one reading).
    public static func monotonicNow() -> MonotonicInstant { Monotonic.now() }
}
