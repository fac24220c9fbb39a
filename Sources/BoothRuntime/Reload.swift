import BoothClock
import BoothCore
import BoothPorts
import Synchronization

// The reload protocol's runtime side: a request re-reads the file, hands the loop the new settings and
// waits for its answer; the loop applies them (or the machine keeps them for the session's end).

extension BoothRuntime {
    /// Asks the booth to re-read its settings (SIGHUP, `photoboothctl reload`) and says exactly what
    /// changed: each key that differs from the settings in force (``Settings/changes(to:)``) with how
    /// it took effect (``ReloadRule``). Applied in idle or fault before this returns; while a session
    /// is under way the changes apply when it ends (the reply says so). Keys only a daemon restart
    /// applies stay as they run, and are listed as such. An invalid file keeps the running settings.
    /// Blocks the calling thread (the control socket's or the reload thread's, never the loop's, never a
    /// signal handler's: SIGHUP goes through ``reloadInBackground()``) until the loop applied or deferred
    /// the reload, up to `timeoutSeconds` on the runtime's injected clock (a wait on ``ReloadRequests/answers``).
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
    /// it for the end of the session under way (a reply saying so, with the changes foreseen), at most
    /// `timeoutSeconds` on the injected clock: the loop notifies ``ReloadRequests/answers`` after each event.
    func awaitReload(ticket: UInt64, changes: [SettingChange], timeoutSeconds: Double) -> ReloadReply {
        enum Answer { case applied(ReloadReply), deferred(BoothState) }
        let answer = reloads.answers.wait(milliseconds: Int64(timeoutSeconds * 1000)) { () -> Answer? in
            state.withLock { s -> Answer? in
                if let a = s.appliedReload, a.ticket >= ticket { return .applied(a.reply) }
                // The machine holds a reload for the session's end; applyReload takes the newest settings then.
                if s.machine.pendingReload != nil, s.pendingReloadTicket == ticket { return .deferred(s.machine.state) }
                return nil
            }
        }
        switch answer {
        case let .applied(reply)?:
            return reply
        case let .deferred(deferredIn)?:
            let reply = ReloadReply(appliedNow: false, state: deferredIn.name, changes: changes.map { ReloadReply.Change($0, applied: false) })
            log.notice("settings " + reply.text)
            return reply
        case nil:
            let reply = ReloadReply(appliedNow: false, state: currentState.name, changes: changes.map { ReloadReply.Change($0, applied: false) })
            log.warning("settings \(reply.text) (the main loop did not answer within \(Int(timeoutSeconds)) s)")
            return reply
        }
    }

    /// SIGHUP's reload: hands ``requestReload(timeoutSeconds:)`` to the runtime's "reload" thread and
    /// returns at once, so a signal handler never waits for the loop (a SIGTERM after it is handled at
    /// once). The reply is logged as for any reload. Reloads asked for while one runs are run once more
    /// after it, not once each (the file is read then). Thread-safe.
    /// - Returns: false when the reload thread could not be made (`pthread_create` failed): nothing is reloaded.
    @discardableResult
    public func reloadInBackground() -> Bool {
        reloads.send { [weak self] in self?.requestReload() }
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
    func applyReload() {
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
            let (buttonFault, ledMissing) = inputs.reopen(applied)
            if let buttonFault {
                outcome[.reopen(.button)] = "button not opened: \(buttonFault)"
            }
            if ledMissing {
                outcome[.reopen(.led)] = "LED line not opened (see the log); tried again from 1 s to every 30 s"
            }
        }
        if ["gallery.idle_code", "gallery.wifi_ssid", "gallery.wifi_password", "gallery.wifi_security"].contains(where: changed(key:)) {
            // The idle screen on the glass shows its codes as the new settings say, now.
            reviewScreens.reshowIdle(applied.gallery)
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

    /// Moves the photos to `storage.dir` of `new` (nil: it did not change), checked with its
    /// `storage.mount`; see ``applyReload()``.
    /// - Returns: the keys refused, each with the reply's words for it (empty when taken or unchanged).
    func switchPhotosDirectory(_ new: Settings.Storage?, mountChanged: Bool) -> [String: String] {
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
}

/// The reload protocol's waits, on threads of the runtime's own: ``BoothRuntime/requestReload(timeoutSeconds:)``
/// waits on ``answers`` (the loop notifies it after each event it handled), and SIGHUP's reloads run on
/// the "reload" thread (``BoothRuntime/reloadInBackground()``), one at a time.
final class ReloadRequests: Sendable {
    /// Notified by the loop after each event: a waiting request looks again for its answer.
    let answers: ClockCondition
    struct Job: Sendable { let run: @Sendable () -> Void }
    private let queue = WorkQueue<Job>(name: "reload")
    /// True once the "reload" thread runs. A start that failed is tried again at the next reload: a
    /// moment at the thread limit does not end SIGHUP's reloads until the daemon restarts.
    private let started = Mutex(false)
    /// Starts the thread on the queue (`pthread_create`); a test's fails on purpose.
    private let startThread: @Sendable (WorkQueue<Job>) -> Bool

    /// - Parameter startThread: starts the "reload" thread on its queue; false when it could not be made.
    init(clock: any MonotonicClock, startThread: @escaping @Sendable (WorkQueue<Job>) -> Bool = { $0.start { job in job.run() } }) {
        answers = ClockCondition(clock: clock)
        self.startThread = startThread
    }

    /// Queues `reload` for the "reload" thread (started on first use, or again after a start that
    /// failed) and returns at once; a reload already waiting is replaced by this one (both would read the same file).
    /// - Returns: false when the thread could not be made (`pthread_create` failed): this reload is not run.
    func send(_ reload: @escaping @Sendable () -> Void) -> Bool {
        let running = started.withLock { s -> Bool in
            if !s { s = startThread(queue) }
            return s
        }
        guard running else { return false }
        queue.send(Job(run: reload), keepingAtMost: 1)
        return true
    }

    /// Shutdown: a reload still waiting is dropped, and the "reload" thread ends once the one under way (if
    /// any) has returned; not waited for here.
    func stop() {
        _ = queue.cancelWaiting()
        _ = queue.finish(timeoutMilliseconds: 0)
    }

    /// True when no "reload" thread runs (none made yet, or ended after ``stop()``).
    var threadEnded: Bool { queue.hasEnded }
}
