import BoothCore

/// When to warn about an input device's `SYN_DROPPED` (the kernel's buffer overflowed): the first
/// drop at once, then at most one line every ``intervalMilliseconds``, which counts the drops since
/// the line before. A flood of bounces can overflow the buffer dozens of times a second; each drop is
/// still resynchronised, only its warning waits. Pure: times are the `now` passed in.
public struct DroppedEventsLog: Sendable, Equatable {
    /// The shortest time between two warnings about dropped events, ms.
    public static let intervalMilliseconds: Int64 = 10_000

    /// Drops since the button started.
    public private(set) var total = 0
    /// Drops not yet told.
    public private(set) var untold = 0
    private var lastLine: MonotonicInstant?

    public init() {}

    /// A drop at `now`: how many drops the warning logged now tells (this one and those held back
    /// since the last line), nil when the last line is less than ``intervalMilliseconds`` old (the
    /// drop is counted for the next).
    public mutating func dropped(at now: MonotonicInstant) -> Int? {
        total += 1
        untold += 1
        return due(at: now) ? tell(at: now) : nil
    }

    /// When drops held back are to be told though no drop follows (pass it to `flush(at:)`); nil when
    /// none waits.
    public var nextDeadline: MonotonicInstant? {
        guard untold > 0, let lastLine else { return nil }
        return lastLine.adding(milliseconds: DroppedEventsLog.intervalMilliseconds)
    }

    /// The drops held back, to be told at `now` when ``nextDeadline`` has passed; nil otherwise.
    public mutating func flush(at now: MonotonicInstant) -> Int? {
        untold > 0 && due(at: now) ? tell(at: now) : nil
    }

    private func due(at now: MonotonicInstant) -> Bool {
        lastLine.map { now.milliseconds(since: $0) >= Double(DroppedEventsLog.intervalMilliseconds) } ?? true
    }

    private mutating func tell(at now: MonotonicInstant) -> Int {
        defer { untold = 0; lastLine = now }
        return untold
    }
}
