import Testing
import BoothCore

// Multi-shot sessions (issue 7) as whole sequences: a series of 2, 3 or 4 shots from the press to
// the end of review, a long press in each phase, a capture failing on shot 2, faults, shutdown and
// stale timers along the way.

/// Drives a series to its end: every timer fired, every capture answered with success.
/// Returns the drive after `composed` (review) or wherever `stop` says to stop.
private func runSeries(_ config: CoreConfig, until stop: (Drive) -> Bool = { _ in false }) -> Drive {
    var d = Drive(config)
    d.press(sessionPress)
    for _ in 0..<200 {
        if stop(d) { return d }
        switch d.machine.state {
        case let .capture(id, _): d.send(.captureSucceeded(id: id))
        case let .composing(p): d.send(.composed(pictureID: p))
        case .review, .idle, .fault, .stopped: return d
        default: d.fireTimer()
        }
    }
    return d
}

private func config(shots: Int, print: PrintMode = .off, cancelled: CancelledCaptures = .keep) -> CoreConfig {
    var c = tableConfig
    c.shots = shots
    c.betweenShotsMilliseconds = 2500
    c.printMode = print
    c.cancelledCaptures = cancelled
    return c
}

@Suite("BoothMachine multi-shot series")
struct MachineSeriesTests {
    @Test("a series of 2, 3 and 4 shots: countdown per shot, 'k of n' between, compose, review and print of the picture",
          arguments: [2, 3, 4])
    func fullSeries(_ shots: Int) {
        var d = runSeries(config(shots: shots, print: .auto))
        let captureIDs = d.log.compactMap { c -> UInt64? in if case let .capture(id, _) = c { id } else { nil } }
        #expect(captureIDs == (1...UInt64(shots)).map { $0 })
        // A countdown before each shot, numbered.
        let countdownStarts = d.log.compactMap { c -> Int? in
            if case let .show(.countdown(remaining, shot, of)) = c, remaining == 3 { #expect(of == shots); return shot }
            return nil
        }
        #expect(countdownStarts == Array(1...shots))
        // The still is prepared once per shot, just before its countdown's first number (never on a tick).
        let prepared = d.log.indices.filter { d.log[$0] == .prepareStill }
        #expect(prepared.count == shots)
        #expect(prepared.allSatisfy { i in
            if i + 1 < d.log.count, case let .show(.countdown(remaining, _, _)) = d.log[i + 1] { remaining == 3 } else { false }
        })
        // Between shots: the next shot announced, 2 … n.
        let between = d.log.compactMap { c -> Int? in
            if case let .show(.betweenShots(next, of)) = c { #expect(of == shots); return next }
            return nil
        }
        #expect(between == Array(2...shots))
        // Each capture saved once; the picture composed from all of them, in shot order.
        let saves = d.log.compactMap { c -> UInt64? in if case let .save(id) = c { id } else { nil } }
        #expect(saves == captureIDs)
        let composes = d.log.compactMap { c -> (UInt64, [UInt64])? in
            if case let .compose(p, ids) = c { (p, ids) } else { nil }
        }
        #expect(composes.count == 1)
        let picture = composes.first?.0 ?? 0
        #expect(composes.first?.1 == captureIDs)
        #expect(!captureIDs.contains(picture), "the picture has an id of its own")
        #expect(d.machine.state == .review(pictureID: picture))
        #expect(d.log.contains(.show(.review(pictureID: picture))))
        // The picture is printed, never a capture.
        let printed = d.log.compactMap { c -> UInt64? in if case let .print(id) = c { id } else { nil } }
        #expect(printed == [picture])
        // Review ends the session, completed; the next session starts over at shot 1.
        d.fireTimer()
        #expect(d.machine.state == .idle)
        #expect(d.log.filter { $0 == .beginSession }.count == 1)
        #expect(d.log.filter { if case .endSession = $0 { true } else { false } } == [.endSession(.completed)])
        #expect(d.machine.shot == 0 && d.machine.sessionCaptures.isEmpty)
        d.press(otherPress)
        #expect(d.machine.shot == 1)
    }

