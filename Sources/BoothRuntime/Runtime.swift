import BoothCamera
import BoothClock
import BoothCore
import BoothPorts
import BoothDisplay
import FoundationEssentials
import Glibc
import Synchronization

/// How `photoboothd` was started, beyond the settings.
public struct RuntimeOptions: Sendable {
    /// `--sessions N`: exit 0 after N completed sessions.
    public var sessionLimit: Int?
    /// `--auto-press`: press whenever the booth is idle (demo, soak tests).
    public var autoPress = false
    /// Delay before an automatic press, in milliseconds.
    public var autoPressDelayMilliseconds = 300
    /// The wall clock of the print journal (seconds since 1970): request times, and the backlog age of
    /// requests from before a restart (this run's are aged on the runtime's monotonic clock).
    public var wallClock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
    /// systemd's notification socket (`Type=notify`): READY, STATUS and WATCHDOG go there (ServiceSupervision.swift).
    public var systemd: SystemdNotifier?
    /// Test hook (`--test-stall-loop-after`): the main loop stops for good this long after start.
    public var stallLoopAfterMilliseconds: Int?
    /// Composes a session's captures into its picture (the print layout), on a thread of the
    /// runtime's own. nil: a one-shot session's capture is its picture (review and print show the
    /// capture, no picture file), and sessions of 2–4 shots end failed at compose ("no composer").
    public var composer: (any PictureComposing)?
    /// Makes the composer for reloaded settings (photoboothd: ``makePictureComposer(_:)``), called
    /// off the main loop when a reload is asked for; a throw refuses the reload. Nil: `composer`
    /// stays for the daemon's life.
    public var composerFactory: (@Sendable (Settings) throws -> (any PictureComposing)?)?
    /// The wall clock read when a session begins, handed to the composer as the picture's `takenAt`.
    public var sessionDate: @Sendable () -> Date = { Date() }
    /// Whatever wants each saved capture and picture besides the printer (a gallery, a QR code, a
    /// sync): each gets them after storage's durable save, in order, on a delivery thread of its own
    /// (``PictureDelivery``), so none of them ever delays a session.
    public var pictureSinks: [any PictureSink] = []

    public init(sessionLimit: Int? = nil, autoPress: Bool = false) {
        self.sessionLimit = sessionLimit
        self.autoPress = autoPress
    }
}

/// Makes the devices for a set of settings: real ones for the booth, simulated ones for `--simulate`.
public struct DeviceFactory: Sendable {
    public var camera: @Sendable (Settings) -> any CameraDevice
    public var button: @Sendable (Settings) -> any ButtonDevice
    public var led: @Sendable (Settings) -> (any LEDDevice)?
    public var displays: @Sendable (Settings, any MonotonicClock, Logger) -> [any DisplaySink]
    /// False when `led` never opens a line by design (`--simulate`): a configured `led.line` is then
    /// not retried.
    public var opensLED: Bool

    public init(camera: @escaping @Sendable (Settings) -> any CameraDevice,
                button: @escaping @Sendable (Settings) -> any ButtonDevice,
                led: @escaping @Sendable (Settings) -> (any LEDDevice)?,
                displays: @escaping @Sendable (Settings, any MonotonicClock, Logger) -> [any DisplaySink],
                opensLED: Bool = true) {
        self.camera = camera
        self.button = button
        self.led = led
        self.displays = displays
        self.opensLED = opensLED
    }
}

// BoothCounters (the counts for logs, `status` and the totals) is the storage port's: BoothPorts/Storage.swift.

// counted(_:_:) ("1 session", "3 sessions") is BoothPorts' (Log.swift), shared with the print worker.

