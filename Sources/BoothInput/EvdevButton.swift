import BoothClock
import BoothCore
import BoothButtons
import BoothSystem
import CEvdev
import FoundationEssentials
import Synchronization
import Glibc

/// One event as the kernel reported it (`struct input_event`): type, code, value and its
/// timestamp on CLOCK_MONOTONIC (the button sets the device's clock with `EVIOCSCLOCKID`).
public struct InputEvent: Sendable, Hashable {
    public var type: UInt16, code: UInt16, value: Int32
    public var at: MonotonicInstant
    public init(type: UInt16, code: UInt16, value: Int32, at: MonotonicInstant) {
        self.type = type
        self.code = code
        self.value = value
        self.at = at
    }
}

/// Turns a device's events into the key's edges for ``ButtonDebouncer``: `EV_KEY` of the key with
/// value 1 (down: the line active) or 0 (up), numbered from 1 so the debouncer trusts their order
/// (the kernel never repeats a key's state: a press edge while held means events were lost, which
/// libevdev reports as `SYN_DROPPED`, handled by the thread). Value 2 is the keyboard's auto-repeat
/// while held: counted, never a press. Pure.
public struct KeyEdgeFilter: Sendable {
    public let key: InputKey
    /// Auto-repeat events of the key seen (value 2).
    public private(set) var repeats = 0
    private var sequence: UInt64 = 0

    public init(key: InputKey) { self.key = key }

    /// Events were dropped (`SYN_DROPPED`): the next edge is numbered one past a gap, so the debouncer
    /// reports lost edges there (a release and a press lost with it leave the same state).
    public mutating func dropped() { sequence += 1 }

    /// The edge `event` makes, nil for any other event.
    public mutating func edge(_ event: InputEvent) -> ButtonEdge? {
        guard event.type == UInt16(EV_KEY), event.code == key.code else { return nil }
        switch event.value {
        case 0, 1:
            sequence += 1
            return ButtonEdge(active: event.value == 1, at: event.at, sequence: sequence)
        default:
            repeats += 1
            return nil
        }
    }
}

/// A button on an input device through libevdev, read on a thread of its own.
///
/// `start` opens the node (read-only, non-blocking), makes a libevdev device of it
/// (`libevdev_new_from_fd`), sets its event clock to CLOCK_MONOTONIC (`libevdev_set_clock_id`:
/// `EVIOCSCLOCKID`) and grabs it (`libevdev_grab`: `EVIOCGRAB`, so the key reaches no console and
/// no other program); the thread polls the node and a wake-up eventfd with the debouncer's next
/// deadline as timeout, reads events with `libevdev_next_event`, feeds the key's edges to a
/// ``ButtonDebouncer`` (the GPIO button's: the same debounce, long press and stuck rules), and at a
/// deadline re-reads the key's state (`libevdev_get_event_value`). A `SYN_DROPPED` (the kernel's
/// buffer overflowed) is resynchronised (`LIBEVDEV_READ_FLAG_SYNC` until `-EAGAIN`) and the state re-read:
/// a key read down then counts as a press only `debounce` after the resync (``ButtonDebouncer/resync(now:lineActive:)``);
/// its warning is rate-limited (``DroppedEventsLog``).
/// When the device goes away (`-ENODEV`: unplugged) or a read fails, `failed` gets an
/// ``InputError`` and the thread ends, closing the node; start a new button to recover.
public final class EvdevButton: Sendable {
    /// The device in use.
    public let device: InputDeviceInfo
    public let key: InputKey
    private let thread: WorkerThread
    private let wakeFD: Int32

