import BoothCore
import BoothSystem

/// One edge as the kernel reported it: the line's new logical level (active-low
/// applied), the kernel timestamp on CLOCK_MONOTONIC, and its sequence number when
/// the library reports one.
public struct ButtonEdge: Sendable, Hashable, CustomStringConvertible {
    /// True for a rising edge (the line became active), false for a falling edge.
    public var active: Bool
    public var at: MonotonicInstant
    /// The edge's number among the line's events since it was requested, from 1: the
    /// kernel's `line_seqno` (GPIO v2 uAPI), read with `gpiod_edge_event_get_line_seqno`
    /// (libgpiod v2). A gap means the kernel's event queue overflowed and dropped edges.
    /// nil with libgpiod v1 (1.6.x uses the v1 uAPI: `struct gpioevent_data` has no number).
    public var sequence: UInt64?

    public init(active: Bool, at: MonotonicInstant, sequence: UInt64? = nil) {
        self.active = active
        self.at = at
        self.sequence = sequence
    }

    /// `"rising at 12.345678s"`, `"rising at 12.345678s (#17)"` with a sequence number.
    public var description: String {
        "\(active ? "rising" : "falling") at \(at)" + (sequence.map { " (#\($0))" } ?? "")
    }
}

/// Why an edge did not change the button's state.
public enum ButtonRejectReason: String, Sendable, Hashable {
    /// The level it started did not last `debounce` (a glitch, or a bounce).
    case shorterThanDebounce = "shorter-than-debounce"
    /// A re-read of the line at a deadline found the other level: an edge was missed,
    /// so the level it started is not trusted. The pulse width is an upper bound.
    case contradictedByLevel = "contradicted-by-level"
    /// The same direction twice while a level was still settling, or, with sequence
    /// numbers and no gap, while settled: the edge between was lost or its direction
    /// misreported (the kernel reads the level late on fast glitches). The pulse width is
    /// an upper bound, 0 when none was pending. Without sequence numbers, a press edge
    /// while held that another edge followed within `debounce` (contact chatter): the
    /// pulse is the time to that next edge.
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
    /// The press `id` ended: the line went inactive at `at` and stayed so for `debounce`. A release
    /// whose edge was missed (a re-read found the line inactive) is timed to the last edge or re-read
    /// that saw the line active: held only as long as the edges prove, never to the re-read.
    case release(id: UInt64, at: MonotonicInstant, heldMilliseconds: Double)
    /// An edge that changed nothing, with the width of the pulse it started, in ms.
    case rejected(edge: ButtonEdge, reason: ButtonRejectReason, pulseMilliseconds: Double)
    /// The line has been active longer than the stuck limit: a fault reason ("button stuck").
    case stuck(at: MonotonicInstant)
    /// The stuck line was released (after its `release` or `releaseLost`, if it was a press).
    case unstuck(at: MonotonicInstant)
    /// Edges were lost before `before`, the first edge read after them: `count` of them
    /// when the line's sequence numbers jumped (libgpiod v2; the kernel's event queue
    /// overflowed), nil when the loss is only inferred (libgpiod v1, no sequence numbers):
    /// a release while believed released (reported at that edge), or a press edge while
    /// believed pressed that no other edge followed within `debounce` and after which
    /// the line still read active (reported then, `debounce` after `before`). Such a
    /// repeated edge can also be a glitch whose direction the kernel read late; a lone
    /// one cannot be told apart from a loss, but a press edge followed by another edge
    /// within `debounce` is taken as a glitch (`rejected`, `repeatedEdge`): a held press
    /// is never ended by contact chatter. The line's level is re-read at once after any
    /// repeated edge without a sequence number, or a gap (`nextDeadline`).
    case edgesLost(count: UInt64?, before: ButtonEdge)
    /// The press `id` ended with its release edge lost: a press edge at `before` arrived
    /// while it was held. Reported instead of its `release`: it was released at or before
    /// `before`, having been held at most `heldAtMostMilliseconds`. The press edge at
    /// `before` is then debounced as a new press. Follows its `edgesLost` (without
    /// sequence numbers both come `debounce` after `before`, just before the new `press`).
    case releaseLost(id: UInt64, before: MonotonicInstant, heldAtMostMilliseconds: Double)
    /// Emitted by the button's thread (never by the debouncer): the line or device failed while in
    /// use; the thread has stopped and released it. The runtime makes it a fault and re-opens.
    case failed(ButtonFault)
}