/// The core's timings from the settings. `composesSingleShot`: the runtime has a picture composer,
/// so one-shot sessions are composed too.
public func coreConfig(from s: Settings, composesSingleShot: Bool = false) -> CoreConfig {
    CoreConfig(previewMilliseconds: s.session.previewMilliseconds,
               previewTimeoutMilliseconds: s.session.previewTimeoutMilliseconds,
               countdownSeconds: s.session.countdownSeconds,
               reviewMilliseconds: s.session.reviewMilliseconds,
               captureTimeoutMilliseconds: s.camera.captureTimeoutMilliseconds,
               idleStopMilliseconds: s.camera.idleStopMilliseconds,
               printMode: s.print.mode, shots: s.session.shots,
               betweenShotsMilliseconds: s.session.betweenShotsMilliseconds,
               cancelledCaptures: s.session.cancelledCaptures, composesSingleShot: composesSingleShot)
}

/// Runs the state machine against the devices: the one place where the core's commands
/// become effects. `run()` owns the calling thread as the main loop; the camera, storage
/// and button each have a thread of their own and talk to the loop through events.
public final class BoothRuntime: Sendable {
    /// Where the loop's events come from; post to it from any thread.
    public let loop: EventLoop
    public let log: Logger
    let clock: any MonotonicClock
    let options: RuntimeOptions
    private let factory: DeviceFactory
    private let captures = CaptureBox()
    /// The photos directory (the storage port; BoothStorage's ``PhotoStore``).
    let store: any PhotoStorage
    let storage: StorageWorker
    let camera: CameraWorker
    /// Printing beside the session (the printer port; BoothPrint's `PrintWorker`).
    public let printer: any Printer
    /// Hands each saved capture and picture to ``RuntimeOptions/pictureSinks``.
    private let delivery: PictureDelivery
    /// The picture composer's thread, when there is a composer.
    private let composeWorker: ComposeWorker
    /// Start time, last press and the persisted totals, for `photoboothctl` (Status.swift).
    let admin: RuntimeAdmin
    private let displays: [any DisplaySink]
    /// The review on screen (capture, its JPEG, the print status shown), nil on other screens. Every
    /// `show` to the displays happens under this lock, so a print status arriving from the print
    /// thread never re-shows a review the loop has already left.
    private let review = Mutex<ReviewOnScreen?>(nil)
    struct ReviewOnScreen {
        var captureID: UInt64
        /// The session whose picture it is (the log names it so; the capture id is the machine's).
        var session: Int
        var jpeg: [UInt8]?
        var printStatus: String?
    }
    /// `camera.rotation`/`display.rotation` resolved (fixed, or from the accelerometer).
    let orientation: OrientationTracker
    private let reloader: @Sendable () -> Result<Settings, SettingsError>
    let supervisor: ServiceSupervisor

    /// State confined to the loop's thread (inside `run()`), kept in a Mutex only to be Sendable.
    struct LoopState {
        var machine: BoothMachine
        var settings: Settings
        var pendingSettings: Settings?
        /// The composer made for `pendingSettings` (`.some(nil)`: none needed); nil: keep the current one.
        var pendingComposer: (any PictureComposing)??
        var button: (any ButtonDevice)?
        var buttonRunning = false
        var led: (any LEDDevice)?
        /// The pattern the machine last asked for, shown again by an LED opened later.
        var ledPattern: LEDPattern = .off
        /// A configured LED line that could not be opened is tried again (``LEDRetry``).
        var ledRetry = LEDRetry()
        var session = 0
        /// The highest session with a capture on disk: the totals file records captures and this
        /// together, so a restart's reconciliation with the photos counts each photo exactly once.
        var lastSavedSession = 0
        var counters = BoothCounters()
        var autoPressScheduled = false
        /// Prints asked for captures between their save and the `.saved` event (the storage thread
        /// released the bytes, the loop has not noted the path yet): capture id → (source, grace ms).
        var printsAwaitingSave: [UInt64: (source: String, grace: Int)] = [:]
        var nextAutoPressID: UInt64 = 1 << 62
        var exitCode: Int32 = 0
        /// JPEG bytes of the session's captures and its picture, by id, for composing, the review
        /// screen and printing (a held capture leaves the ``CaptureBox`` once saved). Emptied when a
        /// session begins.
        var sessionJPEGs: [UInt64: [UInt8]] = [:]
        /// The frame timestamp of the session's latest capture (the compose job's starting point in logs).
        var lastFrameAt: MonotonicInstant?
        /// When the session began (wall clock, ``RuntimeOptions/sessionDate``): the picture's date.
        var sessionStartedAt = Date()
        /// Captures of a cancelled series being deleted: their `saved` is not counted.
        var deleting: Set<UInt64> = []
        /// Captures saved (and counted) in the session under way, by id.
        var savedThisSession: Set<UInt64> = []
    }
    let state: Mutex<LoopState>

