import Testing
import BoothCore

// The booth's state machine as a table (issue 2 §3): every (state, event) pair has a row with the
// expected state and the exact commands. Each row starts from a state reached by real events
// from `start()` (see `Start` in MachineTestSupport.swift). `tok`/`tok1`/`staleTok`/`unissuedTok`
// stand for the current, next, an earlier and a not-yet-issued timer token; `cap`/`cap1`/`prevCap`
// and "{capture}" for the latest, the next and the previous capture id.
//
// The runtime asks the machine every (state, event) question: a press in idle only asks for the
// storage check (`checkStorage`), and its answer (`storageChecked`) carries the press on; a capture
// or a picture that arrives after its session moved on is saved or logged by the machine's commands;
// a print whose bytes were gone waits in the machine for its `saved` (`printWaitsForSave`).
//
// Every row checks, besides the exact state and commands:
//  - a `startTimer` leaves its token as the machine's one live token; without one the token is unchanged
//    (except on shutdown, which invalidates every timer);
//  - `streaming` follows the stream commands;
//  - the settings change only with `applyReload`.

/// One row: from `start`, `event` leads to `state` with exactly `commands`.
struct Row: Sendable, CustomTestStringConvertible {
    let start: Start
    let label: String
    let event: BoothEvent
    let state: BoothState
    let commands: [BoothCommand]
    /// The settings in force after the event, when the row is about settings.
    let config: CoreConfig?

    var testDescription: String { "\(start) + \(label)" }
}

func row(_ start: Start, _ label: String, _ event: BoothEvent, _ state: BoothState,
         _ commands: [BoothCommand], config: CoreConfig? = nil) -> Row {
    Row(start: start, label: label, event: event, state: state, commands: commands, config: config)
}

let sorry = BoothMachine.captureFailedNotice
let enospc = "No space left on device"
let fullWhileSaving7 = "storage full while saving capture 7: No space left on device"
let fullWhileSavingLatest = "storage full while saving capture {capture}: No space left on device"

/// A capture that succeeds after its session moved on: saved anyway, never dropped.
func lateCapture(_ id: UInt64) -> [BoothCommand] {
    let text = id == cap ? Placeholder.captureText : id == prevCap ? Placeholder.previousCaptureText : String(id)
    return [.log(.notice, "capture \(text) arrived after its session moved on; saving it anyway"), .save(captureID: id)]
}

/// A picture composed after its session ended (or never asked for): logged; the composer saves it.
func lateComposition(_ id: UInt64) -> [BoothCommand] {
    let text = id == pic ? Placeholder.pictureText : String(id)
    return [.log(.warning, "picture \(text) composed after its session ended (compose deadline passed): "
                 + "saved, not reviewed or printed (photoboothctl test-print FILE prints it)")]
}

enum MachineTable {
    // MARK: idle

    static let idle: [Row] = [
        row(.idle, "the press's storage check answered (fine): → preview (session begins, preview timer)",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .preview,
            [.beginSession, .show(.preview), .setLED(.steady), .startTimer(token: tok1, milliseconds: 2000)]),
        row(.idle, "long press: ignored",
            .longPress(id: sessionPress), .idle,
            [.log(.info, "long press ignored in idle")]),
        row(.idle, "idle timer: the stream stops",
            .timer(token: tok, at: T), .idle,
            [.stopStream, .log(.info, "stream stopped after idle time")]),
        row(.idle, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .idle, []),
        row(.idle, "timer with token current−1: ignored",
            .timer(token: staleTok, at: T), .idle, []),
        row(.idle, "capture ok for an unknown capture: saved anyway (never dropped)",
            .captureSucceeded(id: unknownCapture), .idle, lateCapture(unknownCapture)),
        row(.idle, "capture failed for an unknown capture: ignored",
            .captureFailed(id: unknownCapture, message: "EIO", at: T), .idle, []),
        row(.idle, "saved: logged",
            .saved(captureID: 7, path: photoPath), .idle,
            [.log(.debug, "capture 7 saved to \(photoPath)")]),
        row(.idle, "save failed, ENOSPC → fault(storage)",
            .saveFailed(captureID: 7, noSpace: true, message: enospc),
            .fault(reasons: [.storage: fullWhileSaving7]),
            [.log(.error, "fault (storage): \(fullWhileSaving7)"), .stopStream,
             .show(.fault(reasons: [.storage: fullWhileSaving7])), .setLED(.fault),
             .startTimer(token: tok1, milliseconds: 1000)]),
        row(.idle, "save failed, EIO → fault(storage)",
            .saveFailed(captureID: 7, noSpace: false, message: "EIO"),
            .fault(reasons: [.storage: "saving capture 7 failed: EIO"]),
            [.log(.error, "fault (storage): saving capture 7 failed: EIO"), .stopStream,
             .show(.fault(reasons: [.storage: "saving capture 7 failed: EIO"])), .setLED(.fault),
             .startTimer(token: tok1, milliseconds: 1000)]),
        row(.idle, "camera lost → fault(camera), stream stopped, retry in 1 s",
            .deviceFault(.camera, message: cameraLost), .fault(reasons: [.camera: cameraLost]),
            [.log(.error, "fault (camera): \(cameraLost)"), .stopStream,
             .show(.fault(reasons: [.camera: cameraLost])), .setLED(.fault),
             .startTimer(token: tok1, milliseconds: 1000)]),
        row(.idle, "button stuck → fault(button)",
            .deviceFault(.button, message: "button stuck"), .fault(reasons: [.button: "button stuck"]),
            [.log(.error, "fault (button): button stuck"), .stopStream,
             .show(.fault(reasons: [.button: "button stuck"])), .setLED(.fault),
             .startTimer(token: tok1, milliseconds: 1000)]),
        row(.idle, "device recovered that had not failed: nothing",
            .deviceRecovered(.camera), .idle, []),
        row(.idle, "storage low: the screen says why (not a fault)",
            .storageStatus(refusal: lowSpace), .idle,
            [.show(.idle(notice: lowSpace)), .setLED(.off)]),
        row(.idle, "storage fine, unchanged: nothing",
            .storageStatus(refusal: nil), .idle, []),
        row(.idle, "reload: applied at once",
            .reload(reloadedConfig), .idle, [.applyReload], config: reloadedConfig),
        row(.idle, "shutdown: stop the stream, exit",
            .shutdown, .stopped, [.setLED(.off), .stopStream, .exit]),
    ]

    static let idleVariants: [Row] = [
        // After a completed session: the old review timer and a late capture answer are stale.
        row(.idleAfterSession, "timer with the ended review's token: ignored",
            .timer(token: staleTok, at: T), .idle, []),
        row(.idleAfterSession, "late capture ok of the ended session: saved anyway (never dropped)",
            .captureSucceeded(id: cap), .idle, lateCapture(cap)),
        row(.idleAfterSession, "late capture failed of the ended session: ignored",
            .captureFailed(id: cap, message: "EIO", at: T), .idle, []),
        // After a composed picture's review: its save arriving now is the picture's, not a capture's.
        row(.idleAfterPicture, "saved of the ended session's picture: logged as the picture's",
            .saved(captureID: pic, path: photoPath), .idle,
            [.log(.debug, "picture {picture} saved to \(photoPath)")]),
        row(.idleAfterSession, "the press's storage check answered (fine): → a new session",
            .storageChecked(pressID: 3, at: T, refusal: nil, fault: nil), .preview,
            [.beginSession, .show(.preview), .setLED(.steady), .startTimer(token: tok1, milliseconds: 2000)]),

        // The idle timer stopped the stream.
        row(.idleStreamStopped, "the press's storage check answered (fine): → preview, the stream restarts",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .preview,
            [.beginSession, .startStream, .show(.preview), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 2000)]),
        row(.idleStreamStopped, "the spent idle timer again: nothing to stop",
            .timer(token: tok, at: T), .idle, []),
        row(.idleStreamStopped, "timer with token current−1: ignored",
            .timer(token: staleTok, at: T), .idle, []),
        row(.idleStreamStopped, "camera lost → fault, no stopStream (not streaming)",
            .deviceFault(.camera, message: cameraLost), .fault(reasons: [.camera: cameraLost]),
            [.log(.error, "fault (camera): \(cameraLost)"),
             .show(.fault(reasons: [.camera: cameraLost])), .setLED(.fault),
             .startTimer(token: tok1, milliseconds: 1000)]),
        row(.idleStreamStopped, "storage low: the screen says why, the LED stops inviting a press",
            .storageStatus(refusal: lowSpace), .idle, [.show(.idle(notice: lowSpace)), .setLED(.off)]),
        row(.idleStreamStopped, "reload: applied at once",
            .reload(reloadedConfig), .idle, [.applyReload], config: reloadedConfig),
        row(.idleStreamStopped, "shutdown: no stopStream (not streaming), exit",
            .shutdown, .stopped, [.setLED(.off), .exit]),

