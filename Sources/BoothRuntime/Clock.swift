import BoothClock
import BoothCore
import CSysShims
import Glibc
import Synchronization

/// A source of `CLOCK_MONOTONIC` time, injected so timing tests need no sleeps.
public protocol MonotonicClock: Sendable {
    /// The current time on CLOCK_MONOTONIC.
    func now() -> MonotonicInstant
}

/// The real clock: `clock_gettime(CLOCK_MONOTONIC)`.
public struct SystemClock: MonotonicClock {
    public init() {}
    public func now() -> MonotonicInstant { SystemClock.monotonicNow() }

    /// `clock_gettime(CLOCK_MONOTONIC)` as a ``MonotonicInstant`` (``Monotonic/now()``, the one reading).
    public static func monotonicNow() -> MonotonicInstant { Monotonic.now() }
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

/// The local calendar date, for naming date folders (`2026-11-29`). Only names folders:
/// uniqueness never depends on the clock (a Raspberry Pi has no RTC).
public func localDateString(epochSeconds: Int = Int(time(nil))) -> String {
    var t = time_t(epochSeconds)
    var tmv = tm()
    localtime_r(&t, &tmv)
    func pad(_ v: Int32, _ w: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, w - s.count)) + s
    }
    return "\(pad(tmv.tm_year + 1900, 4))-\(pad(tmv.tm_mon + 1, 2))-\(pad(tmv.tm_mday, 2))"
}
