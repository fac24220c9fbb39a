import BoothCore

/// The real clock, as an injectable ``MonotonicClock``: ``Monotonic/now()`` (`clock_gettime(CLOCK_MONOTONIC)`).
public struct SystemClock: MonotonicClock {
    public init() {}
    public func now() -> MonotonicInstant { Monotonic.now() }
}