    /// - Parameters:
    ///   - settings: the validated settings.
    ///   - reloader: re-reads the config file on SIGHUP / reload; a failure keeps the running settings.
    public init(settings: Settings, options: RuntimeOptions, factory: DeviceFactory,
                clock: any MonotonicClock = SystemClock(), log: Logger,
                reloader: @escaping @Sendable () -> Result<Settings, SettingsError>) {
        self.clock = clock
        self.log = log
        self.options = options
        self.factory = factory
        self.reloader = reloader
        let loop = EventLoop(clock: clock)
        self.loop = loop
        self.store = makePhotoStorage(settings.storage.dir)
        self.admin = RuntimeAdmin(clock: clock, stats: makeStatsRecorder(settings.storage.dir, log: log))
        let post: @Sendable (BoothEvent) -> Void = { loop.post($0) }
        let printer = makePrinter(settings.print, log: log, now: options.wallClock, clock: clock)
        self.printer = printer
        let delivery = PictureDelivery(sinks: options.pictureSinks, log: log)
        self.delivery = delivery
        // The printer first (it only notes the path, at once), then the other sinks' queues: all
        // before the loop hears `saved`, so a print asked for at `.saved` finds the path noted.
        self.storage = StorageWorker(store: store, captures: captures, minFree: UInt64(settings.storage.minFreeBytes),
                                     mount: settings.storage.mount, clock: clock, log: log, post: post,
                                     saved: { picture in
                                         printer.pictureSaved(picture)
                                         delivery.deliver(picture)
                                     })
        let displays = factory.displays(settings, clock, log)
        self.displays = displays
        let orientation = OrientationTracker(settings: settings)
        self.orientation = orientation
        self.camera = CameraWorker(rotation: { orientation.camera }, device: { factory.camera(settings) }, stream: streamRequest(from: settings),
                                   captureSize: settings.camera.captureSize, jpegQuality: settings.storage.jpegQuality,
                                   captures: captures, clock: clock, log: log, post: post,
                                   onFrame: { frame in for d in displays { d.frame(frame) } })
        self.supervisor = ServiceSupervisor(notifier: options.systemd, log: log)
        let storage = self.storage, box = captures
        self.composeWorker = ComposeWorker(composer: options.composer, captures: box, clock: clock, log: log, post: post,
                                           save: { storage.save(captureID: $0) })
        self.state = Mutex(LoopState(machine: BoothMachine(config: coreConfig(from: settings,
                                                                               composesSingleShot: options.composer != nil)),
                                     settings: settings))
    }

    /// The machine's settings from `s` and whether this runtime composes.
    func core(_ s: Settings) -> CoreConfig { coreConfig(from: s, composesSingleShot: composeWorker.hasComposer) }