    /// Opens `device`'s node for `key` and starts the button thread.
    /// - Parameters:
    ///   - handler: each debounced ``ButtonEvent`` (press, long press, release, rejected edges, stuck),
    ///     on the button thread; never `.failed` (see `failed`).
    ///   - failed: once, when the device fails in use; the thread then ends.
    ///   - actions: review keys on the same device (`button.print_key`, `button.skip_key`) by code;
    ///     each key-down (not its auto-repeat) goes to `action`, on the button thread.
    /// - Throws: ``InputError``: `.openFailed` (open(2), `libevdev_new_from_fd`), `.grabFailed`
    ///   (another program grabbed it: `EBUSY`), `.failed` when no thread or eventfd can be made.
    public static func start(device: InputDeviceInfo, key: InputKey, timing: ButtonTiming,
                             log: @escaping @Sendable (LogPriority, String) -> Void,
                             handler: @escaping @Sendable (ButtonEvent) -> Void,
                             failed: @escaping @Sendable (InputError) -> Void,
                             actions: [UInt16: ReviewAction] = [:],
                             action: @escaping @Sendable (ReviewAction) -> Void = { _ in }) throws(InputError) -> EvdevButton {
        let path = device.path
        let fd = retryingEINTR { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        if fd < 0 { throw InputError.opening(path, errno: errno) }
        var made: OpaquePointer?
        let rc = libevdev_new_from_fd(fd, &made)
        guard rc == 0, let dev = made else {
            close(fd)
            throw InputError(.openFailed, "\(path): not an input device (libevdev_new_from_fd: \(InputError.errnoName(-rc)))")
        }
        let handle = EvdevHandle(dev: dev, fd: fd)
        let clockRC = libevdev_set_clock_id(dev, CLOCK_MONOTONIC)
        if clockRC != 0 {
            handle.close()
            throw InputError(.openFailed, "\(path): EVIOCSCLOCKID(CLOCK_MONOTONIC) failed (\(InputError.errnoName(-clockRC)))")
        }
        let grabRC = libevdev_grab(dev, LIBEVDEV_GRAB)
        if grabRC != 0 {
            handle.close()
            let why = -grabRC == EBUSY ? "another program has grabbed it (EVIOCGRAB: EBUSY); stop it or name another device"
                : "EVIOCGRAB failed (\(InputError.errnoName(-grabRC)))"
            throw InputError(.grabFailed, "\(device.describe): \(why)")
        }
        let wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        if wakeFD < 0 {
            let e = errno
            handle.close()
            throw InputError(.failed, "\(path): eventfd failed (\(InputError.errnoName(e)))")
        }
        let initial = libevdev_get_event_value(dev, UInt32(EV_KEY), UInt32(key.code)) != 0
        let thread = WorkerThread(name: "photobooth-input")
        let loop = EvdevLoop(handle: handle, device: device, key: key, timing: timing, wakeFD: wakeFD, thread: thread,
                             log: log, handler: handler, failed: failed, actions: actions, action: action,
                             debouncer: ButtonDebouncer(timing: timing, lineActive: initial, at: Monotonic.now()))
        log(.info, "button: \(device.describe) grabbed, key \(key) (libevdev, debounce \(timing.debounceMilliseconds) ms, "
            + "long press \(timing.longPressMilliseconds) ms, stuck \(timing.stuckMilliseconds) ms)")
        if initial { log(.warning, "button: \(key) down at start: held, not a press, until released") }
        let button = EvdevButton(device: device, key: key, thread: thread, wakeFD: wakeFD)
        guard thread.start({ _ in loop.run() }) else {
            handle.close()
            throw InputError(.failed, "\(path): no thread for the button (pthread_create failed)")
        }
        return button
    }

    private init(device: InputDeviceInfo, key: InputKey, thread: WorkerThread, wakeFD: Int32) {
        self.device = device
        self.key = key
        self.thread = thread
        self.wakeFD = wakeFD
    }

    /// Wakes the thread, waits for it to end (it ungrabs and closes the node) and returns. Idempotent;
    /// called from the handler (the button thread) it does not wait.
    public func stop() {
        _ = thread.finish(timeoutMilliseconds: 0)
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        _ = thread.finish(timeoutMilliseconds: nil)
    }

    deinit {
        stop()
        close(wakeFD)
    }
}

/// The libevdev device and its node, owned by the button thread once started.
private final class EvdevHandle: @unchecked Sendable {
    // @unchecked: used by one thread at a time (start, then the button thread only).
    let dev: OpaquePointer
    let fd: Int32
    private var closed = false
    init(dev: OpaquePointer, fd: Int32) {
        self.dev = dev
        self.fd = fd
    }
    /// Ungrabs (a gone device answers ENODEV: harmless), frees, closes. Once.
    func close() {
        guard !closed else { return }
        closed = true
        _ = libevdev_grab(dev, LIBEVDEV_UNGRAB)
        libevdev_free(dev)
        _ = Glibc.close(fd)
    }
}

/// The button thread's state; confined to that thread once started.
private final class EvdevLoop: @unchecked Sendable {
    // @unchecked: made in `start`, then used only by the button thread (`run`).
    let handle: EvdevHandle
    let device: InputDeviceInfo
    let key: InputKey
    let timing: ButtonTiming
    let wakeFD: Int32
    let thread: WorkerThread
    let log: @Sendable (LogPriority, String) -> Void
    let handler: @Sendable (ButtonEvent) -> Void
    let failed: @Sendable (InputError) -> Void
    let actions: [UInt16: ReviewAction]
    let action: @Sendable (ReviewAction) -> Void
    var debouncer: ButtonDebouncer
    var filter: KeyEdgeFilter
    var repeatsLogged = 0
    var drops = DroppedEventsLog()

