import BoothClock
import BoothCore
import BoothPorts
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Runs the state machine against the devices: the one place where the core's commands
/// become effects. `run()` owns the calling thread as the main loop; the camera, storage
/// and button each have a thread of their own and talk to the loop through events.
public final class BoothRuntime: Sendable {
    /// Where the loop's events come from; post to it from any thread.
    public let loop: EventLoop
    public let log: Logger
    let clock: any MonotonicClock
    let options: RuntimeOptions
    let factory: DeviceFactory
    let captures = CaptureBox()
    /// The photos directory (the storage port; BoothStorage's `PhotoStore`).
    let store: any PhotoStorage
    let storage: StorageWorker
    let camera: any CameraSource
    /// Where the camera's stills, faults and live frames go (CameraWorker.swift).
    let cameraHandlers: CameraSourceHandlers
    /// Printing beside the session (the printer port; BoothPrint's `PrintWorker`).
    public let printer: any Printer
    /// Hands each saved capture and picture to ``RuntimeOptions/pictureSinks``.
    let delivery: PictureDelivery
    /// Prints `print.mode` promises for pictures not saved yet: journaled with their save.
    let printPromises: PrintPromises
    /// The machine's print commands, with their QR codes (PrintRequests.swift).
    let prints: PrintRequests
    /// The picture composer's thread, when there is a composer.
    let composeWorker: ComposeWorker
    /// Start time, last press and the persisted totals, for `photoboothctl` (Admin.swift).
    let admin: RuntimeAdmin
    /// Every screen, as one sink a reload can refill (ScreenSet.swift).
    let screens: ScreenSet
    var displays: [any DisplaySink] { [screens] }
    /// The review and idle screens' content: the picture, its print status and QR code, the idle
    /// screen's codes (ReviewScreens.swift).
    let reviewScreens: ReviewScreens
    /// `camera.rotation`/`display.rotation` resolved (fixed, or from the accelerometer).
    let orientation: any OrientationSource
    let reloader: @Sendable () -> Result<Settings, SettingsError>
    /// The reload protocol's waits and SIGHUP's reload thread (Reload.swift).
    let reloads: ReloadRequests
    /// The button and the LED (InputDevices.swift).
    let inputs: InputDevices
    let supervisor: ServiceSupervisor

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
        self.reloads = ReloadRequests(clock: clock)
        self.inputs = InputDevices(factory: factory, loop: loop, clock: clock, log: log)
        self.store = factory.photoStorage(settings.storage)
        self.admin = RuntimeAdmin(clock: clock, stats: factory.stats(settings.storage.dir, log))
        let post: @Sendable (BoothEvent) -> Void = { loop.post($0) }
        let printer = factory.printer(settings.print, log, options.wallClock, clock)
        self.printer = printer
        let delivery = PictureDelivery(sinks: options.pictureSinks, log: log, clock: clock)
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
        let reviewScreens = ReviewScreens(screens: screens, printer: printer, captures: captures, clock: clock, log: log,
                                          pictureLink: options.pictureLink)
        self.reviewScreens = reviewScreens
        self.prints = PrintRequests(printer: printer, promises: promises, captures: captures, screens: reviewScreens, log: log)
        self.camera = factory.camera(settings, clock, log)
        let handlers = makeCameraHandlers(captures: captures, displays: [screens], post: post), frames = admin.liveFrames
        self.cameraHandlers = CameraSourceHandlers(event: handlers.event, liveFrame: { handlers.liveFrame($0); frames.note() })
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
        printer.observe { [weak reviewScreens] in reviewScreens?.printStateChanged() }
        printer.launch()
        if let message = inputs.startButton(settings) { startFaults.append((.button, message)) }
        inputs.openLED(settings)
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
    func handle(_ event: BoothEvent) {
        note(event)
        dispatch(event)
        // A reload waiting for its answer looks again (applied, or kept for the session's end).
        reloads.answers.notify()
        admin.stats.record(counters, highestSession: state.withLock { $0.lastSavedSession })
        superviseAfterEvent()
    }

    /// What the runtime records of an event whatever the machine's state (the machine decides the
    /// rest): the press time for status, where a photo was saved and how it counts (a capture, not a
    /// picture nor a capture being deleted), a composed picture's bytes.
    func note(_ event: BoothEvent) {
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
            reviewScreens.saved(id, path: path)
        case let .composed(id):
            // Taken off the shelf even when late, so the shelf never keeps a picture's bytes.
            if let jpeg = captures.takeShelved(pictureID: id) { state.withLock { $0.sessionJPEGs[id] = jpeg } }
        case let .saveFailed(id, _, _):
            prints.saveFailed(id, printPicture(id))
        case .storageChecked, .longPress, .reviewAction, .timer, .captureSucceeded, .captureFailed, .deviceFault,
             .deviceRecovered, .storageStatus, .reload, .composeFailed, .liveViewWanted, .printWaitsForSave, .shutdown:
            break
        }
    }

    func dispatch(_ event: BoothEvent) {
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
    func pressDecided(by event: BoothEvent, _ commands: [BoothCommand]) -> UInt64? {
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

    func describe(_ s: BoothState) -> String {
        if case let .fault(reasons) = s {
            // The kinds only: each reason has its own line ("fault (camera): …"), logged once.
            return "fault(" + reasons.keys.sorted().map(\.rawValue).joined(separator: ", ") + ")"
        }
        return s.name
    }

    // MARK: Commands

    func execute(_ commands: [BoothCommand]) {
        for command in commands { execute(command) }
    }

    func execute(_ command: BoothCommand) {
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
            inputs.setLED(pattern)
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
            if prints.request(id, printPicture(id)) { dispatch(.printWaitsForSave(pictureID: id)) }
        case let .printSaved(id, path):
            prints.saved(id, path: path, printPicture(id))
        case let .skipPrint(id):
            prints.skip(id)
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

    /// Hands the session's captures to the composer's thread; answers `composeFailed` at once when
    /// there is no composer or a capture's bytes are gone.
    func compose(pictureID: UInt64, captureIDs: [UInt64]) {
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

    /// The photos directory in use (`storage.dir`, or where a reload moved it).
    public var photosDirectory: String { store.directory }

    /// The photos directory's warnings after a prepare or a switch: a session-number file not opened, one that
    /// held no number, what a power cut can do there.
    func logStorageNotes() {
        if let p = store.sessionFileProblem {
            log.warning("storage: a session-number record could not be kept (numbers follow the photo files and the record that could): \(p)")
        }
        for note in store.sessionNumberNotes + store.powerCutNotes { log.warning("storage: \(note)") }
    }

}
