/// The booth's state machine: a pure function from (state, event) to (state, commands).
///
/// It does no I/O and reads no clock: time arrives as ``BoothEvent/timer(token:at:)`` and
/// press timestamps, effects leave as ``BoothCommand`` values for the runtime to run.
/// Timers carry a token; every new timer gets a fresh one, so a timer that fires after
/// the state moved on is stale and ignored.
///
/// | state | press | long press | timer | capture ok / failed, composed | device fault |
/// |---|---|---|---|---|---|
/// | idle | ask for the storage check; its answer: storage OK → preview, low → stay, screen says why, media gone → fault | ignore | stop the stream | – | fault |
/// | idle, live view wanted (snapshot) | start the stream if stopped; the idle timer starts again | | | | |
/// | preview | → countdown | cancel → idle | preview elapsed → countdown (preview off: timeout → idle) | – | fault |
/// | countdown | ignore | cancel → idle | tick; at 0 → capture | – | fault |
/// | capture | ignore | ignore | deadline (also when the camera stops delivering) → failed | ok → save; more shots → between shots; last → compose (one shot without composer: print if auto, review); failed → retry once, then idle "Sorry, try again" | fault |
/// | between shots | → countdown | cancel → idle | → countdown of the next shot | – | fault |
/// | composing | ignore | ignore | deadline → idle, session failed | composed → (print, mode auto) review; failed → idle, session failed | deferred to review's end |
/// | review | print (mode press, once) | skip printing (mode auto/press; not the session's own press) | → idle (or the deferred fault) | – | deferred to review's end |
/// | fault | ignore, logged | ignore | retry with backoff 1 s → 30 s | – | add reason; all cleared → idle |
///
/// A review key (``BoothEvent/reviewAction(_:)``, `button.print_key` / `button.skip_key`) acts in
/// review only: print requests the picture's print once (print.mode auto or press; auto has already
/// asked for it), skip skips its printing (as a long press); in every other state it is ignored,
/// logged, and it never starts a session.
///
/// A capture that succeeds after its session moved on is saved anyway (a photo a guest posed for is
/// never dropped); a picture composed after its session ended is logged (its save is the composer's).
/// A print whose picture's bytes were gone (``BoothEvent/printWaitsForSave(pictureID:)``) is made from
/// the file when its `saved` arrives, in any state, unless its printing was skipped.
/// With `--auto-press` (``autoPressMilliseconds``), every event that leaves the booth idle asks for
/// one automatic press (``BoothCommand/pressLater(milliseconds:)``) unless one is on its way.
///
/// A long press never cancels the session its own press started. A cancelled series prints
/// nothing; its captures are kept or deleted (`session.cancelled_captures`). A series that fails
/// (capture failed twice, a fault, composing failed) keeps the captures already taken.
public struct BoothMachine: Sendable {
    /// The current state.
    public private(set) var state: BoothState = .idle
    /// The settings in force.
    public private(set) var config: CoreConfig
    /// Whether the machine believes the camera stream is running (it issued `startStream` last).
    public private(set) var streaming = false
    /// Why sessions are refused in idle (low free space), or nil.
    public private(set) var storageRefusal: String?
    /// Faults that arrived during review, entered when review ends.
    public private(set) var deferredFaults: [FaultKind: String] = [:]
    /// A reload accepted outside idle/fault, applied on the next entry into idle or fault.
    public private(set) var pendingReload: CoreConfig?
    /// `--auto-press` (demo, soak tests): whenever the booth is idle after an event, it presses by itself
    /// this long later (``BoothCommand/pressLater(milliseconds:)``); nil: never. Not a setting a reload changes.
    public let autoPressMilliseconds: Int?
    /// An automatic press was asked for and no press has arrived since.
    public private(set) var autoPressPending = false
    /// Pictures whose print waits for their `saved` (``BoothEvent/printWaitsForSave(pictureID:)``).
    public private(set) var printsAwaitingSave: Set<UInt64> = []
    /// Composed pictures asked for (``BoothCommand/compose(pictureID:captures:)``) whose `saved` has
    /// not arrived, so a save that comes after the review ended is still logged as the picture's (the
    /// newest 64; a compose that failed is dropped).
    private var unsavedPictures: [UInt64] = []

