/// Why the booth is in its fault state. One reason per kind; each carries the
/// operator-facing message of its latest occurrence.
public enum FaultKind: String, Hashable, Sendable, CaseIterable, Comparable {
    /// The camera is missing, failed to open, or stopped delivering frames.
    case camera
    /// The button line or input device could not be opened (wrong chip/line, busy, unplugged) or the button is stuck.
    case button
    /// The photos directory is not writable, gone (removable media), or full while saving.
    case storage

    public static func < (a: FaultKind, b: FaultKind) -> Bool { a.rawValue < b.rawValue }

    /// How a camera fault's reason starts when the camera is only resting: its battery is empty. The
    /// guests then read `text.fault_camera_resting`, not that the camera is gone.
    public static let cameraRestingPrefix = "camera resting: "
}

/// The booth's state. `handle(_:)` on ``BoothMachine`` is the only way it changes.
public enum BoothState: Equatable, Sendable {
    /// Waiting for a guest. The stream may be running (live view) or stopped after `camera.idle_stop`.
    case idle
    /// Live view before the countdown.
    case preview
    /// Counting down; `remaining` is the digit on screen (whole seconds, ≥ 1). The shot it counts
    /// down to is ``BoothMachine/shot``.
    case countdown(remaining: Int)
    /// Waiting for the first good frame at or after the trigger. `attempt` is 1 or 2.
    case capture(id: UInt64, attempt: Int)
    /// Between two shots of a series (`session.shots` > 1): the live view, with shot `next` (2…4)
    /// announced, for `session.between_shots`; its countdown follows.
    case betweenShots(next: Int)
    /// Every shot is taken; the runtime composes picture `pictureID` from the session's captures
    /// (``BoothCommand/compose(pictureID:captures:)``), answered by `composed` or `composeFailed`.
    case composing(pictureID: UInt64)
    /// Showing picture `pictureID` for `session.review`: the composed picture, or for one shot
    /// without a composer the capture itself (then `pictureID` is the capture's id).
    case review(pictureID: UInt64)
    /// Out of service until every reason clears. Keys are the fault kinds, values their messages.
    case fault(reasons: [FaultKind: String])
    /// Shut down (SIGTERM); every event is ignored.
    case stopped

    /// A short lowercase name for logs and status: "idle", "countdown", "fault"…
    public var name: String {
        switch self {
        case .idle: "idle"
        case .preview: "preview"
        case .countdown: "countdown"
        case .capture: "capture"
        case .betweenShots: "between-shots"
        case .composing: "composing"
        case .review: "review"
        case .fault: "fault"
        case .stopped: "stopped"
        }
    }
}