    /// Asks the booth to re-read its settings (SIGHUP, `photoboothctl reload`); applied in idle or fault,
    /// else when the session under way ends. An invalid file keeps the running settings.
    /// - Returns: accepted (and whether at once), or refused with every problem in the file.
    @discardableResult
    public func requestReload() -> ReloadOutcome {
        switch reloader() {
        case let .success(new):
            // A new composer for the new settings, made here (off the main loop: it reads font and image
            // files); one that cannot be made refuses the reload, keeping the running settings.
            var composer: (any PictureComposing)?? = nil
            if let factory = options.composerFactory {
                do {
                    composer = .some(try factory(new))
                } catch {
                    let refusal = SettingsError(diagnostics: [Diagnostic(file: "[picture]", line: nil, message: "\(error)")])
                    log.error("reload refused, keeping the running settings:\n\(refusal)")
                    return .refused(refusal)
                }
            }
            let composes = composer.map { $0 != nil } ?? composeWorker.hasComposer
            if new.session.shots > 1 && !composes {
                log.warning("session.shots = \(new.session.shots) but this daemon has no picture composer: "
                            + "the captures are saved, but no picture is made and the sessions end failed")
            }
            let now = state.withLock { s -> BoothState in
                s.pendingSettings = new
                s.pendingComposer = composer
                return s.machine.state
            }
            loop.post(.reload(coreConfig(from: new, composesSingleShot: composes)))
            let appliesNow: Bool
            switch now {
            case .idle, .fault: appliesNow = true
            default: appliesNow = false
            }
            return .accepted(appliedNow: appliesNow, state: now.name)
        case let .failure(error):
            log.error("reload refused, keeping the running settings:\n\(error)")
            return .refused(error)
        }
    }

    /// Asks the booth to stop (SIGTERM): a save in flight finishes, devices are released.
    public func requestShutdown() {
        supervisor.stopping()
        loop.post(.shutdown)
    }

    /// The current state (thread-safe snapshot).
    public var currentState: BoothState { state.withLock { $0.machine.state } }
    /// Counters so far.
    public var counters: BoothCounters { state.withLock { $0.counters } }

    /// Runs the booth on the calling thread until shutdown; returns the exit code (0).
    public func run() -> Int32 {
        let settings = state.withLock { $0.settings }
        log.notice("photoboothd starting: photos in \(settings.storage.dir)")
        var startFaults: [(FaultKind, String)] = []
        if let problem = storage.mountProblem() {
            // Not even prepare(): it would create the photos directory on the SD card.
            startFaults.append((.storage, problem))
        } else { do {
            try store.prepare()
            log.info("storage: \(store.directory), next session \(store.nextSession)")
            if let p = store.sessionFileProblem { log.warning("storage: session numbers follow the photo files only: \(p)") }
            admin.stats.open(scanning: store.directory)
        } catch {
            startFaults.append((.storage, "photos directory not writable: \(error)\(writablePathsHint(settings.storage.dir, error))"))
        } }
        storage.launch()
        delivery.launch()
        composeWorker.launch()
        if settings.session.shots > 1 && !composeWorker.hasComposer {
            log.warning("session.shots = \(settings.session.shots) but this daemon has no picture composer: "
                        + "the captures are saved, but no picture is made and the sessions end failed")
        }
        camera.launch()
        printer.observe { [weak self] in self?.printStateChanged() }
        printer.launch()
        if let message = startButton(settings) { startFaults.append((.button, message)) }
        openLED(settings)
        execute(state.withLock { $0.machine.start() })
        for (kind, message) in startFaults { loop.post(.deviceFault(kind, message: message)) }
        loop.post(.storageStatus(refusal: storage.refusal()))
        afterEvent()
        superviseAfterEvent()
        loop.run(tickEveryMilliseconds: supervisor.tickMilliseconds, tick: { self.tick() }) { event in self.handle(event) }
        return shutdownDevices()
    }

    // MARK: Events

