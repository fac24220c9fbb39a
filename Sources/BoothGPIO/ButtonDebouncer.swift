import BoothCore

/// One edge as the kernel reported it: the line's new logical level (active-low
/// applied) and the kernel timestamp on CLOCK_MONOTONIC.
public struct ButtonEdge: Sendable, Hashable, CustomStringConvertible {
    /// True for a rising edge (the line became active), false for a falling edge.
    public var active: Bool
    public var at: MonotonicInstant

    public init(active: Bool, at: MonotonicInstant) {
        self.active = active
        self.at = at
    }

    /// `"rising at 12.345678s"`.
    public var description: String { "\(active ? "rising" : "falling") at \(at)" }
}

/// Why an edge did not change the button's state.
public enum ButtonRejectReason: String, Sendable, Hashable {
    /// The level it started did not last `debounce` (a glitch, or a bounce).
    case shorterThanDebounce = "shorter-than-debounce"
    /// A re-read of the line at a deadline found the other level: an edge was missed,
    /// so the level it started is not trusted. The pulse width is an upper bound.
    case contradictedByLevel = "contradicted-by-level"
    /// The same direction twice: the edge between was lost (libgpiod v1 reads the
    /// level late on fast glitches). The pulse width is an upper bound, 0 when none was pending.
    case repeatedEdge = "repeated-edge"
}

/// What the button did. Ids increase from 1 with each accepted press and are
/// repeated on that press's long press and release.
public enum ButtonEvent: Sendable, Hashable {
    /// A press: the line went active at `at` (the edge's kernel timestamp) and stayed
    /// active for `debounce`; it is reported `debounce` after `at`.
    case press(id: UInt64, at: MonotonicInstant)
    /// The press `id` has been held `longPress` (`at` = press + threshold). Once per press,
    /// only while still held (the line's level is re-read before it fires).
    case longPress(id: UInt64, at: MonotonicInstant)
    /// The press `id` ended: the line went inactive at `at` and stayed so for `debounce`.
    case release(id: UInt64, at: MonotonicInstant, heldMilliseconds: Double)
    /// An edge that changed nothing, with the width of the pulse it started, in ms.
    case rejected(edge: ButtonEdge, reason: ButtonRejectReason, pulseMilliseconds: Double)
    /// The line has been active longer than the stuck limit: a fault reason ("button stuck").
    case stuck(at: MonotonicInstant)
    /// The stuck line was released (after its `release`, if it was a press).
    case unstuck(at: MonotonicInstant)
    /// Emitted by `GPIOButton` only: the line failed while in use; the button thread
    /// has stopped and released the line. The runtime makes it a fault and re-opens.
    case failed(GPIOError)
}

/// Button timing, all in milliseconds (`button.debounce`, `button.long_press`).
public struct ButtonTiming: Sendable, Hashable {
    /// How long a level must stay before it counts (press or release). Default 30 ms.
    public var debounceMilliseconds: Int64
    /// Held this long from the press edge: a long press. Default 2000 ms.
    public var longPressMilliseconds: Int64
    /// Active this long: stuck (a fault reason until released). Default 30000 ms.
    public var stuckMilliseconds: Int64

    public init(debounceMilliseconds: Int64 = 30, longPressMilliseconds: Int64 = 2000, stuckMilliseconds: Int64 = 30_000) {
        self.debounceMilliseconds = max(0, debounceMilliseconds)
        self.longPressMilliseconds = max(0, longPressMilliseconds)
        self.stuckMilliseconds = max(0, stuckMilliseconds)
    }
}

/// Turns a button line's edges into presses, long presses and releases. Pure: no
/// I/O, no clock; times are the kernel's edge timestamps and the `now` passed to
/// `poll`.
///
/// Feed every edge to `edge(active:at:)`; when `nextDeadline` is reached, re-read
/// the line's level and call `poll(now:lineActive:)`. A level counts once it has
/// lasted `debounce`: shorter pulses are rejected with their width, a release is
/// never a press. Long press and stuck are timed from the press edge. If the
/// re-read level disagrees with the edges (a missed edge), the edges since the last
/// one are not trusted: a missed release is then released after `debounce`, and
/// never produces a long press.
public struct ButtonDebouncer: Sendable {
    public let timing: ButtonTiming
    /// The line's level as the edges (and re-reads) say, not debounced.
    public private(set) var lineActive: Bool
    /// Since when `lineActive` has held.
    public private(set) var lineActiveSince: MonotonicInstant
    private var held: Held?
    private var lastID: UInt64 = 0

    private struct Held: Sendable {
        /// nil for a line already active when the debouncer started: not a press.
        var id: UInt64?
        var since: MonotonicInstant
        var longPressFired: Bool
        var stuckFired: Bool
    }