/// Something that happened, fed to ``BoothMachine/handle(_:)`` by the runtime.
public enum BoothEvent: Equatable, Sendable {
    /// A debounced press. `id` identifies the physical press (its long press repeats it);
    /// `at` is the press's time on CLOCK_MONOTONIC (the kernel's edge timestamp for GPIO).
    /// In idle the machine first asks for the storage (``BoothCommand/checkStorage(pressID:at:)``)
    /// and the press goes on with the answer, ``storageChecked(pressID:at:refusal:fault:)``.
    case press(id: UInt64, at: MonotonicInstant)
    /// The answer to ``BoothCommand/checkStorage(pressID:at:)``, carrying its press on: `refusal` is the
    /// free-space check's (nil when there is room, as in ``storageStatus(refusal:)``), `fault` the
    /// photos' media problem (nil when mounted and writable; else a storage fault, as
    /// ``deviceFault(_:message:)``). Then the press `pressID` at `at` is handled in the state reached.
    case storageChecked(pressID: UInt64, at: MonotonicInstant, refusal: String?, fault: String?)
    /// The press `id` has been held for `button.long_press`.
    case longPress(id: UInt64)
    /// A review key of a booth with more buttons (`button.print_key`, `button.skip_key`): print the
    /// picture under review, or skip printing it. Acts in review only; ignored (logged) elsewhere.
    case reviewAction(ReviewAction)
    /// A timer started by ``BoothCommand/startTimer(token:milliseconds:)`` fired at `at`.
    /// A token other than the machine's current one is stale and ignored.
    case timer(token: UInt64, at: MonotonicInstant)
    /// Capture `id` got a good frame; the runtime holds its bytes until ``BoothCommand/save(captureID:)``.
    /// A capture other than the one the machine waits for (its session moved on) is saved all the same.
    case captureSucceeded(id: UInt64)
    /// Capture `id` failed at `at` (e.g. the camera returned an error); `message` says why.
    /// A retry takes the first good frame at or after `at`.
    case captureFailed(id: UInt64, message: String, at: MonotonicInstant)
    /// Capture or picture `id` is on disk at `path`.
    case saved(captureID: UInt64, path: String)
    /// Saving capture or picture `id` failed. `noSpace` is true for ENOSPC; the runtime keeps the bytes
    /// and saves them once the storage fault clears.
    case saveFailed(captureID: UInt64, noSpace: Bool, message: String)
    /// A device failed or is missing (camera lost, button line busy or stuck, storage gone).
    case deviceFault(FaultKind, message: String)
    /// A device that had failed works again (camera reopened, button released, storage back).
    case deviceRecovered(FaultKind)
    /// Result of the latest free-space check: nil when there is room, else the reason sessions are refused.
    case storageStatus(refusal: String?)
    /// The operator changed the settings; the machine applies `config` in idle or fault only.
    case reload(CoreConfig)
    /// Picture `pictureID` asked for by ``BoothCommand/compose(pictureID:captures:)`` is composed and
    /// held in memory (its save follows and is answered by `saved` or `saveFailed` with its id).
    /// A picture composed after its session ended (the compose deadline passed) is only logged.
    case composed(pictureID: UInt64)
    /// Composing picture `pictureID` failed (a capture that does not decode, no composer for
    /// several shots); `message` says why. The captures stay on disk.
    case composeFailed(pictureID: UInt64, message: String)
    /// The operator wants the live view outside a session (`photoboothctl snapshot`, to frame the
    /// shot): in idle the stream starts when `camera.idle_stop` had stopped it, and the idle stop
    /// counts again from now. Elsewhere nothing changes.
    case liveViewWanted
    /// The answer to ``BoothCommand/print(pictureID:)`` when picture `pictureID`'s bytes were no longer
    /// in memory and its `saved` was not handled yet (the storage thread let them go just now): the
    /// machine prints it from its file when that `saved` arrives (``BoothCommand/printSaved(pictureID:path:)``).
    case printWaitsForSave(pictureID: UInt64)
    /// SIGTERM: stop.
    case shutdown
}

/// What the guest sees; the display draws it (over the live view where the stream runs).
public enum Screen: Equatable, Sendable {
    /// Waiting: "Press the button", or `notice` when sessions are refused or the last one failed.
    case idle(notice: String?)
    /// Live view with a prompt.
    case preview
    /// A large digit, `remaining` seconds, before shot `shot` of `of` (1-based; with `of` > 1 the
    /// screen also says which shot, `text.countdown_shot`).
    case countdown(remaining: Int, shot: Int, of: Int)
    /// Live view between shots, announcing shot `next` of `of` (`text.between_shots`, "2 of 4").
    case betweenShots(next: Int, of: Int)
    /// The white flash at the trigger.
    case capture
    /// Picture `pictureID` shown back to the guest (the composed picture, or the single capture).
    case review(pictureID: UInt64)
    /// Out of service, with the reasons in words.
    case fault(reasons: [FaultKind: String])
}

/// A review key's action (``BoothEvent/reviewAction(_:)``).
public enum ReviewAction: String, Equatable, Sendable, CaseIterable {
    /// Print the picture under review (as a press does in `print.mode = press`), once; in any mode but off.
    case print
    /// Skip printing it (as a long press of another press does), in any mode but off.
    case skip
}

