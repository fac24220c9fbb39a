import BoothButtons
import BoothClock
import BoothCore
import BoothGPIO
import BoothInput
import BoothPorts
import BoothRuntime
import Synchronization

/// The button on an input device's key, or a touch screen's tap (libevdev, grabbed, debounced as the
/// GPIO button is), as a ``ButtonDevice``: `button.input_device`, `button.input_key` and the
/// `[button]` timings. Each ``start(_:)`` finds the device again (a re-plugged one may have another
/// event number), so the runtime's retry of a failed button is the hot-plug recovery.
public final class InputButtonDevice: ButtonDevice {
    private let spec: InputDeviceSpec
    private let keyText: String
    /// `button.print_key`, `button.skip_key` (empty: none).
    private let reviewKeys: [(ReviewAction, String)]
    private let timing: ButtonTiming
    private let stuckLimit: Int
    private let log: Logger
    private let directory: String
    private struct State {
        var button: EvdevButton?
        var running = false
        /// Counts starts: a signal from the thread of an earlier start (stopped meanwhile) is dropped.
        var generation = 0
    }
    private let state = Mutex(State())

    /// - Parameter directory: where the event nodes are (`/dev/input`; tests may point elsewhere).
    public init(settings s: Settings, log: Logger, directory: String = InputDevices.directory) {
        spec = InputDeviceSpec(s.button.inputDevice)
        keyText = s.button.inputKey
        reviewKeys = [(.print, s.button.printKey), (.skip, s.button.skipKey)].filter { !$0.1.isEmpty }
        timing = ButtonTiming(debounceMilliseconds: Int64(s.button.debounceMilliseconds),
                              longPressMilliseconds: Int64(s.button.longPressMilliseconds),
                              stuckMilliseconds: Int64(s.button.stuckLimitMilliseconds))
        stuckLimit = s.button.stuckLimitMilliseconds
        self.log = log
        self.directory = directory
    }

    /// `"input /dev/input/event3 'QEMU QEMU USB Keyboard' (usb-QEMU_…-event-kbd), key KEY_SPACE"`; before
    /// it opened: `"input any keyboard, key KEY_SPACE"`.
    public var identity: String {
        guard let b = state.withLock({ $0.button }) else { return "input \(spec), key \(keyText)" }
        let id = b.device.byID.first.map { " (\($0))" } ?? ""
        return "input \(b.device.describe)\(id), key \(b.key)"
    }

    public var isRunning: Bool { state.withLock { $0.running } }

    /// Finds the device, grabs it and starts its thread.
    /// - Throws: ``InputError`` naming the device and key: no such key name, no matching device (with
    ///   the devices there are), permission, grabbed by another program.
    public func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        let key = try InputKey(parsing: keyText)
        let device = try InputDevices.find(spec, key: key, directory: directory)
        let (actions, warnings) = InputButtonDevice.reviewActions(reviewKeys, main: key, mainText: keyText,
                                                                 reports: { device.reports($0) }, device: device.describe)
        for w in warnings { log.warning(w) }
        let log = self.log, stuckLimit = self.stuckLimit
        let generation = state.withLock { s in
            s.running = true
            s.generation += 1
            return s.generation
        }
        let current: @Sendable () -> Bool = { [weak self] in self?.state.withLock { $0.generation == generation && $0.running } ?? false }
        do {
            let b = try EvdevButton.start(device: device, key: key, timing: timing, log: { log.log($0, $1) },
                                          handler: { event in
                guard current() else { return }
                switch event {
                case let .press(id, at): handler(.press(id: id, at: at))
                case let .longPress(id, _): handler(.longPress(id: id))
                case .stuck: handler(.stuck("button stuck: \(key) held longer than \(stuckLimit / 1000) s on \(device.describe)"))
                case .unstuck: handler(.unstuck)
                case .release, .rejected, .edgesLost, .releaseLost, .failed: break
                }
            }, failed: { [weak self] error in
                guard current() else { return }
                self?.state.withLock { $0.running = false }
                handler(.failed("button input failed: \(error.message)"))
            }, actions: actions, action: { a in
                guard current() else { return }
                handler(.reviewAction(a))
            })
            state.withLock { $0.button = b }
        } catch {
            state.withLock { $0.running = false }
            throw error
        }
    }

    /// The review keys that act, by key code: optional, so one that is no key name, the main key
    /// (compared by code: libevdev names some codes twice, BTN_A = BTN_SOUTH), another review key's
    /// code, a tap, or a key the device does not report is left off with a warning (the sentences returned).
    static func reviewActions(_ keys: [(ReviewAction, String)], main: InputKey, mainText: String,
                              reports: (InputKey) -> Bool, device: String) -> ([UInt16: ReviewAction], [String]) {
        var actions: [UInt16: ReviewAction] = [:], warnings: [String] = []
        for (action, text) in keys {
            let name = "button.\(action.rawValue)_key"
            do {
                let k = try InputKey(parsing: text)
                if k.code == main.code {
                    warnings.append("button: \(name) = \(text) is the same key as button.input_key = \(mainText); no \(action.rawValue) key")
                } else if k.isTap {
                    warnings.append("button: \(name) = \(text): a tap cannot be a review key; no \(action.rawValue) key")
                } else if let other = actions[k.code] {
                    warnings.append("button: \(name) = \(text) is the same key as button.\(other.rawValue)_key; no \(action.rawValue) key")
                } else if reports(k) {
                    actions[k.code] = action
                } else {
                    warnings.append("button: \(name) = \(text): \(device) does not report it; no \(action.rawValue) key")
                }
            } catch {
                warnings.append("button: \(name): \(error.message); no \(action.rawValue) key")
            }
        }
        return (actions, warnings)
    }

    public func stop() {
        let b = state.withLock { s in
            s.running = false
            return s.button
        }
        b?.stop()
    }
}