    private func handle(_ event: BoothEvent) {
        if case .press = event, case .idle = currentState {
            // Free space is checked before each session, not only now and then.
            dispatch(.storageStatus(refusal: storage.refusal()))
            if let problem = storage.mountProblem() { dispatch(.deviceFault(.storage, message: problem)) }
        }
        if case .press = event { state.withLock { $0.autoPressScheduled = false } }
        if case let .press(_, at) = event { admin.notePress(at: at) }
        if case let .composed(id) = event, currentState != .composing(pictureID: id) {
            // The compose deadline passed first: the session ended failed, the picture is still saved.
            let whose = captures.get(id).map { "session \($0.session)'s picture" } ?? "a session's picture"
            log.warning("\(whose) composed after its session ended (compose deadline passed): "
                        + "saved, not reviewed or printed (photoboothctl test-print FILE prints it)")
        }
        if case let .saved(id, path) = event {
            // The printer noted the path already (a picture sink, told by the storage thread before this event).
            if let waiting = state.withLock({ $0.printsAwaitingSave.removeValue(forKey: id) }) {
                if let jpeg = printer.savedPhoto(captureID: id) {
                    printer.request(jpeg: jpeg, captureID: id, source: waiting.source, graceMilliseconds: waiting.grace)
                } else {
                    log.error("print of the picture of \(waiting.source): \(path) cannot be read back; not printed")
                }
            }
            let name = String(path.split(separator: "/").last ?? "")
            let saved = PhotoFileName.sessionNumber(in: name)
            state.withLock { s in
                // A picture is not a capture; a capture being deleted (cancelled series) is not counted.
                if !PhotoFileName.isPicture(name) && s.deleting.remove(id) == nil {
                    s.counters.captures += 1
                    s.savedThisSession.insert(id)
                }
                s.lastSavedSession = max(s.lastSavedSession, saved ?? 0)
            }
        }
        if case let .captureSucceeded(id) = event {
            if currentState != .capture(id: id, attempt: 1), currentState != .capture(id: id, attempt: 2) {
                // The session moved on (a fault, the deadline) after the frame was taken: the machine
                // ignores it, but a photo a guest posed for is saved all the same, never dropped.
                log.notice("capture \(id) arrived after its session moved on; saving it anyway")
                storage.save(captureID: id)
            } else if let record = captures.get(id) {
                // Kept for the picture, the review and the print: the box forgets it once saved.
                state.withLock { s in
                    s.sessionJPEGs[id] = record.jpeg
                    s.lastFrameAt = record.frameTimestamp
                }
            }
        }
        if case let .composed(id) = event, let jpeg = captures.takeShelved(pictureID: id) {
            state.withLock { $0.sessionJPEGs[id] = jpeg }
        }
        dispatch(event)
        admin.stats.record(counters, highestSession: state.withLock { $0.lastSavedSession })
        afterEvent()
        superviseAfterEvent()
    }

    private func dispatch(_ event: BoothEvent) {
        let (before, commands, after) = state.withLock { s in
            let before = s.machine.state
            let commands = s.machine.handle(event)
            return (before, commands, s.machine.state)
        }
        if describe(before) != describe(after) {
            log.info("state: \(describe(before)) -> \(describe(after))")
        }
        // One outage is one fault: a kind counts when it joins the reasons, not each time a retry
        // finds it still failing.
        if case let .fault(now) = after {
            let was: [FaultKind: String]
            if case let .fault(reasons) = before { was = reasons } else { was = [:] }
            let added = now.keys.filter { was[$0] == nil }.count
            if added > 0 { state.withLock { $0.counters.faults += added } }
        }
        if case let .press(id, _) = event, RuntimeAdmin.isControlPress(id) {
            let said = commands.lazy.compactMap { c -> String? in
                guard case let .log(_, text) = c, text.hasPrefix("press ignored") || text.hasPrefix("press refused") else { return nil }
                return text
            }.first
            admin.notePressOutcome(id, .init(before: before.name, after: after.name, ignoredOrRefused: said))
        }
        execute(commands)
    }

    private func describe(_ s: BoothState) -> String {
        if case let .fault(reasons) = s {
            // The kinds only: each reason has its own line ("fault (camera): …"), logged once.
            return "fault(" + reasons.keys.sorted().map(\.rawValue).joined(separator: ", ") + ")"
        }
        return s.name
    }

    /// Auto-press and the session limit.
    private func afterEvent() {
        guard options.autoPress else { return }
        let id: UInt64? = state.withLock { s in
            guard case .idle = s.machine.state, !s.autoPressScheduled else { return nil }
            s.autoPressScheduled = true
            s.nextAutoPressID += 1
            return s.nextAutoPressID
        }
        if let id {
            loop.post(.press(id: id, at: clock.now().adding(milliseconds: Int64(options.autoPressDelayMilliseconds))),
                      afterMilliseconds: options.autoPressDelayMilliseconds)
        }
    }