    @Test("one shot without a composer: review starts on the capture at once (no compose), as before")
    func singleShotUncomposed() {
        let d = runSeries(config(shots: 1, print: .auto))
        #expect(d.machine.state == .review(pictureID: 1))
        #expect(!d.log.contains { if case .compose = $0 { true } else { false } })
        #expect(d.log.contains(.print(pictureID: 1)))
        #expect(!d.log.contains { if case .show(.betweenShots) = $0 { true } else { false } })
        #expect(d.log.contains(.show(.countdown(remaining: 3, shot: 1, of: 1))))
    }

    /// Where a long press can land during a 3-shot series, and how many captures exist by then.
    enum Phase: String, CaseIterable, Sendable {
        case preview, countdown1, between2, countdown2, between3, countdown3
        var capturesBefore: Int {
            switch self {
            case .preview, .countdown1: 0
            case .between2, .countdown2: 1
            case .between3, .countdown3: 2
            }
        }
        func reached(_ d: Drive) -> Bool {
            let m = d.machine
            switch self {
            case .preview: return m.state == .preview
            case .countdown1: return m.state == .countdown(remaining: 2) && m.shot == 1
            case .between2: return m.state == .betweenShots(next: 2)
            case .countdown2: return m.state == .countdown(remaining: 1) && m.shot == 2
            case .between3: return m.state == .betweenShots(next: 3)
            case .countdown3: return m.state == .countdown(remaining: 3) && m.shot == 3
            }
        }
    }

    @Test("a long press in each phase cancels: nothing printed, nothing composed, captures kept or deleted",
          arguments: Phase.allCases, [CancelledCaptures.keep, .delete])
    func cancelInEveryPhase(_ phase: Phase, _ policy: CancelledCaptures) {
        var d = runSeries(config(shots: 3, print: .auto, cancelled: policy), until: phase.reached)
        #expect(phase.reached(d), "did not reach \(phase): \(d.machine.state)")
        let taken = d.machine.sessionCaptures
        #expect(taken.count == phase.capturesBefore)
        let out = d.send(.longPress(id: otherPress))
        #expect(d.machine.state == .idle)
        #expect(out.first == .endSession(.cancelled))
        let deleted = out.compactMap { c -> [UInt64]? in if case let .deleteCaptures(ids) = c { ids } else { nil } }
        if policy == .delete && !taken.isEmpty {
            #expect(deleted == [taken])
        } else {
            #expect(deleted.isEmpty)
        }
        // Nothing printed, nothing composed, now or from any timer or late answer afterwards.
        for token in d.log.compactMap({ c -> UInt64? in if case let .startTimer(t, _) = c { t } else { nil } })
            where token != d.machine.timerToken {
            #expect(d.send(.timer(token: token, at: T)).isEmpty)
        }
        d.send(.composed(pictureID: 4))
        #expect(!d.log.contains { if case .print = $0 { true } else { false } })
        #expect(!d.log.contains { if case .compose = $0 { true } else { false } })
        #expect(d.machine.state == .idle && d.machine.sessionCaptures.isEmpty && d.machine.shot == 0)
    }