/// Several sources of presses as one ``ButtonDevice`` (`button.source = gpio, input`): a GPIO button
/// and a touch screen together. Presses of every source count; ids are renumbered so a long press
/// belongs to its own source's press.
///
/// A source that fails (at start or in use) while another works is no fault: it is logged as a
/// warning (the same reason again at debug), shown in ``identity`` (so in `status`) and ``degraded``
/// (so `--check` fails), and opened again from the runtime's tick after 1 s, doubling to 30 s, as the
/// LED is. Only when every source has failed does the set report `.failed` (the booth's button
/// fault, retried by the runtime); a start where none opens throws every reason. A stuck source is
/// a fault (`.stuck`, with that source's words) until it is released: a held button would otherwise
/// press for nobody (the other sources work again when it is released).
public final class ButtonSet: ButtonDevice {
    private let members: [(name: String, device: any ButtonDevice)]
    private let log: Logger
    private struct State {
        var handler: (@Sendable (ButtonSignal) -> Void)?
        var failed: [Int: String] = [:]
        /// The reason last logged as a warning per source: the same one again is logged at debug.
        var warned: [Int: String] = [:]
        var retry: [Int: DeviceRetry] = [:]
        /// Stuck sources and their words, in the order they got stuck.
        var stuck: [(source: Int, message: String)] = []
        var ids: [Int: [UInt64: UInt64]] = [:]
        var nextID: UInt64 = 0
        var running = false
        /// Counts starts: signals of a source started by an earlier start are dropped.
        var generation = 0
    }
    private let state = Mutex(State())

    /// - Parameter members: each source's name (`gpio`, `input`) and device, in `button.source`'s order.
    public init(_ members: [(name: String, device: any ButtonDevice)], log: Logger) {
        self.members = members
        self.log = log
    }

    /// `"gpio: gpiochip0 line 17 …; input: input /dev/input/event3 … (failed: …; retrying)"`.
    public var identity: String {
        let failed = state.withLock { $0.failed }
        return members.enumerated().map { i, m in
            "\(m.name): \(m.device.identity)" + (failed[i].map { " (failed: \($0); retrying)" } ?? "")
        }.joined(separator: "; ")
    }

    /// The sources that failed, with why (`"input: no input device …"`); nil when all work.
    public var degraded: String? {
        let failed = state.withLock { $0.failed }
        let words = members.indices.compactMap { i in failed[i].map { "\(members[i].name): \($0)" } }
        return words.isEmpty ? nil : words.joined(separator: "; ")
    }

    public var isRunning: Bool { state.withLock { $0.running } }