/// What the LED does.
public enum LEDPattern: String, Equatable, Sendable {
    /// Off.
    case off
    /// Steady on: the booth invites a press.
    case steady
    /// Blinking: countdown under way.
    case blink
    /// A distinct pattern: the booth is in fault.
    case fault
}

/// How a session ended, for counters and logs.
public enum SessionEnd: String, Equatable, Sendable {
    /// A capture was taken and reviewed.
    case completed
    /// The guest cancelled with a long press, the preview timed out, or the booth stopped mid-session.
    case cancelled
    /// A capture failed twice, composing the picture failed, or a device fault interrupted the session.
    case failed
}

/// syslog priorities, as journald reads them from a `<N>` prefix.
public enum LogPriority: Int, Sendable, Comparable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    public static func < (a: LogPriority, b: LogPriority) -> Bool { a.rawValue < b.rawValue }
}

/// An effect for the runtime to carry out. The machine itself does no I/O.
public enum BoothCommand: Equatable, Sendable {
    /// Start the camera stream at the preview size (opening the camera if needed).
    case startStream
    /// Stop the stream and release the camera.
    case stopStream
    /// Draw a screen.
    case show(Screen)
    /// Get the camera ready for the still to come (a DSLR focuses now, not at zero): sent as a shot's
    /// countdown shows its first number, just before that screen. Cameras with nothing to prepare ignore it.
    case prepareStill
    /// Set the LED.
    case setLED(LEDPattern)
    /// Start a one-shot timer; when it fires, send ``BoothEvent/timer(token:at:)`` with this token.
    case startTimer(token: UInt64, milliseconds: Int)
    /// Take capture `id`: the first good frame whose timestamp is at or after `trigger`
    /// (CLOCK_MONOTONIC), answered by `captureSucceeded` or `captureFailed` with this id.
    case capture(id: UInt64, trigger: MonotonicInstant)
    /// Write capture `captureID` to storage, answered by `saved` or `saveFailed`.
    case save(captureID: UInt64)
    /// Keep capture `captureID`'s bytes at hand for the session under way (its picture, the review, a
    /// print) after its save lets them go; they are let go when the next session begins.
    case keepForSession(captureID: UInt64)
    /// Check the photos' storage (free space, and that its media is mounted and writable) before the
    /// press `pressID` at `at` may start a session; answered by
    /// ``BoothEvent/storageChecked(pressID:at:refusal:fault:)`` before any other event.
    case checkStorage(pressID: UInt64, at: MonotonicInstant)
    /// A session starts (a session number is allocated, counters count it).
    case beginSession
    /// The session ended.
    case endSession(SessionEnd)
    /// Try the failed devices again (reopen the camera, re-request the line, recheck storage,
    /// save capture bytes held back by ENOSPC), answering with `deviceRecovered` or `deviceFault`.
    case retry([FaultKind])
    /// Apply the settings of the reload just accepted (restart devices whose settings changed).
    case applyReload
    /// A line for the log.
    case log(LogPriority, String)
    /// Finish saves in flight (at most 2 s), release every device and exit 0.
    case exit
    /// Print picture `pictureID` (`print.mode` auto at review start, or press during review): the
    /// composed picture, or for one shot without a composer the capture. The print runs beside the
    /// session: the runtime journals the request and holds or submits it. When the picture's bytes are
    /// no longer in memory and its file is not noted yet, the runtime answers
    /// ``BoothEvent/printWaitsForSave(pictureID:)``.
    case print(pictureID: UInt64)
    /// `--auto-press`: press the button by itself in `milliseconds` (a press with an id of the
    /// runtime's own, timestamped then), because the booth is idle.
    case pressLater(milliseconds: Int)
    /// Print picture `pictureID` from its file at `path`, just saved: the print that waited for this save
    /// (``BoothEvent/printWaitsForSave(pictureID:)``).
    case printSaved(pictureID: UInt64, path: String)
    /// The guest long-pressed during review: do not print picture `pictureID` (a request not yet
    /// printed is cancelled).
    case skipPrint(pictureID: UInt64)
    /// Compose picture `pictureID` from `captures` (capture ids in shot order, each answered by
    /// `captureSucceeded`), off the main loop; answered by `composed` or `composeFailed` with this id.
    /// Once composed, the picture is saved beside its captures (answered by `saved`/`saveFailed`).
    case compose(pictureID: UInt64, captures: [UInt64])
    /// A long press cancelled a series with `session.cancelled_captures = delete`: delete these
    /// captures (their files once saved, or the bytes still held).
    case deleteCaptures([UInt64])
}