        // Sessions refused for low free space.
        row(.idleRefused, "the press's storage check answered (space still low): the press is refused, stay idle, the screen says why, not a fault",
            .storageChecked(pressID: otherPress, at: T, refusal: lowSpace, fault: nil), .idle,
            [.show(.idle(notice: lowSpace)), .log(.notice, "press refused: \(lowSpace)")]),
        row(.idleRefused, "long press: ignored",
            .longPress(id: otherPress), .idle, [.log(.info, "long press ignored in idle")]),
        row(.idleRefused, "space back: the notice clears, the LED invites a press again",
            .storageStatus(refusal: nil), .idle, [.show(.idle(notice: nil)), .setLED(.steady)]),
        row(.idleRefused, "same refusal again: nothing",
            .storageStatus(refusal: lowSpace), .idle, []),
        row(.idleRefused, "another refusal: the screen shows it",
            .storageStatus(refusal: otherLowSpace), .idle, [.show(.idle(notice: otherLowSpace)), .setLED(.off)]),
        row(.idleRefused, "idle timer: the stream stops",
            .timer(token: tok, at: T), .idle, [.stopStream, .log(.info, "stream stopped after idle time")]),
        row(.idleRefused, "timer with token current−1: ignored",
            .timer(token: staleTok, at: T), .idle, []),
        row(.idleRefused, "camera lost → fault(camera)",
            .deviceFault(.camera, message: cameraLost), .fault(reasons: [.camera: cameraLost]),
            [.log(.error, "fault (camera): \(cameraLost)"), .stopStream,
             .show(.fault(reasons: [.camera: cameraLost])), .setLED(.fault),
             .startTimer(token: tok1, milliseconds: 1000)]),
        row(.idleRefused, "shutdown",
            .shutdown, .stopped, [.setLED(.off), .stopStream, .exit]),

