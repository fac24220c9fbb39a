import BoothCore
import Testing
@testable import BoothButtons

/// Milliseconds on an arbitrary monotonic base (a booted machine's clock is never 0).
private func t(_ ms: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 5_000_000_000).adding(milliseconds: ms) }

/// Replays recorded edges as the button thread would: before each edge, and up to
/// `until`, every deadline is polled with the line's real level from `truth`.
private struct Replay {
    var debouncer: ButtonDebouncer
    var events: [ButtonEvent] = []
    var polls: [Int64] = []
    /// The runtime never polls earlier than the last edge it has read.
    var lastEdge: Int64 = .min

    init(timing: ButtonTiming = ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500,
                                              stuckMilliseconds: 5000),
         startActive: Bool = false) {
        debouncer = ButtonDebouncer(timing: timing, lineActive: startActive, at: t(-1000))
    }

    mutating func run(_ edges: [(ms: Int64, active: Bool)], until end: Int64,
                      truth: ((Int64) -> Bool)? = nil) {
        let level = truth ?? { ms in edges.last(where: { $0.ms <= ms })?.active ?? false }
        for edge in edges {
            pollDeadlines(before: edge.ms, level: level)
            events += debouncer.edge(active: edge.active, at: t(edge.ms))
            lastEdge = edge.ms
        }
        pollDeadlines(before: end + 1, level: level)
    }

    private mutating func pollDeadlines(before ms: Int64, level: (Int64) -> Bool) {
        while let deadline = debouncer.nextDeadline, deadline < t(ms) {
            let now = max(Int64(deadline.milliseconds(since: t(0))), lastEdge)
            polls.append(now)
            events += debouncer.poll(now: t(now), lineActive: level(now))
        }
    }

    var presses: [ButtonEvent] { events.filter { if case .press = $0 { true } else { false } } }
    var longPresses: [ButtonEvent] { events.filter { if case .longPress = $0 { true } else { false } } }
    var rejections: [(edge: ButtonEdge, reason: ButtonRejectReason, pulse: Double)] {
        events.compactMap { if case .rejected(let e, let r, let p) = $0 { (e, r, p) } else { nil } }
    }
}

@Suite("ButtonDebouncer over recorded edges")
struct ButtonDebouncerTests {
    @Test("a clean 100 ms tap is one press and one release")
    func cleanTap() {
        var r = Replay()
        r.run([(0, true), (100, false)], until: 1000)
        #expect(r.events == [.press(id: 1, at: t(0)), .release(id: 1, at: t(100), heldMilliseconds: 100)])
        #expect(r.polls == [30, 130], "polled at press + debounce and release + debounce")
    }