/// `session.cancelled_captures`: what a long press during a series does with the captures already taken.
public enum CancelledCaptures: String, Equatable, Sendable, CaseIterable {
    /// They stay on disk (nothing is printed).
    case keep
    /// They are deleted.
    case delete
}

/// `print.mode`: when a picture is printed.
public enum PrintMode: String, Equatable, Sendable, CaseIterable {
    /// Never.
    case off
    /// Every picture, once, when its review starts; a long press during review skips it.
    case auto
    /// When the guest presses during review; a long press during review skips it.
    case press
}

/// The settings the state machine itself needs, in milliseconds.
public struct CoreConfig: Equatable, Sendable {
    /// `session.preview`: time in preview before the countdown starts; nil (off) = wait for a press.
    public var previewMilliseconds: Int?
    /// `session.preview_timeout`: with the preview off, preview returns to idle after this long.
    public var previewTimeoutMilliseconds: Int
    /// `session.countdown` in whole seconds (0 = the press itself is the trigger).
    public var countdownSeconds: Int
    /// `session.review`: time the capture is shown.
    public var reviewMilliseconds: Int
    /// `camera.capture_timeout`: deadline for a capture after the trigger.
    public var captureTimeoutMilliseconds: Int
    /// `camera.idle_stop`: the stream stops after this long in idle.
    public var idleStopMilliseconds: Int
    /// `print.mode`.
    public var printMode: PrintMode
    /// `session.shots`: shots per session, 1 to 4.
    public var shots: Int
    /// `session.between_shots`: the live view between two shots, before the next countdown.
    public var betweenShotsMilliseconds: Int
    /// `session.cancelled_captures`.
    public var cancelledCaptures: CancelledCaptures
    /// Whether a one-shot session is composed too (the runtime has a picture composer). When false,
    /// review starts on the capture itself the moment it is taken and prints it (no compose).
    /// Sessions of 2–4 shots are always composed.
    public var composesSingleShot: Bool
    /// Deadline for composing the picture after the last shot.
    public var composeTimeoutMilliseconds: Int

    public init(previewMilliseconds: Int? = 3000, previewTimeoutMilliseconds: Int = 30_000,
                countdownSeconds: Int = 3, reviewMilliseconds: Int = 5000,
                captureTimeoutMilliseconds: Int = 3000, idleStopMilliseconds: Int = 300_000,
                printMode: PrintMode = .off, shots: Int = 1, betweenShotsMilliseconds: Int = 2000,
                cancelledCaptures: CancelledCaptures = .keep, composesSingleShot: Bool = false,
                composeTimeoutMilliseconds: Int = 10_000) {
        self.printMode = printMode
        self.shots = shots
        self.betweenShotsMilliseconds = betweenShotsMilliseconds
        self.cancelledCaptures = cancelledCaptures
        self.composesSingleShot = composesSingleShot
        self.composeTimeoutMilliseconds = composeTimeoutMilliseconds
        self.previewMilliseconds = previewMilliseconds
        self.previewTimeoutMilliseconds = previewTimeoutMilliseconds
        self.countdownSeconds = countdownSeconds
        self.reviewMilliseconds = reviewMilliseconds
        self.captureTimeoutMilliseconds = captureTimeoutMilliseconds
        self.idleStopMilliseconds = idleStopMilliseconds
    }
}
