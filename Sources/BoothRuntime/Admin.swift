import BoothCore
import BoothPorts
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

// The runtime's side of the control socket: what BoothControl (the socket, its protocol, `status`) reads
// of the running booth and asks of it. The replies themselves are BoothControl's. What only BoothControl
// uses is `package` (the status snapshot and a few thread-safe reads); press, snapshot, reload and the
// settings in force are public, as before.

/// What the runtime keeps for the admin tool: start time, last press, the persisted totals.
public final class RuntimeAdmin: Sendable {
    /// Monotonic and wall-clock time at start.
    let startedMonotonic: MonotonicInstant
    let startedEpoch: Int
    private let lastPress = Mutex<MonotonicInstant?>(nil)
    private let nextPressID = Mutex<UInt64>(1 << 61)
    /// The totals across restarts, in `<storage.dir>/.photobooth-stats.json` (the storage port's ``StatsRecording``).
    public let stats: any StatsRecording
    private let clock: any MonotonicClock
    /// Notified when a control press's outcome is noted (``pressWithOutcome(timeoutSeconds:)`` waits on it).
    let pressAnswers: ClockCondition
    /// The camera's live frames as they arrive (``BoothRuntime/snapshotJPEG(timeoutSeconds:)`` waits on them).
    let liveFrames: LiveFrames

    init(clock: any MonotonicClock, stats: any StatsRecording) {
        self.clock = clock
        pressAnswers = ClockCondition(clock: clock)
        liveFrames = LiveFrames(clock: clock)
        startedMonotonic = clock.now()
        startedEpoch = Int(time(nil))
        self.stats = stats
    }

    func notePress(at: MonotonicInstant) { lastPress.withLock { $0 = at } }
    var lastPressAt: MonotonicInstant? { lastPress.withLock { $0 } }
    /// Ids for presses from the control socket, apart from the button's and auto-press's.
    func takePressID() -> UInt64 { nextPressID.withLock { n in defer { n += 1 }; return n } }
    /// Whether `id` is one of the control socket's press ids (``takePressID()``).
    static func isControlPress(_ id: UInt64) -> Bool { id >= 1 << 61 }

    /// What the machine did with a control-socket press: the states around it and, when it ignored or
    /// refused it, the log line that says so (`press ignored in review`).
    struct PressOutcome: Sendable, Equatable {
        var before: String
        var after: String
        var ignoredOrRefused: String?
    }
    private let pressOutcomes = Mutex<[UInt64: PressOutcome]>([:])
    /// Noted by the main loop after the machine handled control press `id` (the newest 16 are kept).
    func notePressOutcome(_ id: UInt64, _ outcome: PressOutcome) {
        pressOutcomes.withLock { o in
            o[id] = outcome
            if o.count > 16, let oldest = o.keys.min() { o[oldest] = nil }
        }
        pressAnswers.notify()
    }
    /// The outcome of control press `id`, once the main loop handled it (and forgets it); nil before.
    func takePressOutcome(_ id: UInt64) -> PressOutcome? { pressOutcomes.withLock { $0.removeValue(forKey: id) } }
}

/// Counts the camera's live frames and wakes whoever waits for the next one: a snapshot asked for while
/// the stream starts waits for a frame, not a fixed time.
final class LiveFrames: Sendable {
    let arrived: ClockCondition
    private let count = Mutex(0)
    init(clock: any MonotonicClock) { arrived = ClockCondition(clock: clock) }
    /// Frames since start.
    var seen: Int { count.withLock { $0 } }
    /// A live frame arrived (the camera's thread).
    func note() {
        count.withLock { $0 &+= 1 }
        arrived.notify()
    }
}

/// How a reload request went.
public enum ReloadOutcome: Sendable, Equatable {
    /// Accepted: what changed and how each key took effect (at once in idle or fault, or when the
    /// session under way ends).
    case accepted(ReloadReply)
    /// The file (or an override) is invalid; the running settings stay. Every problem is listed.
    case refused(SettingsError)
}