    @Test("the press is reported only after the line stayed active for the debounce time")
    func pressWaitsForDebounce() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30), lineActive: false, at: t(0))
        #expect(d.edge(active: true, at: t(10)).isEmpty)
        #expect(d.nextDeadline == t(40))
        #expect(d.poll(now: t(39), lineActive: true).isEmpty, "29 ms is not stable yet")
        #expect(d.poll(now: t(40), lineActive: true) == [.press(id: 1, at: t(10))])
        #expect(d.isHeld)
    }

    @Test("a burst of glitches shorter than the debounce is rejected, each with its width")
    func glitchBurst() {
        var r = Replay()
        r.run([(0, true), (2, false), (20, true), (23, false), (40, true), (45, false), (60, true), (61, false),
               (80, true), (109, false)], until: 2000)
        #expect(r.presses.isEmpty)
        #expect(r.events.count == 5, "nothing but the five rejections: \(r.events)")
        #expect(r.rejections.map(\.pulse) == [2, 3, 5, 1, 29])
        #expect(r.rejections.map(\.edge) == [0, 20, 40, 60, 80].map { ButtonEdge(active: true, at: t($0)) })
        #expect(r.rejections.allSatisfy { $0.reason == .shorterThanDebounce })
    }

    @Test("a bouncing press and release give exactly one press and one release")
    func bouncingContacts() {
        var r = Replay()
        r.run([(0, true), (1, false), (3, true), (4, false), (6, true),  // press bounces, stable from 6
               (300, false), (302, true), (303, false)],                 // release bounces, stable from 303
              until: 1000)
        #expect(r.presses == [.press(id: 1, at: t(6))])
        #expect(r.events.last == .release(id: 1, at: t(303), heldMilliseconds: 297))
        // Each bounce is one rejected pulse: the edge that started it, its width; the edge
        // back to the held (or released) level ends it. The release bounce's short high
        // at 302 ms returns to "held": it is not a press.
        #expect(r.rejections.map(\.pulse) == [1, 1, 2])
        #expect(r.rejections.map(\.edge) == [ButtonEdge(active: true, at: t(0)), ButtonEdge(active: true, at: t(3)),
                                             ButtonEdge(active: false, at: t(300))])
        #expect(r.events.count == 5, "\(r.events)")
    }

    @Test("a release is never a press")
    func releaseIsNotPress() {
        // Held when the booth starts: letting go is neither a press nor a release.
        var r = Replay(startActive: true)
        r.run([(100, false), (150, true), (151, false)], until: 1000)
        #expect(r.presses.isEmpty)
        #expect(!r.events.contains { if case .release = $0 { true } else { false } })
        #expect(!r.debouncer.isHeld)
        // A dropout while held is a rejected falling edge, not a release followed by a press.
        var held = Replay()
        held.run([(0, true), (500, false), (510, true), (900, false)], until: 1000)
        #expect(held.presses == [.press(id: 1, at: t(0))])
        #expect(held.rejections.map { $0.edge } == [ButtonEdge(active: false, at: t(500))])
        #expect(held.events.last == .release(id: 1, at: t(900), heldMilliseconds: 900))
    }

    @Test("a long press fires once, at the threshold, while held")
    func longPressOnce() {
        var r = Replay()
        r.run([(0, true), (3000, false)], until: 4000)
        #expect(r.events == [.press(id: 1, at: t(0)), .longPress(id: 1, at: t(1500)),
                             .release(id: 1, at: t(3000), heldMilliseconds: 3000)])
        #expect(r.polls.contains(1500))

        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500),
                                lineActive: false, at: t(0))
        _ = d.edge(active: true, at: t(0))
        _ = d.poll(now: t(30), lineActive: true)
        #expect(d.nextDeadline == t(1500))
        #expect(d.poll(now: t(1499), lineActive: true).isEmpty)
        #expect(d.poll(now: t(1500), lineActive: true) == [.longPress(id: 1, at: t(1500))])
        #expect(d.poll(now: t(2500), lineActive: true).isEmpty, "fires once")
    }

    @Test("released before the threshold: no long press")
    func noLongPressWhenReleasedEarly() {
        var r = Replay()
        r.run([(0, true), (1400, false)], until: 5000)
        #expect(r.longPresses.isEmpty)
        #expect(r.events == [.press(id: 1, at: t(0)), .release(id: 1, at: t(1400), heldMilliseconds: 1400)])
    }

    @Test("a dropout across the threshold delays the long press until the line is held again")
    func dropoutAcrossThreshold() {
        var r = Replay()
        r.run([(0, true), (1490, false), (1510, true), (2500, false)], until: 3000)
        #expect(r.longPresses == [.longPress(id: 1, at: t(1510))])
    }

    @Test("a missed release edge gives a release, never a phantom long press")
    func missedReleaseEdge() {
        // The falling edge at 700 ms never arrived; the line is inactive from then on.
        var r = Replay()
        r.run([(0, true)], until: 10_000, truth: { $0 < 700 })
        #expect(r.longPresses.isEmpty)
        #expect(!r.events.contains(.stuck(at: t(5000))))
        #expect(r.events == [.press(id: 1, at: t(0)), .release(id: 1, at: t(30), heldMilliseconds: 30)],
                "found by the re-read at 1500 ms, released after debounce, held as long as seen (the re-read at 30 ms): \(r.events)")
        #expect(!r.debouncer.isHeld)
        #expect(r.debouncer.nextDeadline == nil)
    }

    @Test("a re-read caught in a contact bounce does not release a held button")
    func reReadDuringBounce() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500),
                                lineActive: false, at: t(0))
        _ = d.edge(active: true, at: t(0))
        #expect(d.poll(now: t(30), lineActive: true) == [.press(id: 1, at: t(0))])
        #expect(d.poll(now: t(1500), lineActive: false).isEmpty, "not trusted as a long press, not yet a release")
        #expect(d.nextDeadline == t(1530))
        let back = d.poll(now: t(1510), lineActive: true)
        #expect(back == [.rejected(edge: ButtonEdge(active: false, at: t(1500)), reason: .contradictedByLevel,
                                   pulseMilliseconds: 10)])
        #expect(d.isHeld)
        #expect(d.poll(now: t(1511), lineActive: true) == [.longPress(id: 1, at: t(1510))])
    }

    @Test("held past the stuck limit: stuck, then unstuck on release")
    func stuckAndUnstuck() {
        var r = Replay()
        r.run([(0, true), (7000, false)], until: 8000)
        #expect(r.events == [.press(id: 1, at: t(0)), .longPress(id: 1, at: t(1500)), .stuck(at: t(5000)),
                             .release(id: 1, at: t(7000), heldMilliseconds: 7000), .unstuck(at: t(7000))])
    }

    @Test("a line active from the start can be stuck; letting go clears it without a release")
    func stuckFromStart() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, stuckMilliseconds: 5000),
                                lineActive: true, at: t(0))
        #expect(d.nextDeadline == t(5000), "no long press for a hold that was never a press")
        #expect(d.poll(now: t(5000), lineActive: true) == [.stuck(at: t(5000))])
        #expect(d.edge(active: false, at: t(6000)).isEmpty)
        #expect(d.poll(now: t(6030), lineActive: false) == [.unstuck(at: t(6000))])
    }

    @Test("press ids increase and are repeated on their long press and release")
    func ids() {
        var r = Replay()
        r.run([(0, true), (100, false), (1000, true), (3000, false), (4000, true), (4100, false)], until: 5000)
        #expect(r.events == [
            .press(id: 1, at: t(0)), .release(id: 1, at: t(100), heldMilliseconds: 100),
            .press(id: 2, at: t(1000)), .longPress(id: 2, at: t(2500)),
            .release(id: 2, at: t(3000), heldMilliseconds: 2000),
            .press(id: 3, at: t(4000)), .release(id: 3, at: t(4100), heldMilliseconds: 100),
        ])
    }

    @Test("a repeated edge (the one between was lost) restarts the debounce")
    func repeatedEdge() {
        var r = Replay()
        r.run([(0, true), (10, true), (200, false), (205, false)], until: 1000)
        #expect(r.rejections.map(\.reason) == [.repeatedEdge, .repeatedEdge])
        #expect(r.rejections.first?.pulse == 10)
        #expect(r.presses == [.press(id: 1, at: t(10))])
        #expect(r.events.last == .release(id: 1, at: t(205), heldMilliseconds: 195))
    }

    @Test("a tap whose release edge was lost, then an 800 ms press: a second press, not a long press")
    func lostReleaseThenShortPress() {
        // The kernel dropped the falling edge at 100 ms (an overflowed event queue). The press
        // edge at 1000 ms while the line was believed pressed proves it was lost.
        var r = Replay()
        r.run([(0, true), (1000, true), (1800, false)], until: 5000,
              truth: { (0..<100).contains($0) || (1000..<1800).contains($0) })
        #expect(r.longPresses.isEmpty, "the second press was held 800 ms of a 1500 ms long press: \(r.events)")
        #expect(r.presses == [.press(id: 1, at: t(0)), .press(id: 2, at: t(1000))])
        #expect(r.events.last == .release(id: 2, at: t(1800), heldMilliseconds: 800))
        #expect(!r.debouncer.isHeld)
    }

    @Test("a long hold whose release edge was lost: the next press is a press, not ignored until the stuck limit")
    func lostReleaseAfterLongHold() {
        var r = Replay(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500,
                                            stuckMilliseconds: 30_000))
        // Held 0..3000 ms (its falling edge lost), then a 300 ms press at 10 s.
        r.run([(0, true), (10_000, true), (10_300, false)], until: 12_000,
              truth: { (0..<3000).contains($0) || (10_000..<10_300).contains($0) })
        #expect(r.presses == [.press(id: 1, at: t(0)), .press(id: 2, at: t(10_000))], "\(r.events)")
        #expect(r.longPresses == [.longPress(id: 1, at: t(1500))])
        #expect(r.events.last == .release(id: 2, at: t(10_300), heldMilliseconds: 300))
        #expect(!r.events.contains { if case .release(1, _, _) = $0 { true } else { false } },
                "press 1's release was lost: it is not reported as a release at 10.3 s")
    }

    @Test("libgpiod v1: chatter during a hold (a burst of edges, directions read late) is rejected; the hold goes on")
    func chatterDuringHold() {
        var r = Replay()
        // Two glitches, as the kernel read them: both edges "rising", then falling and rising.
        r.run([(0, true), (700, true), (701, true), (900, false), (902, true)], until: 2000, truth: { $0 >= 0 })
        #expect(r.presses == [.press(id: 1, at: t(0))], "\(r.events)")
        #expect(r.longPresses == [.longPress(id: 1, at: t(1500))])
        #expect(!r.events.contains { if case .releaseLost = $0 { true } else { false } })
        #expect(!r.events.contains { if case .edgesLost = $0 { true } else { false } })
        #expect(r.rejections.first?.edge == ButtonEdge(active: true, at: t(700)))
        #expect(r.rejections.first?.reason == .repeatedEdge)
        #expect(r.rejections.first?.pulse == 1, "the glitch lasted at most until the next edge")
        #expect(r.debouncer.heldPressID == 1)
    }

    @Test("libgpiod v1: chatter just before the long-press threshold delays it by at most the debounce, at its time")
    func chatterAtThreshold() {
        var r = Replay()
        r.run([(0, true), (1490, true), (1491, true)], until: 2000, truth: { $0 >= 0 })
        #expect(r.presses == [.press(id: 1, at: t(0))], "\(r.events)")
        #expect(r.longPresses == [.longPress(id: 1, at: t(1500))])
    }

    @Test("libgpiod v1: a lone press edge just before the threshold, release lost: no long press of the old press")
    func lostReleaseJustBeforeThreshold() {
        var r = Replay()
        r.run([(0, true), (1490, true), (1800, false)], until: 5000,
              truth: { (0..<100).contains($0) || (1490..<1800).contains($0) })
        #expect(r.longPresses.isEmpty, "\(r.events)")
        #expect(r.presses == [.press(id: 1, at: t(0)), .press(id: 2, at: t(1490))])
        #expect(r.events.contains(.releaseLost(id: 1, before: t(1490), heldAtMostMilliseconds: 1490)))
    }

    @Test("libgpiod v1: a lone press edge while held, then the line reads inactive: a release, not a new press")
    func lonePressEdgeThenInactive() {
        var r = Replay()
        r.run([(0, true), (1000, true)], until: 2000, truth: { $0 < 1000 })
        #expect(r.presses == [.press(id: 1, at: t(0))], "\(r.events)")
        #expect(r.events.last == .release(id: 1, at: t(1000), heldMilliseconds: 1000))
        #expect(r.rejections.map(\.reason) == [.contradictedByLevel])
        #expect(r.polls.contains(1000), "the line was re-read at once")
    }

    @Test("a stuck press whose release was lost: the next press edge clears stuck and is a new press")
    func lostReleaseWhileStuck() {
        var r = Replay()
        r.run([(0, true), (7000, true)], until: 8000, truth: { (0..<6000).contains($0) || $0 >= 7000 })
        #expect(r.events == [
            .press(id: 1, at: t(0)), .longPress(id: 1, at: t(1500)), .stuck(at: t(5000)),
            .edgesLost(count: nil, before: ButtonEdge(active: true, at: t(7000))),
            .releaseLost(id: 1, before: t(7000), heldAtMostMilliseconds: 7000), .unstuck(at: t(7000)),
            .press(id: 2, at: t(7000)),
        ], "\(r.events)")
        #expect(r.polls.contains(7000), "the line was re-read at once after the loss")
    }

    @Test("a release edge while released: a press was lost; logged and re-read, never a press")
    func releaseWhileReleased() {
        var r = Replay()
        r.run([(0, true), (100, false), (500, false)], until: 1000)
        #expect(r.events == [.press(id: 1, at: t(0)), .release(id: 1, at: t(100), heldMilliseconds: 100),
                             .edgesLost(count: nil, before: ButtonEdge(active: false, at: t(500)))])
        #expect(r.polls == [30, 130, 500])
    }

    @Test("sequence numbers: a gap is counted; a press edge after the lost release starts a new press")
    func sequenceGap() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500),
                                lineActive: false, at: t(0))
        #expect(d.edge(ButtonEdge(active: true, at: t(0), sequence: 1)).isEmpty)
        #expect(d.poll(now: t(30), lineActive: true) == [.press(id: 1, at: t(0))])
        // Edge 2, the release at 100 ms, was dropped by the kernel.
        #expect(d.edge(ButtonEdge(active: true, at: t(1000), sequence: 3)) == [
            .edgesLost(count: 1, before: ButtonEdge(active: true, at: t(1000), sequence: 3)),
            .releaseLost(id: 1, before: t(1000), heldAtMostMilliseconds: 1000),
        ])
        #expect(d.needsReRead)
        #expect(d.nextDeadline == t(1000), "re-read at once")
        #expect(d.poll(now: t(1001), lineActive: true).isEmpty)
        #expect(!d.needsReRead)
        #expect(d.nextDeadline == t(1030))
        #expect(d.poll(now: t(1030), lineActive: true) == [.press(id: 2, at: t(1000))])
        // A gap before an edge that changes the level is counted; the edge counts as usual.
        #expect(d.edge(ButtonEdge(active: false, at: t(1200), sequence: 7)) == [
            .edgesLost(count: 3, before: ButtonEdge(active: false, at: t(1200), sequence: 7)),
        ])
        #expect(d.poll(now: t(1230), lineActive: false) == [.release(id: 2, at: t(1200), heldMilliseconds: 200)])
    }

    @Test("sequence numbers without a gap: a repeated edge is a misreported glitch, the hold goes on")
    func sequenceNoGapRepeated() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500),
                                lineActive: false, at: t(0))
        _ = d.edge(ButtonEdge(active: true, at: t(0), sequence: 1))
        #expect(d.poll(now: t(30), lineActive: true) == [.press(id: 1, at: t(0))])
        // A 1 ms dropout whose falling edge the kernel reported as rising (the level read late).
        #expect(d.edge(ButtonEdge(active: true, at: t(500), sequence: 2))
                == [.rejected(edge: ButtonEdge(active: true, at: t(500)), reason: .repeatedEdge, pulseMilliseconds: 0)])
        _ = d.edge(ButtonEdge(active: true, at: t(501), sequence: 3))
        #expect(!d.needsReRead)
        #expect(d.heldPressID == 1)
        #expect(d.poll(now: t(1500), lineActive: true) == [.longPress(id: 1, at: t(1500))])
    }

    @Test("edges stamped before the last re-read are taken at the re-read time")
    func lateEdgeTimestamps() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30), lineActive: false, at: t(0))
        _ = d.edge(active: true, at: t(0))
        _ = d.poll(now: t(30), lineActive: true)
        _ = d.poll(now: t(1000), lineActive: false)  // the re-read saw the release first
        let late = d.edge(active: false, at: t(990))
        #expect(late.count == 1)
        if case .rejected(_, let reason, _) = late.first { #expect(reason == .repeatedEdge) } else { Issue.record("\(late)") }
        #expect(d.poll(now: t(1030), lineActive: false) == [.release(id: 1, at: t(990), heldMilliseconds: 990)],
                "the late edge times the release the re-read found")
    }
    @Test("a release found by a re-read is timed to the last edge seen, not to the re-read (a 100 ms tap is not held 394 ms)")
    func missedReleaseTimedToLastEdge() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500),
                                lineActive: false, at: t(0))
        _ = d.edge(ButtonEdge(active: true, at: t(0), sequence: 1))
        #expect(d.poll(now: t(30), lineActive: true) == [.press(id: 1, at: t(0))])
        // The release bounced; the kernel read the last edge's direction late (rising at 100 ms).
        _ = d.edge(ButtonEdge(active: false, at: t(90), sequence: 2))
        _ = d.edge(ButtonEdge(active: true, at: t(100), sequence: 3))
        // The re-read (a full queue read at once) comes 294 ms later and finds the line inactive.
        #expect(d.poll(now: t(394), lineActive: false).isEmpty)
        #expect(d.poll(now: t(424), lineActive: false) == [.release(id: 1, at: t(100), heldMilliseconds: 100)])
    }

    @Test("a half-second tap whose release was missed, re-read after the long-press threshold: no long press, held 500 ms")
    func missedReleaseReReadAfterThreshold() {
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500),
                                lineActive: false, at: t(0))
        _ = d.edge(ButtonEdge(active: true, at: t(0), sequence: 1))
        #expect(d.poll(now: t(30), lineActive: true) == [.press(id: 1, at: t(0))])
        _ = d.edge(ButtonEdge(active: false, at: t(495), sequence: 2))
        _ = d.edge(ButtonEdge(active: true, at: t(500), sequence: 3))
        #expect(d.nextDeadline == t(1500))
        #expect(d.poll(now: t(1510), lineActive: false).isEmpty, "the line read inactive at the long-press deadline")
        #expect(d.poll(now: t(1540), lineActive: false) == [.release(id: 1, at: t(500), heldMilliseconds: 500)])
        #expect(d.nextDeadline == nil)
    }
}
