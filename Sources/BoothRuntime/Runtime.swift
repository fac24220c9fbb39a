import BoothClock
import BoothCore
import BoothPorts
import Dispatch
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
    /// Reads the config file as a reload would (with the command line's overrides), without logging
    /// or applying anything: `status` compares it with the settings in force. Nil: the reloader is used.
    public var configReader: (@Sendable () -> Result<Settings, SettingsError>)?
    /// The wall clock read when a session begins, handed to the composer as the picture's `takenAt`.
    public var sessionDate: @Sendable () -> Date = { Date() }
    /// Whatever wants each saved capture and picture besides the printer (a gallery, a QR code, a
    /// sync): each gets them after storage's durable save, in order, on a delivery thread of its own
    /// (``PictureDelivery``), so none of them ever delays a session.
    public var pictureSinks: [any PictureSink] = []
    /// The URL a guest fetches a saved photo at (the gallery's), from its path and size in bytes;
    /// nil: no QR code on the review. Called on the main loop: it must not block (the daemon's derives
    /// a token; its folder's id is read once per photos folder).
    public var pictureLink: (@Sendable (_ path: String, _ bytes: Int) -> String?)?

    public init(sessionLimit: Int? = nil, autoPress: Bool = false) {
        self.sessionLimit = sessionLimit
        self.autoPress = autoPress
    }
}

/// Makes the devices for a set of settings: real ones for the booth, simulated ones for `--simulate`,
/// a test's own. The runtime's port of construction: it names only ports, so the runtime never sees a
/// concrete device; photoboothd's wiring (DeviceFactories.swift) fills it with the device modules' kinds.
public struct DeviceFactory: Sendable {
    /// The camera for a set of settings (the source resolved by `camera.backend`, or a test's own),
    /// with the runtime's clock and log; called once, at the runtime's start (and by `--check`).
    public var camera: @Sendable (Settings, any MonotonicClock, Logger) -> any CameraSource
    public var button: @Sendable (Settings) -> any ButtonDevice
    public var led: @Sendable (Settings) -> (any LEDDevice)?
    /// The screens, turned by the booth's one orientation source (the one the camera turns by).
    public var screens: @Sendable (Settings, any MonotonicClock, Logger, any OrientationSource) -> [any DisplaySink]
    /// ``screens`` for screens that do not turn (tests): set, it replaces them.
    public var displays: @Sendable (Settings, any MonotonicClock, Logger) -> [any DisplaySink] {
        get { { [screens, orientation] s, clock, log in screens(s, clock, log, orientation(s)) } }
        set { screens = { s, clock, log, _ in newValue(s, clock, log) } }
    }
    /// The booth's one ``OrientationSource``, made once at start and handed to the camera and every screen.
    public var orientation: @Sendable (Settings) -> any OrientationSource
    /// False when `led` never opens a line by design (`--simulate`): a configured `led.line` is then
    /// not retried.
    public var opensLED: Bool
    /// The photos directory for `[storage]` (`storage.dir`, an absolute or relative path, and the booth's
    /// session-number record `storage.session_file`), made once at start.
    public var photoStorage: @Sendable (Settings.Storage) -> any PhotoStorage
    /// The totals across restarts, kept in the directory given (`storage.dir`), made once at start.
    public var stats: @Sendable (String, Logger) -> any StatsRecording
    /// The printer for `[print]`, made once at start. Its arguments: the settings, the log, the wall
    /// clock in seconds since 1970 (the journal's times) and the monotonic clock that ages this run's
    /// held requests.
    public var printer: @Sendable (Settings.Print, Logger, @escaping @Sendable () -> Double, any MonotonicClock) -> any Printer

