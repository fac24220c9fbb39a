import BoothButtons
import BoothCore
import Dispatch
import Glibc
import Synchronization
import Testing
@testable import BoothGPIO

/// A requested line stand-in: edges are queued with their (kernel-style) timestamps and
/// announced through a pipe the button thread polls, like libgpiod's event fd.
private final class FakeLine: ButtonLineIO {
    private let pipe: WakePipe
    private let state = Mutex<(queue: [ButtonEdge], level: Bool, released: Bool, readError: Int32?)>(([], false, false, nil))

    init(level: Bool = false) throws {
        pipe = try WakePipe()
        state.withLock { $0.level = level }
    }

    var eventFD: Int32 { pipe.readFD }

    /// Queues an edge (the level follows it) and wakes the poller.
    func push(_ active: Bool, at: MonotonicInstant) {
        state.withLock {
            $0.queue.append(ButtonEdge(active: active, at: at))
            $0.level = active
        }
        pipe.wake()
    }

    /// Queues several edges at once (one read returns them all, as the kernel's edge buffer does
    /// for a glitch) and wakes the poller once.
    func push(_ edges: [(active: Bool, at: MonotonicInstant)]) {
        state.withLock {
            for e in edges { $0.queue.append(ButtonEdge(active: e.active, at: e.at)) }
            if let last = edges.last { $0.level = last.active }
        }
        pipe.wake()
    }

    /// Queues one edge as given (with its sequence number) and wakes the poller.
    func push(_ edge: ButtonEdge) {
        state.withLock {
            $0.queue.append(edge)
            $0.level = edge.active
        }
        pipe.wake()
    }

    /// Queues edges while the level is `level`: the edges after them were lost.
    func push(_ edges: [ButtonEdge], level: Bool) {
        state.withLock {
            $0.queue += edges
            $0.level = level
        }
        pipe.wake()
    }

    /// Changes the level without an edge: a lost edge.
    func setLevelSilently(_ active: Bool) { state.withLock { $0.level = active } }

    func failReads(errno: Int32) {
        state.withLock { $0.readError = errno }
        pipe.wake()
    }

    var released: Bool { state.withLock { $0.released } }

    func readEdges() -> Result<[ButtonEdge], Errno> {
        pipe.drain()
        return state.withLock { s in
            if let err = s.readError { return .failure(Errno(err)) }
            defer { s.queue.removeAll() }
            return .success(s.queue)
        }
    }

    func value() -> Result<Bool, Errno> { .success(state.withLock { $0.level }) }
    func release() { state.withLock { $0.released = true } }
}

/// Collects events from the button thread; `next()` waits (bounded) for the next one.
private final class Inbox: Sendable {
    private let events = Mutex<[ButtonEvent]>([])
    private let arrived = DispatchSemaphore(value: 0)
    let logLines = Mutex<[String]>([])

    func handle(_ event: ButtonEvent) {
        events.withLock { $0.append(event) }
        arrived.signal()
    }

    func next() -> ButtonEvent? {
        guard arrived.wait(timeout: .now() + 5) == .success else { return nil }
        return events.withLock { $0.removeFirst() }
    }

    var pending: [ButtonEvent] { events.withLock { $0 } }
}

@Suite("GPIOButton thread over a fake line")
struct GPIOButtonThreadTests {
    let resolved = GPIOResolvedLine(address: GPIOLineAddress(chip: "gpiochip0", line: "17"), chipName: "gpiochip0",
                                    chipLabel: "fake", chipPath: "/dev/gpiochip0",
                                    info: GPIOLineInfo(offset: 17, name: "GPIO17", consumer: "", used: false,
                                                       isOutput: false, activeLow: true))

