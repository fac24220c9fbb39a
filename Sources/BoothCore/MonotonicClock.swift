import Synchronization

/// A source of `CLOCK_MONOTONIC` time, injected so timing tests need no sleeps.
public protocol MonotonicClock: Sendable {
    /// The current time on CLOCK_MONOTONIC.
    func now() -> MonotonicInstant
}

/// A clock that moves only when told to; for tests.
///
/// Code that waits for an instant on it (the runtime's ``EventLoop``) registers with
/// ``onAdvance(_:)`` to be woken when it moves: a wait measured in real time would not see a step.
public final class ManualClock: MonotonicClock {
    private struct State {
        var now: MonotonicInstant
        var observers: [@Sendable () -> Void] = []
    }
    private let state: Mutex<State>

    public init(start: MonotonicInstant = MonotonicInstant(nanoseconds: 1_000_000_000)) {
        state = Mutex(State(now: start))
    }

    public func now() -> MonotonicInstant { state.withLock { $0.now } }

    /// Moves the clock forward by `milliseconds` (a negative value is taken as 0), then calls every
    /// ``onAdvance(_:)`` observer on the calling thread.
    public func advance(milliseconds: Int) {
        advance(nanoseconds: UInt64(max(milliseconds, 0)) * 1_000_000)
    }

    /// Moves the clock forward by `nanoseconds`, then calls every ``onAdvance(_:)`` observer on the
    /// calling thread.
    public func advance(nanoseconds: UInt64) {
        let observers = state.withLock { s in
            s.now = MonotonicInstant(nanoseconds: s.now.nanoseconds &+ nanoseconds)
            return s.observers
        }
        for wake in observers { wake() }
    }

    /// Moves the clock to `instant` when that is later than now (never back), then calls the observers.
    public func advance(to instant: MonotonicInstant) {
        let now = self.now()
        if instant > now { advance(nanoseconds: instant.nanoseconds - now.nanoseconds) }
    }

    /// Calls `wake` after every advance, on the advancing thread (outside the clock's lock, so `wake`
    /// may read the clock). For waiters that must re-read the clock when it moves; `wake` should only
    /// signal them, not do their work.
    public func onAdvance(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.observers.append(wake) }
    }
}