    /// Every part given: no defaults here, the concrete kinds are the wiring's.
    public init(cameraSource camera: @escaping @Sendable (Settings, any MonotonicClock, Logger) -> any CameraSource,
                button: @escaping @Sendable (Settings) -> any ButtonDevice,
                led: @escaping @Sendable (Settings) -> (any LEDDevice)?,
                screens: @escaping @Sendable (Settings, any MonotonicClock, Logger, any OrientationSource) -> [any DisplaySink],
                opensLED: Bool,
                orientation: @escaping @Sendable (Settings) -> any OrientationSource,
                photoStorage: @escaping @Sendable (Settings.Storage) -> any PhotoStorage,
                stats: @escaping @Sendable (String, Logger) -> any StatsRecording,
                printer: @escaping @Sendable (Settings.Print, Logger, @escaping @Sendable () -> Double, any MonotonicClock) -> any Printer) {
        self.camera = camera
        self.button = button
        self.led = led
        self.screens = screens
        self.opensLED = opensLED
        self.orientation = orientation
        self.photoStorage = photoStorage
        self.stats = stats
        self.printer = printer
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
    /// The photos directory (the storage port; BoothStorage's `PhotoStore`).
    let store: any PhotoStorage
    let storage: StorageWorker
    let camera: any CameraSource
    /// Where the camera's stills, faults and live frames go (CameraWorker.swift).
    private let cameraHandlers: CameraSourceHandlers
    /// Printing beside the session (the printer port; BoothPrint's `PrintWorker`).
    public let printer: any Printer
    /// Hands each saved capture and picture to ``RuntimeOptions/pictureSinks``.
    private let delivery: PictureDelivery
    /// Prints `print.mode` promises for pictures not saved yet: journaled with their save.
    private let printPromises: PrintPromises
    /// The picture composer's thread, when there is a composer.
    private let composeWorker: ComposeWorker
    /// Start time, last press and the persisted totals, for `photoboothctl` (Admin.swift).
    let admin: RuntimeAdmin
    /// Every screen, as one sink a reload can refill (ScreenSet.swift).
    let screens: ScreenSet
    private var displays: [any DisplaySink] { [screens] }
    /// The review on screen (capture, its JPEG, the print status shown), nil on other screens. Every
    /// `show` to the displays happens under this lock, so a print status arriving from the print
    /// thread never re-shows a review the loop has already left.
    private let review = Mutex<ReviewOnScreen?>(nil)
    /// The last review's link and when the review left it, kept for the idle screen
    /// (`gallery.idle_code`) until the next session begins, its time is up or the picture is taken
    /// down; changed under ``review``'s lock.
    private let idleLink = Mutex<(link: String, since: MonotonicInstant)?>(nil)
    /// The last 64 pictures taken down while the daemon runs, as `/p/TOKEN`: never a review's code again.
    private let takenDown = Mutex<[String]>([])
    struct ReviewOnScreen {
        var captureID: UInt64
        /// The session whose picture it is (the log names it so; the capture id is the machine's).
        var session: Int
        var jpeg: [UInt8]?
        var printStatus: String?
        /// The photo's URL for the QR code, once it is saved (``RuntimeOptions/pictureLink``).
        var link: String?
    }
    /// `camera.rotation`/`display.rotation` resolved (fixed, or from the accelerometer).
    let orientation: any OrientationSource
    let reloader: @Sendable () -> Result<Settings, SettingsError>
    let supervisor: ServiceSupervisor

    /// State confined to the loop's thread (inside `run()`), kept in a Mutex only to be Sendable.
    struct LoopState {
        var machine: BoothMachine
        var settings: Settings
        var pendingSettings: Settings?
        /// The reload whose settings are `pendingSettings` (``requestReload()`` waits for its outcome).
        var pendingReloadTicket: UInt64 = 0
        var lastReloadTicket: UInt64 = 0
        /// The newest reload applied: its ticket and what each changed key did.
        var appliedReload: (ticket: UInt64, reply: ReloadReply)?
        /// The composer made for `pendingSettings` (`.some(nil)`: none needed); nil: keep the current one.
        var pendingComposer: (any PictureComposing)??
        var button: (any ButtonDevice)?
        var buttonRunning = false
        var led: (any LEDDevice)?
        /// The pattern the machine last asked for, shown again by an LED opened later.
        var ledPattern: LEDPattern = .off
        /// A configured LED line that could not be opened is tried again (``DeviceRetry``).
        var ledRetry = DeviceRetry()
        var session = 0
        /// The highest session with a capture on disk: the totals file records captures and this
        /// together, so a restart's reconciliation with the photos counts each photo exactly once.
        var lastSavedSession = 0
        var counters = BoothCounters()
        var nextAutoPressID: UInt64 = 1 << 62
        var exitCode: Int32 = 0
        /// Asked to stop (SIGTERM, or its last session done): `hello` says so, for a new daemon waiting for the socket's lock.
        var stopping = false
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
        /// Where the latest saved captures and pictures are, by id (the review's QR code); 16 kept.
        var savedPaths: [(id: UInt64, path: String)] = []
        /// Prints that wait for their picture's save to carry its URL's QR code (`picture.qr`).
        var printsAwaitingCode: Set<UInt64> = []
        /// Of those, the ones printed without the code as their save failed: their later `printSaved` is not a second print.
        var printedWithoutCode: Set<UInt64> = []
        /// Captures and pictures whose save failed (the latest 32): a print asked for later does not wait for a code.
        var failedSaves: [UInt64] = []
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
        self.store = factory.photoStorage(settings.storage)
        self.admin = RuntimeAdmin(clock: clock, stats: factory.stats(settings.storage.dir, log))
        let post: @Sendable (BoothEvent) -> Void = { loop.post($0) }
        let printer = factory.printer(settings.print, log, options.wallClock, clock)
        self.printer = printer
        let delivery = PictureDelivery(sinks: options.pictureSinks, log: log)
        self.delivery = delivery
        let promises = PrintPromises(), pictureLink = options.pictureLink
        self.printPromises = promises
        // The printer first (it notes the path, and journals a promised print: durable with the save),
        // then the other sinks' queues: all before the loop hears `saved`, so a print asked for at
        // `.saved` finds the path noted.
        self.storage = StorageWorker(store: store, captures: captures, minFree: UInt64(settings.storage.minFreeBytes),
                                     mount: settings.storage.mount, clock: clock, log: log, post: post,
                                     saved: { picture in
                                         if let (source, corner) = promises.take(picture.captureID) {
                                             let text = corner == .off ? nil : pictureLink?(picture.path, picture.bytes.count)
                                             printer.noteSaved(captureID: picture.captureID, path: picture.path,
                                                               promise: PrintPromise(source: source, code: text.map { PageCode(text: $0, corner: corner) }))
                                         } else {
                                             printer.pictureSaved(picture)
                                         }
                                         delivery.deliver(picture)
                                     })
        let orientation = factory.orientation(settings)
        self.orientation = orientation
        let screens = ScreenSet(factory.screens(settings, clock, log, orientation), settings: settings)
        self.screens = screens
        self.camera = factory.camera(settings, clock, log)
        self.cameraHandlers = makeCameraHandlers(captures: captures, displays: [screens], post: post)
        self.supervisor = ServiceSupervisor(notifier: options.systemd, log: log)
        let storage = self.storage, box = captures
        self.composeWorker = ComposeWorker(composer: options.composer, captures: box, clock: clock, log: log, post: post,
                                           save: { storage.save(captureID: $0) })
        self.state = Mutex(LoopState(machine: BoothMachine(config: coreConfig(from: settings,
                                                                               composesSingleShot: options.composer != nil),
                                                           autoPressMilliseconds: options.autoPress ? options.autoPressDelayMilliseconds : nil),
                                     settings: settings))
    }

    /// The machine's settings from `s` and whether this runtime composes.
    func core(_ s: Settings) -> CoreConfig { coreConfig(from: s, composesSingleShot: composeWorker.hasComposer) }

    /// Asks the booth to re-read its settings (SIGHUP, `photoboothctl reload`) and says exactly what
    /// changed: each key that differs from the settings in force (``Settings/changes(to:)``) with how
    /// it took effect (``ReloadRule``). Applied in idle or fault before this returns; while a session
    /// is under way the changes apply when it ends (the reply says so). Keys only a daemon restart
    /// applies stay as they run, and are listed as such. An invalid file keeps the running settings.
    /// Blocks the calling thread (the control socket's or the signal queue's, never the loop's) until
    /// the loop applied or deferred the reload, up to `timeoutSeconds` (monotonic).
    /// - Returns: accepted with the changes, or refused with every problem in the file.
    @discardableResult
    public func requestReload(timeoutSeconds: Double = 10) -> ReloadOutcome {
        func refuse(_ error: SettingsError) -> ReloadOutcome {
            log.error("reload refused, keeping the running settings:\n\(error)")
            return .refused(error)
        }
        switch reloader() {
        case let .success(new):
            let (inForce, stateNow) = state.withLock { ($0.settings, $0.machine.state) }
            let changes = inForce.changes(to: new)
            guard !changes.isEmpty else {
                // A reload kept for the session's end is replaced by this one: nothing left to apply. The
                // machine is told too, so the timings it kept for the session's end are the ones in force.
                let withdrawn = state.withLock { s -> Bool in
                    guard s.pendingSettings != nil else { return false }
                    s.pendingSettings = new
                    s.pendingComposer = nil
                    return true
                }
                if withdrawn { loop.post(.reload(core(new))) }
                let reply = ReloadReply(appliedNow: true, state: stateNow.name, changes: [])
                log.notice("settings " + reply.text)
                return .accepted(reply)
            }
            // What the new sizes would make the booth hold: a file's check refuses too much (MemoryEstimate), and
            // settings handed over otherwise are held to the same limit before anything is made at their sizes.
            if let why = new.memoryEstimate.refusal(cite: { "\($0) = \(new.text(forKey: $0) ?? "")" }) {
                return refuse(SettingsError(diagnostics: [Diagnostic(file: "reload", line: nil, message: why)]))
            }
            // A new composer for the new settings, made here (off the main loop: it reads font and image
            // files); one that cannot be made refuses the reload, keeping the running settings.
            var composer: (any PictureComposing)?? = nil
            if let factory = options.composerFactory {
                do {
                    composer = .some(try factory(new))
                } catch {
                    return refuse(SettingsError(diagnostics: [Diagnostic(file: "[picture]", line: nil, message: "\(error)")]))
                }
            }
            let composes = composer.map { $0 != nil } ?? composeWorker.hasComposer
            if new.session.shots > 1 && !composes {
                log.warning("session.shots = \(new.session.shots) but this daemon has no picture composer: "
                            + "the captures are saved, but no picture is made and the sessions end failed")
            }
            let ticket = state.withLock { s -> UInt64 in
                s.lastReloadTicket += 1
                s.pendingReloadTicket = s.lastReloadTicket
                s.pendingSettings = new
                s.pendingComposer = composer
                return s.lastReloadTicket
            }
            loop.post(.reload(coreConfig(from: new, composesSingleShot: composes)))
            return .accepted(awaitReload(ticket: ticket, changes: changes, timeoutSeconds: timeoutSeconds))
        case let .failure(error):
            return refuse(error)
        }
    }

    /// Waits until the loop applied reload `ticket` (its reply: what each key did) or the machine kept
    /// it for the end of the session under way (a reply saying so, with the changes foreseen).
    private func awaitReload(ticket: UInt64, changes: [SettingChange], timeoutSeconds: Double) -> ReloadReply {
        let deadline = DispatchTime.now() + timeoutSeconds   // CLOCK_MONOTONIC
        while true {
            let (applied, deferredIn) = state.withLock { s -> (ReloadReply?, BoothState?) in
                if let a = s.appliedReload, a.ticket >= ticket { return (a.reply, nil) }
                // The machine holds a reload for the session's end; applyReload takes the newest settings then.
                if s.machine.pendingReload != nil, s.pendingReloadTicket == ticket { return (nil, s.machine.state) }
                return (nil, nil)
            }
            if let applied { return applied }
            if let deferredIn {
                let reply = ReloadReply(appliedNow: false, state: deferredIn.name, changes: changes.map { ReloadReply.Change($0, applied: false) })
                log.notice("settings " + reply.text)
                return reply
            }
            if DispatchTime.now() >= deadline {
                let reply = ReloadReply(appliedNow: false, state: currentState.name, changes: changes.map { ReloadReply.Change($0, applied: false) })
                log.warning("settings \(reply.text) (the main loop did not answer within \(Int(timeoutSeconds)) s)")
                return reply
            }
            usleep(5_000)
        }
    }

    /// Asks the booth to stop (SIGTERM): a save in flight finishes, devices are released.
    public func requestShutdown() {
        state.withLock { $0.stopping = true }
        supervisor.stopping()
        loop.post(.shutdown)
    }

    /// True once the booth was asked to stop (``requestShutdown()``, or its main loop ended): it is
    /// releasing its devices and exits next. Thread-safe.
    public var isStopping: Bool { state.withLock { $0.stopping } }

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
            logStorageNotes()
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
        camera.launch(cameraHandlers)
        printer.observe { [weak self] in self?.printStateChanged() }
        printer.launch()
        if let message = startButton(settings) { startFaults.append((.button, message)) }
        openLED(settings)
        execute(state.withLock { $0.machine.start() })
        for (kind, message) in startFaults { loop.post(.deviceFault(kind, message: message)) }
        loop.post(.storageStatus(refusal: storage.refusal()))
        superviseAfterEvent()
        loop.run(tickEveryMilliseconds: supervisor.tickMilliseconds, tick: { self.tick() }) { event in self.handle(event) }
        state.withLock { $0.stopping = true }
        return shutdownDevices()
    }

