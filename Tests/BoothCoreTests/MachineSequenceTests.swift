import Testing
import BoothCore

// Walks through the state machine over several events, where the table's single steps do not
// show the whole behaviour: the countdown's ticks and trigger, the fault backoff, the capture
// retry, a deferred ENOSPC fault, a deferred reload, shutdown and stale timers from every state.

/// `seconds` on CLOCK_MONOTONIC.
func instant(_ seconds: Double) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: UInt64(seconds * 1_000_000_000))
}

/// The token of the timer a command list starts, or nil.
func startedTimer(_ commands: [BoothCommand]) -> (token: UInt64, milliseconds: Int)? {
    for case let .startTimer(token, ms) in commands { return (token, ms) }
    return nil
}

@Suite("BoothMachine sequences")
struct MachineSequenceTests {
    @Test("start(): stream, idle screen, steady LED, idle timer")
    func startCommands() {
        var m = BoothMachine(config: tableConfig)
        #expect(m.start() == [.startStream, .show(.idle(notice: nil)), .setLED(.steady),
                              .startTimer(token: 1, milliseconds: 60_000)])
        #expect(m.state == .idle)
        #expect(m.streaming)
    }

    @Test("every starting state of the table is reached by its helper", arguments: Start.allCases)
    func helperReachesState(_ start: Start) {
        let d = start.reach()
        #expect(d.machine.state == start.expectedState)
    }

    @Test("countdown ticks 3 → 2 → 1 → capture; the trigger is the last tick's instant")
    func countdownTicks() throws {
        var m = BoothMachine(config: tableConfig)
        _ = m.start()
        let pressOut = m.pressAnswered(id: 1, at: instant(10))
        let preview = try #require(startedTimer(pressOut))
        #expect(preview.milliseconds == 2000)

        var out = m.handle(.timer(token: preview.token, at: instant(12)))
        #expect(m.state == .countdown(remaining: 3))
        #expect(out.contains(.show(.countdown(remaining: 3, shot: 1, of: 1))))
        #expect(out.contains(.setLED(.blink)))

        var shown: [Int] = [3]
        var now = 12.0
        while case .countdown = m.state {
            let tick = try #require(startedTimer(out))
            #expect(tick.milliseconds == 1000)
            now += 1
            out = m.handle(.timer(token: tick.token, at: instant(now)))
            for case let .show(.countdown(remaining, _, _)) in out { shown.append(remaining) }
        }
        #expect(shown == [3, 2, 1])
        #expect(now == 15)
        #expect(m.state == .capture(id: 1, attempt: 1))
        #expect(out.contains(.capture(id: 1, trigger: instant(15))))
        #expect(startedTimer(out)?.milliseconds == 1500, "the capture has a deadline timer")
    }

    @Test("preview 0 and countdown 0: the press instant is the trigger")
    func pressIsTrigger() {
        var m = BoothMachine(config: instantConfig)
        _ = m.start()
        let out = m.pressAnswered(id: 5, at: instant(42.5))
        #expect(m.state == .capture(id: 1, attempt: 1))
        #expect(out.contains(.capture(id: 1, trigger: instant(42.5))))
        #expect(out.first == .beginSession)
    }

    @Test("fault backoff: 1 s, 2 s, 4 s … capped at 30 s; retry answers keep it; a new fault restarts at 1 s")
    func faultBackoff() throws {
        var m = BoothMachine(config: tableConfig)
        _ = m.start()
        var out = m.handle(.deviceFault(.camera, message: cameraLost))
        var delays: [Int] = []
        for i in 0..<9 {
            let timer = try #require(startedTimer(out))
            delays.append(timer.milliseconds)
            out = m.handle(.timer(token: timer.token, at: instant(100 + Double(i))))
            #expect(out.first == .retry([.camera]))
            // The runtime answers the retry: the camera still fails. That must not reset the backoff
            // nor start a second timer.
            let answer = m.handle(.deviceFault(.camera, message: cameraLost))
            #expect(startedTimer(answer) == nil)
        }
        #expect(delays == [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000])
        #expect(m.retryDelayMilliseconds == BoothMachine.maxRetryMilliseconds)

        // All reasons cleared → idle with the stream restarted.
        out = m.handle(.deviceRecovered(.camera))
        #expect(m.state == .idle)
        #expect(out.contains(.startStream))
        #expect(m.streaming)

        // A new fault starts the backoff from 1 s again.
        out = m.handle(.deviceFault(.storage, message: storageGone))
        #expect(m.state == .fault(reasons: [.storage: storageGone]))
        #expect(startedTimer(out)?.milliseconds == 1000)
        let timer = try #require(startedTimer(out))
        out = m.handle(.timer(token: timer.token, at: instant(200)))
        #expect(startedTimer(out)?.milliseconds == 2000)
    }

    @Test("capture fails, retries once from the failure's instant, fails again: idle \"Sorry, try again\", not a fault")
    func captureRetryOnce() throws {
        var m = BoothMachine(config: instantConfig)
        _ = m.start()
        var out = m.pressAnswered(id: 1, at: instant(10))
        #expect(m.state == .capture(id: 1, attempt: 1))

        out = m.handle(.captureFailed(id: 1, message: "VIDIOC_DQBUF: EIO", at: instant(10.2)))
        #expect(m.state == .capture(id: 2, attempt: 2))
        #expect(out.contains(.capture(id: 2, trigger: instant(10.2))))

        // The second attempt times out.
        let deadline = try #require(startedTimer(out))
        out = m.handle(.timer(token: deadline.token, at: instant(11.7)))
        #expect(m.state == .idle)
        #expect(out.contains(.endSession(.failed)))
        #expect(out.contains(.show(.idle(notice: BoothMachine.captureFailedNotice))))
        #expect(!out.contains(where: { if case .retry = $0 { true } else { false } }))

        // The booth takes the next guest.
        out = m.pressAnswered(id: 2, at: instant(20))
        #expect(out.first == .beginSession)
        #expect(m.state == .capture(id: 3, attempt: 1))
    }

    @Test("ENOSPC while saving in review: fault(storage) when review ends, retried, recovered → idle")
    func deferredStorageFault() throws {
        var m = BoothMachine(config: instantConfig)
        _ = m.start()
        _ = m.pressAnswered(id: 1, at: instant(10))
        var out = m.handle(.captureSucceeded(id: 1))
        #expect(out.prefix(2) == [.keepForSession(captureID: 1), .save(captureID: 1)])
        let review = try #require(startedTimer(out))
        #expect(review.milliseconds == 4000)

        out = m.handle(.saveFailed(captureID: 1, noSpace: true, message: "No space left on device"))
        #expect(m.state == .review(pictureID: 1), "the guest still sees the photo")
        #expect(m.deferredFaults.keys.sorted() == [.storage])

        out = m.handle(.timer(token: review.token, at: instant(14)))
        guard case let .fault(reasons) = m.state else {
            Issue.record("expected fault, got \(m.state)")
            return
        }
        #expect(reasons.keys.sorted() == [.storage])
        #expect(m.deferredFaults.isEmpty)
        #expect(out.prefix(2) == [.endSession(.completed), .stopStream])

        let retry = try #require(startedTimer(out))
        out = m.handle(.timer(token: retry.token, at: instant(15)))
        #expect(out.first == .retry([.storage]), "the retry saves the held bytes once space returns")

        #expect(m.handle(.saved(captureID: 1, path: photoPath)) == [.log(.debug, "capture 1 saved to \(photoPath)")])
        out = m.handle(.deviceRecovered(.storage))
        #expect(m.state == .idle)
        #expect(out.contains(.startStream))
    }

    @Test("a reload during a session waits, is applied on entry to idle, and the next session uses it")
    func reloadDeferredThenApplied() throws {
        var d = Start.countdown3.reach()
        var out = d.send(.reload(reloadedConfig))
        #expect(!out.contains(.applyReload))
        #expect(d.machine.pendingReload == reloadedConfig)
        #expect(d.machine.config == tableConfig)

        // Finish the session: 3 ticks, capture, review.
        for _ in 0..<3 { d.fireTimer() }
        #expect(d.machine.config == tableConfig)
        d.send(.captureSucceeded(id: d.lastCapture))
        out = d.fireTimer()
        #expect(d.machine.state == .idle)
        #expect(out.contains(.applyReload))
        #expect(d.machine.config == reloadedConfig)
        #expect(d.machine.pendingReload == nil)
        #expect(startedTimer(out)?.milliseconds == 90_000, "the idle timer uses the new camera.idle_stop")

        // The next session: preview 2.5 s, countdown 5.
        out = d.press(7)
        #expect(startedTimer(out)?.milliseconds == 2500)
        d.fireTimer()
        #expect(d.machine.state == .countdown(remaining: 5))
    }

    @Test("shutdown from every state: sessions end appropriately, stopStream only when streaming, then exit",
          arguments: Start.allCases)
    func shutdownFromEveryState(_ start: Start) {
        var d = start.reach()
        let streaming = d.machine.streaming
        let state = StateKind(d.machine.state)
        let out = d.send(.shutdown)
        #expect(d.machine.state == .stopped)
        #expect(!d.machine.streaming)
        if state == .stopped {
            #expect(out.isEmpty)
            return
        }
        #expect(out.last == .exit)
        #expect(out.contains(.stopStream) == streaming)
        let ends = out.compactMap { c -> SessionEnd? in if case let .endSession(e) = c { e } else { nil } }
        switch state {
        case .preview, .countdown, .capture, .betweenShots, .composing: #expect(ends == [.cancelled])
        case .review: #expect(ends == [.completed])
        case .idle, .fault, .stopped: #expect(ends.isEmpty)
        }
        // Nothing happens afterwards, not even a timer the machine started before.
        let issued = d.log.compactMap { c -> UInt64? in if case let .startTimer(t, _) = c { t } else { nil } }
        for token in issued {
            #expect(d.send(.timer(token: token, at: T)).isEmpty)
        }
        #expect(d.send(.press(id: 9, at: T)).isEmpty)
    }

    @Test("every timer token the machine issued before the live one is ignored, in every state",
          arguments: Start.allCases)
    func everyStaleTokenIgnored(_ start: Start) {
        let reached = start.reach()
        let issued = reached.log.compactMap { c -> UInt64? in if case let .startTimer(t, _) = c { t } else { nil } }
        for token in issued where token != reached.machine.timerToken {
            var d = reached
            let out = d.send(.timer(token: token, at: T))
            #expect(out.isEmpty, "token \(token) of \(issued) in \(start)")
            #expect(d.machine.state == reached.machine.state)
            #expect(d.machine.timerToken == reached.machine.timerToken)
        }
    }

    @Test("the long press of the session-starting press never cancels, in preview or countdown")
    func ownLongPressNeverCancels() {
        for start in [Start.preview, .previewOff, .countdown3, .countdown2, .countdown1, .countdownFromPress] {
            var d = start.reach()
            let before = d.machine.state
            let out = d.send(.longPress(id: sessionPress))
            #expect(d.machine.state == before, "\(start)")
            #expect(!out.contains(.endSession(.cancelled)), "\(start)")
        }
    }

    @Test("storage low refuses the press in idle until space returns; it is never a fault")
    func lowStorageRefusesUntilSpaceReturns() {
        var d = Start.idle.reach()
        d.send(.storageStatus(refusal: lowSpace))
        for id in UInt64(10)..<13 {
            let out = d.press(id)
            #expect(d.machine.state == .idle)
            #expect(out.contains(.show(.idle(notice: lowSpace))))
            #expect(!out.contains(.beginSession))
        }
        d.send(.storageStatus(refusal: nil))
        let out = d.press(20)
        #expect(d.machine.state == .preview)
        #expect(out.first == .beginSession)
    }

    @Test("a press in idle only asks for the storage check: state, timer and storage news wait for the answer")
    func pressInIdleAsksFirst() {
        for start in Start.allCases where start.expectedState == .idle {
            var d = start.reach()
            let before = d.machine
            let out = d.send(.press(id: otherPress, at: T))
            #expect(out == [.checkStorage(pressID: otherPress, at: T)], "\(start)")
            #expect(d.machine.state == .idle, "\(start)")
            #expect(d.machine.timerToken == before.timerToken, "\(start)")
            #expect(d.machine.storageRefusal == before.storageRefusal, "\(start)")
            #expect(d.machine.shot == 0, "\(start): no session before the answer")
        }
    }

    @Test("the answer's storage news stays: space low refuses the next press too, without asking again")
    func storageAnswerIsKept() {
        var m = BoothMachine(config: tableConfig)
        _ = m.start()
        _ = m.pressAnswered(id: 1, at: instant(10), refusal: lowSpace)
        #expect(m.storageRefusal == lowSpace)
        #expect(m.state == .idle)
        // The next check finds space again: the session begins.
        let out = m.pressAnswered(id: 2, at: instant(11), refusal: .some(nil))
        #expect(m.storageRefusal == nil)
        #expect(m.state == .preview)
        #expect(out.contains(.beginSession))
    }

    @Test("a print that waited for its save is made from the file once, even after the review ended")
    func printWaitsForSaveAcrossReviewEnd() {
        var d = Start.reviewPrintAwaitingSave.reach()
        let picture = d.lastCapture
        #expect(d.machine.printsAwaitingSave == [picture])
        d.fireTimer()
        #expect(d.machine.state == .idle)
        let out = d.send(.saved(captureID: picture, path: photoPath))
        #expect(out.contains(.printSaved(pictureID: picture, path: photoPath)))
        #expect(d.machine.printsAwaitingSave.isEmpty)
        // A second `saved` of the same picture (its held bytes written again) prints nothing more.
        #expect(!d.send(.saved(captureID: picture, path: photoPath)).contains(.printSaved(pictureID: picture, path: photoPath)))
    }

    @Test("a print that waited for its save and was skipped by a long press is not made")
    func skippedPrintDoesNotWaitForSave() {
        var d = Start.reviewPrintAwaitingSave.reach()
        let picture = d.lastCapture
        d.send(.longPress(id: otherPress))
        #expect(d.machine.printsAwaitingSave.isEmpty)
        #expect(d.send(.saved(captureID: picture, path: photoPath)) == [.log(.debug, "capture \(picture) saved to \(photoPath)")])
    }

    @Test("appliesReloadNow is what a reload does: applied at once exactly in idle and fault", arguments: Start.allCases)
    func appliesReloadNowMatchesTheReload(_ start: Start) {
        var d = start.reach()
        let now = d.machine.appliesReloadNow
        switch StateKind(d.machine.state) {
        case .idle, .fault: #expect(now)
        case .preview, .countdown, .capture, .betweenShots, .composing, .review, .stopped: #expect(!now)
        }
        let out = d.send(.reload(reloadedConfig))
        #expect(out.contains(.applyReload) == now)
        #expect((d.machine.config == reloadedConfig) == now)
    }

    @Test("--auto-press: a press is asked for whenever the booth is idle, once until a press arrives")
    func autoPressWheneverIdle() {
        var d = Drive(tableConfig, autoPressMilliseconds: autoPressDelay)
        #expect(d.log.last == .pressLater(milliseconds: autoPressDelay), "start() asks for the first one")
        #expect(d.machine.autoPressPending)
        // A refused press (space low): idle still, so the next automatic press is asked for.
        d.send(.storageStatus(refusal: lowSpace))
        var out = d.press(10)
        #expect(out.contains(.log(.notice, "press refused: \(lowSpace)")))
        #expect(out.last == .pressLater(milliseconds: autoPressDelay))
        // Events in idle while it is on its way ask for no second one.
        #expect(!d.send(.storageStatus(refusal: nil)).contains(.pressLater(milliseconds: autoPressDelay)))
        // It starts a session; none is asked for until the booth is idle again.
        out = d.press(11)
        #expect(d.machine.state == .preview)
        #expect(!out.contains(.pressLater(milliseconds: autoPressDelay)))
        for _ in 0..<4 { d.fireTimer() }
        #expect(!d.send(.captureSucceeded(id: d.lastCapture)).contains(.pressLater(milliseconds: autoPressDelay)))
        out = d.fireTimer()
        #expect(d.machine.state == .idle)
        #expect(out.last == .pressLater(milliseconds: autoPressDelay))
        // Shutdown: nothing more.
        #expect(!d.send(.shutdown).contains(.pressLater(milliseconds: autoPressDelay)))
    }

    @Test("without --auto-press the machine never asks for a press", arguments: Start.allCases)
    func noAutoPressUnlessAsked(_ start: Start) {
        let d = start.reach()
        let asked = d.log.contains { if case .pressLater = $0 { true } else { false } }
        #expect(asked == (d.machine.autoPressMilliseconds != nil))
    }
}
