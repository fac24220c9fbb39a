import BoothCore

// Shared pieces of the state-machine tests: the settings the table runs with, the starting
// states (each reached by driving a fresh machine through events from `start()`), the
// placeholders the table uses for path-dependent tokens and capture ids, and the kinds of
// states and events the coverage test enumerates.

// MARK: Settings

/// The settings of the table. Every duration is distinct, so a `startTimer` names which timer it is.
let tableConfig = CoreConfig(previewMilliseconds: 2000, previewTimeoutMilliseconds: 20_000,
                             countdownSeconds: 3, reviewMilliseconds: 4000,
                             captureTimeoutMilliseconds: 1500, idleStopMilliseconds: 60_000)

/// `session.preview = off`: the preview waits for a press and times out after `session.preview_timeout`.
let previewOffConfig = CoreConfig(previewMilliseconds: nil, previewTimeoutMilliseconds: 20_000,
                                  countdownSeconds: 3, reviewMilliseconds: 4000,
                                  captureTimeoutMilliseconds: 1500, idleStopMilliseconds: 60_000)

/// `session.preview = 0s`, `session.countdown = 0`: the press itself is the trigger.
let instantConfig = CoreConfig(previewMilliseconds: 0, previewTimeoutMilliseconds: 20_000,
                               countdownSeconds: 0, reviewMilliseconds: 4000,
                               captureTimeoutMilliseconds: 1500, idleStopMilliseconds: 60_000)

/// `session.preview = 0s`, `session.countdown = 3`: the press starts the countdown at once.
let noPreviewConfig = CoreConfig(previewMilliseconds: 0, previewTimeoutMilliseconds: 20_000,
                                 countdownSeconds: 3, reviewMilliseconds: 4000,
                                 captureTimeoutMilliseconds: 1500, idleStopMilliseconds: 60_000)

/// `session.preview = 2s`, `session.countdown = 0`: the end of the preview is the trigger.
let noCountdownConfig = CoreConfig(previewMilliseconds: 2000, previewTimeoutMilliseconds: 20_000,
                                   countdownSeconds: 0, reviewMilliseconds: 4000,
                                   captureTimeoutMilliseconds: 1500, idleStopMilliseconds: 60_000)

/// The settings a reload brings in (every value differs from `tableConfig`).
let reloadedConfig = CoreConfig(previewMilliseconds: 2500, previewTimeoutMilliseconds: 25_000,
                                countdownSeconds: 5, reviewMilliseconds: 6000,
                                captureTimeoutMilliseconds: 2500, idleStopMilliseconds: 90_000)

/// `print.mode = auto`: every picture is printed when its review starts.
let autoPrintConfig: CoreConfig = { var c = tableConfig; c.printMode = .auto; return c }()
/// `print.mode = press`: a press during review prints the picture.
let pressPrintConfig: CoreConfig = { var c = tableConfig; c.printMode = .press; return c }()
/// `session.shots = 3`, `session.between_shots = 2.5s` (distinct from every other duration).
let multiConfig: CoreConfig = { var c = tableConfig; c.shots = 3; c.betweenShotsMilliseconds = 2500; return c }()
/// As `multiConfig`, with `session.cancelled_captures = delete`.
let multiDeleteConfig: CoreConfig = { var c = multiConfig; c.cancelledCaptures = .delete; return c }()
/// As `multiConfig`, with `print.mode = auto`.
let multiAutoPrintConfig: CoreConfig = { var c = multiConfig; c.printMode = .auto; return c }()
/// One shot, composed (the runtime has a composer).
let singleComposedConfig: CoreConfig = { var c = tableConfig; c.composesSingleShot = true; return c }()

// MARK: Fixed inputs

/// The instant of every event in the table (100 s on CLOCK_MONOTONIC); the driving before it happens earlier.
let T = MonotonicInstant(nanoseconds: 100_000_000_000)
/// The id of the press that started the session in every starting state with a session.
let sessionPress: UInt64 = 1
/// A different, later press.
let otherPress: UInt64 = 2
/// `--auto-press`'s delay in the table (distinct from every timer).
let autoPressDelay = 300
/// A capture id the machine never issued.
let unknownCapture: UInt64 = 999

