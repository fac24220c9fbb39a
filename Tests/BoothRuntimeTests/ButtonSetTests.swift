import BoothClock
import BoothCore
import BoothPorts
import Synchronization
import Testing
@testable import BoothWiring

/// A source of a ``ButtonSet``: fails to start while `refuse` is set; `fire` delivers as its thread would.
private final class Source: ButtonDevice {
    let identity: String
    let refuse = Mutex<String?>(nil)
    private let handler = Mutex<(@Sendable (ButtonSignal) -> Void)?>(nil)
    private let running = Mutex(false)
    let starts = Mutex(0)
    init(_ identity: String) { self.identity = identity }
    struct Refused: Error, CustomStringConvertible { let description: String }
    func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        starts.withLock { $0 += 1 }
        if let why = refuse.withLock({ $0 }) { throw Refused(description: why) }
        self.handler.withLock { $0 = handler }
        running.withLock { $0 = true }
    }
    func stop() { running.withLock { $0 = false }; handler.withLock { $0 = nil } }
    var isRunning: Bool { running.withLock { $0 } }
    var currentHandler: (@Sendable (ButtonSignal) -> Void)? { handler.withLock { $0 } }
    func fire(_ signal: ButtonSignal) {
        if case .failed = signal { running.withLock { $0 = false } }
        handler.withLock { $0 }?(signal)
    }
}

/// A source whose thread reports `.failed` before its `start` returns (unplugged as it opened).
private final class FailingAtStart: ButtonDevice {
    let identity: String
    let starts = Mutex(0)
    init(_ identity: String) { self.identity = identity }
    func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        starts.withLock { $0 += 1 }
        handler(.failed("unplugged (ENODEV)"))
    }
    func stop() {}
    var isRunning: Bool { false }
}

private final class Signals: Sendable {
    private let list = Mutex<[ButtonSignal]>([])
    func add(_ s: ButtonSignal) { list.withLock { $0.append(s) } }
    var all: [ButtonSignal] { list.withLock { $0 } }
}