    init(handle: EvdevHandle, device: InputDeviceInfo, key: InputKey, timing: ButtonTiming, wakeFD: Int32, thread: WorkerThread,
         log: @escaping @Sendable (LogPriority, String) -> Void, handler: @escaping @Sendable (ButtonEvent) -> Void,
         failed: @escaping @Sendable (InputError) -> Void, actions: [UInt16: ReviewAction],
         action: @escaping @Sendable (ReviewAction) -> Void, debouncer: ButtonDebouncer) {
        self.handle = handle
        self.device = device
        self.key = key
        self.timing = timing
        self.wakeFD = wakeFD
        self.thread = thread
        self.log = log
        self.handler = handler
        self.failed = failed
        self.actions = actions
        self.action = action
        self.debouncer = debouncer
        filter = KeyEdgeFilter(key: key)
    }

    func run() {
        defer {
            handle.close()
            log(.info, "button: released \(device.describe)")
        }
        var fds = [pollfd(fd: handle.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        while !thread.isStopping {
            let deadlines = [debouncer.nextDeadline, drops.nextDeadline].compactMap { $0 }
            let timeout = pollTimeout(until: deadlines.min(), now: Monotonic.now())
            fds[0].revents = 0
            fds[1].revents = 0
            if retryingEINTR({ poll(&fds, 2, timeout) }) < 0 {
                return fail("poll failed (\(InputError.errnoName(errno)))")
            }
            if fds[1].revents != 0 || thread.isStopping { return }
            if fds[0].revents & Int16(POLLIN) != 0 {
                guard readEvents() else { return }
            } else if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                return fail("unplugged (ENODEV)")
            }
            let now = Monotonic.now()
            if let due = debouncer.nextDeadline, due <= now {
                deliver(debouncer.poll(now: now, lineActive: keyDown))
            }
            if let untold = drops.flush(at: now) {
                log(.warning, "button: \(device.path): events dropped by the kernel (SYN_DROPPED) \(untold) more "
                    + "\(untold == 1 ? "time" : "times") since the last such line (\(drops.total) since start); "
                    + "each resynchronised, \(key) \(keyDown ? "down" : "up") at \(now)")
            }
        }
    }

    /// ` (panel 0.42,0.77)`: where the current touch slot is, as fractions of the panel's axes
    /// (``TouchPosition``, unturned: the drawing's turn is the screen's); "" when the device has no such axes.
    var touchWhere: String {
        guard let xi = libevdev_get_abs_info(handle.dev, UInt32(ABS_MT_POSITION_X)),
              let yi = libevdev_get_abs_info(handle.dev, UInt32(ABS_MT_POSITION_Y)) else { return "" }
        let x = libevdev_get_event_value(handle.dev, UInt32(EV_ABS), UInt32(ABS_MT_POSITION_X))
        let y = libevdev_get_event_value(handle.dev, UInt32(EV_ABS), UInt32(ABS_MT_POSITION_Y))
        let p = TouchPosition(rawX: x, rawY: y, xRange: xi.pointee.minimum...max(xi.pointee.minimum, xi.pointee.maximum),
                              yRange: yi.pointee.minimum...max(yi.pointee.minimum, yi.pointee.maximum), rotation: .r0)
        return " (panel \(p))"
    }

    /// The key's state as libevdev keeps it (the kernel's, after a resynchronisation).
    var keyDown: Bool { libevdev_get_event_value(handle.dev, UInt32(EV_KEY), UInt32(key.code)) != 0 }

    /// Reads every pending event; false when the device failed (reported).
    private func readEvents() -> Bool {
        var ev = input_event()
        while true {
            let rc = libevdev_next_event(handle.dev, UInt32(LIBEVDEV_READ_FLAG_NORMAL.rawValue), &ev)
            if rc == -EAGAIN { break }
            if rc == Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue) {
                // SYN_DROPPED: the kernel's buffer overflowed. Drain the sync events (libevdev's state
                // becomes the kernel's), then re-read the key.
                var synced = 0
                while libevdev_next_event(handle.dev, UInt32(LIBEVDEV_READ_FLAG_SYNC.rawValue), &ev) == Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue) {
                    synced += 1
                }
                let now = Monotonic.now()
                let down = keyDown
                // Presses may have been lost with the same state before and after (a release and a press):
                // the next edge is numbered past a gap, so the debouncer reports the loss there.
                filter.dropped()
                let line = "button: \(device.path): events dropped by the kernel (SYN_DROPPED); resynchronised "
                    + "(\(synced) state changes), \(key) \(down ? "down" : "up") at \(now)"
                if let told = drops.dropped(at: now) {
                    log(.warning, line + (told > 1 ? " (\(told) drops since the last such line, \(drops.total) since start)" : "")
                        + (drops.total == 1 ? "; further drops are told at most once every "
                           + "\(DroppedEventsLog.intervalMilliseconds / 1000) s" : ""))
                } else {
                    log(.debug, line)
                }
                // The key's state is known only from now: a key read down needs `debounce` from here.
                deliver(debouncer.resync(now: now, lineActive: down))
                continue
            }
            if rc < 0 {
                return failing(rc == -ENODEV ? "unplugged (ENODEV)" : "read failed (libevdev_next_event: \(InputError.errnoName(-rc)))")
            }
            let at = MonotonicInstant(nanoseconds: UInt64(max(0, ev.time.tv_sec)) * 1_000_000_000 + UInt64(max(0, ev.time.tv_usec)) * 1000)
            let event = InputEvent(type: ev.type, code: ev.code, value: ev.value, at: at)
            if event.type == UInt16(EV_KEY), event.value == 1, let a = actions[event.code] {
                log(.info, "button: \(InputKey.name(of: event.code)) down at \(at): the \(a.rawValue) key")
                if !thread.isStopping { action(a) }
                continue
            }
            if let edge = filter.edge(event) {
                log(.debug, "button: \(key) \(edge.active ? "down" : "up") at \(edge.at)" + (key.isTap && edge.active ? touchWhere : ""))
                deliver(debouncer.edge(edge))
            } else if filter.repeats > repeatsLogged {
                repeatsLogged = filter.repeats
                log(.debug, "button: \(key) auto-repeat at \(at) ignored (\(filter.repeats) so far)")
            }
        }
        return true
    }