let cameraLost = "VIDIOC_DQBUF: ENODEV on /dev/video0"
let cameraLostAgain = "VIDIOC_STREAMON: ENODEV on /dev/video0"
let storageGone = "/photos: not writable (EROFS)"
let lowSpace = "Storage low: 120MB free, 500MB needed"
let otherLowSpace = "Storage low: 80MB free, 500MB needed"
let photoPath = "/photos/2024-06-01/0007-1.jpg"

// MARK: Placeholders

/// Values that depend on the path to the starting state, written symbolically in the table and
/// resolved against the machine just before the event.
enum Placeholder {
    /// The machine's current timer token (the one timer that is live).
    static let token = UInt64.max
    /// The token of the next timer the machine starts.
    static let nextToken = UInt64.max - 1
    /// A token the machine issued earlier and has since replaced (current − 1).
    static let staleToken = UInt64.max - 2
    /// A token the machine has not issued yet (current + 100).
    static let unissuedToken = UInt64.max - 3
    /// The id of the latest capture the machine started (the one in flight in capture, shown in review).
    static let capture = UInt64.max - 10
    /// The id the machine gives its next capture.
    static let nextCapture = UInt64.max - 11
    /// The capture before the latest (in a retry: the first attempt's id).
    static let previousCapture = UInt64.max - 12
    /// The id of the latest picture the machine asked to compose.
    static let picture = UInt64.max - 13
    /// The captures of the session so far (in a `compose` or `deleteCaptures` command).
    static let sessionCaptures: [UInt64] = [UInt64.max - 14]

    /// In strings: the latest capture id.
    static let captureText = "{capture}"
    /// In strings: the capture before the latest.
    static let previousCaptureText = "{previous}"
    /// In strings: the latest picture id.
    static let pictureText = "{picture}"
    /// In strings: the session's captures, `"1, 2"`.
    static let sessionCapturesText = "{captures}"
}

// Short names for the table.
let tok = Placeholder.token
let tok1 = Placeholder.nextToken
let staleTok = Placeholder.staleToken
let unissuedTok = Placeholder.unissuedToken
let cap = Placeholder.capture
let cap1 = Placeholder.nextCapture
let prevCap = Placeholder.previousCapture
let pic = Placeholder.picture
let sessionCaps = Placeholder.sessionCaptures

/// Replaces placeholders with the values they stand for at one point of a run.
struct Resolver {
    /// The machine's timer token before the event.
    var token: UInt64
    /// The highest capture id the machine has issued so far (0 = none).
    var lastCapture: UInt64
    /// The latest picture id the machine asked to compose (0 = none).
    var lastPicture: UInt64 = 0
    /// The session's captures before the event.
    var sessionCaptures: [UInt64] = []

    func id(_ v: UInt64) -> UInt64 {
        switch v {
        case Placeholder.token: token
        case Placeholder.nextToken: token &+ 1
        case Placeholder.staleToken: token &- 1
        case Placeholder.unissuedToken: token &+ 100
        case Placeholder.capture: lastCapture
        case Placeholder.nextCapture: lastCapture &+ 1
        case Placeholder.previousCapture: lastCapture &- 1
        case Placeholder.picture: lastPicture
        default: v
        }
    }

    func ids(_ v: [UInt64]) -> [UInt64] {
        v == Placeholder.sessionCaptures ? sessionCaptures : v.map(id)
    }

    func text(_ s: String) -> String {
        s.replacingAll(Placeholder.captureText, with: String(lastCapture))
            .replacingAll(Placeholder.pictureText, with: String(lastPicture))
            .replacingAll(Placeholder.previousCaptureText, with: String(lastCapture &- 1))
            .replacingAll(Placeholder.sessionCapturesText, with: sessionCaptures.map(String.init).joined(separator: ", "))
    }

    func reasons(_ r: [FaultKind: String]) -> [FaultKind: String] {
        r.mapValues(text)
    }

    func event(_ e: BoothEvent) -> BoothEvent {
        switch e {
        case .press, .storageChecked, .longPress, .reviewAction, .deviceFault, .deviceRecovered, .storageStatus, .reload,
             .liveViewWanted, .shutdown:
            e
        case let .timer(token, at): .timer(token: id(token), at: at)
        case let .captureSucceeded(c): .captureSucceeded(id: id(c))
        case let .captureFailed(c, message, at): .captureFailed(id: id(c), message: message, at: at)
        case let .saved(c, path): .saved(captureID: id(c), path: path)
        case let .saveFailed(c, noSpace, message): .saveFailed(captureID: id(c), noSpace: noSpace, message: message)
        case let .composed(p): .composed(pictureID: id(p))
        case let .composeFailed(p, message): .composeFailed(pictureID: id(p), message: message)
        case let .printWaitsForSave(p): .printWaitsForSave(pictureID: id(p))
        }
    }