    /// The token of the one timer that is current; any other token is stale.
    public private(set) var timerToken: UInt64 = 0
    private var nextCaptureID: UInt64 = 1
    /// The shot under way in the session (1-based; the next one in between shots), 0 outside a session.
    public private(set) var shot = 0
    /// The captures of the session so far, in shot order (each answered by `captureSucceeded`).
    public private(set) var sessionCaptures: [UInt64] = []
    /// The id of the press that started the current session; its long press is ignored.
    private var sessionPressID: UInt64?
    /// What happened to printing the picture in review: nothing yet, requested, or skipped.
    public private(set) var reviewPrint = ReviewPrint.none

    /// Printing of the picture in review.
    public enum ReviewPrint: Equatable, Sendable {
        case none, requested, skipped
    }
    /// The delay before the next fault retry, doubling from 1 s up to 30 s.
    public private(set) var retryDelayMilliseconds = BoothMachine.firstRetryMilliseconds

    /// First fault retry delay (1 s).
    public static let firstRetryMilliseconds = 1000
    /// Longest fault retry delay (30 s).
    public static let maxRetryMilliseconds = 30_000
    /// Text on the idle screen after a capture failed twice.
    public static let captureFailedNotice = "Sorry, try again"
    /// Text on the idle screen when the picture could not be composed (the captures are saved).
    public static let composeFailedNotice = "Sorry, no picture this time"

    /// Shots per session in force (`session.shots`, clamped to 1…4).
    public var shots: Int { min(max(config.shots, 1), 4) }

    /// Whether a ``BoothEvent/reload(_:)`` now applies at once (idle, fault) rather than when the
    /// session under way ends; stopped: never.
    public var appliesReloadNow: Bool {
        switch state {
        case .idle, .fault: true
        case .preview, .countdown, .capture, .betweenShots, .composing, .review, .stopped: false
        }
    }

    /// - Parameter autoPressMilliseconds: see ``autoPressMilliseconds``.
    public init(config: CoreConfig, autoPressMilliseconds: Int? = nil) {
        self.config = config
        self.autoPressMilliseconds = autoPressMilliseconds
    }

    /// The commands that bring the booth up: stream, idle screen, LED, idle timer (and the first
    /// automatic press, with `--auto-press`).
    public mutating func start() -> [BoothCommand] {
        var out: [BoothCommand] = []
        enterIdle(notice: nil, into: &out)
        autoPressIfIdle(into: &out)
        return out
    }

    /// Handles one event: updates the state and returns the commands to run, in order.
    public mutating func handle(_ event: BoothEvent) -> [BoothCommand] {
        var out: [BoothCommand] = []
        if case .stopped = state { return out }
        decide(event, into: &out)
        autoPressIfIdle(into: &out)
        return out
    }

    /// With `--auto-press`: idle, and no automatic press on its way, nor a question asked for a press
    /// (``BoothCommand/checkStorage(pressID:at:)``): ask for one.
    private mutating func autoPressIfIdle(into out: inout [BoothCommand]) {
        guard let ms = autoPressMilliseconds, case .idle = state, !autoPressPending,
              !out.contains(where: { if case .checkStorage = $0 { true } else { false } }) else { return }
        autoPressPending = true
        out.append(.pressLater(milliseconds: ms))
    }

