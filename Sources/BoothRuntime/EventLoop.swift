import BoothClock
import BoothCore
import BoothPorts
import FoundationEssentials
import Glibc
import Synchronization

/// The booth's main loop: a queue of events and one-shot timers, drained on a thread the
/// runtime owns (never the Swift concurrency pool). Any thread may post; only the loop's
/// thread runs the handler.
///
/// Tests drive it without the thread: post events, move a ``ManualClock``, call ``drain()``; or run it
/// on a ``ManualClock``: an advance wakes the waiting loop, and ``isIdle(at:)`` says when it has handled
/// everything due by then.
public final class EventLoop: Sendable {
    private struct Pending {
        var events: [BoothEvent] = []
        var timers: [(deadline: MonotonicInstant, fire: Fire)] = []
        var stopped = false
    }
    private enum Fire { case token(UInt64), event(BoothEvent) }
    private let pending = Mutex(Pending())
    private let condition = MonotonicCondition()
    private let clock: any MonotonicClock
    /// On a ``ManualClock`` only: the clock's reading when ``run(tickEveryMilliseconds:tick:handler:)``
    /// last went to wait with nothing left to do (nil while it turns), for ``isIdle(at:)``.
    private let idleSince = Mutex<MonotonicInstant?>(nil)
    private let onManualClock: Bool

    /// - Parameter clock: where timer deadlines and firing times come from. On a ``ManualClock``, the
    ///   loop's wait for its next timer (real time) also ends when the clock is advanced.
    public init(clock: any MonotonicClock) {
        self.clock = clock
        onManualClock = clock is ManualClock
        if let manual = clock as? ManualClock {
            let condition = self.condition
            manual.onAdvance { condition.lock(); condition.signal(); condition.unlock() }
        }
    }

    /// On a ``ManualClock``: true when the running loop is waiting, no event is queued, no timer is due
    /// by `instant`, and it went to wait with the clock at `instant` or later, so every event posted and
    /// every timer due before it has been handled. False on any other clock.
    func isIdle(at instant: MonotonicInstant) -> Bool {
        guard onManualClock, let since = idleSince.withLock({ $0 }), since >= instant else { return false }
        return pending.withLock { p in p.events.isEmpty && !p.timers.contains { $0.deadline <= instant } }
    }

    /// Queues an event; thread-safe.
    public func post(_ event: BoothEvent) {
        pending.withLock { $0.events.append(event) }
        condition.lock(); condition.signal(); condition.unlock()
    }

    /// Starts a one-shot timer: after `milliseconds`, `.timer(token:at:)` is handled.
    public func schedule(token: UInt64, milliseconds: Int) {
        let deadline = clock.now().adding(milliseconds: Int64(milliseconds))
        pending.withLock { $0.timers.append((deadline, .token(token))) }
        condition.lock(); condition.signal(); condition.unlock()
    }

    /// Starts the one current timer of the state machine: like ``schedule(token:milliseconds:)``, but
    /// every earlier token timer still pending is dropped first (the machine treats all but its newest
    /// token as stale, so they would fire for nothing). Without this, a booth with many short sessions
    /// kept one pending `camera.idle_stop` timer per session for five minutes (the soak found ~1,500).
    public func scheduleReplacingEarlierTokens(token: UInt64, milliseconds: Int) {
        let deadline = clock.now().adding(milliseconds: Int64(milliseconds))
        pending.withLock { p in
            p.timers.removeAll { if case .token = $0.fire { true } else { false } }
            p.timers.append((deadline, .token(token)))
        }
        condition.lock(); condition.signal(); condition.unlock()
    }

    /// Timers not yet fired (token timers and delayed events).
    public var pendingTimerCount: Int { pending.withLock { $0.timers.count } }

    /// Posts `event` after `milliseconds` (e.g. `--auto-press`).
    public func post(_ event: BoothEvent, afterMilliseconds milliseconds: Int) {
        let deadline = clock.now().adding(milliseconds: Int64(milliseconds))
        pending.withLock { $0.timers.append((deadline, .event(event))) }
        condition.lock(); condition.signal(); condition.unlock()
    }

    /// Makes ``run(handler:)`` return after the event being handled.
    public func stop() {
        pending.withLock { $0.stopped = true }
        condition.lock(); condition.signal(); condition.unlock()
    }

    /// Takes every queued event and every due timer (as `.timer` events, earliest first), in order.
    public func drain() -> [BoothEvent] {
        let now = clock.now()
        return pending.withLock { p in
            var out = p.events
            p.events.removeAll()
            let due = p.timers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            p.timers.removeAll { $0.deadline <= now }
            out += due.map { timer -> BoothEvent in
                switch timer.fire {
                case let .token(token): .timer(token: token, at: timer.deadline)
                case let .event(event): event
                }
            }
            return out
        }
    }

    /// Milliseconds until the next timer is due (nil when none).
    func millisecondsToNextTimer() -> Double? {
        let now = clock.now()
        return pending.withLock { p in
            p.timers.map { $0.deadline.milliseconds(since: now) }.min()
        }
    }

    /// Handles events on the calling thread until ``stop()``. Waits on a condition with a
    /// timeout to the next timer; `handler` runs one event at a time.
    public func run(handler: (BoothEvent) -> Void) {
        run(tickEveryMilliseconds: nil, tick: {}, handler: handler)
    }

    /// Like ``run(handler:)``, and also calls `tick` on the loop's thread every `tickEveryMilliseconds`
    /// (between events, never during one), so a liveness check (the systemd watchdog) runs only while
    /// the loop really turns. nil: no tick.
    public func run(tickEveryMilliseconds: Int?, tick: () -> Void, handler: (BoothEvent) -> Void) {
        var nextTick = tickEveryMilliseconds.map { clock.now().adding(milliseconds: Int64($0)) }
        while true {
            for event in drain() {
                handler(event)
                if pending.withLock({ $0.stopped }) { return }
            }
            if pending.withLock({ $0.stopped }) { return }
            if let due = nextTick, let every = tickEveryMilliseconds, clock.now() >= due {
                tick()
                nextTick = clock.now().adding(milliseconds: Int64(every))
                continue
            }
            condition.lock()
            let hasEvents = pending.withLock { !$0.events.isEmpty || $0.stopped }
            if !hasEvents {
                let toTick = nextTick.map { $0.milliseconds(since: clock.now()) }
                let wait = [millisecondsToNextTimer(), toTick].compactMap { $0 }.min()
                if let ms = wait {
                    if ms > 0 { waitIdle { _ = condition.wait(milliseconds: ms) } }
                } else {
                    waitIdle { condition.wait() }
                }
            }
            condition.unlock()
        }
    }

    /// Runs `wait` (the loop's condition wait), marked idle on a ``ManualClock`` meanwhile.
    private func waitIdle(_ wait: () -> Void) {
        guard onManualClock else { return wait() }
        idleSince.withLock { $0 = clock.now() }
        wait()
        idleSince.withLock { $0 = nil }
    }
}