/// Why a button stopped working while in use: the operator's words for the line or device, and the
/// call that failed (`gpiod_line_event_read`, `poll`, `libevdev_next_event`…).
public struct ButtonFault: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, in the terms an operator checks wiring and config with, without the call:
    /// `line 17 on chip gpiochip0 (pinctrl-bcm2711) failed`.
    public var message: String
    /// The failed call, its errno and the device.
    public var cause: SystemCallError

    public init(message: String, cause: SystemCallError) {
        self.message = message
        self.cause = cause
    }

    /// `message [call: strerror (errno N, ENAME)]`; `message [call]` when the failure carries no errno.
    public var description: String {
        guard cause.errno != 0 else { return "\(message) [\(cause.call)]" }
        return "\(message) [\(cause.call): \(cause.errnoText)]"
    }
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
/// one are not trusted: a missed release is then released after `debounce`, timed to
/// the last edge or re-read that saw the line active (held only as long as the edges
/// prove), and never produces a long press. After events were dropped (`resync`), a
/// level still settling is stable only from the resync.
///
/// Lost edges (the kernel's event queue overflowed) are detected from the edges'
/// sequence numbers where the library reports them (libgpiod v2), and otherwise
/// (libgpiod v1) from a settled level repeated: a press edge while held, a release
/// while released. Either asks for an immediate re-read (`nextDeadline`) and is
/// reported as `edgesLost`. A press edge while held ends the held press (`releaseLost`)
/// and starts a new one, so a lost release never merges a tap with the next press into
/// a long press, nor leaves the next press taken for the old hold. Without sequence
/// numbers that needs evidence: the press edge must be alone (no other edge within
/// `debounce` before or after it) and the line still active `debounce` later; until
/// then the hold goes on (its long press and stuck wait). A press edge in a burst is
/// contact chatter whose directions the kernel read late, and is rejected.
public struct ButtonDebouncer: Sendable {
    public let timing: ButtonTiming
    /// The line's level as the edges (and re-reads) say, not debounced.
    public private(set) var lineActive: Bool
    /// Since when `lineActive` has held.
    public private(set) var lineActiveSince: MonotonicInstant
    private var held: Held?
    private var lastID: UInt64 = 0
    /// The last edge's sequence number; the kernel numbers a request's events from 1.
    private var lastSequence: UInt64 = 0
    /// Set by a lost edge: re-read the line now. Cleared by `poll`.
    private var resyncAt: MonotonicInstant?
    /// Without sequence numbers: a lone press edge while held, not yet known to be a
    /// press whose release was lost (decided `debounce` later) or one edge of a glitch
    /// (another edge comes first, or the re-read finds the line inactive).
    private var suspectPressAt: MonotonicInstant?
    /// The last edge's time (as taken, see `edge(_:)`): a press edge within `debounce`
    /// of it is part of a burst, not a lone press.
    private var lastEdgeAt: MonotonicInstant?
    /// The last time an edge or a re-read showed the line at `lineActive`.
    private var lastSeenAt: MonotonicInstant
    /// A held press whose release a re-read found (its edge missed): the last time the line was
    /// seen active, which the release is timed to (held only as long as the edges prove).
    private var missedReleaseAfter: MonotonicInstant?

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
        self.lastSeenAt = at
        self.held = lineActive ? Held(id: nil, since: at, longPressFired: true, stuckFired: false) : nil
    }

    /// The debounced state: true between a press (or a start with the line held) and its release.
    public var isHeld: Bool { held != nil }

    /// The id of the press being held, nil when released (or held since start).
    public var heldPressID: UInt64? { held?.id }

    /// When `poll` must next be called (with a re-read level); nil when nothing is pending.
    public var nextDeadline: MonotonicInstant? {
        switch (resyncAt, deadline()?.at) {
        case let (r?, d?): min(r, d)
        case let (r, d): r ?? d
        }
    }

    /// True from a lost edge (`edgesLost`) until the next `poll`: the line must be re-read now.
    public var needsReRead: Bool { resyncAt != nil }

    /// An edge from the kernel without a sequence number (libgpiod v1).
    public mutating func edge(active: Bool, at: MonotonicInstant) -> [ButtonEvent] {
        edge(ButtonEdge(active: active, at: at))
    }

    /// An edge from the kernel. Timestamps earlier than the last known change are
    /// taken as that change's time (edges read after a re-read may predate it).
    public mutating func edge(_ edge: ButtonEdge) -> [ButtonEvent] {
        let active = edge.active
        var events: [ButtonEvent] = []
        let t = max(edge.at, lineActiveSince)
        advance(to: t, into: &events)
        let previousEdge = lastEdgeAt
        lastEdgeAt = t
        if let missed = missedReleaseAfter, !active, active == lineActive {
            // The missed release edge, read late: it proves when the line went inactive (at the latest
            // the re-read that found it).
            missedReleaseAfter = max(missed, min(edge.at, lineActiveSince))
        } else {
            missedReleaseAfter = nil
        }
        lastSeenAt = t
        if let suspect = suspectPressAt {
            // Another edge within `debounce` of the lone press edge: that edge was chatter.
            suspectPressAt = nil
            events.append(.rejected(edge: ButtonEdge(active: true, at: suspect), reason: .repeatedEdge,
                                    pulseMilliseconds: t.milliseconds(since: suspect)))
        }
        let pending = lineActive != isHeld
        // Lost edges: a gap in the sequence numbers, or (without them) a settled level repeated.
        var lost = false
        var lostCount: UInt64?
        if let sequence = edge.sequence {
            // A number not above the last (a wrap after 2^32 edges) tells nothing.
            if sequence > lastSequence, sequence - lastSequence > 1 {
                lost = true
                lostCount = sequence - lastSequence - 1
            }
            lastSequence = sequence
        } else {
            lost = active == lineActive && !pending
            if lost, active {
                // A press edge while held: a press whose release was lost only if it stays alone.
                let lone = previousEdge.map { t.milliseconds(since: $0) >= Double(timing.debounceMilliseconds) } ?? true
                if lone {
                    suspectPressAt = t
                    resyncAt = t
                    return events
                }
                lost = false  // in a burst: chatter, rejected below
            }
        }
        if lost {
            events.append(.edgesLost(count: lostCount, before: ButtonEdge(active: active, at: t, sequence: edge.sequence)))
            resyncAt = t
            if active == lineActive && !pending {
                // Settled and repeated: the opposite level came and went unseen before `t`.
                if active, let ended = held {
                    // A press edge while held: the release was lost. End the press; this edge
                    // starts a new one.
                    if let id = ended.id {
                        events.append(.releaseLost(id: id, before: t, heldAtMostMilliseconds: t.milliseconds(since: ended.since)))
                    }
                    if ended.stuckFired { events.append(.unstuck(at: t)) }
                    held = nil
                }
                // A release while released: a press was lost; nothing to end.
                lineActiveSince = t
                return events
            }
        }
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

    /// Called at (or after) `nextDeadline`, or whenever the line is re-read, with the
    /// line's level read at `now`.
    public mutating func poll(now: MonotonicInstant, lineActive active: Bool) -> [ButtonEvent] {
        reRead(now: now, lineActive: active, afterLoss: false)
    }

    /// Called when events were dropped before `now` (`SYN_DROPPED`: the kernel's buffer overflowed and
    /// the device's state was read again), with the line's level read then. Unlike `poll`, the level is
    /// known only since `now`: a level still settling starts its `debounce` again at `now`, however
    /// long ago the last edge read said the same, so edges lost in a flood of bounces never make a press.
    public mutating func resync(now: MonotonicInstant, lineActive active: Bool) -> [ButtonEvent] {
        reRead(now: now, lineActive: active, afterLoss: true)
    }

    private mutating func reRead(now: MonotonicInstant, lineActive active: Bool, afterLoss: Bool) -> [ButtonEvent] {
        resyncAt = nil
        var events: [ButtonEvent] = []
        let t = max(now, lineActiveSince)
        if active == lineActive {
            if afterLoss, lineActive != isHeld {
                // Settling, but the edges since the last one read are lost: stable only from now.
                lineActiveSince = t
            } else {
                advance(to: t, into: &events)
            }
            lastSeenAt = t
            return events
        }
        if let suspect = suspectPressAt {
            // The line is inactive after a lone press edge: that edge did not press the button.
            suspectPressAt = nil
            events.append(.rejected(edge: ButtonEdge(active: true, at: suspect), reason: .contradictedByLevel,
                                    pulseMilliseconds: t.milliseconds(since: suspect)))
        }
        // An edge was missed: the level since the last edge is unknown, so no deadline
        // in between fires; the re-read level starts over at `now`.
        if lineActive != isHeld {
            events.append(.rejected(edge: ButtonEdge(active: lineActive, at: lineActiveSince), reason: .contradictedByLevel,
                                    pulseMilliseconds: t.milliseconds(since: lineActiveSince)))
        }
        // A held press read released: the release is timed to the last sign of the line active.
        missedReleaseAfter = !active && isHeld ? lastSeenAt : nil
        lineActive = active
        lineActiveSince = t
        lastSeenAt = t
        return events
    }

    private enum Due { case settle, longPress, stuck, lostRelease }

    private func deadline() -> (at: MonotonicInstant, due: Due)? {
        if let suspect = suspectPressAt {
            // The held press's long press and stuck wait: it may have ended at `suspect`.
            return (suspect.adding(milliseconds: timing.debounceMilliseconds), .lostRelease)
        }
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
                    let releasedAt = missedReleaseAfter.map { max($0, ended.since) } ?? lineActiveSince
                    missedReleaseAfter = nil
                    if let id = ended.id {
                        events.append(.release(id: id, at: releasedAt,
                                               heldMilliseconds: releasedAt.milliseconds(since: ended.since)))
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
            case .lostRelease:
                // The lone press edge stayed alone and the line active: the release before it was lost.
                let suspect = suspectPressAt ?? at
                suspectPressAt = nil
                events.append(.edgesLost(count: nil, before: ButtonEdge(active: true, at: suspect)))
                if let ended = held {
                    if let id = ended.id {
                        events.append(.releaseLost(id: id, before: suspect,
                                                   heldAtMostMilliseconds: suspect.milliseconds(since: ended.since)))
                    }
                    if ended.stuckFired { events.append(.unstuck(at: suspect)) }
                    held = nil
                }
                lineActiveSince = suspect
            }
        }
    }
}