/// `reload` (and `photoboothctl config set`): exactly which keys changed and how each took effect.
/// The runtime's answer to ``BoothRuntime/requestReload(timeoutSeconds:)``, sent as is on the control socket.
public struct ReloadReply: Codable, Sendable, Equatable {
    /// True when the changes were applied before this reply (idle or fault), also when nothing changed;
    /// false when they apply when the session under way ends.
    public var appliedNow: Bool
    /// The state the booth was in when the reload was applied (or deferred).
    public var state: String
    /// Every key whose value in the file differs from the settings in force, in schema order; empty
    /// when nothing changed. Nil from an older daemon.
    public var changes: [Change]?

    /// One changed key.
    public struct Change: Codable, Sendable, Equatable {
        /// Full `section.key`.
        public var key: String
        /// The value in force before, and the file's value, as written in a config file.
        public var from: String
        public var to: String
        /// ``ReloadRule/word``: `at-once`, `next-session`, `camera-stream`, `reopen-screen`,
        /// `reopen-button`, `reopen-led`, `reopen-printer` or `restart`.
        public var rule: String
        /// True when the new value is in force now; false when it waits for the session's end or a restart.
        public var applied: Bool
        /// What happened, for a person: `applied at once`, `screens reopened`, `applies when the session
        /// under way ends`, ``ReloadRule/restartEffect``, or `refused: REASON; the file and the running
        /// setting now differ` (a new `storage.dir` that failed the start's checks).
        public var effect: String
        /// True when the daemon refused the new value (a `storage.dir` that failed the start's checks, and a
        /// `storage.mount` changed with it); nil otherwise, and from an older daemon.
        public var refused: Bool?

        public init(_ change: SettingChange, applied: Bool) {
            key = change.key
            from = change.from
            to = change.to
            rule = change.rule.word
            self.applied = applied
            effect = applied || change.rule == .restart || change.rule == .galleryRestart ? change.rule.effect : ReloadRule.deferredEffect
        }
    }

    public init(appliedNow: Bool, state: String, changes: [Change]?) {
        self.appliedNow = appliedNow
        self.state = state
        self.changes = changes
    }

    /// The keys whose new value the daemon refused (``Change/refused``), in schema order: `photoboothctl reload`
    /// and `config set` exit 75 when there is one.
    public var refusedKeys: [String] { (changes ?? []).filter { $0.refused == true }.map(\.key) }

    /// The reply in words, as `photoboothctl reload` prints it and the daemon logs it (after `settings `):
    /// `reloaded: nothing changed`, or `reloaded: 2 keys changed` and a line per key,
    /// `  camera.rotation: 0 -> 90, applied at once`.
    public var text: String {
        guard let changes else {
            return appliedNow ? "reloaded: in force now" : "reloaded: \(ReloadRule.deferredEffect) (state \(state))"
        }
        guard !changes.isEmpty else { return "reloaded: nothing changed" }
        var head = "reloaded: \(changes.count == 1 ? "1 key" : "\(changes.count) keys") changed"
        if !appliedNow { head += " (state \(state): \(ReloadRule.deferredEffect))" }
        return ([head] + changes.map { c in
            "  \(c.key): \(c.from.isEmpty ? "(empty)" : c.from) -> \(c.to.isEmpty ? "(empty)" : c.to), \(c.effect)"
        }).joined(separator: "\n")
    }
}

/// What a control-socket press did (``BoothRuntime/pressWithOutcome(timeoutSeconds:)``).
public struct PressOutcome: Sendable, Equatable {
    /// The state's name when the press was posted (or, once handled, when the machine took it).
    public var stateBefore: String
    /// The state's name after the machine handled it; nil when the loop did not handle it in time.
    public var stateAfter: String?
    /// Why the machine ignored or refused it (the log line that says so); nil when it acted on it.
    public var ignored: String?
}