    // MARK: Events

    /// One event from the loop: noted, then decided by the machine, whose commands run.
    private func handle(_ event: BoothEvent) {
        note(event)
        dispatch(event)
        admin.stats.record(counters, highestSession: state.withLock { $0.lastSavedSession })
        superviseAfterEvent()
    }

    /// What the runtime records of an event whatever the machine's state (the machine decides the
    /// rest): the press time for status, where a photo was saved and how it counts (a capture, not a
    /// picture nor a capture being deleted), a composed picture's bytes.
    private func note(_ event: BoothEvent) {
        switch event {
        case let .press(_, at):
            admin.notePress(at: at)
        case let .saved(id, path):
            // The printer noted the path already (a picture sink, told by the storage thread before this event).
            let name = String(path.split(separator: "/").last ?? "")
            let saved = PhotoFileName.sessionNumber(in: name)
            state.withLock { s in
                // A picture is not a capture; a capture being deleted (cancelled series) is not counted.
                if !PhotoFileName.isPicture(name) && s.deleting.remove(id) == nil {
                    s.counters.captures += 1
                    s.savedThisSession.insert(id)
                }
                s.lastSavedSession = max(s.lastSavedSession, saved ?? 0)
                s.savedPaths.append((id, path))
                if s.savedPaths.count > 16 { s.savedPaths.removeFirst(s.savedPaths.count - 16) }
            }
            reviewSaved(id)
        case let .composed(id):
            // Taken off the shelf even when late, so the shelf never keeps a picture's bytes.
            if let jpeg = captures.takeShelved(pictureID: id) { state.withLock { $0.sessionJPEGs[id] = jpeg } }
        case let .saveFailed(id, _, _):
            // A print waiting for its code is not kept from the guest by a full disk: printed now, without it.
            let (waited, held, session, grace) = state.withLock { s in
                s.failedSaves.append(id)
                if s.failedSaves.count > 32 { s.failedSaves.removeFirst(s.failedSaves.count - 32) }
                let waited = s.printsAwaitingCode.remove(id) != nil
                let held = s.sessionJPEGs[id] ?? captures.get(id)?.jpeg
                if waited && held != nil { s.printedWithoutCode.insert(id) }
                return (waited, held, s.session, printGrace(s.settings))
            }
            if waited, let held {
                log.warning("print of the picture of session \(session): its save failed, so it has no URL; printed without its QR code")
                printer.request(jpeg: held, captureID: id, source: "session \(session)", graceMilliseconds: grace, code: nil)
            } else if waited {
                log.error("print of the picture of session \(session): its save failed and its bytes are gone; printed if a later save succeeds")
            }
        case .storageChecked, .longPress, .reviewAction, .timer, .captureSucceeded, .captureFailed, .deviceFault,
             .deviceRecovered, .storageStatus, .reload, .composeFailed, .liveViewWanted, .printWaitsForSave, .shutdown:
            break
        }
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
        if let id = pressDecided(by: event, commands), RuntimeAdmin.isControlPress(id) {
            let said = commands.lazy.compactMap { c -> String? in
                guard case let .log(_, text) = c, text.hasPrefix("press ignored") || text.hasPrefix("press refused") else { return nil }
                return text
            }.first
            admin.notePressOutcome(id, .init(before: before.name, after: after.name, ignoredOrRefused: said))
        }
        execute(commands)
    }

