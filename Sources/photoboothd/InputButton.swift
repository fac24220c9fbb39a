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
    private let timing: ButtonTiming
    private let stuckLimit: Int
    private let log: Logger
    private let directory: String
    private struct State {
        var button: EvdevButton?
        var running = false
    }
    private let state = Mutex(State())

    /// - Parameter directory: where the event nodes are (`/dev/input`; tests may point elsewhere).
    public init(settings s: Settings, log: Logger, directory: String = InputDevices.directory) {
        spec = InputDeviceSpec(s.button.inputDevice)
        keyText = s.button.inputKey
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
        let log = self.log, stuckLimit = self.stuckLimit
        state.withLock { $0.running = true }
        do {
            let b = try EvdevButton.start(device: device, key: key, timing: timing, log: { log.log($0, $1) },
                                          handler: { event in
                switch event {
                case let .press(id, at): handler(.press(id: id, at: at))
                case let .longPress(id, _): handler(.longPress(id: id))
                case .stuck: handler(.stuck("button stuck: \(key) held longer than \(stuckLimit / 1000) s on \(device.describe)"))
                case .unstuck: handler(.unstuck)
                case .release, .rejected, .edgesLost, .releaseLost, .failed: break
                }
            }, failed: { [weak self] error in
                self?.state.withLock { $0.running = false }
                handler(.failed("button input failed: \(error.message)"))
            })
            state.withLock { $0.button = b }
        } catch {
            state.withLock { $0.running = false }
            throw error
        }
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
/// warning, shown in ``identity`` (so in `status`), and opened again from the runtime's tick after 1 s,
/// doubling to 30 s, as the LED is. Only when every source has failed does the set report `.failed`
/// (the booth's button fault, retried by the runtime); a start where none opens throws every reason.
/// A stuck source is a fault (`.stuck`) until it is released: a held button would otherwise press
/// for nobody (the other sources work again when it is released).
public final class ButtonSet: ButtonDevice {
    private let members: [(name: String, device: any ButtonDevice)]
    private let log: Logger
    private struct State {
        var handler: (@Sendable (ButtonSignal) -> Void)?
        var failed: [Int: String] = [:]
        var retry: [Int: DeviceRetry] = [:]
        var stuck: Set<Int> = []
        var ids: [Int: [UInt64: UInt64]] = [:]
        var nextID: UInt64 = 0
        var running = false
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

    public var isRunning: Bool { state.withLock { $0.running } }

    /// Starts every source. - Throws: ``ButtonSetError`` with each source's reason when none starts.
    public func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        state.withLock { s in
            s = State()
            s.handler = handler
            s.running = true
        }
        var reasons: [String] = []
        for i in members.indices {
            if let reason = open(i, now: nil) { reasons.append("\(members[i].name): \(reason)") }
        }
        if reasons.count == members.count {
            state.withLock { $0.running = false }
            throw ButtonSetError(reasons: reasons)
        }
    }

    public func stop() {
        state.withLock { $0.running = false; $0.handler = nil }
        for m in members { m.device.stop() }
    }

    /// Opens again each failed source whose retry is due at `now` (the runtime's clock); a failure
    /// since the last tick is timed from this one.
    public func tick(now: MonotonicInstant) {
        let due = state.withLock { s -> [Int] in
            guard s.running else { return [] }
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
            return due
        }
        for i in due {
            members[i].device.stop()
            if open(i, now: now) == nil { log.notice("button: source \(members[i].name) works again: \(members[i].device.identity)") }
        }
    }

    /// Starts member `i`; nil when it started, else the reason (recorded, retry scheduled).
    private func open(_ i: Int, now: MonotonicInstant?) -> String? {
        do {
            try members[i].device.start { [weak self] signal in self?.signal(signal, from: i) }
            state.withLock { s in
                s.failed[i] = nil
                s.retry[i] = nil
            }
            return nil
        } catch {
            let reason = "\(error)"
            noteFailure(i, reason: reason, now: now)
            return reason
        }
    }

    /// Records member `i`'s failure; its next attempt is `now` plus the backoff, or, when `now` is nil
    /// (the failure came from a device's thread, off the runtime's clock), timed from the next tick.
    private func noteFailure(_ i: Int, reason: String, now: MonotonicInstant?) {
        let wait = state.withLock { s -> Int in
            s.failed[i] = reason
            var r = s.retry[i] ?? DeviceRetry()
            let wait = r.delayMilliseconds
            if let now { _ = r.failed(at: now) }
            s.retry[i] = r
            return wait
        }
        let failedNow = state.withLock { $0.failed }
        let working = members.indices.filter { failedNow[$0] == nil }.map { members[$0].name }
        if !working.isEmpty {
            log.warning("button: source \(members[i].name) failed: \(reason); the booth runs on \(working.joined(separator: ", ")); "
                        + "trying \(members[i].name) again in \(wait / 1000) s")
        }
    }

    private func signal(_ signal: ButtonSignal, from i: Int) {
        let (forward, out): ((@Sendable (ButtonSignal) -> Void)?, ButtonSignal?) = state.withLock { s in
            guard s.running, let h = s.handler else { return (nil, nil) }
            switch signal {
            case let .press(id, at):
                s.nextID += 1
                s.ids[i, default: [:]] = [id: s.nextID]  // only the source's latest press can still be held
                return (h, .press(id: s.nextID, at: at))
            case let .longPress(id):
                guard let mine = s.ids[i]?[id] else { return (nil, nil) }
                return (h, .longPress(id: mine))
            case let .stuck(message):
                let first = s.stuck.isEmpty
                s.stuck.insert(i)
                return (h, first ? .stuck(message) : nil)
            case .unstuck:
                guard s.stuck.remove(i) != nil else { return (nil, nil) }
                return (h, s.stuck.isEmpty ? .unstuck : nil)
            case let .failed(message):
                let wasStuck = s.stuck.remove(i) != nil
                s.failed[i] = message
                if s.failed.count == members.count {
                    s.running = false
                    let all = members.indices.compactMap { k in s.failed[k].map { "\(members[k].name): \($0)" } }
                    return (h, .failed(all.joined(separator: "; ")))
                }
                return (h, wasStuck && s.stuck.isEmpty ? .unstuck : nil)
            }
        }
        if case let .failed(message) = signal, state.withLock({ $0.running }) {
            noteFailure(i, reason: message, now: nil)
        }
        if let forward, let out { forward(out) }
    }
}

/// No source of a ``ButtonSet`` started: each one's reason.
public struct ButtonSetError: Error, Equatable, CustomStringConvertible {
    public let reasons: [String]
    public var description: String { reasons.joined(separator: "; ") }
}