/// The running booth's figures at one moment, for the control socket's `status` and `devices`
/// (BoothControl makes its ``StatusReport`` of them). Read by ``BoothRuntime/statusSnapshot()``.
package struct RuntimeStatus: Sendable {
    /// The machine's state, the shot under way (1-based, 0 outside a session) of `shots`.
    package var state: BoothState
    package var shot: Int
    package var shots: Int
    /// Why sessions are refused in idle (low free space), nil when they are not.
    package var storageRefusal: String?
    /// Counts since this start.
    package var counters: BoothCounters
    /// The settings as the last reload applied them (``settingsInForce`` reads the components).
    package var settings: Settings
    /// The settings the running components use (``BoothRuntime/settingsInForce()``).
    package var settingsInForce: Settings
    /// The button's ``ButtonDevice/identity``, nil without a button.
    package var buttonIdentity: String?
    /// True while the button is open, running and not ended.
    package var buttonRunning: Bool
    /// ``ButtonDevice/ended``: why a button that did not fail delivers no more presses.
    package var buttonEnded: String?
    /// Seconds (monotonic) since the daemon started, and its start as epoch seconds (wall clock).
    package var uptimeSeconds: Double
    package var startedEpoch: Int
    /// Seconds (monotonic) since the last press, nil when none since start.
    package var secondsSinceLastPress: Double?
    /// The camera port's figures.
    package var camera: CameraSourceStatus
    /// The photos directory, its free bytes (nil when `statvfs` failed), the next session's number.
    package var storageDirectory: String
    package var freeBytes: UInt64?
    package var nextSession: Int
    /// Captures saved since start.
    package var savedSinceStart: Int
    /// ``PhotoStorage/powerCutNotes``: what a power cut can do on the photos' file system, temps kept.
    package var powerCutNotes: [String]
    /// The printer port's status.
    package var printer: PrinterStatus
    /// Totals across restarts.
    package var stats: BoothStats
    /// The rotations in use and where they come from.
    package var orientation: OrientationStatus
}

extension BoothRuntime {
    /// The figures `status` reports, now. Thread-safe (reads the loop's state under its lock, the
    /// components through their thread-safe status). Does not read the config file
    /// (``configFileSettings()`` does).
    package func statusSnapshot() -> RuntimeStatus {
        let (machineState, refusal, counters, settings) = state.withLock { s in
            (s.machine.state, s.machine.storageRefusal, s.counters, s.settings)
        }
        let (button, buttonRunning) = (inputs.button, inputs.buttonStarted)
        let (shot, shots) = state.withLock { ($0.machine.shot, $0.machine.shots) }
        let now = clock.now()
        return RuntimeStatus(
            state: machineState, shot: shot, shots: shots, storageRefusal: refusal, counters: counters,
            settings: settings, settingsInForce: settingsInForce(),
            buttonIdentity: button?.identity,
            buttonRunning: buttonRunning && (button?.isRunning ?? false) && button?.ended == nil,
            buttonEnded: button?.ended,
            uptimeSeconds: now.milliseconds(since: admin.startedMonotonic) / 1000, startedEpoch: admin.startedEpoch,
            secondsSinceLastPress: admin.lastPressAt.map { now.milliseconds(since: $0) / 1000 },
            camera: camera.status,
            storageDirectory: store.directory, freeBytes: try? store.freeBytes(), nextSession: store.nextSession,
            savedSinceStart: storage.saved, powerCutNotes: store.powerCutNotes, printer: printer.status(), stats: admin.stats.current,
            orientation: orientation.status)
    }

    /// The config file on disk as the daemon would load it now (with its command-line overrides): read
    /// with ``RuntimeOptions/configReader``, else the reloader. Reads (and parses) the file each call.
    package func configFileSettings() -> Result<Settings, SettingsError> {
        (options.configReader ?? reloader)()
    }

    /// The camera port's figures now (thread-safe).
    package var cameraStatus: CameraSourceStatus { camera.status }

    /// The button's ``ButtonDevice/identity`` now, nil without a button.
    package var buttonIdentity: String? { inputs.button?.identity }

    /// The rotations in use and where they come from, now.
    package var orientationStatus: OrientationStatus { orientation.status }

    /// The totals across restarts (read and reset by the control socket's `stats`).
    package var stats: any StatsRecording { admin.stats }