    private func failing(_ why: String) -> Bool {
        fail(why)
        return false
    }

    private func fail(_ why: String) {
        // Stopped meanwhile (a reload, the daemon's end): whatever failed is no fault of a button in use.
        guard !thread.isStopping else { return }
        let error = InputError(.failed, "input device \(device.describe) \(why)")
        log(.error, "button: \(error)")
        failed(error)
    }

    private func deliver(_ events: [ButtonEvent]) {
        for event in events {
            if thread.isStopping { return }
            switch event {
            case .press(let id, let at):
                log(.info, "button: \(key) down at \(at), held \(timing.debounceMilliseconds) ms: press #\(id)")
            case .longPress(let id, let at):
                log(.info, "button: long press #\(id) at \(at)")
            case .release(let id, let at, let held):
                log(.info, "button: \(key) up at \(at): release #\(id), held \(Int(held.rounded())) ms")
            case .rejected(let edge, let reason, let pulse):
                log(.info, "button: \(key) \(edge.active ? "down" : "up") at \(edge.at) rejected: \(Int(pulse.rounded())) ms "
                    + "(\(reason.rawValue), debounce \(timing.debounceMilliseconds) ms)")
            case .stuck(let at):
                log(.warning, "button: \(key) stuck: down since \(debouncer.lineActiveSince), longer than \(timing.stuckMilliseconds) ms at \(at)")
            case .unstuck(let at):
                log(.notice, "button: \(key) no longer stuck, released at \(at)")
            case .edgesLost(_, let before):
                log(.notice, "button: \(key) \(before.active ? "down" : "up") at \(before.at) follows events the kernel "
                    + "dropped (SYN_DROPPED): the key's edges before it may be lost")
            case .releaseLost(let id, let before, let held):
                log(.notice, "button: release #\(id) lost: released at or before \(before), held at most "
                    + "\(Int(held.rounded())) ms; the \(key) down at \(before) is a new press")
            case .failed(let error):
                log(.error, "button: \(error)")
            }
            handler(event)
        }
    }
}