    private mutating func decide(_ event: BoothEvent, into out: inout [BoothCommand]) {
        switch event {
        case let .press(id, at):
            autoPressPending = false
            onPress(id: id, at: at, storageChecked: false, into: &out)
        case let .storageChecked(pressID, at, refusal, fault):
            onStorageStatus(refusal, into: &out)
            if let fault { onDeviceFault(.storage, message: fault, into: &out) }
            onPress(id: pressID, at: at, storageChecked: true, into: &out)
        case let .longPress(id):
            onLongPress(id: id, into: &out)
        case let .reviewAction(action):
            onReviewAction(action, into: &out)
        case let .timer(token, at):
            guard token == timerToken else { return }
            onTimer(at: at, into: &out)
        case let .captureSucceeded(id):
            guard case .capture(id, _) = state else {
                // The session moved on (a fault, the deadline) after the frame was taken: a photo a
                // guest posed for is saved all the same, never dropped.
                out += [.log(.notice, "capture \(id) arrived after its session moved on; saving it anyway"),
                        .save(captureID: id)]
                return
            }
            onCaptureSucceeded(id, into: &out)
        case let .composed(pictureID):
            guard case .composing(pictureID) = state else {
                // The compose deadline passed first: the session ended failed; the composer saves the picture.
                out.append(.log(.warning, "picture \(pictureID) composed after its session ended (compose deadline passed): "
                                + "saved, not reviewed or printed (photoboothctl test-print FILE prints it)"))
                return
            }
            out.append(.log(.info, "the session's picture composed from captures \(idList(sessionCaptures))"))
            enterReview(pictureID: pictureID, into: &out)
        case let .composeFailed(pictureID, message):
            unsavedPictures.removeAll { $0 == pictureID }
            guard case .composing(pictureID) = state else { return }
            out += [.log(.error, "the session's picture not composed: \(message)"), .endSession(.failed)]
            leaveSession(notice: BoothMachine.composeFailedNotice, into: &out)
        case let .captureFailed(id, message, at):
            guard case let .capture(current, attempt) = state, current == id else { return }
            out.append(.log(.warning, "capture \(id) failed: \(message)"))
            captureAttemptFailed(attempt: attempt, at: at, into: &out)
        case let .saved(captureID, path):
            let inSession = (state == .composing(pictureID: captureID) || state == .review(pictureID: captureID))
                && !sessionCaptures.contains(captureID)
            let composed = unsavedPictures.contains(captureID)
            unsavedPictures.removeAll { $0 == captureID }
            let name = inSession ? "the session's picture" : composed ? "picture \(captureID)" : "capture \(captureID)"
            out.append(.log(.debug, "\(name) saved to \(path)"))
            if printsAwaitingSave.remove(captureID) != nil {
                out.append(.printSaved(pictureID: captureID, path: path))
            }
        case let .printWaitsForSave(pictureID):
            // Only the print the machine asked for: the picture in review, its print requested.
            guard case .review(pictureID) = state, reviewPrint == .requested else { return }
            printsAwaitingSave.insert(pictureID)
        case let .saveFailed(captureID, noSpace, message):
            let reason = noSpace ? "storage full while saving capture \(captureID): \(message)"
                                 : "saving capture \(captureID) failed: \(message)"
            onDeviceFault(.storage, message: reason, into: &out)
        case let .deviceFault(kind, message):
            onDeviceFault(kind, message: message, into: &out)
        case let .deviceRecovered(kind):
            onDeviceRecovered(kind, into: &out)
        case let .storageStatus(refusal):
            onStorageStatus(refusal, into: &out)
        case .liveViewWanted:
            guard case .idle = state else { return }
            if !streaming {
                streaming = true
                out.append(.startStream)
            }
            out.append(.log(.info, "live view asked for: the stream runs, camera.idle_stop counts from now"))
            startTimer(config.idleStopMilliseconds, into: &out)
        case let .reload(newConfig):
            if appliesReloadNow {
                config = newConfig
                pendingReload = nil
                out.append(.applyReload)
            } else {
                pendingReload = newConfig
                out.append(.log(.info, "reload deferred until the session ends"))
            }
        case .shutdown:
            switch state {
            case .preview, .countdown, .capture, .betweenShots, .composing: out.append(.endSession(.cancelled))
            case .review: out.append(.endSession(.completed))
            case .idle, .fault, .stopped: break
            }
            state = .stopped
            timerToken &+= 1
            out.append(.setLED(.off))
            if streaming { out.append(.stopStream); streaming = false }
            out.append(.exit)
        }
    }

    /// How the log names picture `id` (the id is the machine's, not the session's number): the session's
    /// picture, with its capture when one shot is the picture.
    private func pictureName(_ id: UInt64) -> String {
        sessionCaptures.contains(id) ? "the session's picture (capture \(id))" : "the session's picture"
    }

    // MARK: Events