    func screen(_ s: Screen) -> Screen {
        switch s {
        case .idle, .preview, .countdown, .capture, .betweenShots: s
        case let .review(c): .review(pictureID: id(c))
        case let .fault(r): .fault(reasons: reasons(r))
        }
    }

    func state(_ s: BoothState) -> BoothState {
        switch s {
        case .idle, .preview, .countdown, .stopped, .betweenShots: s
        case let .composing(p): .composing(pictureID: id(p))
        case let .capture(c, attempt): .capture(id: id(c), attempt: attempt)
        case let .review(c): .review(pictureID: id(c))
        case let .fault(r): .fault(reasons: reasons(r))
        }
    }

    func command(_ c: BoothCommand) -> BoothCommand {
        switch c {
        case .startStream, .stopStream, .prepareStill, .setLED, .retry, .applyReload, .beginSession, .endSession, .exit,
             .checkStorage, .pressLater: c
        case let .show(s): .show(screen(s))
        case let .startTimer(t, ms): .startTimer(token: id(t), milliseconds: ms)
        case let .capture(i, trigger): .capture(id: id(i), trigger: trigger)
        case let .save(i): .save(captureID: id(i))
        case let .keepForSession(i): .keepForSession(captureID: id(i))
        case let .printSaved(i, path): .printSaved(pictureID: id(i), path: path)
        case let .print(i): .print(pictureID: id(i))
        case let .skipPrint(i): .skipPrint(pictureID: id(i))
        case let .compose(p, c): .compose(pictureID: id(p), captures: ids(c))
        case let .deleteCaptures(c): .deleteCaptures(ids(c))
        case let .log(p, s): .log(p, text(s))
        }
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement` (no Foundation in these tests).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        out += rest
        return out
    }
}

// MARK: A machine being driven

extension BoothMachine {
    /// Press `id` at `at`, with the storage check the machine asks for in idle answered at once, as the
    /// runtime does: `refusal` (default: the free space as the machine last heard it) and `fault` (default:
    /// the media fine). The commands of the press and of its answer, without the question.
    mutating func pressAnswered(id: UInt64, at: MonotonicInstant, refusal: String?? = .none,
                                fault: String? = nil) -> [BoothCommand] {
        let asked = handle(.press(id: id, at: at))
        guard asked == [.checkStorage(pressID: id, at: at)] else { return asked }
        return handle(.storageChecked(pressID: id, at: at, refusal: refusal ?? storageRefusal, fault: fault))
    }
}

/// A machine plus what the tests need to know about its run so far.
struct Drive {
    var machine: BoothMachine
    /// The highest capture id seen in a `capture` command (0 = none).
    var lastCapture: UInt64 = 0
    /// The latest picture id seen in a `compose` command (0 = none).
    var lastPicture: UInt64 = 0
    /// Every command the machine returned, in order.
    var log: [BoothCommand] = []
    /// The clock of the driving: 1 s per step, well before `T`.
    var now = MonotonicInstant(nanoseconds: 1_000_000_000)

    init(_ config: CoreConfig, autoPressMilliseconds: Int? = nil) {
        machine = BoothMachine(config: config, autoPressMilliseconds: autoPressMilliseconds)
        record(machine.start())
    }

    mutating func record(_ commands: [BoothCommand]) {
        log += commands
        for case let .capture(id, _) in commands { lastCapture = max(lastCapture, id) }
        for case let .compose(id, _) in commands { lastPicture = id }
    }

    @discardableResult
    mutating func send(_ event: BoothEvent) -> [BoothCommand] {
        let out = machine.handle(event)
        record(out)
        return out
    }

    mutating func tick() -> MonotonicInstant {
        now = now.adding(milliseconds: 1000)
        return now
    }

    /// Fires the live timer.
    @discardableResult
    mutating func fireTimer() -> [BoothCommand] {
        let at = tick()
        return send(.timer(token: machine.timerToken, at: at))
    }

    /// A press as the runtime feeds it: in idle the machine asks for the storage check and the runtime
    /// answers at once (here: the free space as the machine last heard it, the media fine). Returns the
    /// commands of the press and of its answer, without the question.
    @discardableResult
    mutating func press(_ id: UInt64) -> [BoothCommand] {
        let at = tick()
        let out = machine.pressAnswered(id: id, at: at)
        record(out)
        return out
    }

    var resolver: Resolver {
        Resolver(token: machine.timerToken, lastCapture: lastCapture, lastPicture: lastPicture,
                 sessionCaptures: machine.sessionCaptures)
    }
}

// MARK: Starting states

/// Every starting state of the table, each reached from `start()` by real events.
enum Start: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Idle after `start()`, stream running.
    case idle
    /// Idle after the idle timer stopped the stream.
    case idleStreamStopped
    /// Idle with sessions refused for low free space.
    case idleRefused
    /// Idle after a completed session (review ended); capture 1 was taken.
    case idleAfterSession
    /// Idle with `session.preview = 0s`, `session.countdown = 0`.
    case idleInstant
    /// Idle with `session.preview = 0s`, `session.countdown = 3`.
    case idleNoPreview
    /// Idle with `session.preview = off`.
    case idlePreviewOff
    /// Preview (2 s), started by press 1.
    case preview
    /// Preview with `session.preview = off`, started by press 1.
    case previewOff
    /// Preview with `session.countdown = 0`.
    case previewNoCountdown
    /// Preview with a reload waiting.
    case previewReloadPending
    /// Countdown at 3, reached by the preview timer (press 1 started the session).
    case countdown3
    /// Countdown at 3, reached at once from idle by press 1 (`session.preview = 0s`).
    case countdownFromPress
    /// Countdown at 2.
    case countdown2
    /// Countdown at 1.
    case countdown1
    /// Countdown with a reload waiting.
    case countdownReloadPending
    /// Capture, first attempt (id 1).
    case capture1
    /// Capture, second attempt after the first failed (id 2; id 1 is stale).
    case capture2
    /// Capture, second attempt, with a reload waiting.
    case capture2ReloadPending
    /// Review of capture 1.
    case review
    /// Review with a camera fault deferred to its end.
    case reviewDeferredFault
    /// Review whose deferred camera fault was recovered before its end.
    case reviewDeferredRecovered
    /// Review whose save failed with ENOSPC (a storage fault deferred to its end).
    case reviewSaveFailed
    /// Review with a reload waiting.
    case reviewReloadPending
    /// Review with a deferred fault and a reload waiting.
    case reviewDeferredFaultReloadPending
    /// Capture (id 1) with `print.mode = auto`.
    case capture1AutoPrint
    /// Review of capture 1 with `print.mode = auto` (its print requested at the review's start).
    case reviewAutoPrint
    /// Review of capture 1 with `print.mode = press`, nothing pressed yet.
    case reviewPressPrint
    /// Review with `print.mode = press` after a press requested the print.
    case reviewPressPrintRequested
    /// Review with `print.mode = press` after a long press skipped printing.
    case reviewPressPrintSkipped
    /// As `reviewAutoPrint`, the runtime having answered the print: the bytes are gone, it waits for the save.
    case reviewPrintAwaitingSave
    /// Three shots: capture of shot 1 (id 1).
    case captureMulti1
    /// Three shots: between shots 1 and 2 (capture 1 taken).
    case betweenShots2
    /// As `betweenShots2`, with `session.cancelled_captures = delete`.
    case betweenShots2Delete
    /// As `betweenShots2`, with a reload waiting.
    case betweenShotsReloadPending
    /// Three shots: countdown at 3 before shot 2.
    case countdownShot2
    /// As `countdownShot2`, with `session.cancelled_captures = delete`.
    case countdownShot2Delete
    /// Three shots: capture of shot 2 (id 2).
    case captureShot2
    /// Three shots: shot 2's second attempt (id 3) after the first failed.
    case captureShot2Retry
    /// Three shots: capture of the last shot (id 3; captures 1 and 2 taken).
    case captureShot3
    /// Three shots taken (1, 2, 3): composing picture 4.
    case composing
    /// As `composing`, with `print.mode = auto`.
    case composingAutoPrint
    /// As `composing`, with a camera fault deferred to the review's end.
    case composingDeferredFault
    /// Review of picture 4, composed from captures 1–3.
    case reviewPicture
    /// Idle after picture 4's review ended, its `saved` not arrived yet.
    case idleAfterPicture
    /// One shot with a composer: capture 1.
    case captureSingleComposed
    /// One shot with a composer: composing picture 2 from capture 1.
    case composingSingle
    /// Fault with one reason (camera), stream stopped.
    case fault
    /// Fault with two reasons (camera, storage).
    case fault2
    /// Fault (camera) while free space is low.
    case faultRefused
    /// Fault after two retries, each answered by the camera failing again (the live timer is 4 s, the next 8 s).
    case faultBackedOff
    /// Stopped by `shutdown`.
    case stopped
    /// Idle with `--auto-press` (300 ms) after `start()`: the automatic press is on its way.
    case idleAutoPress
    /// Review of capture 1 with `--auto-press`, the session started by the automatic press.
    case reviewWithAutoPress
    /// Fault (camera) with `--auto-press`, the automatic press having arrived (and been ignored) in fault.
    case faultAutoPressArrived

    var description: String { rawValue }

    /// Drives a fresh machine to this state.
    func reach() -> Drive {
        switch self {
        case .idle:
            return Drive(tableConfig)
        case .idleStreamStopped:
            var d = Drive(tableConfig)
            d.fireTimer()
            return d
        case .idleRefused:
            var d = Drive(tableConfig)
            d.send(.storageStatus(refusal: lowSpace))
            return d
        case .idleAfterSession:
            var d = Start.review.reach()
            d.fireTimer()
            return d
        case .idleInstant:
            return Drive(instantConfig)
        case .idleNoPreview:
            return Drive(noPreviewConfig)
        case .idlePreviewOff:
            return Drive(previewOffConfig)
        case .preview:
            var d = Drive(tableConfig)
            d.press(sessionPress)
            return d
        case .previewOff:
            var d = Drive(previewOffConfig)
            d.press(sessionPress)
            return d
        case .previewNoCountdown:
            var d = Drive(noCountdownConfig)
            d.press(sessionPress)
            return d
        case .previewReloadPending:
            var d = Start.preview.reach()
            d.send(.reload(reloadedConfig))
            return d
        case .countdown3:
            var d = Start.preview.reach()
            d.fireTimer()
            return d
        case .countdownFromPress:
            var d = Drive(noPreviewConfig)
            d.press(sessionPress)
            return d
        case .countdown2:
            var d = Start.countdown3.reach()
            d.fireTimer()
            return d
        case .countdown1:
            var d = Start.countdown2.reach()
            d.fireTimer()
            return d
        case .countdownReloadPending:
            var d = Start.countdown3.reach()
            d.send(.reload(reloadedConfig))
            return d
        case .capture1:
            var d = Start.countdown1.reach()
            d.fireTimer()
            return d
        case .capture2:
            var d = Start.capture1.reach()
            let at = d.tick()
            d.send(.captureFailed(id: d.lastCapture, message: "VIDIOC_DQBUF: EIO", at: at))
            return d
        case .capture2ReloadPending:
            var d = Start.capture2.reach()
            d.send(.reload(reloadedConfig))
            return d
        case .review:
            var d = Start.capture1.reach()
            d.send(.captureSucceeded(id: d.lastCapture))
            return d
        case .reviewDeferredFault:
            var d = Start.review.reach()
            d.send(.deviceFault(.camera, message: cameraLost))
            return d
        case .reviewDeferredRecovered:
            var d = Start.reviewDeferredFault.reach()
            d.send(.deviceRecovered(.camera))
            return d
        case .reviewSaveFailed:
            var d = Start.review.reach()
            d.send(.saveFailed(captureID: d.lastCapture, noSpace: true, message: "No space left on device"))
            return d
        case .reviewReloadPending:
            var d = Start.review.reach()
            d.send(.reload(reloadedConfig))
            return d
        case .reviewDeferredFaultReloadPending:
            var d = Start.reviewDeferredFault.reach()
            d.send(.reload(reloadedConfig))
            return d
        case .capture1AutoPrint:
            return Start.captureWith(autoPrintConfig)
        case .reviewAutoPrint:
            var d = Start.capture1AutoPrint.reach()
            d.send(.captureSucceeded(id: d.lastCapture))
            return d
        case .reviewPressPrint:
            var d = Start.captureWith(pressPrintConfig)
            d.send(.captureSucceeded(id: d.lastCapture))
            return d
        case .reviewPressPrintRequested:
            var d = Start.reviewPressPrint.reach()
            d.press(otherPress)
            return d
        case .reviewPressPrintSkipped:
            var d = Start.reviewPressPrint.reach()
            d.send(.longPress(id: otherPress))
            return d
        case .reviewPrintAwaitingSave:
            var d = Start.reviewAutoPrint.reach()
            d.send(.printWaitsForSave(pictureID: d.lastCapture))
            return d
        case .captureMulti1:
            return Start.captureWith(multiConfig)
        case .betweenShots2:
            return Start.series(multiConfig, shotsTaken: 1)
        case .betweenShots2Delete:
            return Start.series(multiDeleteConfig, shotsTaken: 1)
        case .betweenShotsReloadPending:
            var d = Start.betweenShots2.reach()
            d.send(.reload(reloadedConfig))
            return d
        case .countdownShot2:
            var d = Start.betweenShots2.reach()
            d.fireTimer()
            return d
        case .countdownShot2Delete:
            var d = Start.betweenShots2Delete.reach()
            d.fireTimer()
            return d
        case .captureShot2:
            var d = Start.countdownShot2.reach()
            for _ in 0..<3 { d.fireTimer() }
            return d
        case .captureShot2Retry:
            var d = Start.captureShot2.reach()
            let at = d.tick()
            d.send(.captureFailed(id: d.lastCapture, message: "VIDIOC_DQBUF: EIO", at: at))
            return d
        case .captureShot3:
            var d = Start.series(multiConfig, shotsTaken: 2)
            for _ in 0..<4 { d.fireTimer() }
            return d
        case .composing:
            return Start.series(multiConfig, shotsTaken: 3)
        case .composingAutoPrint:
            return Start.series(multiAutoPrintConfig, shotsTaken: 3)
        case .composingDeferredFault:
            var d = Start.composing.reach()
            d.send(.deviceFault(.camera, message: cameraLost))
            return d
        case .reviewPicture:
            var d = Start.composing.reach()
            d.send(.composed(pictureID: d.lastPicture))
            return d
        case .idleAfterPicture:
            var d = Start.reviewPicture.reach()
            d.fireTimer()
            return d
        case .captureSingleComposed:
            return Start.captureWith(singleComposedConfig)
        case .composingSingle:
            return Start.series(singleComposedConfig, shotsTaken: 1)
        case .fault:
            var d = Drive(tableConfig)
            d.send(.deviceFault(.camera, message: cameraLost))
            return d
        case .fault2:
            var d = Start.fault.reach()
            d.send(.deviceFault(.storage, message: storageGone))
            return d
        case .faultRefused:
            var d = Start.fault.reach()
            d.send(.storageStatus(refusal: lowSpace))
            return d
        case .faultBackedOff:
            var d = Start.fault.reach()
            d.fireTimer()
            d.send(.deviceFault(.camera, message: cameraLost))
            d.fireTimer()
            d.send(.deviceFault(.camera, message: cameraLost))
            return d
        case .stopped:
            var d = Drive(tableConfig)
            d.send(.shutdown)
            return d
        case .idleAutoPress:
            return Drive(tableConfig, autoPressMilliseconds: autoPressDelay)
        case .reviewWithAutoPress:
            var d = Drive(tableConfig, autoPressMilliseconds: autoPressDelay)
            d.press(sessionPress)
            for _ in 0..<4 { d.fireTimer() }
            d.send(.captureSucceeded(id: d.lastCapture))
            return d
        case .faultAutoPressArrived:
            var d = Drive(tableConfig, autoPressMilliseconds: autoPressDelay)
            d.send(.deviceFault(.camera, message: cameraLost))
            d.press(otherPress)
            return d
        }
    }

    /// A session of `config` with `shotsTaken` captures taken (each after its countdown), stopped
    /// right after the last one succeeded: between shots, or composing once every shot is taken.
    static func series(_ config: CoreConfig, shotsTaken: Int) -> Drive {
        var d = Start.captureWith(config)
        d.send(.captureSucceeded(id: d.lastCapture))
        for _ in 1..<shotsTaken {
            for _ in 0..<4 { d.fireTimer() }       // between shots, then the countdown 3-2-1
            d.send(.captureSucceeded(id: d.lastCapture))
        }
        return d
    }

    /// Capture 1 reached through preview and countdown with `config`.
    static func captureWith(_ config: CoreConfig) -> Drive {
        var d = Drive(config)
        d.press(sessionPress)
        for _ in 0..<4 { d.fireTimer() }
        return d
    }

    /// The state this start is named for, checked before each row runs.
    var expectedState: BoothState {
        switch self {
        case .idle, .idleStreamStopped, .idleRefused, .idleAfterSession, .idleInstant, .idleNoPreview,
             .idlePreviewOff: .idle
        case .preview, .previewOff, .previewNoCountdown, .previewReloadPending: .preview
        case .countdown3, .countdownFromPress, .countdownReloadPending: .countdown(remaining: 3)
        case .countdown2: .countdown(remaining: 2)
        case .countdown1: .countdown(remaining: 1)
        case .capture1, .capture1AutoPrint: .capture(id: 1, attempt: 1)
        case .capture2, .capture2ReloadPending: .capture(id: 2, attempt: 2)
        case .review, .reviewDeferredFault, .reviewDeferredRecovered, .reviewSaveFailed, .reviewReloadPending,
             .reviewDeferredFaultReloadPending, .reviewAutoPrint, .reviewPressPrint, .reviewPressPrintRequested,
             .reviewPressPrintSkipped, .reviewPrintAwaitingSave: .review(pictureID: 1)
        case .captureMulti1, .captureSingleComposed: .capture(id: 1, attempt: 1)
        case .betweenShots2, .betweenShots2Delete, .betweenShotsReloadPending: .betweenShots(next: 2)
        case .countdownShot2, .countdownShot2Delete: .countdown(remaining: 3)
        case .captureShot2: .capture(id: 2, attempt: 1)
        case .captureShot2Retry: .capture(id: 3, attempt: 2)
        case .captureShot3: .capture(id: 3, attempt: 1)
        case .composing, .composingAutoPrint, .composingDeferredFault: .composing(pictureID: 4)
        case .reviewPicture: .review(pictureID: 4)
        case .composingSingle: .composing(pictureID: 2)
        case .fault, .faultRefused, .faultBackedOff: .fault(reasons: [.camera: cameraLost])
        case .fault2: .fault(reasons: [.camera: cameraLost, .storage: storageGone])
        case .stopped: .stopped
        case .idleAutoPress, .idleAfterPicture: .idle
        case .reviewWithAutoPress: .review(pictureID: 1)
        case .faultAutoPressArrived: .fault(reasons: [.camera: cameraLost])
        }
    }
}

// MARK: Kinds, for the coverage test

/// The cases of ``BoothState`` without their payloads. The switch has no `default:`, so a new
/// state does not compile here until it gets a kind (and then the coverage test asks for its rows).
enum StateKind: String, CaseIterable, Sendable {
    case idle, preview, countdown, capture, betweenShots, composing, review, fault, stopped

    init(_ s: BoothState) {
        switch s {
        case .idle: self = .idle
        case .preview: self = .preview
        case .countdown: self = .countdown
        case .capture: self = .capture
        case .betweenShots: self = .betweenShots
        case .composing: self = .composing
        case .review: self = .review
        case .fault: self = .fault
        case .stopped: self = .stopped
        }
    }
}

/// The cases of ``BoothEvent`` without their payloads; same rule as ``StateKind``.
enum EventKind: String, CaseIterable, Sendable {
    case press, longPress, timer, captureSucceeded, captureFailed, saved, saveFailed
    case deviceFault, deviceRecovered, storageStatus, reload, composed, composeFailed, liveViewWanted, shutdown
    case storageChecked, printWaitsForSave, reviewAction

    init(_ e: BoothEvent) {
        switch e {
        case .press: self = .press
        case .storageChecked: self = .storageChecked
        case .printWaitsForSave: self = .printWaitsForSave
        case .longPress: self = .longPress
        case .reviewAction: self = .reviewAction
        case .timer: self = .timer
        case .captureSucceeded: self = .captureSucceeded
        case .captureFailed: self = .captureFailed
        case .saved: self = .saved
        case .saveFailed: self = .saveFailed
        case .deviceFault: self = .deviceFault
        case .deviceRecovered: self = .deviceRecovered
        case .storageStatus: self = .storageStatus
        case .reload: self = .reload
        case .composed: self = .composed
        case .composeFailed: self = .composeFailed
        case .liveViewWanted: self = .liveViewWanted
        case .shutdown: self = .shutdown
        }
    }
}