    /// The press whose outcome `event` decided: a press, unless the machine asked for the storage
    /// first (then its answer, `storageChecked`, decides it).
    private func pressDecided(by event: BoothEvent, _ commands: [BoothCommand]) -> UInt64? {
        switch event {
        case let .press(id, _):
            commands.contains { if case .checkStorage = $0 { true } else { false } } ? nil : id
        case let .storageChecked(id, _, _, _):
            id
        case .longPress, .reviewAction, .timer, .captureSucceeded, .captureFailed, .saved, .saveFailed, .deviceFault, .deviceRecovered,
             .storageStatus, .reload, .composed, .composeFailed, .liveViewWanted, .printWaitsForSave, .shutdown:
            nil
        }
    }

    private func describe(_ s: BoothState) -> String {
        if case let .fault(reasons) = s {
            // The kinds only: each reason has its own line ("fault (camera): …"), logged once.
            return "fault(" + reasons.keys.sorted().map(\.rawValue).joined(separator: ", ") + ")"
        }
        return s.name
    }

    // MARK: Commands

    private func execute(_ commands: [BoothCommand]) {
        for command in commands { execute(command) }
    }

    private func execute(_ command: BoothCommand) {
        switch command {
        case .startStream:
            camera.startLiveView()
        case .stopStream:
            camera.stopLiveView()
        case .prepareStill:
            // The machine sends it at a shot's first countdown number: a DSLR focuses now, not at zero.
            camera.prepareStill()
        case let .show(screen):
            show(screen)
            if case let .idle(notice?) = screen { log.notice("screen: \(notice)") }
        case let .setLED(pattern):
            state.withLock { $0.ledPattern = pattern; return $0.led }?.set(pattern)
        case let .startTimer(token, ms):
            // The machine has one current timer; earlier tokens are stale (BoothMachine.timerToken).
            loop.scheduleReplacingEarlierTokens(token: token, milliseconds: ms)
        case let .capture(id, trigger):
            let (session, shot, timeout, quality) = state.withLock {
                ($0.session, $0.machine.shot, $0.machine.config.captureTimeoutMilliseconds, $0.settings.storage.jpegQuality)
            }
            captures.assign(id: id, session: session, shot: max(shot, 1))
            let late = clock.now().milliseconds(since: trigger)
            log.info("capture \(id): trigger at \(trigger) (\(format(late)) ms ago), session \(session), shot \(max(shot, 1))")
            // The machine's capture timer starts with this command: the camera waits as long.
            camera.takeStill(StillRequest(captureID: id, trigger: trigger, deadline: clock.now().adding(milliseconds: Int64(timeout)),
                                          rotation: orientation.camera, jpegQuality: quality))
        case let .save(id):
            storage.save(captureID: id)
        case let .keepForSession(id):
            // The box forgets a capture once saved; the session's picture, review and print need it longer.
            if let record = captures.get(id) {
                let shots = state.withLock { s in
                    s.sessionJPEGs[id] = record.jpeg
                    s.lastFrameAt = record.frameTimestamp
                    return s.machine.config.shots
                }
                // The picture's composer decodes it now, during the next countdown (record.shot is 1-based).
                if shots > 1, record.shot >= 1 { composeWorker.prepare(capture: record.jpeg, index: record.shot - 1, count: shots) }
            }
        case let .checkStorage(pressID, at):
            // Answered at once, before any other event: the press goes on with it.
            dispatch(.storageChecked(pressID: pressID, at: at, refusal: storage.refusal(), fault: storage.mountProblem()))
        case .beginSession:
            let n = store.allocateSession()
            storage.syncSessionNumber()
            state.withLock { s in
                s.session = n
                s.counters.sessions += 1
                s.sessionJPEGs = [:]
                s.savedThisSession = []
                s.lastFrameAt = nil
                s.sessionStartedAt = options.sessionDate()
            }
            // The press's own time is the kernel's event timestamp for GPIO and input buttons: this
            // is press → session begun (countdown or preview on screen next).
            let afterPress = admin.lastPressAt.map { clock.now().milliseconds(since: $0) }
            log.info("session \(n) begins" + (afterPress.map { ", \(Double(Int(($0 * 10).rounded())) / 10) ms after the press (its event time)" } ?? ""))
        case let .endSession(end):
            if end != .completed { printPromises.withdrawUnrequested() }
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
        case let .pressLater(ms):
            let id = state.withLock { s in
                s.nextAutoPressID += 1
                return s.nextAutoPressID
            }
            loop.post(.press(id: id, at: clock.now().adding(milliseconds: Int64(ms))), afterMilliseconds: ms)
        case let .print(id):
            let (session, grace, held, corner) = state.withLock {
                ($0.session, printGrace($0.settings), $0.sessionJPEGs[id], $0.settings.picture.qr)
            }
            printPromises.promise(id, source: "session \(session)", corner: corner, requested: true)
            if wantsCode(), savedPath(id) == nil, !state.withLock({ $0.failedSaves.contains(id) }) {
                // The code carries the saved file's token: printed once the save is noted (`printSaved`).
                state.withLock { _ = $0.printsAwaitingCode.insert(id) }
                log.debug("print of the picture of session \(session): waiting for its save, for its QR code (picture.qr)")
                dispatch(.printWaitsForSave(pictureID: id))
            } else if let jpeg = held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id) {
                printer.request(jpeg: jpeg, captureID: id, source: "session \(session)", graceMilliseconds: grace,
                                code: pageCode(id, jpeg))
            } else {
                // Saved just now: the storage thread let the bytes go and its `.saved` is on its way
                // (a failed save keeps them in memory). The machine prints it when that event arrives.
                log.debug("print of the picture of session \(session): waiting for its save to be noted")
                dispatch(.printWaitsForSave(pictureID: id))
            }
        case let .printSaved(id, path):
            let (session, grace, printedAlready) = state.withLock { s in
                s.printsAwaitingCode.remove(id)
                return (s.session, printGrace(s.settings), s.printedWithoutCode.remove(id) != nil)
            }
            if printedAlready {
                log.debug("print of the picture of session \(session): printed without its code when its save failed; saved now at \(path)")
            } else if let jpeg = printer.savedPhoto(captureID: id) {
                printer.request(jpeg: jpeg, captureID: id, source: "session \(session)", graceMilliseconds: grace,
                                code: pageCode(id, jpeg))
            } else {
                log.error("print of the picture of session \(session): \(path) cannot be read back; not printed")
            }
        case let .skipPrint(id):
            printPromises.withdraw(id)
            state.withLock { _ = $0.printsAwaitingCode.remove(id) }
            printer.skip(captureID: id)
        case let .compose(pictureID, ids):
            // In auto mode the picture's review prints it: promised now, as it may be saved before the review begins.
            let (session, settings) = state.withLock { ($0.session, $0.settings) }
            if settings.print.mode == .auto {
                printPromises.promise(pictureID, source: "session \(session)", corner: settings.picture.qr, requested: false)
            }
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

    /// How long a print request waits before it may be submitted: in press mode `button.long_press`,
    /// since a press in review is also the start of a long press (which skips), so a long press never prints.
    private func printGrace(_ settings: Settings) -> Int {
        settings.print.mode == .press ? settings.button.longPressMilliseconds : 0
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
        let gallery = state.withLock { $0.settings.gallery }
        review.withLock { r in
            guard case let .review(id) = screen else {
                let last = r?.link
                r = nil
                let now = clock.now()
                idleLink.withLock { kept in
                    switch screen {
                    case .idle: if let last { kept = (last, now) }
                    case .preview, .countdown, .capture, .betweenShots: kept = nil
                    case .review, .fault: break
                    }
                }
                var content = ScreenContent(screen)
                if case .idle = screen {
                    content.link = idleCode(gallery)
                    content.wifi = gallery.wifiCode
                }
                for d in displays { d.show(content) }
                return
            }
            let (held, session) = state.withLock { ($0.sessionJPEGs[id], $0.session) }
            let jpeg = held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id)
            let shown = ReviewOnScreen(captureID: id, session: session, jpeg: jpeg,
                                       printStatus: printer.reviewText(captureID: id), link: link(id, jpeg))
            r = shown
            for d in displays { d.show(ScreenContent(screen, picture: shown.jpeg, status: shown.printStatus, link: shown.link)) }
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
            for d in displays { d.show(ScreenContent(.review(pictureID: shown.captureID), picture: shown.jpeg, status: text, link: shown.link)) }
        }
    }