@Suite("Several button sources")
struct ButtonSetTests {
    private func set(_ sources: [Source], lines: LogRecorder = LogRecorder()) -> ButtonSet {
        ButtonSet(sources.enumerated().map { (["gpio", "input"][$0.offset], $0.element as any ButtonDevice) },
                  log: lines.logger())
    }
    private let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)

    @Test("presses of both sources count, renumbered; a long press belongs to its own source's press")
    func pressesRenumbered() throws {
        let gpio = Source("line 17"), input = Source("event3")
        let button = set([gpio, input]), got = Signals()
        try button.start { got.add($0) }
        gpio.fire(.press(id: 1, at: t0))
        input.fire(.press(id: 1, at: t0))
        input.fire(.longPress(id: 1))
        gpio.fire(.longPress(id: 7))  // no such press of gpio's
        #expect(got.all == [.press(id: 1, at: t0), .press(id: 2, at: t0), .longPress(id: 2)])
        #expect(button.identity == "gpio: line 17; input: event3")
    }

    @Test("a source that fails while another works is a warning, shown in identity, retried from the tick with backoff; the booth is no fault")
    func oneSourceFails() throws {
        let gpio = Source("line 17"), input = Source("event3"), lines = LogRecorder()
        let button = set([gpio, input], lines: lines), got = Signals()
        try button.start { got.add($0) }
        input.refuse.withLock { $0 = "unplugged" }
        input.fire(.failed("button input failed: input device 'Dome' unplugged (ENODEV)"))
        #expect(got.all.isEmpty, "no fault while gpio works")
        #expect(button.isRunning)
        #expect(button.identity == "gpio: line 17; input: event3 (failed: button input failed: input device 'Dome' unplugged (ENODEV); retrying)")
        #expect(lines.all.contains { $0.hasPrefix("<4>button: source input failed: button input failed: input device 'Dome' unplugged (ENODEV); "
                                                    + "the booth runs on gpio; trying input again in 1 s") }, "\(lines.all)")
        // The first tick times the retry; it is due 1 s later, then 2 s after a failed attempt.
        button.tick(now: t0)
        button.tick(now: t0.adding(milliseconds: 999))
        #expect(input.starts.withLock { $0 } == 1)
        button.tick(now: t0.adding(milliseconds: 1000))
        #expect(input.starts.withLock { $0 } == 2)
        button.tick(now: t0.adding(milliseconds: 2999))
        #expect(input.starts.withLock { $0 } == 2)
        input.refuse.withLock { $0 = nil }
        button.tick(now: t0.adding(milliseconds: 3000))
        #expect(input.starts.withLock { $0 } == 3)
        #expect(button.identity == "gpio: line 17; input: event3")
        #expect(lines.all.contains("<5>button: source input works again: event3"))
        input.fire(.press(id: 1, at: t0))
        #expect(got.all == [.press(id: 1, at: t0)])
    }

    @Test("every source failed: the set fails with each reason; a start where none opens throws them")
    func allFail() throws {
        let gpio = Source("line 17"), input = Source("event3")
        let button = set([gpio, input]), got = Signals()
        try button.start { got.add($0) }
        input.fire(.failed("input gone"))
        gpio.fire(.failed("line gone"))
        #expect(got.all == [.failed("gpio: line gone; input: input gone")])
        #expect(!button.isRunning)
        gpio.refuse.withLock { $0 = "no chip" }
        input.refuse.withLock { $0 = "no device" }
        #expect(throws: ButtonSetError(reasons: ["gpio: no chip", "input: no device"])) { try button.start { got.add($0) } }
        // One opens: the start succeeds, the other is retried.
        gpio.refuse.withLock { $0 = nil }
        try button.start { got.add($0) }
        #expect(button.isRunning)
    }

    @Test("stuck while either is stuck, in the words of the one still stuck; unstuck when both are released, or the stuck one fails")
    func stuck() throws {
        let gpio = Source("line 17"), input = Source("event3")
        let button = set([gpio, input]), got = Signals()
        try button.start { got.add($0) }
        gpio.fire(.stuck("gpio stuck"))
        input.fire(.stuck("input stuck"))
        #expect(got.all == [.stuck("gpio stuck")])
        gpio.fire(.unstuck)
        #expect(got.all == [.stuck("gpio stuck"), .stuck("input stuck")], "the fault now names the source still held")
        input.fire(.failed("input gone"))
        #expect(got.all == [.stuck("gpio stuck"), .stuck("input stuck"), .unstuck])
    }

    @Test("a source that fails on its own thread while it starts is not taken for working; it is retried")
    func failsWhileStarting() throws {
        let gpio = Source("line 17")
        let input = FailingAtStart("event3")
        let lines = LogRecorder()
        let button = ButtonSet([("gpio", gpio), ("input", input)], log: lines.logger())
        try button.start { _ in }
        #expect(button.degraded == "input: unplugged (ENODEV)")
        #expect(lines.all.filter { $0.contains("source input failed") }.count >= 1)
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        button.tick(now: t0)
        button.tick(now: t0.adding(milliseconds: 1000))
        #expect(input.starts.withLock { $0 } == 2, "retried")
    }

    @Test("at start, a failed source is announced after every source was tried, naming only those that opened; the same reason again is at debug")
    func announcedOnce() throws {
        let gpio = Source("line 17"), input = Source("event3"), lines = LogRecorder()
        gpio.refuse.withLock { $0 = "no chip" }
        let button = set([gpio, input], lines: lines)
        try button.start { _ in }
        #expect(lines.all == ["<4>button: source gpio failed: no chip; the booth runs on input; trying gpio again in 1 s"])
        #expect(button.degraded == "gpio: no chip")
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        button.tick(now: t0)
        button.tick(now: t0.adding(milliseconds: 1000))
        #expect(lines.all.count == 2)
        #expect(lines.all.last?.hasPrefix("<7>button: source gpio failed: no chip") == true, "\(lines.all)")
        gpio.refuse.withLock { $0 = nil }
        button.tick(now: t0.adding(milliseconds: 3000))
        #expect(button.degraded == nil)
    }

    @Test("signals of a source from before the last start (a stop between) are dropped")
    func staleSignals() throws {
        let gpio = Source("line 17"), input = Source("event3")
        let button = set([gpio, input]), got = Signals()
        try button.start { got.add($0) }
        let old = gpio.currentHandler
        button.stop()
        try button.start { got.add($0) }
        old?(.failed("late failure of the old thread"))
        old?(.press(id: 9, at: t0))
        #expect(got.all.isEmpty)
        #expect(button.degraded == nil)
    }
}