    fileprivate func start(_ line: FakeLine, _ inbox: Inbox, longPress: Int64 = 2000) throws -> GPIOButton {
        let config = GPIOButton.Configuration(address: resolved.address,
                                              timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: longPress))
        return try GPIOButton.start(line: line, configuration: config, resolved: resolved,
                                    log: { _, message in inbox.logLines.withLock { $0.append(message) } },
                                    handler: { inbox.handle($0) })
    }

    @Test("glitch, then a clean tap: the thread times the debounce and reports kernel timestamps")
    func glitchThenTap() throws {
        let line = try FakeLine()
        let inbox = Inbox()
        let button = try start(line, inbox)
        let t0 = Sys.now()
        // Both edges of the glitch in one read: pushed one by one, a test thread descheduled for
        // more than the 30 ms debounce between them let the thread's re-read see the line still
        // active and report a press.
        line.push([(true, t0), (false, t0.adding(milliseconds: 2))])
        #expect(inbox.next() == .rejected(edge: ButtonEdge(active: true, at: t0), reason: .shorterThanDebounce,
                                          pulseMilliseconds: 2))
        let t1 = t0.adding(milliseconds: 5)
        line.push(true, at: t1)
        #expect(inbox.next() == .press(id: 1, at: t1), "the glitch was not a press")
        let t2 = t1.adding(milliseconds: 100)
        line.push(false, at: t2)
        #expect(inbox.next() == .release(id: 1, at: t2, heldMilliseconds: 100))
        button.stop()
        #expect(line.released)
        let log = inbox.logLines.withLock { $0 }
        #expect(log.contains { $0.contains("edge rejected: rising at \(t0), pulse 2.000 ms") })
        #expect(log.contains { $0.contains("edge accepted: rising at \(t1)") && $0.contains("press #1") })
    }

    @Test("a lost release edge: the re-read at the long-press deadline releases, no long press")
    func missedRelease() throws {
        let line = try FakeLine()
        let inbox = Inbox()
        let button = try start(line, inbox, longPress: 800)
        let t0 = Sys.now()
        line.push(true, at: t0)
        #expect(inbox.next() == .press(id: 1, at: t0))
        line.setLevelSilently(false)
        guard case .release(1, _, let held)? = inbox.next() else {
            Issue.record("expected release #1, got \(inbox.pending)")
            return
        }
        #expect(held < 800, "held to the last sign of the line active, not to the re-read at the long-press deadline")
        button.stop()
        #expect(inbox.pending.isEmpty, "no long press after the release")
        let log = inbox.logLines.withLock { $0 }
        #expect(log.contains { $0.contains("line re-read at") && $0.contains("an edge was missed: inactive, edges said active") },
                "\(log)")
        #expect(log.contains { $0.contains("release #1 found by the line re-read at") && $0.contains("to the last sign of the line active at") },
                "\(log)")
    }

    /// A re-read that found the line inactive under a press still settling (no press, so no release) left the
    /// loop's "release found by a re-read" mark set: the next press's release, its edge read, was logged as found
    /// by that old re-read.
    @Test("a release read from its edge is logged as such after an earlier re-read contradicted a settling press")
    func releaseAfterContradictedPress() throws {
        let line = try FakeLine()
        let inbox = Inbox()
        let button = try start(line, inbox)
        let t0 = Sys.now()
        line.push([ButtonEdge(active: true, at: t0)], level: false)
        guard case .rejected(_, .contradictedByLevel, _)? = inbox.next() else {
            Issue.record("expected the press edge rejected by the re-read, got \(inbox.pending)")
            return
        }
        let t1 = Sys.now()
        line.push(true, at: t1)
        #expect(inbox.next() == .press(id: 1, at: t1))
        let t2 = t1.adding(milliseconds: 100)
        line.push(false, at: t2)
        #expect(inbox.next() == .release(id: 1, at: t2, heldMilliseconds: 100))
        button.stop()
        let log = inbox.logLines.withLock { $0 }
        #expect(log.contains { $0.contains("edge accepted: falling at \(t2)") && $0.contains("release #1") }, "\(log)")
        #expect(!log.contains { $0.contains("found by the line re-read") }, "\(log)")
    }

    @Test("a press edge while believed pressed: the lost release is logged, the line re-read, a new press")
    func pressWhileBelievedPressed() throws {
        let line = try FakeLine()
        let inbox = Inbox()
        let button = try start(line, inbox)
        let t0 = Sys.now()
        line.push(true, at: t0)
        #expect(inbox.next() == .press(id: 1, at: t0))
        // The release edge is lost; the next press comes well before the 2 s long press.
        line.setLevelSilently(false)
        let t1 = t0.adding(milliseconds: 200)
        line.push(true, at: t1)
        var seen: [ButtonEvent] = []
        while let event = inbox.next() {
            seen.append(event)
            if case .press = event { break }
        }
        button.stop()
        #expect(seen.last == .press(id: 2, at: t1), "\(seen)")
        #expect(seen.contains { if case .releaseLost(1, t1, _) = $0 { true } else { false } }, "\(seen)")
        #expect(!seen.contains { if case .longPress = $0 { true } else { false } })
        let log = inbox.logLines.withLock { $0 }
        #expect(log.contains { $0.contains("edge lost or misreported before rising at \(t1)") }, "\(log)")
        #expect(log.contains { $0.contains("release #1 lost: released at or before \(t1)") }, "\(log)")
        #expect(log.contains { $0.contains("edges suspected lost") && $0.contains(": active, as the edges said") },
                "\(log)")
    }

    @Test("a gap in the edges' sequence numbers is logged with its count and the line is re-read")
    func sequenceGap() throws {
        let line = try FakeLine()
        let inbox = Inbox()
        let button = try start(line, inbox)
        let t0 = Sys.now()
        line.push(ButtonEdge(active: true, at: t0, sequence: 1))
        #expect(inbox.next() == .press(id: 1, at: t0))
        // Edges 2 to 4 were dropped by the kernel; the line is inactive again after edge 5.
        let t1 = t0.adding(milliseconds: 300)
        line.push(ButtonEdge(active: false, at: t1, sequence: 5))
        #expect(inbox.next() == .edgesLost(count: 3, before: ButtonEdge(active: false, at: t1, sequence: 5)))
        #expect(inbox.next() == .release(id: 1, at: t1, heldMilliseconds: 300))
        button.stop()
        let log = inbox.logLines.withLock { $0 }
        #expect(log.contains { $0.contains("3 edges lost before falling at \(t1) (#5)") && $0.contains("overflowed") },
                "\(log)")
        #expect(log.contains { $0.contains("edges suspected lost") && $0.contains(": inactive, as the edges said") },
                "\(log)")
    }

    /// Queues `edges` (at ms from now) at once with the line at `level`, and returns the events up to the first
    /// press, the time the edges were queued, and the log.
    private func untilPress(after edges: [(ms: Int64, active: Bool)], level: Bool) throws -> ([ButtonEvent], MonotonicInstant, [String]) {
        let line = try FakeLine()
        let inbox = Inbox()
        let button = try start(line, inbox)
        let t0 = Sys.now()
        line.push(edges.map { ButtonEdge(active: $0.active, at: t0.adding(milliseconds: $0.ms)) }, level: level)
        var seen: [ButtonEvent] = []
        while let event = inbox.next() {
            seen.append(event)
            if case .press = event { break }
        }
        button.stop()
        return (seen, t0, inbox.logLines.withLock { $0 })
    }

    @Test("a read of a whole kernel queue of edges re-reads the line: a level the edges missed is found")
    func fullQueueReRead() throws {
        // 16 edges of glitches (no sequence numbers, libgpiod v1), ending inactive; the kernel
        // dropped the rest, and the button is in fact held.
        let (seen, t0, log) = try untilPress(after: (0..<16).map { (Int64($0) - 20, $0 % 2 == 0) }, level: true)
        guard case .press(1, let at)? = seen.last else {
            Issue.record("expected press #1 from the re-read, got \(seen)")
            return
        }
        #expect(at >= t0, "pressed from the re-read, not from an edge of the burst (the last at -5 ms)")
        #expect(log.contains { $0.contains("read 16 edges at once") })
    }

    @Test("a full queue ending active: the press is timed from the re-read, not from the 16th edge")
    func fullQueueEndingActive() throws {
        // 16 edges of a bounce, the last one active; the edges after it were dropped (libgpiod v1's queue
        // keeps the first 16), and the line reads active now.
        let (seen, t0, _) = try untilPress(after: (0..<16).map { (Int64($0) - 200, $0 % 2 == 1) }, level: true)
        guard case .press(1, let at)? = seen.last else {
            Issue.record("expected press #1, got \(seen)")
            return
        }
        #expect(at >= t0, "stable only from the re-read after the full read, not from the 16th edge")
    }

    @Test("stop from the handler does not deadlock; the line is released and events stop")
    func stopFromHandler() throws {
        let line = try FakeLine()
        let inbox = Inbox()
        let holder = Mutex<GPIOButton?>(nil)
        let config = GPIOButton.Configuration(address: resolved.address, timing: ButtonTiming(debounceMilliseconds: 10))
        let button = try GPIOButton.start(line: line, configuration: config, resolved: resolved, log: { _, _ in },
                                          handler: { event in
                                              inbox.handle(event)
                                              holder.withLock { $0 }?.stop()
                                          })
        holder.withLock { $0 = button }
        line.push(true, at: Sys.now())
        #expect(inbox.next() != nil)
        button.stop()  // waits for the thread, which ended after the handler returned
        #expect(line.released)
        holder.withLock { $0 = nil }
    }

    @Test("a failing line is reported as .failed with the call, and the line is released")
    func lineFailure() throws {
        let line = try FakeLine()
        let inbox = Inbox()
        let button = try start(line, inbox)
        line.failReads(errno: ENODEV)
        guard case .failed(let error)? = inbox.next() else {
            Issue.record("expected .failed, got \(inbox.pending)")
            return
        }
        #expect(error.message.hasPrefix("line 17 on chip gpiochip0") && error.message.hasSuffix("failed"), "\(error)")
        #expect(error.cause.errno == ENODEV)
        #expect(error.cause.subject == "gpiochip0 line 17")
        button.stop()
        #expect(line.released)
    }
}