    /// A press; in idle, `storageChecked` says whether the storage was checked for it (else the
    /// machine asks, and the press goes on with the answer).
    private mutating func onPress(id: UInt64, at: MonotonicInstant, storageChecked: Bool, into out: inout [BoothCommand]) {
        switch state {
        case .idle:
            guard storageChecked else {
                // Free space is checked before each session, not only now and then.
                out.append(.checkStorage(pressID: id, at: at))
                return
            }
            if let refusal = storageRefusal {
                out += [.show(.idle(notice: refusal)), .log(.notice, "press refused: \(refusal)")]
                return
            }
            sessionPressID = id
            shot = 1
            sessionCaptures = []
            out.append(.beginSession)
            enterPreview(at: at, into: &out)
        case .preview, .betweenShots:
            enterCountdown(at: at, into: &out)
        case let .review(pictureID) where config.printMode == .press && reviewPrint == .none:
            reviewPrint = .requested
            out += [.print(pictureID: pictureID), .log(.info, "print of \(pictureName(pictureID)) requested by a press")]
        case .countdown, .capture, .composing, .review:
            out.append(.log(.info, "press ignored in \(state.name)"))
        case .fault:
            out.append(.log(.info, "press ignored: booth in fault"))
        case .stopped:
            break
        }
    }

    private mutating func onLongPress(id: UInt64, into out: inout [BoothCommand]) {
        switch state {
        case .preview, .countdown, .betweenShots:
            if id == sessionPressID {
                out.append(.log(.info, "long press of the press that started this session ignored"))
                return
            }
            out += [.endSession(.cancelled), .log(.info, "session cancelled by a long press")]
            if !sessionCaptures.isEmpty {
                switch config.cancelledCaptures {
                case .keep:
                    out.append(.log(.info, "captures \(idList(sessionCaptures)) of the cancelled session kept"))
                case .delete:
                    out += [.deleteCaptures(sessionCaptures),
                            .log(.info, "captures \(idList(sessionCaptures)) of the cancelled session deleted")]
                }
            }
            enterIdle(notice: nil, into: &out)
        case let .review(pictureID) where config.printMode != .off && id != sessionPressID && reviewPrint != .skipped:
            reviewPrint = .skipped
            printsAwaitingSave.remove(pictureID)
            out += [.skipPrint(pictureID: pictureID), .log(.info, "printing of \(pictureName(pictureID)) skipped by a long press")]
        case .idle, .capture, .composing, .review, .fault, .stopped:
            out.append(.log(.info, "long press ignored in \(state.name)"))
        }
    }

    private mutating func onReviewAction(_ action: ReviewAction, into out: inout [BoothCommand]) {
        guard case let .review(pictureID) = state else {
            if case .stopped = state { return }
            out.append(.log(.info, "\(action.rawValue) key ignored in \(state.name): it acts in review only"))
            return
        }
        let name = pictureName(pictureID)
        guard config.printMode != .off else {
            out.append(.log(.info, "\(action.rawValue) key ignored: print.mode is off"))
            return
        }
        switch (action, reviewPrint) {
        case (.print, .none):
            reviewPrint = .requested
            out += [.print(pictureID: pictureID), .log(.info, "print of \(name) requested by the print key")]
        case (.print, .requested):
            out.append(.log(.info, "print key: the print of \(name) is already requested"))
        case (.print, .skipped):
            out.append(.log(.info, "print key ignored: printing of \(name) was skipped"))
        case (.skip, .none), (.skip, .requested):
            reviewPrint = .skipped
            printsAwaitingSave.remove(pictureID)
            out += [.skipPrint(pictureID: pictureID), .log(.info, "printing of \(name) skipped by the skip key")]
        case (.skip, .skipped):
            out.append(.log(.info, "skip key: printing of \(name) is already skipped"))
        }
    }