    // MARK: Commands

    private func execute(_ commands: [BoothCommand]) {
        for command in commands { execute(command) }
    }

    private func execute(_ command: BoothCommand) {
        switch command {
        case .startStream:
            camera.startStream()
        case .stopStream:
            camera.stopStream()
        case let .show(screen):
            show(screen)
            if case let .idle(notice?) = screen { log.notice("screen: \(notice)") }
        case let .setLED(pattern):
            state.withLock { $0.ledPattern = pattern; return $0.led }?.set(pattern)
        case let .startTimer(token, ms):
            // The machine has one current timer; earlier tokens are stale (BoothMachine.timerToken).
            loop.scheduleReplacingEarlierTokens(token: token, milliseconds: ms)
        case let .capture(id, trigger):
            let (session, shot, timeout) = state.withLock { ($0.session, $0.machine.shot, $0.machine.config.captureTimeoutMilliseconds) }
            captures.assign(id: id, session: session, shot: max(shot, 1))
            let late = clock.now().milliseconds(since: trigger)
            log.info("capture \(id): trigger at \(trigger) (\(format(late)) ms ago), session \(session), shot \(max(shot, 1))")
            // The machine's capture timer starts with this command: the camera waits as long.
            camera.capture(id: id, trigger: trigger, deadline: clock.now().adding(milliseconds: Int64(timeout)))
        case let .save(id):
            storage.save(captureID: id)
        case .beginSession:
            let n = store.allocateSession()
            state.withLock { s in
                s.session = n
                s.counters.sessions += 1
                s.sessionJPEGs = [:]
                s.savedThisSession = []
                s.lastFrameAt = nil
                s.sessionStartedAt = options.sessionDate()
            }
            log.info("session \(n) begins")
        case let .endSession(end):
            let (n, done, limit) = state.withLock { s -> (Int, Int, Int?) in
                switch end {
                case .completed: s.counters.completed += 1
                case .cancelled: s.counters.cancelled += 1
                case .failed: s.counters.failed += 1
                }
                return (s.session, s.counters.completed, options.sessionLimit)
            }
            log.info("session \(n) \(end.rawValue)")
            if let limit, end == .completed, done >= limit {
                log.notice("\(counted(done, "session")) completed (--sessions \(limit)); stopping")
                loop.post(.shutdown)
            }
        case let .retry(kinds):
            for kind in kinds { retry(kind) }
        case .applyReload:
            applyReload()
        case let .log(priority, message):
            log.log(priority, message)
        case .exit:
            loop.stop()
        case let .print(id):
            // A press in review is also the start of a long press (which skips): in press mode the
            // request waits button.long_press before it may be submitted, so a long press never prints.
            let (session, settings, held) = state.withLock { ($0.session, $0.settings, $0.sessionJPEGs[id]) }
            let grace = settings.print.mode == .press ? settings.button.longPressMilliseconds : 0
            if let jpeg = held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id) {
                printer.request(jpeg: jpeg, captureID: id, source: "session \(session)", graceMilliseconds: grace)
            } else {
                // Saved just now: the storage thread let the bytes go and its `.saved` is on its way
                // (a failed save keeps them in memory). Printed when that event arrives.
                state.withLock { $0.printsAwaitingSave[id] = ("session \(session)", grace) }
                log.debug("print of the picture of session \(session): waiting for its save to be noted")
            }
        case let .skipPrint(id):
            _ = state.withLock { $0.printsAwaitingSave.removeValue(forKey: id) }
            printer.skip(captureID: id)
        case let .compose(pictureID, ids):
            compose(pictureID: pictureID, captureIDs: ids)
        case let .deleteCaptures(ids):
            state.withLock { s in
                for id in ids {
                    if s.savedThisSession.remove(id) != nil { s.counters.captures -= 1 } else { s.deleting.insert(id) }
                    s.sessionJPEGs[id] = nil
                }
            }
            storage.delete(captureIDs: ids)
        }
    }

    /// Hands the session's captures to the composer's thread; answers `composeFailed` at once when
    /// there is no composer or a capture's bytes are gone.
    private func compose(pictureID: UInt64, captureIDs: [UInt64]) {
        let (jpegs, session, lastFrameAt, takenAt) = state.withLock { s in
            (captureIDs.compactMap { s.sessionJPEGs[$0] }, s.session, s.lastFrameAt, s.sessionStartedAt)
        }
        guard jpegs.count == captureIDs.count else {
            loop.post(.composeFailed(pictureID: pictureID, message: "captures \(captureIDs) are no longer in memory"))
            return
        }
        composeWorker.compose(.init(pictureID: pictureID, session: session, captures: jpegs,
                                    takenAt: takenAt, lastFrameAt: lastFrameAt ?? clock.now()))
    }

    /// Shows `screen` on every display; a review with its capture and print status.
    private func show(_ screen: Screen) {
        let printer = self.printer, displays = self.displays
        review.withLock { r in
            guard case let .review(id) = screen else {
                r = nil
                for d in displays { d.show(screen, capture: nil, printStatus: nil) }
                return
            }
            let (held, session) = state.withLock { ($0.sessionJPEGs[id], $0.session) }
            let shown = ReviewOnScreen(captureID: id, session: session, jpeg: held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id),
                                       printStatus: printer.reviewText(captureID: id))
            r = shown
            for d in displays { d.show(screen, capture: shown.jpeg, printStatus: shown.printStatus) }
        }
    }

    /// The print worker's journal or the printer's health changed (print or control thread): when
    /// the review on screen now reads differently, it is shown again with the new text.
    private func printStateChanged() {
        let printer = self.printer, displays = self.displays, log = self.log
        review.withLock { r in
            guard var shown = r else { return }
            let text = printer.reviewText(captureID: shown.captureID)
            guard text != shown.printStatus else { return }
            shown.printStatus = text
            r = shown
            log.info("review of session \(shown.session)'s picture: \(text ?? "no print status")")
            for d in displays { d.show(.review(pictureID: shown.captureID), capture: shown.jpeg, printStatus: text) }
        }
    }

    private func retry(_ kind: FaultKind) {
        switch kind {
        case .camera:
            camera.probe()
        case .storage:
            storage.retry()
        case .button:
            let settings = state.withLock { $0.settings }
            if state.withLock({ $0.buttonRunning }), state.withLock({ $0.button })?.isRunning ?? false {
                // The line is held; the fault is a stuck button, cleared by its release.
                return
            }
            state.withLock { $0.button }?.stop()
            if let message = startButton(settings) {
                loop.post(.deviceFault(.button, message: message))
            } else {
                loop.post(.deviceRecovered(.button))
            }
        }
    }

    /// Opens the LED line (`factory.led`) and shows the current pattern on it. A configured line that
    /// does not open is no fault (the booth runs without its LED); it is tried again from the tick
    /// after 1 s, doubling to 30 s, as a failed button line is (``retryLEDIfDue()``).
    private func openLED(_ settings: Settings) {
        let led = factory.led(settings)
        let now = clock.now()
        let retries = factory.opensLED && settings.led.isConfigured
        let (pattern, wait, first) = state.withLock { s -> (LEDPattern, Int?, Bool) in
            s.led = led
            if led != nil || !retries {
                s.ledRetry.reset()
                return (s.ledPattern, nil, false)
            }
            let first = s.ledRetry.nextAttempt == nil
            return (s.ledPattern, s.ledRetry.failed(at: now), first)
        }
        if let wait {
            // Warned once; the later attempts (every 30 s at most, for as long as the line is missing) at debug.
            log.log(first ? .warning : .debug, "led: line \(settings.led.line) not opened; trying again in \(wait / 1000) s")
        } else if let led {
            led.set(pattern)
        }
    }

    /// From the tick: opens the LED line again when an attempt is due (see ``openLED(_:)``).
    func retryLEDIfDue() {
        let (due, settings) = state.withLock { s in (s.led == nil && s.ledRetry.isDue(at: clock.now()), s.settings) }
        guard due else { return }
        openLED(settings)
        if state.withLock({ $0.led }) != nil { log.notice("led: line \(settings.led.line) opened") }
    }

    /// Requests the button line; returns the fault message when it cannot.
    private func startButton(_ settings: Settings) -> String? {
        let button = factory.button(settings)
        let loop = self.loop
        do {
            try button.start { signal in
                switch signal {
                case let .press(id, at): loop.post(.press(id: id, at: at))
                case let .longPress(id): loop.post(.longPress(id: id))
                case let .stuck(message): loop.post(.deviceFault(.button, message: message))
                case .unstuck: loop.post(.deviceRecovered(.button))
                case let .failed(message):
                    loop.post(.deviceFault(.button, message: message))
                }
            }
            state.withLock { $0.button = button; $0.buttonRunning = true }
            log.info("button: \(button.identity)")
            return nil
        } catch {
            button.stop()
            state.withLock { $0.buttonRunning = false }
            return "button not available: \(error)"
        }
    }

    private func applyReload() {
        guard let new = state.withLock({ s -> Settings? in
            defer { s.pendingSettings = nil }
            return s.pendingSettings
        }) else { return }
        let (old, composer) = state.withLock { s in
            defer { s.settings = new; s.pendingComposer = nil }
            return (s.settings, s.pendingComposer)
        }
        if let composer { composeWorker.setComposer(composer) }
        storage.setMinFree(UInt64(new.storage.minFreeBytes))
        if new.print != old.print { printer.reconfigure(new.print) }
        storage.setMount(new.storage.mount)
        if new.camera != old.camera || new.storage.jpegQuality != old.storage.jpegQuality {
            camera.reconfigure(stream: streamRequest(from: new), captureSize: new.camera.captureSize,
                               jpegQuality: new.storage.jpegQuality)
            if new.camera != old.camera {
                camera.stopStream()
                if state.withLock({ $0.machine.streaming }) { camera.startStream() }
            }
        }
        if new.button != old.button || new.led != old.led {
            state.withLock { $0.button }?.stop()
            state.withLock { $0.led }?.stop()
            state.withLock { $0.buttonRunning = false }
            state.withLock { $0.led = nil }
            if let message = startButton(new) { loop.post(.deviceFault(.button, message: message)) }
            openLED(new)
        }
        log.notice("settings reloaded")
    }

    /// SIGTERM's end: saves in flight finish (≤ 2 s), the stream stops, the lines are released.
    private func shutdownDevices() -> Int32 {
        // The camera first: a frame it took for a capture after the loop stopped is in the box
        // by then. Every capture still held (taken but not saved, or kept back by a storage fault)
        // gets one more save before the storage thread finishes.
        camera.shutdown()
        // A picture being composed is finished (it goes to storage from there) before the last saves.
        if !composeWorker.finish(timeoutSeconds: 2) {
            log.error("the picture being composed was not finished within 2 s when stopping")
        }
        for id in captures.heldIDs { storage.save(captureID: id) }
        if !storage.finish(timeoutSeconds: 2) || !captures.heldIDs.isEmpty {
            let held = captures.heldIDs.map(String.init).joined(separator: ", ")
            log.error("captures not saved when stopping (disk full or too slow within 2 s): \(held)")
        }
        printer.stop()
        delivery.finish(timeoutSeconds: 1)
        for d in displays { d.close() }
        admin.stats.record(counters, highestSession: state.withLock { $0.lastSavedSession })
        admin.stats.finish(timeoutSeconds: 2)
        let (button, led) = state.withLock { ($0.button, $0.led) }
        button?.stop()
        led?.set(.off)
        led?.stop()
        let c = counters
        log.notice("photoboothd stopped: \(counted(c.sessions, "session")) (\(c.completed) completed, \(c.cancelled) cancelled, "
                   + "\(c.failed) failed), \(counted(storage.saved, "capture")) saved")
        return state.withLock { $0.exitCode }
    }
}