    /// Starts every source. - Throws: ``ButtonSetError`` with each source's reason when none starts.
    public func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        let generation = state.withLock { s in
            let g = s.generation + 1
            s = State()
            s.generation = g
            s.handler = handler
            s.running = true
            return g
        }
        var reasons: [String] = []
        for i in members.indices {
            if let reason = open(i, generation: generation, now: nil, announce: false) { reasons.append("\(members[i].name): \(reason)") }
        }
        if reasons.count == members.count {
            state.withLock { $0.running = false }
            throw ButtonSetError(reasons: reasons)
        }
        // Said once every source was tried, so "runs on" names only sources that did open.
        for i in members.indices { if let reason = state.withLock({ $0.failed[i] }) { announce(i, reason) } }
    }

    public func stop() {
        state.withLock { $0.running = false; $0.handler = nil }
        for m in members { m.device.stop() }
    }

    /// Opens again each failed source whose retry is due at `now` (the runtime's clock); a failure
    /// since the last tick is timed from this one.
    public func tick(now: MonotonicInstant) {
        let (due, generation) = state.withLock { s -> ([Int], Int) in
            guard s.running else { return ([], s.generation) }
            var due: [Int] = []
            for i in s.failed.keys.sorted() {
                var r = s.retry[i] ?? DeviceRetry()
                if r.nextAttempt == nil {
                    _ = r.failed(at: now)
                } else if r.isDue(at: now) {
                    due.append(i)
                }
                s.retry[i] = r
            }
            return (due, s.generation)
        }
        for i in due {
            members[i].device.stop()
            if open(i, generation: generation, now: now, announce: true) == nil {
                log.notice("button: source \(members[i].name) works again: \(members[i].device.identity)")
            }
        }
    }

    /// Starts member `i`; nil when it started and still runs, else the reason (recorded, retry scheduled).
    private func open(_ i: Int, generation: Int, now: MonotonicInstant?, announce: Bool) -> String? {
        var reason: String
        do {
            try members[i].device.start { [weak self] signal in self?.signal(signal, from: i, generation: generation) }
            // A source that failed on its own thread while starting is not working (its .failed may
            // have come before this point, or comes next and is recorded then).
            let works = state.withLock { s in
                guard members[i].device.isRunning else { return false }
                s.failed[i] = nil
                s.retry[i] = nil
                s.warned[i] = nil
                return true
            }
            if works { return nil }
            reason = state.withLock { $0.failed[i] } ?? "it failed as it started"
        } catch {
            reason = "\(error)"
        }
        noteFailure(i, reason: reason, now: now)
        if announce { self.announce(i, reason) }
        return reason
    }

    /// Records member `i`'s failure; its next attempt is `now` plus the backoff, or, when `now` is nil
    /// (the failure came from a device's thread, off the runtime's clock), timed from the next tick.
    private func noteFailure(_ i: Int, reason: String, now: MonotonicInstant?) {
        state.withLock { s in
            s.failed[i] = reason
            var r = s.retry[i] ?? DeviceRetry()
            if let now { _ = r.failed(at: now) }
            s.retry[i] = r
        }
    }

    /// Logs member `i`'s failure while others work: a warning, or at debug when the reason is the one
    /// warned last (a source missing all night warns once).
    private func announce(_ i: Int, _ reason: String) {
        let (working, wait, repeated) = state.withLock { s -> ([String], Int, Bool) in
            let working = members.indices.filter { s.failed[$0] == nil }.map { members[$0].name }
            let repeated = s.warned[i] == reason
            s.warned[i] = reason
            return (working, s.retry[i]?.delayMilliseconds ?? BoothMachine.firstRetryMilliseconds, repeated)
        }
        guard !working.isEmpty else { return }
        log.log(repeated ? .debug : .warning, "button: source \(members[i].name) failed: \(reason); the booth runs on "
                + "\(working.joined(separator: ", ")); trying \(members[i].name) again in \(max(1, wait / 1000)) s")
    }

    private func signal(_ signal: ButtonSignal, from i: Int, generation: Int) {
        let (forward, out): ((@Sendable (ButtonSignal) -> Void)?, ButtonSignal?) = state.withLock { s in
            guard s.running, s.generation == generation, let h = s.handler else { return (nil, nil) }
            switch signal {
            case let .press(id, at):
                s.nextID += 1
                s.ids[i, default: [:]] = [id: s.nextID]  // only the source's latest press can still be held
                return (h, .press(id: s.nextID, at: at))
            case let .longPress(id):
                guard let mine = s.ids[i]?[id] else { return (nil, nil) }
                return (h, .longPress(id: mine))
            case .reviewAction:
                return (h, signal)
            case let .stuck(message):
                let first = s.stuck.isEmpty
                s.stuck.removeAll { $0.source == i }
                s.stuck.append((i, message))
                return (h, first ? .stuck(message) : nil)
            case .unstuck:
                return (h, Self.released(i, &s))
            case let .failed(message):
                let change = Self.released(i, &s)
                s.failed[i] = message
                if s.failed.count == members.count {
                    s.running = false
                    let all = members.indices.compactMap { k in s.failed[k].map { "\(members[k].name): \($0)" } }
                    return (h, .failed(all.joined(separator: "; ")))
                }
                return (h, change)
            }
        }
        if case let .failed(message) = signal, state.withLock({ $0.running && $0.generation == generation }) {
            noteFailure(i, reason: message, now: nil)
            announce(i, message)
        }
        if let forward, let out { forward(out) }
    }

    /// Source `i` is no longer stuck: `.unstuck` when none is left, the next one's words when the
    /// fault was in `i`'s words, else nothing.
    private static func released(_ i: Int, _ s: inout State) -> ButtonSignal? {
        guard let at = s.stuck.firstIndex(where: { $0.source == i }) else { return nil }
        s.stuck.remove(at: at)
        guard let next = s.stuck.first else { return .unstuck }
        return at == 0 ? .stuck(next.message) : nil
    }
}

/// No source of a ``ButtonSet`` started: each one's reason.
public struct ButtonSetError: Error, Equatable, CustomStringConvertible {
    public let reasons: [String]
    public var description: String { reasons.joined(separator: "; ") }
}