    /// The idle screen's picture code while its `gallery.idle_code` time runs (nil after, or off).
    private func idleCode(_ gallery: Settings.Gallery) -> String? {
        guard let limit = gallery.idleCodeMilliseconds else { return nil }
        let now = clock.now()
        return idleLink.withLock { kept in
            guard let k = kept else { return nil }
            guard now.milliseconds(since: k.since) < Double(limit) else { kept = nil; return nil }
            return k.link
        }
    }

    /// The main loop's tick: the idle screen's picture code taken off once its time is up.
    func expireIdleCode() {
        let gallery = state.withLock { $0.settings.gallery }
        guard idleLink.withLock({ $0 != nil }) else { return }
        let code = idleCode(gallery)
        if code == nil { review.withLock { _ in screens.reshowIdle(link: nil, wifi: gallery.wifiCode) } }
    }

    /// `photoboothctl gallery remove`: a picture taken down (its `token`) is no longer offered by
    /// the idle screen's code, nor by its review's when that is on screen: the review is drawn again
    /// at once without it (the picture and print status stay), and its code does not come back for
    /// the rest of the review. Safe from any thread.
    public func forgetIdleLink(token: String) {
        let gallery = state.withLock { $0.settings.gallery }
        let displays = self.displays
        review.withLock { r in
            takenDown.withLock { t in
                if t.count >= 64 { t.removeFirst() }
                t.append("/p/\(token)")
            }
            if var shown = r, let link = shown.link, link.hasSuffix("/p/\(token)") {
                shown.link = nil
                r = shown
                log.notice("gallery: the review's code of a picture taken down is gone")
                for d in displays { d.show(ScreenContent(.review(pictureID: shown.captureID), picture: shown.jpeg, status: shown.printStatus, link: nil)) }
            }
            let dropped = idleLink.withLock { kept -> Bool in
                guard let k = kept, k.link.hasSuffix("/p/\(token)") else { return false }
                kept = nil
                return true
            }
            if dropped {
                log.notice("gallery: the idle screen's code of a picture taken down is gone")
                screens.reshowIdle(link: nil, wifi: gallery.wifiCode)
            }
        }
    }