    /// Starts with the line's level read at `at`. A line already active is held but not
    /// a press (no press, long press or release for it); it can still be stuck.
    public init(timing: ButtonTiming, lineActive: Bool, at: MonotonicInstant) {
        self.timing = timing
        self.lineActive = lineActive
        self.lineActiveSince = at
        self.held = lineActive ? Held(id: nil, since: at, longPressFired: true, stuckFired: false) : nil
    }

    /// The debounced state: true between a press (or a start with the line held) and its release.
    public var isHeld: Bool { held != nil }

    /// The id of the press being held, nil when released (or held since start).
    public var heldPressID: UInt64? { held?.id }

    /// When `poll` must next be called (with a re-read level); nil when nothing is pending.
    public var nextDeadline: MonotonicInstant? { deadline()?.at }

    /// An edge from the kernel. Timestamps earlier than the last known change are
    /// taken as that change's time (edges read after a re-read may predate it).
    public mutating func edge(active: Bool, at: MonotonicInstant) -> [ButtonEvent] {
        var events: [ButtonEvent] = []
        let t = max(at, lineActiveSince)
        advance(to: t, into: &events)
        let pending = lineActive != isHeld
        if active == lineActive {
            if pending {
                events.append(.rejected(edge: ButtonEdge(active: lineActive, at: lineActiveSince), reason: .repeatedEdge,
                                        pulseMilliseconds: t.milliseconds(since: lineActiveSince)))
                lineActiveSince = t
            } else {
                events.append(.rejected(edge: ButtonEdge(active: active, at: t), reason: .repeatedEdge,
                                        pulseMilliseconds: 0))
            }
            return events
        }
        if pending {
            events.append(.rejected(edge: ButtonEdge(active: lineActive, at: lineActiveSince), reason: .shorterThanDebounce,
                                    pulseMilliseconds: t.milliseconds(since: lineActiveSince)))
        }
        lineActive = active
        lineActiveSince = t
        return events
    }

    /// Called at (or after) `nextDeadline` with the line's level re-read at `now`.
    public mutating func poll(now: MonotonicInstant, lineActive active: Bool) -> [ButtonEvent] {
        var events: [ButtonEvent] = []
        let t = max(now, lineActiveSince)
        if active == lineActive {
            advance(to: t, into: &events)
            return events
        }
        // An edge was missed: the level since the last edge is unknown, so no deadline
        // in between fires; the re-read level starts over at `now`.
        if lineActive != isHeld {
            events.append(.rejected(edge: ButtonEdge(active: lineActive, at: lineActiveSince), reason: .contradictedByLevel,
                                    pulseMilliseconds: t.milliseconds(since: lineActiveSince)))
        }
        lineActive = active
        lineActiveSince = t
        return events
    }

    private enum Due { case settle, longPress, stuck }

    private func deadline() -> (at: MonotonicInstant, due: Due)? {
        if lineActive != isHeld {
            return (lineActiveSince.adding(milliseconds: timing.debounceMilliseconds), .settle)
        }
        guard let held, lineActive else { return nil }
        var next: (at: MonotonicInstant, due: Due)?
        if !held.longPressFired {
            next = (held.since.adding(milliseconds: timing.longPressMilliseconds), .longPress)
        }
        if !held.stuckFired {
            let stuck = held.since.adding(milliseconds: timing.stuckMilliseconds)
            if next.map({ stuck < $0.at }) ?? true { next = (stuck, .stuck) }
        }
        return next
    }

    /// Fires every deadline up to `t`, the level being `lineActive` since `lineActiveSince`.
    private mutating func advance(to t: MonotonicInstant, into events: inout [ButtonEvent]) {
        while let (at, due) = deadline(), at <= t {
            switch due {
            case .settle:
                if lineActive {
                    lastID += 1
                    held = Held(id: lastID, since: lineActiveSince, longPressFired: false, stuckFired: false)
                    events.append(.press(id: lastID, at: lineActiveSince))
                } else if let ended = held {
                    if let id = ended.id {
                        events.append(.release(id: id, at: lineActiveSince,
                                               heldMilliseconds: lineActiveSince.milliseconds(since: ended.since)))
                    }
                    if ended.stuckFired { events.append(.unstuck(at: lineActiveSince)) }
                    held = nil
                }
            case .longPress:
                held?.longPressFired = true
                if let id = held?.id { events.append(.longPress(id: id, at: max(at, lineActiveSince))) }
            case .stuck:
                held?.stuckFired = true
                events.append(.stuck(at: max(at, lineActiveSince)))
            }
        }
    }
}