    private mutating func onTimer(at: MonotonicInstant, into out: inout [BoothCommand]) {
        switch state {
        case .idle:
            if streaming {
                streaming = false
                out += [.stopStream, .log(.info, "stream stopped after idle time")]
            }
        case .preview:
            if config.previewMilliseconds != nil {
                enterCountdown(at: at, into: &out)
            } else {
                out += [.endSession(.cancelled), .log(.info, "preview timed out")]
                enterIdle(notice: nil, into: &out)
            }
        case let .countdown(remaining):
            if remaining <= 1 {
                enterCapture(trigger: at, attempt: 1, into: &out)
            } else {
                state = .countdown(remaining: remaining - 1)
                out.append(.show(.countdown(remaining: remaining - 1, shot: shot, of: shots)))
                startTimer(1000, into: &out)
            }
        case let .capture(id, attempt):
            out.append(.log(.warning, "capture \(id) got no good frame within \(config.captureTimeoutMilliseconds) ms"))
            captureAttemptFailed(attempt: attempt, at: at, into: &out)
        case .betweenShots:
            enterCountdown(at: at, into: &out)
        case .composing:
            out += [.log(.error, "the session's picture not composed within \(config.composeTimeoutMilliseconds) ms"),
                    .endSession(.failed)]
            leaveSession(notice: BoothMachine.composeFailedNotice, into: &out)
        case .review:
            out.append(.endSession(.completed))
            leaveSession(notice: nil, into: &out)
        case let .fault(reasons):
            out.append(.retry(reasons.keys.sorted()))
            retryDelayMilliseconds = min(retryDelayMilliseconds * 2, BoothMachine.maxRetryMilliseconds)
            startTimer(retryDelayMilliseconds, into: &out)
        case .stopped:
            break
        }
    }

    private mutating func onStorageStatus(_ refusal: String?, into out: inout [BoothCommand]) {
        let changed = refusal != storageRefusal
        storageRefusal = refusal
        if changed, case .idle = state {
            // The LED invites a press only when a press would start a session.
            out += [.show(.idle(notice: refusal)), .setLED(refusal == nil ? .steady : .off)]
        }
    }

    private mutating func onDeviceFault(_ kind: FaultKind, message: String, into out: inout [BoothCommand]) {
        // Each reason is logged once: a retry that fails the same way again is a debug line.
        if case let .fault(reasons) = state, reasons[kind] == message {
            out.append(.log(.debug, "fault (\(kind.rawValue)) unchanged after the retry"))
        } else {
            out.append(.log(.error, "fault (\(kind.rawValue)): \(message)"))
        }
        switch state {
        case var .fault(reasons):
            reasons[kind] = message
            state = .fault(reasons: reasons)
            out.append(.show(.fault(reasons: reasons)))
        case .review, .composing:
            deferredFaults[kind] = message
        case .preview, .countdown, .capture, .betweenShots:
            out.append(.endSession(.failed))
            enterFault([kind: message], into: &out)
        case .idle:
            enterFault([kind: message], into: &out)
        case .stopped:
            break
        }
    }

    private mutating func onDeviceRecovered(_ kind: FaultKind, into out: inout [BoothCommand]) {
        deferredFaults[kind] = nil
        guard case var .fault(reasons) = state, reasons[kind] != nil else { return }
        reasons[kind] = nil
        out.append(.log(.notice, "\(kind.rawValue) recovered"))
        if reasons.isEmpty {
            enterIdle(notice: nil, into: &out)
        } else {
            state = .fault(reasons: reasons)
            out.append(.show(.fault(reasons: reasons)))
        }
    }

    // MARK: Entering states

    /// After review, or a series that failed while faults were deferred: idle, or the deferred fault.
    private mutating func leaveSession(notice: String?, into out: inout [BoothCommand]) {
        if deferredFaults.isEmpty {
            enterIdle(notice: notice, into: &out)
        } else {
            let faults = deferredFaults
            deferredFaults = [:]
            enterFault(faults, into: &out)
        }
    }

    private mutating func onCaptureSucceeded(_ id: UInt64, into out: inout [BoothCommand]) {
        sessionCaptures.append(id)
        // Kept for the picture, the review and the print: the save lets the bytes go.
        out.append(.keepForSession(captureID: id))
        if shot < shots {
            out.append(.save(captureID: id))
            shot += 1
            state = .betweenShots(next: shot)
            out += [.show(.betweenShots(next: shot, of: shots)), .setLED(.steady)]
            startTimer(config.betweenShotsMilliseconds, into: &out)
        } else if shots == 1 && !config.composesSingleShot {
            // The capture is the picture: review starts on it at once, as it is taken. Printed
            // before the save so the capture's bytes are still at hand.
            enterReview(pictureID: id, before: [.save(captureID: id)], into: &out)
        } else {
            let pictureID = nextCaptureID
            nextCaptureID &+= 1
            state = .composing(pictureID: pictureID)
            unsavedPictures.append(pictureID)
            if unsavedPictures.count > 64 { unsavedPictures.removeFirst(unsavedPictures.count - 64) }
            out += [.save(captureID: id), .compose(pictureID: pictureID, captures: sessionCaptures)]
            startTimer(config.composeTimeoutMilliseconds, into: &out)
        }
    }

