import BoothCore
import Testing
@testable import BoothButtons

private func t(_ ms: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: UInt64(5_000_000_000 + Int64(ms * 1_000_000))) }

@Suite struct ReviewChatterTests {
    /// libgpiod v1 (no sequence numbers): a guest holds the button (to skip printing); contact chatter
    /// 700 ms into the hold gives two edges both read late as "rising" (the v1 kernel reads the level in
    /// its irq thread), the line stays active throughout. The hold must stay one press with one long press.
    @Test func chatterDuringAHoldIsNotASecondPress() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500, stuckMilliseconds: 60000),
                                lineActive: false, at: t(-1000))
        var events: [ButtonEvent] = []
        events += d.edge(active: true, at: t(0))
        events += d.poll(now: t(30), lineActive: true)      // press #1
        events += d.edge(active: true, at: t(700))          // chatter, read late as rising
        events += d.edge(active: true, at: t(700.3))        // chatter, rising
        // The thread re-reads at once (needsReRead) and at each deadline: always active.
        var now = 700.3
        while let next = d.nextDeadline, now < 4000 {
            now = max(now, Double(next.milliseconds(since: t(0))))
            events += d.poll(now: t(now), lineActive: true)
            now += 0.001
        }
        let presses = events.filter { if case .press = $0 { true } else { false } }.count
        let longPressOfFirst = events.contains { if case .longPress(1, _) = $0 { true } else { false } }
        print("EVENTS:", events)
        #expect(presses == 1, "chatter during a hold became \(presses) presses")
        #expect(longPressOfFirst, "the held press #1 never got its long press")
    }
}
