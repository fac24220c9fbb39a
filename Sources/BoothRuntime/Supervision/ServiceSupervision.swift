import BoothCore
import BoothPorts
import Glibc
import Synchronization

/// The booth as a systemd service: `READY=1` once it reaches idle or fault, `STATUS=` on every
/// change of what `systemctl status` should show, and `WATCHDOG=1` from the main loop's tick only
/// when ``LivenessCheck`` finds the booth alive. Also the tick's other duty: noticing removable
/// media that went away while the booth is idle. Used only from the loop's thread.
final class ServiceSupervisor: Sendable {
    let notifier: SystemdNotifier?
    let check = LivenessCheck()
    private let log: Logger

    private struct State {
        var ready = false
        var lastStatus = ""
        var stateName = ""
        var stateSince = MonotonicInstant(nanoseconds: 0)
        var lastWatchdog: MonotonicInstant?
        var lastProblem: String?
        var mountFaultPosted = false
    }
    private let state = Mutex(State())

    init(notifier: SystemdNotifier?, log: Logger) {
        self.notifier = notifier
        self.log = log
    }

    /// The tick period (ms): at most 1 s (the removable-media check), and often enough for the watchdog.
    var tickMilliseconds: Int { min(1000, notifier?.watchdogIntervalMilliseconds ?? 1000) }

    /// Notes a state (by name) and sends READY/STATUS when the status line changed.
    func update(state booth: BoothState, status text: String, at now: MonotonicInstant) {
        let (sendReady, sendStatus) = state.withLock { s -> (Bool, Bool) in
            if booth.name != s.stateName { s.stateName = booth.name; s.stateSince = now }
            var ready = false
            if !s.ready {
                switch booth {
                case .idle, .fault: ready = true; s.ready = true
                default: break
                }
            }
            let changed = text != s.lastStatus
            s.lastStatus = text
            return (ready, changed && s.ready)
        }
        guard let notifier else { return }
        do {
            if sendReady {
                try notifier.ready(status: text)
                log.info("systemd: READY=1 (\(text))")
            } else if sendStatus {
                try notifier.status(text)
            }
        } catch {
            log.warning("systemd notification not sent: \(error)")
        }
    }

    /// When the current state was entered.
    var stateSince: MonotonicInstant { state.withLock { $0.stateSince } }

    /// Runs the liveness check; sends `WATCHDOG=1` when alive and due. A failed check is logged once
    /// (as an error, so journald keeps it) and the watchdog is left to expire.
    func watchdog(_ inputs: LivenessCheck.Inputs) {
        guard let notifier, let interval = notifier.watchdogIntervalMilliseconds else { return }
        let problem = check.problem(inputs)
        let due = state.withLock { s -> Bool in
            defer { s.lastProblem = problem }
            if let problem, problem != s.lastProblem {
                log.error("watchdog: not alive, WATCHDOG=1 withheld: \(problem)")
            }
            guard problem == nil else { return false }
            guard let last = s.lastWatchdog else { return true }
            return inputs.now.milliseconds(since: last) >= Double(interval) * 0.9
        }
        guard due else { return }
        do {
            try notifier.watchdog()
            state.withLock { $0.lastWatchdog = inputs.now }
        } catch {
            log.warning("systemd: WATCHDOG=1 not sent: \(error)")
        }
    }

    /// True once per disappearance of the removable media: post the storage fault then.
    func shouldPostMountFault(_ problem: String?) -> Bool {
        state.withLock { s in
            guard problem != nil else { s.mountFaultPosted = false; return false }
            defer { s.mountFaultPosted = true }
            return !s.mountFaultPosted
        }
    }

    func stopping() {
        try? notifier?.stopping()
    }
}

extension BoothRuntime {
    /// The line for `systemctl status` (`STATUS=`): the state, the photos so far, and why the booth is
    /// not taking sessions when it is not: `idle · 134 photos`, `fault · storage: removable media …`.
    func serviceStatusText() -> String {
        let (booth, refusal) = state.withLock { ($0.machine.state, $0.machine.storageRefusal) }
        var parts = [booth.name]
        let photos = admin.stats.current.captures
        parts.append(photos == 1 ? "1 photo" : "\(photos) photos")
        if case let .fault(reasons) = booth {
            parts += reasons.keys.sorted().map { "\($0.rawValue): \(reasons[$0] ?? "")" }
        } else if case .idle = booth, let refusal {
            parts.append(refusal)
        }
        return parts.joined(separator: " · ")
    }

    /// After every event: READY/STATUS for systemd.
    func superviseAfterEvent() {
        supervisor.update(state: currentState, status: serviceStatusText(), at: clock.now())
    }

    /// The main loop's tick (on the loop's thread): removable media, the free space (on the storage
    /// thread, every ``StorageWorker/freeSpaceCheckMilliseconds``), then the watchdog.
    func tick() {
        inputs.retryLEDIfDue(state.withLock { $0.settings })
        expireIdleCode()
        storage.checkFreeSpaceIfDue(now: clock.now())
        inputs.button?.tick(now: clock.now())
        let problem = storage.mountProblem()
        if supervisor.shouldPostMountFault(problem), let problem {
            loop.post(.deviceFault(.storage, message: problem))
        }
        let (booth, config) = state.withLock { s in (s.machine.state, core(s.settings)) }
        let buttonRunning = inputs.buttonRunning
        supervisor.watchdog(LivenessCheck.Inputs(now: clock.now(), state: booth, stateSince: supervisor.stateSince,
                                                 config: config, camera: camera.heartbeat, storage: storage.heartbeat,
                                                 buttonRunning: buttonRunning))
        stallForTestingIfAsked()
    }

    /// `RuntimeOptions.stallLoopAfterMilliseconds`: the test hook that stops the main loop for good
    /// (the process stays up), to show that the watchdog is fed by the loop and by nothing else.
    private func stallForTestingIfAsked() {
        guard let after = options.stallLoopAfterMilliseconds,
              clock.now().milliseconds(since: admin.startedMonotonic) >= Double(after) else { return }
        log.warning("test hook: main loop stalled on purpose (--test-stall-loop-after \(after)ms)")
        while true { sleep(3600) }
    }
}