    @Test("capture of shot 2 fails twice: session failed, shot 1 kept (saved, not deleted), nothing composed or printed")
    func failureOnShot2() {
        var d = runSeries(config(shots: 3, print: .auto, cancelled: .delete)) { d in
            if case .capture(_, _) = d.machine.state, d.machine.shot == 2 { return true }
            return false
        }
        guard case let .capture(first, 1) = d.machine.state else {
            Issue.record("not in shot 2's capture: \(d.machine.state)")
            return
        }
        d.send(.captureFailed(id: first, message: "VIDIOC_DQBUF: EIO", at: d.tick()))
        guard case let .capture(second, 2) = d.machine.state else {
            Issue.record("no retry: \(d.machine.state)")
            return
        }
        #expect(d.machine.shot == 2, "the retry is still shot 2")
        let out = d.send(.captureFailed(id: second, message: "VIDIOC_DQBUF: EIO", at: d.tick()))
        #expect(out.contains(.endSession(.failed)))
        #expect(d.machine.state == .idle)
        #expect(d.log.contains(.show(.idle(notice: BoothMachine.captureFailedNotice))))
        #expect(d.log.contains(.save(captureID: 1)))
        #expect(!d.log.contains { if case .deleteCaptures = $0 { true } else { false } })
        #expect(!d.log.contains { if case .compose = $0 { true } else { false } })
        #expect(!d.log.contains { if case .print = $0 { true } else { false } })
        // The late success of the first attempt changes nothing but is saved: a photo is never dropped.
        #expect(d.send(.captureSucceeded(id: first)) == [
            .log(.notice, "capture \(first) arrived after its session moved on; saving it anyway"), .save(captureID: first)])
        #expect(d.machine.state == .idle)
    }

    @Test("retry on shot 2 succeeds: the series goes on with the retry's id in the picture")
    func retryOnShot2() {
        var failedOnce = false
        let d = runSeries(config(shots: 3)) { d in
            if !failedOnce, case .capture(_, 1) = d.machine.state, d.machine.shot == 2 { return true }
            return false
        }
        var e = d
        guard case let .capture(first, 1) = e.machine.state else { Issue.record("\(e.machine.state)"); return }
        e.send(.captureFailed(id: first, message: "EIO", at: e.tick()))
        failedOnce = true
        guard case let .capture(retry, 2) = e.machine.state else { Issue.record("\(e.machine.state)"); return }
        e.send(.captureSucceeded(id: retry))
        for _ in 0..<4 { e.fireTimer() }
        guard case let .capture(third, 1) = e.machine.state else { Issue.record("\(e.machine.state)"); return }
        e.send(.captureSucceeded(id: third))
        guard case let .composing(picture) = e.machine.state else { Issue.record("\(e.machine.state)"); return }
        #expect(e.log.contains(.compose(pictureID: picture, captures: [1, retry, third])))
    }

    @Test("a device fault mid-series fails the session; after recovery the next session starts at shot 1")
    func faultMidSeries() {
        var d = runSeries(config(shots: 3)) { $0.machine.state == .betweenShots(next: 3) }
        let out = d.send(.deviceFault(.camera, message: cameraLost))
        #expect(out.contains(.endSession(.failed)))
        #expect(!out.contains { if case .deleteCaptures = $0 { true } else { false } })
        #expect(d.machine.state == .fault(reasons: [.camera: cameraLost]))
        #expect(d.machine.sessionCaptures.isEmpty && d.machine.shot == 0)
        d.send(.deviceRecovered(.camera))
        #expect(d.machine.state == .idle)
        let next = d.press(3)
        #expect(next.first == .beginSession)
        #expect(d.machine.shot == 1)
    }

    @Test("a fault while composing waits for review's end; the picture is still shown")
    func faultWhileComposing() {
        var d = runSeries(config(shots: 2)) { if case .composing = $0.machine.state { true } else { false } }
        guard case let .composing(picture) = d.machine.state else { Issue.record("\(d.machine.state)"); return }
        d.send(.saveFailed(captureID: 2, noSpace: true, message: enospc))
        d.send(.composed(pictureID: picture))
        #expect(d.machine.state == .review(pictureID: picture))
        d.fireTimer()
        guard case .fault(let reasons) = d.machine.state else { Issue.record("\(d.machine.state)"); return }
        #expect(reasons.keys.sorted() == [.storage])
        #expect(d.log.contains(.endSession(.completed)))
    }

    @Test("shutdown mid-series: cancelled, captures never deleted, every timer dead",
          arguments: [CancelledCaptures.keep, .delete])
    func shutdownMidSeries(_ policy: CancelledCaptures) {
        var d = runSeries(config(shots: 4, cancelled: policy)) { $0.machine.state == .betweenShots(next: 3) }
        let out = d.send(.shutdown)
        #expect(out == [.endSession(.cancelled), .setLED(.off), .stopStream, .exit])
        for case let .startTimer(t, _) in d.log { #expect(d.send(.timer(token: t, at: T)).isEmpty) }
        #expect(d.send(.captureSucceeded(id: 3)).isEmpty)
    }

    @Test("a reload during a series waits for its end: the series keeps its number of shots")
    func reloadDuringSeries() {
        var d = runSeries(config(shots: 3)) { $0.machine.state == .betweenShots(next: 2) }
        var fewer = config(shots: 2)
        fewer.countdownSeconds = 1
        d.send(.reload(fewer))
        #expect(d.machine.shots == 3)
        d.fireTimer()
        #expect(d.log.last(where: { if case .show(.countdown) = $0 { true } else { false } })
                == .show(.countdown(remaining: 3, shot: 2, of: 3)))
        for _ in 0..<3 { d.fireTimer() }
        guard case let .capture(id, _) = d.machine.state else { Issue.record("\(d.machine.state)"); return }
        d.send(.captureSucceeded(id: id))
        #expect(d.machine.state == .betweenShots(next: 3), "still 3 shots")
    }

    @Test("stale timers of a series are ignored: the between-shots timer after a press, the compose deadline after composed")
    func staleTimersInSeries() {
        var d = runSeries(config(shots: 2)) { $0.machine.state == .betweenShots(next: 2) }
        let betweenToken = d.machine.timerToken
        d.press(otherPress)                              // countdown of shot 2 at once
        #expect(d.machine.state == .countdown(remaining: 3))
        #expect(d.send(.timer(token: betweenToken, at: T)).isEmpty)
        #expect(d.machine.state == .countdown(remaining: 3))
        for _ in 0..<3 { d.fireTimer() }
        guard case let .capture(id, _) = d.machine.state else { Issue.record("\(d.machine.state)"); return }
        d.send(.captureSucceeded(id: id))
        guard case let .composing(picture) = d.machine.state else { Issue.record("\(d.machine.state)"); return }
        let deadline = d.machine.timerToken
        d.send(.composed(pictureID: picture))
        #expect(d.send(.timer(token: deadline, at: T)).isEmpty, "the compose deadline is stale once composed")
        #expect(d.machine.state == .review(pictureID: picture))
        // And a compose that never answers ends the session at its deadline; a late answer is only logged.
        var e = runSeries(config(shots: 2)) { if case .composing = $0.machine.state { true } else { false } }
        guard case let .composing(p) = e.machine.state else { Issue.record("\(e.machine.state)"); return }
        e.fireTimer()
        #expect(e.machine.state == .idle)
        #expect(e.log.contains(.endSession(.failed)))
        #expect(e.send(.composed(pictureID: p)) == [
            .log(.warning, "picture \(p) composed after its session ended (compose deadline passed): "
                 + "saved, not reviewed or printed (photoboothctl test-print FILE prints it)")])
        #expect(e.machine.state == .idle)
    }

    @Test("print.mode = press in review of a series prints the picture once; a long press skips it")
    func pressPrintOfPicture() {
        var d = runSeries(config(shots: 2, print: .press))
        guard case let .review(picture) = d.machine.state else { Issue.record("\(d.machine.state)"); return }
        #expect(!d.log.contains { if case .print = $0 { true } else { false } })
        let out = d.press(otherPress)
        #expect(out.first == .print(pictureID: picture))
        #expect(d.send(.longPress(id: otherPress)).first == .skipPrint(pictureID: picture))
    }
}
