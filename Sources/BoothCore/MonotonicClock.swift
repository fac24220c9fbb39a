import Synchronization

/// A source of `CLOCK_MONOTONIC` time, injected so timing tests need no sleeps.
public protocol MonotonicClock: Sendable {
    /// The current time on CLOCK_MONOTONIC.
    func now() -> MonotonicInstant
}

/// A clock that moves only when told to; for tests.
public final class ManualClock: MonotonicClock {
    private let current: Mutex<MonotonicInstant>
    public init(start: MonotonicInstant = MonotonicInstant(nanoseconds: 1_000_000_000)) {
        current = Mutex(start)
    }
    public func now() -> MonotonicInstant { current.withLock { $0 } }
    /// Moves the clock forward by `milliseconds`.
    public func advance(milliseconds: Int) {
        current.withLock { $0 = $0.adding(milliseconds: Int64(milliseconds)) }
    }
}