    /// The photos directory in use (`storage.dir`, or where a reload moved it).
    public var photosDirectory: String { store.directory }

    /// The URL of the saved photo `id` whose bytes are `jpeg` (``RuntimeOptions/pictureLink``); nil
    /// before it is saved or without a gallery.
    private func link(_ id: UInt64, _ jpeg: [UInt8]?) -> String? {
        guard let pictureLink = options.pictureLink, let jpeg, let path = savedPath(id) else { return nil }
        guard let link = pictureLink(path, jpeg.count) else { return nil }
        return takenDown.withLock { t in t.contains { link.hasSuffix($0) } } ? nil : link
    }

    /// Whether prints carry their picture's QR code: `picture.qr` set and the gallery giving URLs.
    private func wantsCode() -> Bool {
        options.pictureLink != nil && state.withLock { $0.settings.picture.qr } != .off
    }

    /// Where `id` was saved, once its save is noted; nil before.
    private func savedPath(_ id: UInt64) -> String? {
        state.withLock { s in s.savedPaths.last { $0.id == id }?.path }
    }

    /// The QR code the print of saved picture `id` (bytes `jpeg`) carries (`picture.qr`); nil without one.
    private func pageCode(_ id: UInt64, _ jpeg: [UInt8]) -> PageCode? {
        let corner = state.withLock { $0.settings.picture.qr }
        guard corner != .off, let url = link(id, jpeg) else { return nil }
        return PageCode(text: url, corner: corner)
    }