    private mutating func enterReview(pictureID: UInt64, before: [BoothCommand] = [], into out: inout [BoothCommand]) {
        state = .review(pictureID: pictureID)
        reviewPrint = .none
        if config.printMode == .auto {
            reviewPrint = .requested
            out.append(.print(pictureID: pictureID))
        }
        out += before + [.show(.review(pictureID: pictureID)), .setLED(.off)]
        startTimer(config.reviewMilliseconds, into: &out)
    }

    private mutating func enterIdle(notice: String?, into out: inout [BoothCommand]) {
        state = .idle
        sessionPressID = nil
        shot = 0
        sessionCaptures = []
        applyPendingReload(into: &out)
        if !streaming {
            streaming = true
            out.append(.startStream)
        }
        out += [.show(.idle(notice: notice ?? storageRefusal)), .setLED(storageRefusal == nil ? .steady : .off)]
        startTimer(config.idleStopMilliseconds, into: &out)
    }

    private mutating func enterPreview(at: MonotonicInstant, into out: inout [BoothCommand]) {
        state = .preview
        if !streaming {
            streaming = true
            out.append(.startStream)
        }
        out += [.show(.preview), .setLED(.steady)]
        switch config.previewMilliseconds {
        case 0?: enterCountdown(at: at, into: &out)
        case let ms?: startTimer(ms, into: &out)
        case nil: startTimer(config.previewTimeoutMilliseconds, into: &out)
        }
    }

    private mutating func enterCountdown(at: MonotonicInstant, into out: inout [BoothCommand]) {
        guard config.countdownSeconds > 0 else {
            enterCapture(trigger: at, attempt: 1, into: &out)
            return
        }
        state = .countdown(remaining: config.countdownSeconds)
        // The first number: the camera prepares the still now (a DSLR focuses), not at zero.
        out += [.prepareStill, .show(.countdown(remaining: config.countdownSeconds, shot: shot, of: shots)), .setLED(.blink)]
        startTimer(1000, into: &out)
    }

    private mutating func enterCapture(trigger: MonotonicInstant, attempt: Int, into out: inout [BoothCommand]) {
        let id = nextCaptureID
        nextCaptureID &+= 1
        state = .capture(id: id, attempt: attempt)
        out += [.show(.capture), .setLED(.off), .capture(id: id, trigger: trigger)]
        startTimer(config.captureTimeoutMilliseconds, into: &out)
    }

    private mutating func captureAttemptFailed(attempt: Int, at: MonotonicInstant, into out: inout [BoothCommand]) {
        if attempt < 2 {
            enterCapture(trigger: at, attempt: attempt + 1, into: &out)
        } else {
            out += [.endSession(.failed), .log(.warning, "capture failed twice; back to idle")]
            enterIdle(notice: BoothMachine.captureFailedNotice, into: &out)
        }
    }

    private mutating func enterFault(_ reasons: [FaultKind: String], into out: inout [BoothCommand]) {
        state = .fault(reasons: reasons)
        sessionPressID = nil
        shot = 0
        sessionCaptures = []
        applyPendingReload(into: &out)
        if streaming {
            streaming = false
            out.append(.stopStream)
        }
        out += [.show(.fault(reasons: reasons)), .setLED(.fault)]
        retryDelayMilliseconds = BoothMachine.firstRetryMilliseconds
        startTimer(retryDelayMilliseconds, into: &out)
    }

    // MARK: Helpers

    private mutating func startTimer(_ milliseconds: Int, into out: inout [BoothCommand]) {
        timerToken &+= 1
        out.append(.startTimer(token: timerToken, milliseconds: milliseconds))
    }

    private mutating func applyPendingReload(into out: inout [BoothCommand]) {
        guard let reload = pendingReload else { return }
        config = reload
        pendingReload = nil
        out.append(.applyReload)
    }
}

/// `"4"`, `"4, 5, 6"`: capture ids for logs.
func idList(_ ids: [UInt64]) -> String { ids.map(String.init).joined(separator: ", ") }