    /// The settings in force, read where the running components keep them: the machine's timings
    /// (`session.*`, `camera.capture_timeout`, `camera.idle_stop`, `print.mode`), the orientation
    /// tracker's rotations, the screens' `display.*`, `preview.*` and `text.*`, the photo store's
    /// directory, the print worker's destination; every other key as the last reload applied it (a
    /// restart-only key keeps its start value).
    public func settingsInForce() -> Settings {
        var s = state.withLock { $0.settings }
        let c = state.withLock { $0.machine.config }
        s.session.previewMilliseconds = c.previewMilliseconds
        s.session.previewTimeoutMilliseconds = c.previewTimeoutMilliseconds
        s.session.countdownMilliseconds = c.countdownSeconds * 1000
        s.session.reviewMilliseconds = c.reviewMilliseconds
        s.session.shots = c.shots
        s.session.betweenShotsMilliseconds = c.betweenShotsMilliseconds
        s.session.cancelledCaptures = c.cancelledCaptures
        s.camera.captureTimeoutMilliseconds = c.captureTimeoutMilliseconds
        s.camera.idleStopMilliseconds = c.idleStopMilliseconds
        s.print.mode = c.printMode
        let shown = screens.settings
        s.display = shown.display
        s.preview = shown.preview
        s.text = shown.text
        let turns = orientation.settingsInUse
        s.camera.rotation = turns.camera
        s.display.rotation = turns.display
        s.storage.dir = store.directory
        s.print.destination = printer.status().destination
        return s
    }

    /// Presses the button, as the control socket does: a `.press` event for the main loop, stamped now.
    /// - Returns: the state when the press was posted.
    @discardableResult
    public func press() -> String { pressWithOutcome().stateBefore }

    /// Presses as the button would and waits (up to `timeoutSeconds`, on the runtime's injected clock, a wait
    /// on a condition the loop notifies) for the main loop to handle it, so the reply says what the press did: the state it led to, or why it was
    /// ignored or refused. `stateAfter` is nil when the loop did not handle it in time.
    public func pressWithOutcome(timeoutSeconds: Double = 2) -> PressOutcome {
        let id = admin.takePressID()
        let before = currentState.name
        loop.post(.press(id: id, at: clock.now()))
        guard let o = admin.pressAnswers.wait(milliseconds: Int64(timeoutSeconds * 1000), { admin.takePressOutcome(id) }) else {
            return PressOutcome(stateBefore: before, stateAfter: nil, ignored: nil)
        }
        return PressOutcome(stateBefore: o.before, stateAfter: o.after, ignored: o.ignoredOrRefused)
    }

    /// The newest camera frame as JPEG, waiting up to `timeoutSeconds` (on the runtime's injected clock)
    /// for it; nil when none came (in fault, or a camera that does not deliver). With no frame yet (the
    /// stream starting), it waits for the next live frame and asks again. In idle the stream is started for it when
    /// `camera.idle_stop` had stopped it, and the idle stop counts again from now (``BoothEvent/liveViewWanted``).
    public func snapshotJPEG(timeoutSeconds: Double = 5) -> [UInt8]? {
        loop.post(.liveViewWanted)
        let deadline = clock.now().adding(milliseconds: Int64(timeoutSeconds * 1000))
        let frames = admin.liveFrames
        while true {
            // The camera's answer: .some(nil) when it had no frame.
            let box = Mutex<[UInt8]??>(nil)
            let quality = state.withLock { $0.settings.storage.jpegQuality }
            let framesBefore = frames.seen
            camera.snapshot(rotation: orientation.camera, jpegQuality: quality) { bytes in
                box.withLock { $0 = .some(bytes) }
                frames.arrived.notify()
            }
            guard let answer = frames.arrived.wait(until: deadline, { box.withLock { $0 } }) else { return nil }
            if let jpeg = answer { return jpeg }
            // No frame yet: the stream is starting (or stopped for a fault, which no wait mends).
            if case .fault = currentState { return nil }
            // Asked again at the next live frame, or after 50 ms on the clock for a camera whose snapshots
            // come from elsewhere than its live frames.
            let retryAt = min(deadline, clock.now().adding(milliseconds: 50))
            _ = frames.arrived.wait(until: retryAt, { frames.seen != framesBefore ? true : nil })
            guard clock.now() < deadline else { return nil }
        }
    }
}