    /// `id` was saved: when it is the review on screen and has no code yet, shown again with its
    /// URL's QR code (a review can begin before its picture is on disk).
    private func reviewSaved(_ id: UInt64) {
        guard options.pictureLink != nil else { return }
        let displays = self.displays
        review.withLock { r in
            guard var shown = r, shown.captureID == id, shown.link == nil, let link = link(id, shown.jpeg) else { return }
            shown.link = link
            r = shown
            for d in displays { d.show(ScreenContent(.review(pictureID: id), picture: shown.jpeg, status: shown.printStatus, link: link)) }
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

    /// Opens the button (its line or input device); returns the fault message when it cannot.
    private func startButton(_ settings: Settings) -> String? {
        let button = factory.button(settings)
        let loop = self.loop
        do {
            let failure = Mutex<String?>(nil)
            try button.start { signal in
                if case let .failed(message) = signal { failure.withLock { $0 = message } }
                switch signal {
                case let .press(id, at): loop.post(.press(id: id, at: at))
                case let .longPress(id): loop.post(.longPress(id: id))
                case let .reviewAction(action): loop.post(.reviewAction(action))
                case let .stuck(message): loop.post(.deviceFault(.button, message: message))
                case .unstuck: loop.post(.deviceRecovered(.button))
                case let .failed(message):
                    loop.post(.deviceFault(.button, message: message))
                }
            }
            // A device that failed on its own thread while starting (unplugged as it opened) is not
            // recovered: its fault stands and the retry goes on.
            guard button.isRunning else {
                button.stop()
                state.withLock { $0.button = button; $0.buttonRunning = false }
                return "button not available: " + (failure.withLock { $0 } ?? "\(button.identity) failed as it started")
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

    /// Applies the pending reload: every changed key whose rule allows it (``ReloadRule``), each
    /// through the component that uses it; keys only a restart applies keep their running value.
    /// Logs, and keeps for ``requestReload()``'s reply, what each key did.
    ///
    /// A new `storage.dir` (with `storage.mount` when that changed too) is checked as at start
    /// (``PhotoStorage/switchDirectory(to:mount:)``, on this thread: a `stat`, a `mkdir`, a probe file
    /// and a listing of the date folders) before anything else is applied. Taken, it is where the next
    /// save goes (the storage worker writes through the same store; a save under way finishes where it
    /// began), session numbers go on past the higher of the two directories, `status` shows it in force,
    /// and the printer follows on its own (it is handed each saved picture's full path). The totals file
    /// follows too (``StatsRecording/follow(directory:)``): the next start reads the totals from
    /// `storage.dir`, so left behind they would be rebuilt from the new directory's photos alone.
    /// Refused, both keys keep their running value and the reply gives the reason and says the file now
    /// differs from the settings in force.
    private func applyReload() {
        guard let (new, composer, ticket, old) = state.withLock({ s -> (Settings, (any PictureComposing)??, UInt64, Settings)? in
            defer { s.pendingSettings = nil; s.pendingComposer = nil }
            guard let new = s.pendingSettings else { return nil }
            return (new, s.pendingComposer, s.pendingReloadTicket, s.settings)
        }) else { return }
        let changes = old.changes(to: new)
        func changed(_ rule: ReloadRule) -> Bool { changes.contains { $0.rule == rule } }
        func changed(key: String) -> Bool { changes.contains { $0.key == key } }
        let refused = switchPhotosDirectory(changed(key: "storage.dir") ? new.storage : nil,
                                            mountChanged: changed(key: "storage.mount"))
        let applied = old.applying(changes.filter { $0.rule.appliesWithoutRestart && refused[$0.key] == nil }, from: new)
        // What a device said when it was reopened, where it is not what the rule promises (a line that
        // did not open, no screen made): the reply's words for each key under that rule.
        var outcome: [ReloadRule: String] = [:]
        state.withLock { $0.settings = applied }

        if let composer { composeWorker.setComposer(composer) }
        storage.setMinFree(UInt64(applied.storage.minFreeBytes))
        storage.setMount(applied.storage.mount)
        // A refusal for free space ends (or begins) with the new storage.min_free, not at the next press.
        storage.checkFreeSpace()
        if applied.print != old.print { printer.reconfigure(applied.print) }
        if changed(.cameraStream) || changed(key: "camera.rotation") {
            // storage.jpeg_quality needs no restart: each still and snapshot asks for the quality in force.
            // camera.rotation is in force at once (frames a camera turned are turned by what is left); a camera
            // that turns for free does it from its next start.
            camera.reconfigure(applied.camera)
        }
        if changed(.cameraStream) {
            camera.stopLiveView()
            if state.withLock({ $0.machine.streaming }) { camera.startLiveView() }
        }
        let turns = ["camera.rotation", "display.rotation", "display.fallback_rotation", "display.accelerometer"]
        if turns.contains(where: changed(key:)) { orientation.reconfigure(applied) }
        if changed(.reopen(.screen)) || changed(key: "camera.rotation") {
            // The screens draw the live view turned by camera.rotation: made again for it too.
            let (factory, clock, log) = (self.factory, self.clock, self.log)
            let before = screens.count
            let count = screens.replace(settings: applied) { factory.screens(applied, clock, log, orientation) }
            log.info("screens reopened for the new settings: \(count) in use")
            if count == 0 && before > 0 {
                outcome[.reopen(.screen)] = "screens reopened: none could be opened (see the log), nothing is shown"
            }
        }
        if changed(.reopen(.button)) || changed(.reopen(.led)) {
            // The LED's chip defaults to the button's: both lines are requested again.
            state.withLock { $0.button }?.stop()
            state.withLock { $0.led }?.stop()
            state.withLock { $0.buttonRunning = false }
            state.withLock { $0.led = nil }
            if let message = startButton(applied) {
                loop.post(.deviceFault(.button, message: message))
                outcome[.reopen(.button)] = "button not opened: \(message)"
            }
            openLED(applied)
            if factory.opensLED, applied.led.isConfigured, state.withLock({ $0.led }) == nil {
                outcome[.reopen(.led)] = "LED line not opened (see the log); tried again from 1 s to every 30 s"
            }
        }
        if ["gallery.idle_code", "gallery.wifi_ssid", "gallery.wifi_password", "gallery.wifi_security"].contains(where: changed(key:)) {
            // The idle screen on the glass shows its codes as the new settings say, now.
            review.withLock { _ in screens.reshowIdle(link: idleCode(applied.gallery), wifi: applied.gallery.wifiCode) }
        }
        let reply = ReloadReply(appliedNow: true, state: currentState.name, changes: changes.map { change in
            var c = ReloadReply.Change(change, applied: change.rule.appliesWithoutRestart && refused[change.key] == nil)
            if let why = refused[change.key] {
                c.effect = why
                c.refused = true
            } else if let said = outcome[change.rule] {
                c.effect = said
            }
            return c
        })
        state.withLock { $0.appliedReload = (ticket, reply) }
        log.notice("settings " + reply.text)
    }

    /// The photos directory's warnings after a prepare or a switch: a session-number file not opened, one that
    /// held no number, what a power cut can do there.
    private func logStorageNotes() {
        if let p = store.sessionFileProblem {
            log.warning("storage: a session-number record could not be kept (numbers follow the photo files and the record that could): \(p)")
        }
        for note in store.sessionNumberNotes + store.powerCutNotes { log.warning("storage: \(note)") }
    }

    /// Moves the photos to `storage.dir` of `new` (nil: it did not change), checked with its
    /// `storage.mount`; see ``applyReload()``.
    /// - Returns: the keys refused, each with the reply's words for it (empty when taken or unchanged).
    private func switchPhotosDirectory(_ new: Settings.Storage?, mountChanged: Bool) -> [String: String] {
        guard let new else { return [:] }
        let from = store.directory
        do {
            let next = try store.switchDirectory(to: new.dir, mount: new.mount)
            admin.stats.follow(directory: store.directory)
            log.notice("storage: photos now in \(store.directory) (were in \(from)), next session \(next)")
            logStorageNotes()
            if case let .fault(reasons) = currentState, reasons[.storage] != nil {
                // The fault was the old directory's: the new one is tried now, not at the next retry.
                storage.setMount(new.mount)
                storage.retry()
            }
            loop.post(.storageStatus(refusal: storage.refusal()))
            return [:]
        } catch {
            log.error("reload: \(error)")
            let why = "refused: \(error); the file and the running setting now differ"
            var refused = ["storage.dir": why]
            if mountChanged { refused["storage.mount"] = "refused with storage.dir; the file and the running setting now differ" }
            return refused
        }
    }

    /// SIGTERM's end: saves in flight finish (≤ 2 s), the stream stops, the lines are released.
    private func shutdownDevices() -> Int32 {
        // The camera first: a frame it took for a capture after the loop stopped is in the box
        // by then. Every capture still held (taken but not saved, or kept back by a storage fault)
        // gets one more save before the storage thread finishes.
        camera.shutdown(timeoutSeconds: 3)
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