        // session.preview = 0s, session.countdown = 0: the press instant is the trigger.
        row(.idleInstant, "the press's storage check answered (fine): → capture at once, trigger = the press instant",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .capture(id: cap1, attempt: 1),
            [.beginSession, .show(.preview), .setLED(.steady), .show(.capture), .setLED(.off),
             .capture(id: cap1, trigger: T), .startTimer(token: tok1, milliseconds: 1500)]),
        // session.preview = 0s, session.countdown = 3.
        row(.idleNoPreview, "the press's storage check answered (fine): → countdown at once",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .countdown(remaining: 3),
            [.beginSession, .show(.preview), .setLED(.steady), .prepareStill, .show(.countdown(remaining: 3, shot: 1, of: 1)),
             .setLED(.blink), .startTimer(token: tok1, milliseconds: 1000)]),
        // session.preview = off: the preview waits for a press, up to session.preview_timeout.
        row(.idlePreviewOff, "the press's storage check answered (fine): → preview with the preview_timeout timer",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .preview,
            [.beginSession, .show(.preview), .setLED(.steady), .startTimer(token: tok1, milliseconds: 20_000)]),
    ]

    // MARK: preview

    static let cancelToIdle: [BoothCommand] = [
        .endSession(.cancelled), .log(.info, "session cancelled by a long press"),
        .show(.idle(notice: nil)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 60_000),
    ]
    static let ownLongPressIgnored: [BoothCommand] = [
        .log(.info, "long press of the press that started this session ignored"),
    ]
    static let deferredReload: [BoothCommand] = [.log(.info, "reload deferred until the session ends")]

    /// A device fault in preview, countdown or capture: the session fails, the stream stops, fault.
    static func sessionFault(_ kind: FaultKind, _ message: String) -> [BoothCommand] {
        [.log(.error, "fault (\(kind.rawValue)): \(message)"), .endSession(.failed), .stopStream,
         .show(.fault(reasons: [kind: message])), .setLED(.fault), .startTimer(token: tok1, milliseconds: 1000)]
    }

    static let preview: [Row] = [
        row(.preview, "press → countdown",
            .press(id: otherPress, at: T), .countdown(remaining: 3),
            [.prepareStill, .show(.countdown(remaining: 3, shot: 1, of: 1)), .setLED(.blink), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.preview, "long press of the session-starting press: never cancels",
            .longPress(id: sessionPress), .preview, ownLongPressIgnored),
        row(.preview, "long press of another press: cancel → idle",
            .longPress(id: otherPress), .idle, cancelToIdle),
        row(.preview, "preview elapsed → countdown",
            .timer(token: tok, at: T), .countdown(remaining: 3),
            [.prepareStill, .show(.countdown(remaining: 3, shot: 1, of: 1)), .setLED(.blink), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.preview, "timer with the idle timer's token: ignored",
            .timer(token: staleTok, at: T), .preview, []),
        row(.preview, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .preview, []),
        row(.preview, "capture ok for an unknown capture: saved anyway (never dropped)",
            .captureSucceeded(id: unknownCapture), .preview, lateCapture(unknownCapture)),
        row(.preview, "capture failed for an unknown capture: ignored",
            .captureFailed(id: unknownCapture, message: "EIO", at: T), .preview, []),
        row(.preview, "saved (an earlier session's): logged",
            .saved(captureID: 7, path: photoPath), .preview, [.log(.debug, "capture 7 saved to \(photoPath)")]),
        row(.preview, "save failed, ENOSPC → session failed, fault(storage)",
            .saveFailed(captureID: 7, noSpace: true, message: enospc),
            .fault(reasons: [.storage: fullWhileSaving7]), sessionFault(.storage, fullWhileSaving7)),
        row(.preview, "camera lost → session failed, fault(camera)",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.preview, "device recovered that had not failed: nothing",
            .deviceRecovered(.camera), .preview, []),
        row(.preview, "storage low: the session goes on",
            .storageStatus(refusal: lowSpace), .preview, []),
        row(.preview, "reload: deferred",
            .reload(reloadedConfig), .preview, deferredReload, config: tableConfig),
        row(.preview, "shutdown: session cancelled, stop the stream, exit",
            .shutdown, .stopped, [.endSession(.cancelled), .setLED(.off), .stopStream, .exit]),

        // session.preview = off
        row(.previewOff, "preview_timeout → idle (session cancelled)",
            .timer(token: tok, at: T), .idle,
            [.endSession(.cancelled), .log(.info, "preview timed out"),
             .show(.idle(notice: nil)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 60_000)]),
        row(.previewOff, "press → countdown",
            .press(id: otherPress, at: T), .countdown(remaining: 3),
            [.prepareStill, .show(.countdown(remaining: 3, shot: 1, of: 1)), .setLED(.blink), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.previewOff, "long press of the session-starting press: never cancels",
            .longPress(id: sessionPress), .preview, ownLongPressIgnored),
        row(.previewOff, "long press of another press: cancel → idle",
            .longPress(id: otherPress), .idle, cancelToIdle),
        row(.previewOff, "timer with token current−1: ignored",
            .timer(token: staleTok, at: T), .preview, []),

        // session.countdown = 0
        row(.previewNoCountdown, "preview elapsed → capture, trigger = the timer's instant",
            .timer(token: tok, at: T), .capture(id: cap1, attempt: 1),
            [.show(.capture), .setLED(.off), .capture(id: cap1, trigger: T),
             .startTimer(token: tok1, milliseconds: 1500)]),
        row(.previewNoCountdown, "press → capture, trigger = the press instant",
            .press(id: otherPress, at: T), .capture(id: cap1, attempt: 1),
            [.show(.capture), .setLED(.off), .capture(id: cap1, trigger: T),
             .startTimer(token: tok1, milliseconds: 1500)]),

        // A reload accepted in preview waits for idle or fault.
        row(.previewReloadPending, "cancel → idle applies the reload on entry",
            .longPress(id: otherPress), .idle,
            [.endSession(.cancelled), .log(.info, "session cancelled by a long press"), .applyReload,
             .show(.idle(notice: nil)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 90_000)],
            config: reloadedConfig),
        row(.previewReloadPending, "press → countdown with the old settings (3, not 5)",
            .press(id: otherPress, at: T), .countdown(remaining: 3),
            [.prepareStill, .show(.countdown(remaining: 3, shot: 1, of: 1)), .setLED(.blink), .startTimer(token: tok1, milliseconds: 1000)],
            config: tableConfig),
        row(.previewReloadPending, "camera lost → fault applies the reload on entry",
            .deviceFault(.camera, message: cameraLost), .fault(reasons: [.camera: cameraLost]),
            [.log(.error, "fault (camera): \(cameraLost)"), .endSession(.failed), .applyReload, .stopStream,
             .show(.fault(reasons: [.camera: cameraLost])), .setLED(.fault),
             .startTimer(token: tok1, milliseconds: 1000)],
            config: reloadedConfig),
    ]

    // MARK: countdown

    static let countdown: [Row] = [
        row(.countdown3, "press: ignored",
            .press(id: otherPress, at: T), .countdown(remaining: 3), [.log(.info, "press ignored in countdown")]),
        row(.countdown3, "long press of the session-starting press: never cancels",
            .longPress(id: sessionPress), .countdown(remaining: 3), ownLongPressIgnored),
        row(.countdown3, "long press of another press: cancel → idle",
            .longPress(id: otherPress), .idle, cancelToIdle),
        row(.countdown3, "tick 3 → 2",
            .timer(token: tok, at: T), .countdown(remaining: 2),
            [.show(.countdown(remaining: 2, shot: 1, of: 1)), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.countdown3, "timer with the preview timer's token: ignored",
            .timer(token: staleTok, at: T), .countdown(remaining: 3), []),
        row(.countdown3, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .countdown(remaining: 3), []),
        row(.countdown3, "capture ok for an unknown capture: saved anyway (never dropped)",
            .captureSucceeded(id: unknownCapture), .countdown(remaining: 3), lateCapture(unknownCapture)),
        row(.countdown3, "capture failed for an unknown capture: ignored",
            .captureFailed(id: unknownCapture, message: "EIO", at: T), .countdown(remaining: 3), []),
        row(.countdown3, "saved (an earlier session's): logged",
            .saved(captureID: 7, path: photoPath), .countdown(remaining: 3),
            [.log(.debug, "capture 7 saved to \(photoPath)")]),
        row(.countdown3, "save failed, ENOSPC → session failed, fault(storage)",
            .saveFailed(captureID: 7, noSpace: true, message: enospc),
            .fault(reasons: [.storage: fullWhileSaving7]), sessionFault(.storage, fullWhileSaving7)),
        row(.countdown3, "camera lost → session failed, fault(camera)",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.countdown3, "device recovered that had not failed: nothing",
            .deviceRecovered(.storage), .countdown(remaining: 3), []),
        row(.countdown3, "storage low: the session goes on",
            .storageStatus(refusal: lowSpace), .countdown(remaining: 3), []),
        row(.countdown3, "reload: deferred",
            .reload(reloadedConfig), .countdown(remaining: 3), deferredReload, config: tableConfig),
        row(.countdown3, "shutdown: countdown abandoned, stop the stream, exit",
            .shutdown, .stopped, [.endSession(.cancelled), .setLED(.off), .stopStream, .exit]),

        row(.countdownFromPress, "long press of the press that started it (preview 0): never cancels",
            .longPress(id: sessionPress), .countdown(remaining: 3), ownLongPressIgnored),
        row(.countdownFromPress, "long press of another press: cancel → idle",
            .longPress(id: otherPress), .idle, cancelToIdle),
        row(.countdownFromPress, "tick 3 → 2",
            .timer(token: tok, at: T), .countdown(remaining: 2),
            [.show(.countdown(remaining: 2, shot: 1, of: 1)), .startTimer(token: tok1, milliseconds: 1000)]),

        row(.countdown2, "tick 2 → 1",
            .timer(token: tok, at: T), .countdown(remaining: 1),
            [.show(.countdown(remaining: 1, shot: 1, of: 1)), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.countdown2, "timer with the previous tick's token: ignored",
            .timer(token: staleTok, at: T), .countdown(remaining: 2), []),

        row(.countdown1, "tick 1 → capture, trigger = the timer's instant, deadline timer",
            .timer(token: tok, at: T), .capture(id: cap1, attempt: 1),
            [.show(.capture), .setLED(.off), .capture(id: cap1, trigger: T),
             .startTimer(token: tok1, milliseconds: 1500)]),
        row(.countdown1, "timer with the previous tick's token: ignored",
            .timer(token: staleTok, at: T), .countdown(remaining: 1), []),
        row(.countdown1, "long press of another press: cancel → idle",
            .longPress(id: otherPress), .idle, cancelToIdle),

        row(.countdownReloadPending, "cancel → idle applies the reload on entry",
            .longPress(id: otherPress), .idle,
            [.endSession(.cancelled), .log(.info, "session cancelled by a long press"), .applyReload,
             .show(.idle(notice: nil)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 90_000)],
            config: reloadedConfig),
        row(.countdownReloadPending, "tick with the old settings",
            .timer(token: tok, at: T), .countdown(remaining: 2),
            [.show(.countdown(remaining: 2, shot: 1, of: 1)), .startTimer(token: tok1, milliseconds: 1000)], config: tableConfig),
        row(.countdownReloadPending, "shutdown: the reload is not applied",
            .shutdown, .stopped, [.endSession(.cancelled), .setLED(.off), .stopStream, .exit], config: tableConfig),
    ]

    // MARK: capture

    static let retryCapture: [BoothCommand] = [
        .show(.capture), .setLED(.off), .capture(id: cap1, trigger: T), .startTimer(token: tok1, milliseconds: 1500),
    ]
    static let failedTwice: [BoothCommand] = [
        .endSession(.failed), .log(.warning, "capture failed twice; back to idle"),
        .show(.idle(notice: sorry)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 60_000),
    ]
    static let toReview: [BoothCommand] = [
        .keepForSession(captureID: cap), .save(captureID: cap), .show(.review(pictureID: cap)), .setLED(.off),
        .startTimer(token: tok1, milliseconds: 4000),
    ]

    static let capture: [Row] = [
        row(.capture1, "press: ignored",
            .press(id: otherPress, at: T), .capture(id: cap, attempt: 1), [.log(.info, "press ignored in capture")]),
        row(.capture1, "long press of the session-starting press: ignored",
            .longPress(id: sessionPress), .capture(id: cap, attempt: 1),
            [.log(.info, "long press ignored in capture")]),
        row(.capture1, "long press of another press: ignored",
            .longPress(id: otherPress), .capture(id: cap, attempt: 1), [.log(.info, "long press ignored in capture")]),
        row(.capture1, "deadline → failed → retry once, trigger = the deadline's instant",
            .timer(token: tok, at: T), .capture(id: cap1, attempt: 2),
            [.log(.warning, "capture {capture} got no good frame within 1500 ms")] + retryCapture),
        row(.capture1, "timer with the last tick's token: ignored",
            .timer(token: staleTok, at: T), .capture(id: cap, attempt: 1), []),
        row(.capture1, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .capture(id: cap, attempt: 1), []),
        row(.capture1, "capture ok → save → review",
            .captureSucceeded(id: cap), .review(pictureID: cap), toReview),
        row(.capture1, "capture ok with a stale id: saved anyway (never dropped)",
            .captureSucceeded(id: unknownCapture), .capture(id: cap, attempt: 1), lateCapture(unknownCapture)),
        row(.capture1, "capture failed → retry once, trigger = the failure's instant",
            .captureFailed(id: cap, message: "VIDIOC_DQBUF: EIO", at: T), .capture(id: cap1, attempt: 2),
            [.log(.warning, "capture {capture} failed: VIDIOC_DQBUF: EIO")] + retryCapture),
        row(.capture1, "capture failed with a stale id: ignored",
            .captureFailed(id: unknownCapture, message: "EIO", at: T), .capture(id: cap, attempt: 1), []),
        row(.capture1, "saved (an earlier session's): logged",
            .saved(captureID: 7, path: photoPath), .capture(id: cap, attempt: 1),
            [.log(.debug, "capture 7 saved to \(photoPath)")]),
        row(.capture1, "save failed, ENOSPC → session failed, fault(storage)",
            .saveFailed(captureID: 7, noSpace: true, message: enospc),
            .fault(reasons: [.storage: fullWhileSaving7]), sessionFault(.storage, fullWhileSaving7)),
        row(.capture1, "camera lost → session failed, fault(camera)",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.capture1, "device recovered that had not failed: nothing",
            .deviceRecovered(.camera), .capture(id: cap, attempt: 1), []),
        row(.capture1, "storage low: the capture goes on",
            .storageStatus(refusal: lowSpace), .capture(id: cap, attempt: 1), []),
        row(.capture1, "reload: deferred",
            .reload(reloadedConfig), .capture(id: cap, attempt: 1), deferredReload, config: tableConfig),
        row(.capture1, "shutdown: session cancelled, stop the stream, exit",
            .shutdown, .stopped, [.endSession(.cancelled), .setLED(.off), .stopStream, .exit]),

        row(.capture2, "second failure → idle \"Sorry, try again\" (not a fault)",
            .captureFailed(id: cap, message: "VIDIOC_DQBUF: EIO", at: T), .idle,
            [.log(.warning, "capture {capture} failed: VIDIOC_DQBUF: EIO")] + failedTwice),
        row(.capture2, "second deadline → idle \"Sorry, try again\" (not a fault)",
            .timer(token: tok, at: T), .idle,
            [.log(.warning, "capture {capture} got no good frame within 1500 ms")] + failedTwice),
        row(.capture2, "capture ok → save → review",
            .captureSucceeded(id: cap), .review(pictureID: cap), toReview),
        row(.capture2, "late ok of the first attempt (stale id): saved anyway (never dropped)",
            .captureSucceeded(id: prevCap), .capture(id: cap, attempt: 2), lateCapture(prevCap)),
        row(.capture2, "late failure of the first attempt (stale id): ignored",
            .captureFailed(id: prevCap, message: "EIO", at: T), .capture(id: cap, attempt: 2), []),
        row(.capture2, "the first attempt's deadline (stale token): ignored",
            .timer(token: staleTok, at: T), .capture(id: cap, attempt: 2), []),
        row(.capture2, "press: ignored",
            .press(id: otherPress, at: T), .capture(id: cap, attempt: 2), [.log(.info, "press ignored in capture")]),
        row(.capture2, "camera lost → session failed, fault(camera)",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.capture2, "shutdown",
            .shutdown, .stopped, [.endSession(.cancelled), .setLED(.off), .stopStream, .exit]),

        row(.capture2ReloadPending, "second failure → idle applies the reload on entry",
            .captureFailed(id: cap, message: "VIDIOC_DQBUF: EIO", at: T), .idle,
            [.log(.warning, "capture {capture} failed: VIDIOC_DQBUF: EIO"),
             .endSession(.failed), .log(.warning, "capture failed twice; back to idle"), .applyReload,
             .show(.idle(notice: sorry)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 90_000)],
            config: reloadedConfig),
        row(.capture2ReloadPending, "capture ok → review with the old settings (4 s)",
            .captureSucceeded(id: cap), .review(pictureID: cap), toReview, config: tableConfig),

        // print.mode = auto: the picture is printed as its review starts (before the save, while its bytes are held).
        row(.capture1AutoPrint, "capture ok → print, save, review",
            .captureSucceeded(id: cap), .review(pictureID: cap), [.keepForSession(captureID: cap), .print(pictureID: cap)] + Array(toReview.dropFirst())),
        row(.capture1AutoPrint, "press: ignored (nothing printed before review)",
            .press(id: otherPress, at: T), .capture(id: cap, attempt: 1), [.log(.info, "press ignored in capture")]),
        row(.capture1AutoPrint, "long press of another press: ignored",
            .longPress(id: otherPress), .capture(id: cap, attempt: 1), [.log(.info, "long press ignored in capture")]),
    ]

    // MARK: review

    static let review: [Row] = [
        row(.review, "press: ignored",
            .press(id: otherPress, at: T), .review(pictureID: cap), [.log(.info, "press ignored in review")]),
        row(.review, "long press of the session-starting press: ignored",
            .longPress(id: sessionPress), .review(pictureID: cap), [.log(.info, "long press ignored in review")]),
        row(.review, "long press of another press: ignored",
            .longPress(id: otherPress), .review(pictureID: cap), [.log(.info, "long press ignored in review")]),
        row(.review, "review over → idle, session completed",
            .timer(token: tok, at: T), .idle,
            [.endSession(.completed), .show(.idle(notice: nil)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 60_000)]),
        row(.review, "the capture deadline's token: ignored",
            .timer(token: staleTok, at: T), .review(pictureID: cap), []),
        row(.review, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .review(pictureID: cap), []),
        row(.review, "duplicate capture ok: saved anyway (never dropped)",
            .captureSucceeded(id: cap), .review(pictureID: cap), lateCapture(cap)),
        row(.review, "late capture failed: ignored",
            .captureFailed(id: cap, message: "EIO", at: T), .review(pictureID: cap), []),
        row(.review, "saved: logged",
            .saved(captureID: cap, path: photoPath), .review(pictureID: cap),
            [.log(.debug, "capture {capture} saved to \(photoPath)")]),
        row(.review, "save failed, ENOSPC: fault deferred to the review's end",
            .saveFailed(captureID: cap, noSpace: true, message: enospc), .review(pictureID: cap),
            [.log(.error, "fault (storage): \(fullWhileSavingLatest)")]),
        row(.review, "camera lost: fault deferred to the review's end",
            .deviceFault(.camera, message: cameraLost), .review(pictureID: cap),
            [.log(.error, "fault (camera): \(cameraLost)")]),
        row(.review, "device recovered that had not failed: nothing",
            .deviceRecovered(.camera), .review(pictureID: cap), []),
        row(.review, "storage low: the review goes on",
            .storageStatus(refusal: lowSpace), .review(pictureID: cap), []),
        row(.review, "reload: deferred",
            .reload(reloadedConfig), .review(pictureID: cap), deferredReload, config: tableConfig),
        row(.review, "shutdown: session completed, stop the stream, exit",
            .shutdown, .stopped, [.endSession(.completed), .setLED(.off), .stopStream, .exit]),

        row(.reviewDeferredFault, "review over → the deferred fault",
            .timer(token: tok, at: T), .fault(reasons: [.camera: cameraLost]),
            [.endSession(.completed), .stopStream, .show(.fault(reasons: [.camera: cameraLost])),
             .setLED(.fault), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.reviewDeferredFault, "another fault: deferred too",
            .deviceFault(.storage, message: storageGone), .review(pictureID: cap),
            [.log(.error, "fault (storage): \(storageGone)")]),
        row(.reviewDeferredFault, "press: ignored",
            .press(id: otherPress, at: T), .review(pictureID: cap), [.log(.info, "press ignored in review")]),
        row(.reviewDeferredFault, "timer with token current−1: ignored",
            .timer(token: staleTok, at: T), .review(pictureID: cap), []),
        row(.reviewDeferredFault, "shutdown: session completed, exit",
            .shutdown, .stopped, [.endSession(.completed), .setLED(.off), .stopStream, .exit]),

        row(.reviewDeferredRecovered, "review over → idle (the deferred fault recovered)",
            .timer(token: tok, at: T), .idle,
            [.endSession(.completed), .show(.idle(notice: nil)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 60_000)]),

        row(.reviewSaveFailed, "review over → fault(storage) from the ENOSPC",
            .timer(token: tok, at: T), .fault(reasons: [.storage: fullWhileSavingLatest]),
            [.endSession(.completed), .stopStream, .show(.fault(reasons: [.storage: fullWhileSavingLatest])),
             .setLED(.fault), .startTimer(token: tok1, milliseconds: 1000)]),

        row(.reviewReloadPending, "review over → idle applies the reload on entry",
            .timer(token: tok, at: T), .idle,
            [.endSession(.completed), .applyReload, .show(.idle(notice: nil)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 90_000)],
            config: reloadedConfig),
        row(.reviewDeferredFaultReloadPending, "review over → fault applies the reload on entry",
            .timer(token: tok, at: T), .fault(reasons: [.camera: cameraLost]),
            [.endSession(.completed), .applyReload, .stopStream, .show(.fault(reasons: [.camera: cameraLost])),
             .setLED(.fault), .startTimer(token: tok1, milliseconds: 1000)],
            config: reloadedConfig),
    ]

    // MARK: fault

    static let recoveredToIdle: [BoothCommand] = [
        .log(.notice, "camera recovered"), .startStream, .show(.idle(notice: nil)), .setLED(.steady),
        .startTimer(token: tok1, milliseconds: 60_000),
    ]
    static let cameraAndStorage: [FaultKind: String] = [.camera: cameraLost, .storage: storageGone]

    static let fault: [Row] = [
        row(.fault, "press: ignored, logged",
            .press(id: otherPress, at: T), .fault(reasons: [.camera: cameraLost]),
            [.log(.info, "press ignored: booth in fault")]),
        row(.fault, "long press: ignored",
            .longPress(id: otherPress), .fault(reasons: [.camera: cameraLost]),
            [.log(.info, "long press ignored in fault")]),
        row(.fault, "retry timer: retry, next in 2 s",
            .timer(token: tok, at: T), .fault(reasons: [.camera: cameraLost]),
            [.retry([.camera]), .startTimer(token: tok1, milliseconds: 2000)]),
        row(.fault, "the idle timer's token: ignored",
            .timer(token: staleTok, at: T), .fault(reasons: [.camera: cameraLost]), []),
        row(.fault, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .fault(reasons: [.camera: cameraLost]), []),
        row(.fault, "capture ok for an unknown capture: saved anyway (never dropped)",
            .captureSucceeded(id: unknownCapture), .fault(reasons: [.camera: cameraLost]), lateCapture(unknownCapture)),
        row(.fault, "capture failed for an unknown capture: ignored",
            .captureFailed(id: unknownCapture, message: "EIO", at: T), .fault(reasons: [.camera: cameraLost]), []),
        row(.fault, "saved (held bytes written): logged",
            .saved(captureID: 7, path: photoPath), .fault(reasons: [.camera: cameraLost]),
            [.log(.debug, "capture 7 saved to \(photoPath)")]),
        row(.fault, "save failed, ENOSPC: storage reason added",
            .saveFailed(captureID: 7, noSpace: true, message: enospc),
            .fault(reasons: [.camera: cameraLost, .storage: fullWhileSaving7]),
            [.log(.error, "fault (storage): \(fullWhileSaving7)"),
             .show(.fault(reasons: [.camera: cameraLost, .storage: fullWhileSaving7]))]),
        row(.fault, "camera fails again: the reason's message is updated",
            .deviceFault(.camera, message: cameraLostAgain), .fault(reasons: [.camera: cameraLostAgain]),
            [.log(.error, "fault (camera): \(cameraLostAgain)"), .show(.fault(reasons: [.camera: cameraLostAgain]))]),
        row(.fault, "storage gone: reason added",
            .deviceFault(.storage, message: storageGone), .fault(reasons: cameraAndStorage),
            [.log(.error, "fault (storage): \(storageGone)"), .show(.fault(reasons: cameraAndStorage))]),
        row(.fault, "last reason cleared → idle, the stream restarts",
            .deviceRecovered(.camera), .idle, recoveredToIdle),
        row(.fault, "a kind that is not a reason recovers: nothing",
            .deviceRecovered(.storage), .fault(reasons: [.camera: cameraLost]), []),
        row(.fault, "storage low: nothing shown yet",
            .storageStatus(refusal: lowSpace), .fault(reasons: [.camera: cameraLost]), []),
        row(.fault, "reload: applied at once",
            .reload(reloadedConfig), .fault(reasons: [.camera: cameraLost]), [.applyReload], config: reloadedConfig),
        row(.fault, "shutdown: no stopStream (stream already stopped), exit",
            .shutdown, .stopped, [.setLED(.off), .exit]),

        row(.fault2, "camera recovered: still in fault for storage",
            .deviceRecovered(.camera), .fault(reasons: [.storage: storageGone]),
            [.log(.notice, "camera recovered"), .show(.fault(reasons: [.storage: storageGone]))]),
        row(.fault2, "storage recovered: still in fault for the camera",
            .deviceRecovered(.storage), .fault(reasons: [.camera: cameraLost]),
            [.log(.notice, "storage recovered"), .show(.fault(reasons: [.camera: cameraLost]))]),
        row(.fault2, "retry timer: every reason retried, in order",
            .timer(token: tok, at: T), .fault(reasons: cameraAndStorage),
            [.retry([.camera, .storage]), .startTimer(token: tok1, milliseconds: 2000)]),
        row(.fault2, "timer with token current−1: ignored",
            .timer(token: staleTok, at: T), .fault(reasons: cameraAndStorage), []),

        row(.faultRefused, "last reason cleared → idle showing the storage refusal",
            .deviceRecovered(.camera), .idle,
            [.log(.notice, "camera recovered"), .startStream, .show(.idle(notice: lowSpace)), .setLED(.off),
             .startTimer(token: tok1, milliseconds: 60_000)]),

        row(.faultBackedOff, "third retry: next in 8 s",
            .timer(token: tok, at: T), .fault(reasons: [.camera: cameraLost]),
            [.retry([.camera]), .startTimer(token: tok1, milliseconds: 8000)]),
        row(.faultBackedOff, "the retry's answer (still failing the same way): logged once, at debug; no new timer, backoff kept",
            .deviceFault(.camera, message: cameraLost), .fault(reasons: [.camera: cameraLost]),
            [.log(.debug, "fault (camera) unchanged after the retry"), .show(.fault(reasons: [.camera: cameraLost]))]),
        row(.faultBackedOff, "an earlier retry timer's token: ignored",
            .timer(token: staleTok, at: T), .fault(reasons: [.camera: cameraLost]), []),
        row(.faultBackedOff, "recovered → idle, the stream restarts",
            .deviceRecovered(.camera), .idle, recoveredToIdle),
    ]

    // MARK: stopped

    static let stopped: [Row] = [
        row(.stopped, "press: ignored", .press(id: otherPress, at: T), .stopped, []),
        row(.stopped, "long press: ignored", .longPress(id: otherPress), .stopped, []),
        row(.stopped, "timer with the current token: ignored", .timer(token: tok, at: T), .stopped, []),
        row(.stopped, "the idle timer from before shutdown: ignored", .timer(token: staleTok, at: T), .stopped, []),
        row(.stopped, "timer with a token never issued: ignored", .timer(token: unissuedTok, at: T), .stopped, []),
        row(.stopped, "capture ok: ignored", .captureSucceeded(id: unknownCapture), .stopped, []),
        row(.stopped, "capture failed: ignored",
            .captureFailed(id: unknownCapture, message: "EIO", at: T), .stopped, []),
        row(.stopped, "saved: ignored", .saved(captureID: 7, path: photoPath), .stopped, []),
        row(.stopped, "save failed: ignored",
            .saveFailed(captureID: 7, noSpace: true, message: enospc), .stopped, []),
        row(.stopped, "device fault: ignored", .deviceFault(.camera, message: cameraLost), .stopped, []),
        row(.stopped, "device recovered: ignored", .deviceRecovered(.camera), .stopped, []),
        row(.stopped, "storage status: ignored", .storageStatus(refusal: lowSpace), .stopped, []),

        // print.mode = auto: the print was requested as review started.
        row(.reviewAutoPrint, "press: ignored (already printing)",
            .press(id: otherPress, at: T), .review(pictureID: cap), [.log(.info, "press ignored in review")]),
        row(.reviewAutoPrint, "long press of another press: printing skipped",
            .longPress(id: otherPress), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of the session's picture (capture {capture}) skipped by a long press")]),
        row(.reviewAutoPrint, "long press of the session-starting press: ignored",
            .longPress(id: sessionPress), .review(pictureID: cap), [.log(.info, "long press ignored in review")]),
        row(.reviewAutoPrint, "review over → idle, session completed",
            .timer(token: tok, at: T), .idle,
            [.endSession(.completed), .show(.idle(notice: nil)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 60_000)]),

        // print.mode = press.
        row(.reviewPressPrint, "press → print (review goes on)",
            .press(id: otherPress, at: T), .review(pictureID: cap),
            [.print(pictureID: cap), .log(.info, "print of the session's picture (capture {capture}) requested by a press")]),
        row(.reviewPressPrint, "long press of another press: printing skipped",
            .longPress(id: otherPress), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of the session's picture (capture {capture}) skipped by a long press")]),
        row(.reviewPressPrint, "long press of the session-starting press: ignored",
            .longPress(id: sessionPress), .review(pictureID: cap), [.log(.info, "long press ignored in review")]),
        row(.reviewPressPrint, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .review(pictureID: cap), []),
        row(.reviewPressPrintRequested, "second press: ignored (printed once)",
            .press(id: 3, at: T), .review(pictureID: cap), [.log(.info, "press ignored in review")]),
        row(.reviewPressPrintRequested, "long press of that press: the print is skipped",
            .longPress(id: otherPress), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of the session's picture (capture {capture}) skipped by a long press")]),
        row(.reviewPressPrintSkipped, "press after the skip: ignored",
            .press(id: 3, at: T), .review(pictureID: cap), [.log(.info, "press ignored in review")]),
        row(.reviewPressPrintSkipped, "second long press: ignored",
            .longPress(id: 3), .review(pictureID: cap), [.log(.info, "long press ignored in review")]),

        row(.stopped, "reload: ignored", .reload(reloadedConfig), .stopped, [], config: tableConfig),
        row(.stopped, "second shutdown: nothing", .shutdown, .stopped, []),
    ]

    // MARK: multi-shot series (session.shots = 3 unless named otherwise)

    static let composeFailedNotice = BoothMachine.composeFailedNotice
    static let countdownShot2: [BoothCommand] = [
        .prepareStill, .show(.countdown(remaining: 3, shot: 2, of: 3)), .setLED(.blink), .startTimer(token: tok1, milliseconds: 1000),
    ]
    static func cancelSeries(_ capturesLine: BoothCommand...) -> [BoothCommand] {
        [.endSession(.cancelled), .log(.info, "session cancelled by a long press")] + capturesLine
            + [.show(.idle(notice: nil)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 60_000)]
    }
    static let keptLine = BoothCommand.log(.info, "captures {captures} of the cancelled session kept")
    static let deletedLine = BoothCommand.log(.info, "captures {captures} of the cancelled session deleted")
    static let seriesShutdown: [BoothCommand] = [.endSession(.cancelled), .setLED(.off), .stopStream, .exit]
    static let composedToReview: [BoothCommand] = [
        .log(.info, "the session's picture composed from captures {captures}"), .show(.review(pictureID: pic)),
        .setLED(.off), .startTimer(token: tok1, milliseconds: 4000),
    ]
    static let composeFailedToIdle: [BoothCommand] = [
        .endSession(.failed), .show(.idle(notice: composeFailedNotice)), .setLED(.steady),
        .startTimer(token: tok1, milliseconds: 60_000),
    ]

    static let series: [Row] = [
        row(.captureMulti1, "shot 1 of 3 ok → saved, between shots announcing 2 of 3",
            .captureSucceeded(id: cap), .betweenShots(next: 2),
            [.keepForSession(captureID: cap), .save(captureID: cap), .show(.betweenShots(next: 2, of: 3)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 2500)]),
        row(.captureMulti1, "long press of another press: ignored (the capture takes milliseconds)",
            .longPress(id: otherPress), .capture(id: cap, attempt: 1), [.log(.info, "long press ignored in capture")]),

        // Between shots 1 and 2.
        row(.betweenShots2, "press → the countdown of shot 2 at once",
            .press(id: otherPress, at: T), .countdown(remaining: 3), countdownShot2),
        row(.betweenShots2, "long press of the session-starting press: never cancels",
            .longPress(id: sessionPress), .betweenShots(next: 2), ownLongPressIgnored),
        row(.betweenShots2, "long press of another press: cancel, capture 1 kept, nothing printed",
            .longPress(id: otherPress), .idle, cancelSeries(keptLine)),
        row(.betweenShots2, "time up → the countdown of shot 2",
            .timer(token: tok, at: T), .countdown(remaining: 3), countdownShot2),
        row(.betweenShots2, "timer with the capture deadline's token: ignored",
            .timer(token: staleTok, at: T), .betweenShots(next: 2), []),
        row(.betweenShots2, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .betweenShots(next: 2), []),
        row(.betweenShots2, "capture 1 ok again: saved anyway (never dropped)",
            .captureSucceeded(id: cap), .betweenShots(next: 2), lateCapture(cap)),
        row(.betweenShots2, "capture failed for an unknown capture: ignored",
            .captureFailed(id: unknownCapture, message: "EIO", at: T), .betweenShots(next: 2), []),
        row(.betweenShots2, "capture 1 saved: logged",
            .saved(captureID: cap, path: photoPath), .betweenShots(next: 2),
            [.log(.debug, "capture {capture} saved to \(photoPath)")]),
        row(.betweenShots2, "saving capture 1 failed, ENOSPC → session failed, fault(storage); the capture is held",
            .saveFailed(captureID: cap, noSpace: true, message: enospc),
            .fault(reasons: [.storage: fullWhileSavingLatest]), sessionFault(.storage, fullWhileSavingLatest)),
        row(.betweenShots2, "camera lost → session failed, fault(camera); capture 1 kept",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.betweenShots2, "device recovered that had not failed: nothing",
            .deviceRecovered(.camera), .betweenShots(next: 2), []),
        row(.betweenShots2, "storage low: the series goes on",
            .storageStatus(refusal: lowSpace), .betweenShots(next: 2), []),
        row(.betweenShots2, "reload: deferred",
            .reload(reloadedConfig), .betweenShots(next: 2), deferredReload, config: multiConfig),
        row(.betweenShots2, "composed for a picture never asked for: logged as late (the composer saves it)",
            .composed(pictureID: unknownCapture), .betweenShots(next: 2), lateComposition(unknownCapture)),
        row(.betweenShots2, "compose failed for a picture never asked for: ignored",
            .composeFailed(pictureID: unknownCapture, message: "x"), .betweenShots(next: 2), []),
        row(.betweenShots2, "shutdown: series cancelled (captures kept), exit",
            .shutdown, .stopped, seriesShutdown),
        row(.betweenShots2Delete, "long press of another press: cancel, capture 1 deleted",
            .longPress(id: otherPress), .idle, cancelSeries(.deleteCaptures(sessionCaps), deletedLine)),
        row(.betweenShots2Delete, "camera lost: session failed, capture 1 NOT deleted (only a cancel deletes)",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.betweenShots2Delete, "shutdown: capture 1 NOT deleted",
            .shutdown, .stopped, seriesShutdown),
        row(.betweenShotsReloadPending, "cancel → idle applies the reload on entry",
            .longPress(id: otherPress), .idle,
            [.endSession(.cancelled), .log(.info, "session cancelled by a long press"), keptLine, .applyReload,
             .show(.idle(notice: nil)), .setLED(.steady), .startTimer(token: tok1, milliseconds: 90_000)],
            config: reloadedConfig),
        row(.betweenShotsReloadPending, "time up → countdown with the old settings (3 shots, 3 s)",
            .timer(token: tok, at: T), .countdown(remaining: 3), countdownShot2, config: multiConfig),

        // The countdown of shot 2.
        row(.countdownShot2, "tick 3 → 2, still shot 2 of 3",
            .timer(token: tok, at: T), .countdown(remaining: 2),
            [.show(.countdown(remaining: 2, shot: 2, of: 3)), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.countdownShot2, "long press of another press: cancel, capture 1 kept",
            .longPress(id: otherPress), .idle, cancelSeries(keptLine)),
        row(.countdownShot2, "the between-shots timer's token: ignored",
            .timer(token: staleTok, at: T), .countdown(remaining: 3), []),
        row(.countdownShot2, "camera lost → session failed, fault",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.countdownShot2, "shutdown: series cancelled",
            .shutdown, .stopped, seriesShutdown),
        row(.countdownShot2Delete, "long press of another press: cancel, capture 1 deleted",
            .longPress(id: otherPress), .idle, cancelSeries(.deleteCaptures(sessionCaps), deletedLine)),

        // Shot 2's capture.
        row(.captureShot2, "ok → saved, between shots announcing 3 of 3",
            .captureSucceeded(id: cap), .betweenShots(next: 3),
            [.keepForSession(captureID: cap), .save(captureID: cap), .show(.betweenShots(next: 3, of: 3)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 2500)]),
        row(.captureShot2, "failed → retry once",
            .captureFailed(id: cap, message: "VIDIOC_DQBUF: EIO", at: T), .capture(id: cap1, attempt: 2),
            [.log(.warning, "capture {capture} failed: VIDIOC_DQBUF: EIO")] + retryCapture),
        row(.captureShot2, "camera lost → session failed, fault; capture 1 kept",
            .deviceFault(.camera, message: cameraLost),
            .fault(reasons: [.camera: cameraLost]), sessionFault(.camera, cameraLost)),
        row(.captureShot2Retry, "failed again → session failed, idle 'Sorry, try again', capture 1 kept, nothing composed",
            .captureFailed(id: cap, message: "EIO", at: T), .idle,
            [.log(.warning, "capture {capture} failed: EIO")] + failedTwice),
        row(.captureShot2Retry, "deadline of the retry → session failed",
            .timer(token: tok, at: T), .idle,
            [.log(.warning, "capture {capture} got no good frame within 1500 ms")] + failedTwice),
        row(.captureShot2Retry, "late ok of the first attempt: saved anyway (never dropped)",
            .captureSucceeded(id: prevCap), .capture(id: cap, attempt: 2), lateCapture(prevCap)),
        row(.captureShot2Retry, "retry ok → between shots announcing 3 of 3",
            .captureSucceeded(id: cap), .betweenShots(next: 3),
            [.keepForSession(captureID: cap), .save(captureID: cap), .show(.betweenShots(next: 3, of: 3)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 2500)]),

        // The last shot.
        row(.captureShot3, "last shot ok → saved, compose the picture from captures 1, 2, 3 (compose deadline)",
            .captureSucceeded(id: cap), .composing(pictureID: cap1),
            [.keepForSession(captureID: cap), .save(captureID: cap), .compose(pictureID: cap1, captures: [1, 2, 3]),
             .startTimer(token: tok1, milliseconds: 10_000)]),

        // Composing.
        row(.composing, "press: ignored",
            .press(id: otherPress, at: T), .composing(pictureID: pic), [.log(.info, "press ignored in composing")]),
        row(.composing, "long press: ignored (the series is over; nothing to cancel)",
            .longPress(id: otherPress), .composing(pictureID: pic), [.log(.info, "long press ignored in composing")]),
        row(.composing, "compose deadline → session failed, idle says why",
            .timer(token: tok, at: T), .idle,
            [.log(.error, "the session's picture not composed within 10000 ms")] + composeFailedToIdle),
        row(.composing, "the last capture's deadline token: ignored",
            .timer(token: staleTok, at: T), .composing(pictureID: pic), []),
        row(.composing, "timer with a token never issued: ignored",
            .timer(token: unissuedTok, at: T), .composing(pictureID: pic), []),
        row(.composing, "late capture ok: saved anyway (never dropped)",
            .captureSucceeded(id: cap), .composing(pictureID: pic), lateCapture(cap)),
        row(.composing, "late capture failed: ignored",
            .captureFailed(id: cap, message: "EIO", at: T), .composing(pictureID: pic), []),
        row(.composing, "capture 3 saved: logged",
            .saved(captureID: cap, path: photoPath), .composing(pictureID: pic),
            [.log(.debug, "capture {capture} saved to \(photoPath)")]),
        row(.composing, "save failed, ENOSPC: fault deferred to the review's end",
            .saveFailed(captureID: cap, noSpace: true, message: enospc), .composing(pictureID: pic),
            [.log(.error, "fault (storage): \(fullWhileSavingLatest)")]),
        row(.composing, "camera lost: deferred (composing needs no camera)",
            .deviceFault(.camera, message: cameraLost), .composing(pictureID: pic),
            [.log(.error, "fault (camera): \(cameraLost)")]),
        row(.composing, "device recovered that had not failed: nothing",
            .deviceRecovered(.camera), .composing(pictureID: pic), []),
        row(.composing, "storage low: nothing",
            .storageStatus(refusal: lowSpace), .composing(pictureID: pic), []),
        row(.composing, "reload: deferred",
            .reload(reloadedConfig), .composing(pictureID: pic), deferredReload, config: multiConfig),
        row(.composing, "composed → review of the picture",
            .composed(pictureID: pic), .review(pictureID: pic), composedToReview),
        row(.composing, "composed for another picture: logged as late (the composer saves it)",
            .composed(pictureID: unknownCapture), .composing(pictureID: pic), lateComposition(unknownCapture)),
        row(.composing, "compose failed → session failed, idle says why, captures kept",
            .composeFailed(pictureID: pic, message: "capture 2 does not decode"), .idle,
            [.log(.error, "the session's picture not composed: capture 2 does not decode")] + composeFailedToIdle),
        row(.composing, "compose failed for another picture: ignored",
            .composeFailed(pictureID: unknownCapture, message: "x"), .composing(pictureID: pic), []),
        row(.composing, "shutdown: session cancelled, exit",
            .shutdown, .stopped, seriesShutdown),
        row(.composingAutoPrint, "composed → the PICTURE is printed as review starts",
            .composed(pictureID: pic), .review(pictureID: pic),
            [.log(.info, "the session's picture composed from captures {captures}"), .print(pictureID: pic),
             .show(.review(pictureID: pic)), .setLED(.off), .startTimer(token: tok1, milliseconds: 4000)]),
        row(.composingAutoPrint, "compose failed: nothing printed",
            .composeFailed(pictureID: pic, message: "x"), .idle,
            [.log(.error, "the session's picture not composed: x")] + composeFailedToIdle),
        row(.composingDeferredFault, "composed → review; the fault waits for its end",
            .composed(pictureID: pic), .review(pictureID: pic), composedToReview),
        row(.composingDeferredFault, "compose failed → the deferred fault",
            .composeFailed(pictureID: pic, message: "x"), .fault(reasons: [.camera: cameraLost]),
            [.log(.error, "the session's picture not composed: x"), .endSession(.failed), .stopStream,
             .show(.fault(reasons: [.camera: cameraLost])), .setLED(.fault), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.composingDeferredFault, "camera recovered: the deferred fault is dropped",
            .deviceRecovered(.camera), .composing(pictureID: pic), []),

        // Review of the composed picture.
        row(.reviewPicture, "review over → idle, session completed",
            .timer(token: tok, at: T), .idle,
            [.endSession(.completed), .show(.idle(notice: nil)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 60_000)]),
        row(.reviewPicture, "the picture saved: logged as the picture",
            .saved(captureID: pic, path: photoPath), .review(pictureID: pic),
            [.log(.debug, "the session's picture saved to \(photoPath)")]),
        row(.reviewPicture, "composed again: logged as late (the composer saves it)",
            .composed(pictureID: pic), .review(pictureID: pic), lateComposition(pic)),
        row(.reviewPicture, "compose failed late: ignored",
            .composeFailed(pictureID: pic, message: "x"), .review(pictureID: pic), []),
        row(.reviewPicture, "the compose deadline's token: ignored",
            .timer(token: staleTok, at: T), .review(pictureID: pic), []),

        // One shot with a composer.
        row(.captureSingleComposed, "ok → saved, composed like a series (no review on the raw capture)",
            .captureSucceeded(id: cap), .composing(pictureID: cap1),
            [.keepForSession(captureID: cap), .save(captureID: cap), .compose(pictureID: cap1, captures: [1]), .startTimer(token: tok1, milliseconds: 10_000)]),
        row(.composingSingle, "composed → review of the picture",
            .composed(pictureID: pic), .review(pictureID: pic), composedToReview),
    ]

    /// `composed`/`composeFailed` in the states that never asked for a picture: ignored.
    static let composeEventsElsewhere: [Row] = [Start.idle, .preview, .countdown3, .capture1, .review, .fault, .stopped]
        .flatMap { start -> [Row] in
            let s = start.expectedState
            let state: BoothState = if case .capture = s { .capture(id: cap, attempt: 1) }
                                    else if case .review = s { .review(pictureID: cap) } else { s }
            return [
                row(start, "composed for a picture never asked for: logged as late (the composer saves it)",
                    .composed(pictureID: unknownCapture), state,
                    start == .stopped ? [] : lateComposition(unknownCapture)),
                row(start, "compose failed for a picture never asked for: ignored",
                    .composeFailed(pictureID: unknownCapture, message: "x"), state, []),
            ]
        }

    /// `photoboothctl snapshot` wants the live view: in idle the stream runs (started again after the
    /// idle stop) and the idle stop counts from now; elsewhere nothing changes (a session streams
    /// anyway, a fault has stopped the camera).
    static let liveViewWanted: [Row] = [
        row(.idle, "live view wanted: the stream runs already, the idle stop counts again",
            .liveViewWanted, .idle,
            [.log(.info, "live view asked for: the stream runs, camera.idle_stop counts from now"),
             .startTimer(token: tok1, milliseconds: 60_000)]),
        row(.idleStreamStopped, "live view wanted after the idle stop: the stream starts, the idle stop counts again",
            .liveViewWanted, .idle,
            [.startStream, .log(.info, "live view asked for: the stream runs, camera.idle_stop counts from now"),
             .startTimer(token: tok1, milliseconds: 60_000)]),
    ] + [Start.preview, .countdown3, .capture1, .betweenShots2, .composing, .review, .fault, .stopped].map { start in
        row(start, "live view wanted: nothing changes", .liveViewWanted, start.expectedState, [])
    }

    // MARK: the storage check before a session (the machine asks, the runtime answers at once)

    static let pressIgnoredInFault = BoothCommand.log(.info, "press ignored: booth in fault")
    static let storageFault: [BoothCommand] = [
        .log(.error, "fault (storage): \(storageGone)"), .stopStream, .show(.fault(reasons: [.storage: storageGone])),
        .setLED(.fault), .startTimer(token: tok1, milliseconds: 1000),
    ]

    /// A press in idle asks for the storage check and waits for its answer; every other row of
    /// `storageChecked` answers one (a press elsewhere never asks).
    static let storageCheck: [Row] = [Start.idle, .idleStreamStopped, .idleRefused, .idleAfterSession, .idleInstant,
                                      .idleNoPreview, .idlePreviewOff].map { start in
        row(start, "press: the storage is checked first; nothing else yet",
            .press(id: otherPress, at: T), .idle, [.checkStorage(pressID: otherPress, at: T)])
    } + [
        row(.idle, "the check finds space low: the screen says why, the LED stops inviting, the press is refused",
            .storageChecked(pressID: otherPress, at: T, refusal: lowSpace, fault: nil), .idle,
            [.show(.idle(notice: lowSpace)), .setLED(.off),
             .show(.idle(notice: lowSpace)), .log(.notice, "press refused: \(lowSpace)")]),
        row(.idle, "the check finds the media gone: fault(storage), the press is ignored in fault",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: storageGone), .fault(reasons: [.storage: storageGone]),
            storageFault + [pressIgnoredInFault]),
        row(.idle, "the check finds space low and the media gone: both, then the press is ignored in fault",
            .storageChecked(pressID: otherPress, at: T, refusal: lowSpace, fault: storageGone),
            .fault(reasons: [.storage: storageGone]),
            [.show(.idle(notice: lowSpace)), .setLED(.off)] + storageFault + [pressIgnoredInFault]),
        row(.idleStreamStopped, "the check finds the media gone: fault(storage), no stopStream (not streaming)",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: storageGone), .fault(reasons: [.storage: storageGone]),
            storageFault.filter { $0 != .stopStream } + [pressIgnoredInFault]),
        row(.idleRefused, "the check finds space back: the notice clears, then the session begins",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .preview,
            [.show(.idle(notice: nil)), .setLED(.steady),
             .beginSession, .show(.preview), .setLED(.steady), .startTimer(token: tok1, milliseconds: 2000)]),

        // An answer in a state that never asks: its storage news is taken, its press is handled there.
        row(.preview, "storage checked (fine): the press goes on as a press in preview → countdown",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .countdown(remaining: 3),
            [.prepareStill, .show(.countdown(remaining: 3, shot: 1, of: 1)), .setLED(.blink), .startTimer(token: tok1, milliseconds: 1000)]),
        row(.preview, "storage checked, media gone: session failed, fault, the press ignored in fault",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: storageGone),
            .fault(reasons: [.storage: storageGone]), sessionFault(.storage, storageGone) + [pressIgnoredInFault]),
        row(.countdown3, "storage checked: the press is ignored in countdown",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .countdown(remaining: 3),
            [.log(.info, "press ignored in countdown")]),
        row(.capture1, "storage checked, space low: the capture goes on, the press is ignored",
            .storageChecked(pressID: otherPress, at: T, refusal: lowSpace, fault: nil), .capture(id: cap, attempt: 1),
            [.log(.info, "press ignored in capture")]),
        row(.betweenShots2, "storage checked: the press starts shot 2's countdown",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .countdown(remaining: 3), countdownShot2),
        row(.composing, "storage checked: the press is ignored in composing",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .composing(pictureID: pic),
            [.log(.info, "press ignored in composing")]),
        row(.review, "storage checked: the press is ignored in review",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .review(pictureID: cap),
            [.log(.info, "press ignored in review")]),
        row(.reviewPressPrint, "storage checked: the press prints (print.mode = press)",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .review(pictureID: cap),
            [.print(pictureID: cap), .log(.info, "print of the session's picture (capture {capture}) requested by a press")]),
        row(.fault, "storage checked: the press is ignored in fault",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .fault(reasons: [.camera: cameraLost]),
            [pressIgnoredInFault]),
        row(.fault, "storage checked, media gone: the reason is added, the press is ignored",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: storageGone), .fault(reasons: cameraAndStorage),
            [.log(.error, "fault (storage): \(storageGone)"), .show(.fault(reasons: cameraAndStorage)), pressIgnoredInFault]),
        row(.stopped, "storage checked: ignored",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: storageGone), .stopped, []),
    ]

    // MARK: a print that waits for its picture's save

    static let printWaitsForSave: [Row] = [
        row(.reviewAutoPrint, "the print's bytes were gone: it waits for the save (nothing to do now)",
            .printWaitsForSave(pictureID: cap), .review(pictureID: cap), []),
        row(.reviewPressPrintRequested, "the print's bytes were gone: it waits for the save",
            .printWaitsForSave(pictureID: cap), .review(pictureID: cap), []),
        row(.reviewAutoPrint, "for a picture never asked to print: ignored",
            .printWaitsForSave(pictureID: unknownCapture), .review(pictureID: cap), []),
        row(.review, "print.mode = off, nothing asked to print: ignored",
            .printWaitsForSave(pictureID: cap), .review(pictureID: cap), []),
        row(.reviewPressPrintSkipped, "its printing skipped: ignored",
            .printWaitsForSave(pictureID: cap), .review(pictureID: cap), []),
        row(.reviewPrintAwaitingSave, "its save arrives: printed from the file",
            .saved(captureID: cap, path: photoPath), .review(pictureID: cap),
            [.log(.debug, "capture {capture} saved to \(photoPath)"), .printSaved(pictureID: cap, path: photoPath)]),
        row(.reviewPrintAwaitingSave, "another save: logged only",
            .saved(captureID: 7, path: photoPath), .review(pictureID: cap), [.log(.debug, "capture 7 saved to \(photoPath)")]),
        row(.reviewPrintAwaitingSave, "long press of another press: printing skipped (the wait is dropped)",
            .longPress(id: otherPress), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of the session's picture (capture {capture}) skipped by a long press")]),
        row(.reviewPrintAwaitingSave, "review over → idle (the print still waits for the save)",
            .timer(token: tok, at: T), .idle,
            [.endSession(.completed), .show(.idle(notice: nil)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 60_000)]),
    ] + [Start.idle, .preview, .countdown3, .capture1, .betweenShots2, .composing, .fault, .stopped].map { start in
        row(start, "print waits for a save: no print asked for here, ignored",
            .printWaitsForSave(pictureID: unknownCapture), start.expectedState, [])
    }

    // MARK: --auto-press: the booth presses by itself whenever it is idle

    static let autoPress: [Row] = [
        row(.idleAutoPress, "press (the automatic one): the storage is checked first; no new press while it is asked",
            .press(id: otherPress, at: T), .idle, [.checkStorage(pressID: otherPress, at: T)]),
        row(.idleAutoPress, "its storage check answered (fine): the session begins, no new press",
            .storageChecked(pressID: otherPress, at: T, refusal: nil, fault: nil), .preview,
            [.beginSession, .show(.preview), .setLED(.steady), .startTimer(token: tok1, milliseconds: 2000)]),
        row(.idleAutoPress, "idle timer: the stream stops; the automatic press is already on its way",
            .timer(token: tok, at: T), .idle, [.stopStream, .log(.info, "stream stopped after idle time")]),
        row(.reviewWithAutoPress, "review over → idle, and the next automatic press is asked for",
            .timer(token: tok, at: T), .idle,
            [.endSession(.completed), .show(.idle(notice: nil)), .setLED(.steady),
             .startTimer(token: tok1, milliseconds: 60_000), .pressLater(milliseconds: autoPressDelay)]),
        row(.reviewWithAutoPress, "press: ignored in review, no automatic press outside idle",
            .press(id: otherPress, at: T), .review(pictureID: cap), [.log(.info, "press ignored in review")]),
        row(.faultAutoPressArrived, "recovered → idle, and the next automatic press is asked for",
            .deviceRecovered(.camera), .idle, recoveredToIdle + [.pressLater(milliseconds: autoPressDelay)]),
        row(.faultAutoPressArrived, "press: ignored in fault, no automatic press outside idle",
            .press(id: otherPress, at: T), .fault(reasons: [.camera: cameraLost]), [pressIgnoredInFault]),
    ]

    static let rows: [Row] = idle + idleVariants + preview + countdown + capture + review + fault + stopped
        + series + composeEventsElsewhere + liveViewWanted + storageCheck + printWaitsForSave + autoPress + reviewKeys

    // MARK: review keys (button.print_key, button.skip_key): in review only

    static func keyIgnored(_ action: ReviewAction, _ state: String) -> [BoothCommand] {
        [.log(.info, "\(action.rawValue) key ignored in \(state): it acts in review only")]
    }
    static let picture = "the session's picture (capture {capture})"

    static let reviewKeys: [Row] = [
        row(.idle, "print key: ignored, never a session", .reviewAction(.print), .idle, keyIgnored(.print, "idle")),
        row(.preview, "skip key: ignored", .reviewAction(.skip), .preview, keyIgnored(.skip, "preview")),
        row(.countdown3, "print key: ignored", .reviewAction(.print), .countdown(remaining: 3), keyIgnored(.print, "countdown")),
        row(.capture1, "skip key: ignored", .reviewAction(.skip), .capture(id: cap, attempt: 1), keyIgnored(.skip, "capture")),
        row(.betweenShots2, "print key: ignored", .reviewAction(.print), .betweenShots(next: 2), keyIgnored(.print, "between-shots")),
        row(.composing, "print key: ignored", .reviewAction(.print), .composing(pictureID: pic), keyIgnored(.print, "composing")),
        row(.fault, "print key: ignored", .reviewAction(.print), .fault(reasons: [.camera: cameraLost]), keyIgnored(.print, "fault")),
        row(.stopped, "print key: ignored", .reviewAction(.print), .stopped, []),
        row(.review, "print key with print.mode off: ignored",
            .reviewAction(.print), .review(pictureID: cap), [.log(.info, "print key ignored: print.mode is off")]),
        row(.review, "skip key with print.mode off: ignored",
            .reviewAction(.skip), .review(pictureID: cap), [.log(.info, "skip key ignored: print.mode is off")]),
        row(.reviewPressPrint, "print key → print (review goes on)",
            .reviewAction(.print), .review(pictureID: cap),
            [.print(pictureID: cap), .log(.info, "print of \(picture) requested by the print key")]),
        row(.reviewPressPrint, "skip key → printing skipped",
            .reviewAction(.skip), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of \(picture) skipped by the skip key")]),
        row(.reviewPressPrintRequested, "print key after a press printed: once only",
            .reviewAction(.print), .review(pictureID: cap), [.log(.info, "print key: the print of \(picture) is already requested")]),
        row(.reviewPressPrintRequested, "skip key after the print was requested: skipped",
            .reviewAction(.skip), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of \(picture) skipped by the skip key")]),
        row(.reviewPressPrintSkipped, "print key after the skip: ignored",
            .reviewAction(.print), .review(pictureID: cap), [.log(.info, "print key ignored: printing of \(picture) was skipped")]),
        row(.reviewPressPrintSkipped, "skip key again: ignored",
            .reviewAction(.skip), .review(pictureID: cap), [.log(.info, "skip key: printing of \(picture) is already skipped")]),
        row(.reviewAutoPrint, "print key with print.mode auto: already requested",
            .reviewAction(.print), .review(pictureID: cap), [.log(.info, "print key: the print of \(picture) is already requested")]),
        row(.reviewAutoPrint, "skip key with print.mode auto: skipped",
            .reviewAction(.skip), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of \(picture) skipped by the skip key")]),
        row(.reviewPrintAwaitingSave, "skip key while the print waits for the save: skipped, the wait dropped",
            .reviewAction(.skip), .review(pictureID: cap),
            [.skipPrint(pictureID: cap), .log(.info, "printing of \(picture) skipped by the skip key")]),
    ]
}

@Suite("BoothMachine state × event table")
struct MachineTableTests {
    @Test("row", arguments: MachineTable.rows)
    func tableRow(_ row: Row) throws {
        var drive = row.start.reach()
        try #require(drive.machine.state == row.start.expectedState,
                     "the helper did not reach \(row.start): \(drive.machine.state)")
        let resolve = drive.resolver
        let before = drive.machine
        let event = resolve.event(row.event)

        let out = drive.machine.handle(event)

        #expect(drive.machine.state == resolve.state(row.state))
        #expect(out == row.commands.map(resolve.command))

        // The last timer started is the one live timer; no timer started leaves the token alone,
        // except that shutdown makes every outstanding timer stale.
        let started = out.compactMap { c -> UInt64? in
            if case let .startTimer(token, _) = c { token } else { nil }
        }
        if let last = started.last {
            #expect(drive.machine.timerToken == last)
            #expect(started.count == 1, "one timer per event")
        } else if case .shutdown = event, before.state != .stopped {
            #expect(drive.machine.timerToken != before.timerToken)
        } else {
            #expect(drive.machine.timerToken == before.timerToken)
        }

        // `streaming` follows the stream commands.
        var streaming = before.streaming
        for c in out {
            if c == .startStream { streaming = true }
            if c == .stopStream { streaming = false }
        }
        #expect(drive.machine.streaming == streaming)

        // The settings change only with applyReload.
        if let expected = row.config {
            #expect(drive.machine.config == expected)
        }
        if !out.contains(.applyReload) {
            #expect(drive.machine.config == before.config)
        }
    }

    /// Every BoothState case × every BoothEvent case has at least one row, judged by the state the
    /// helper really reached. `StateKind`/`EventKind` switch over the enums without `default:`, so a
    /// new state or event stops this target compiling until it has a kind, and then fails here until
    /// it has rows.
    @Test("every (state, event) pair has a row, including stale timers and stale capture ids")
    func everyPairCovered() {
        var pairs: Set<String> = []
        var staleTimer: Set<StateKind> = []
        var staleCaptureOK = false, staleCaptureFailed = false
        for row in MachineTable.rows {
            let drive = row.start.reach()
            let state = StateKind(drive.machine.state)
            let event = drive.resolver.event(row.event)
            pairs.insert("\(state.rawValue) × \(EventKind(event).rawValue)")
            if case let .timer(token, _) = event, token != drive.machine.timerToken { staleTimer.insert(state) }
            if case let .capture(current, _) = drive.machine.state {
                if case let .captureSucceeded(id) = event, id != current { staleCaptureOK = true }
                if case let .captureFailed(id, _, _) = event, id != current { staleCaptureFailed = true }
            }
        }
        for s in StateKind.allCases {
            for e in EventKind.allCases {
                #expect(pairs.contains("\(s.rawValue) × \(e.rawValue)"), "no row for \(s.rawValue) × \(e.rawValue)")
            }
            #expect(staleTimer.contains(s), "no stale-timer row for \(s.rawValue)")
        }
        #expect(staleCaptureOK, "no row with a stale id for capture ok in capture")
        #expect(staleCaptureFailed, "no row with a stale id for capture failed in capture")
        #expect(pairs.count == StateKind.allCases.count * EventKind.allCases.count)
    }

    @Test("every starting state the table uses is used by a row")
    func everyStartUsed() {
        let used = Set(MachineTable.rows.map(\.start))
        for start in Start.allCases {
            #expect(used.contains(start), "\(start) has no row")
        }
    }
}
