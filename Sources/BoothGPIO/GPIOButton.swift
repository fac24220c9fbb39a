import BoothButtons
import BoothClock
import BoothCore
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The booth's push button on a GPIO input line, read through libgpiod's edge
/// events on a thread of its own.
///
/// `start` requests the line (both edges, bias, active-low, consumer "photobooth")
/// and starts the thread, which polls the line's event fd and a wake-up pipe with
/// the debouncer's next deadline as timeout, feeds the kernel-timestamped edges to a
/// `ButtonDebouncer`, re-reads the level at each deadline, logs every accepted and
/// rejected edge, and hands each `ButtonEvent` to `handler` (on the button thread).
/// Lost edges (a gap in the edges' sequence numbers with libgpiod v2; with libgpiod v1,
/// which has none, a press edge while held or a release while released) are logged and
/// the level re-read at once; so is a read of a whole kernel queue's worth of edges
/// (16), which may have overflowed (the level read then counts from the re-read:
/// `ButtonDebouncer.resync`). A release a re-read finds is timed to the last edge seen.
/// If the line fails while in use, `handler` gets `.failed(GPIOError)` and the
/// thread ends, releasing the line; start a new button to recover (see
/// `GPIOLineAddress.resolve()` to test whether the chip and line are back).
public final class GPIOButton: Sendable {
    /// What to request and how to time it.
    public struct Configuration: Sendable, Hashable {
        /// Chip and line (`button.chip`, `button.line`).
        public var address: GPIOLineAddress
        /// Default pull-up (a button wired to ground).
        public var bias: GPIOBias
        /// Default true: with pull-up, pressed reads low (`button.active_low`).
        public var activeLow: Bool
        public var timing: ButtonTiming
        /// Consumer label shown by `gpioinfo`.
        public var consumer: String

        public init(address: GPIOLineAddress, bias: GPIOBias = .pullUp, activeLow: Bool = true,
                    timing: ButtonTiming = ButtonTiming(), consumer: String = "photobooth") {
            self.address = address
            self.bias = bias
            self.activeLow = activeLow
            self.timing = timing
            self.consumer = consumer
        }
    }

    public let configuration: Configuration
    /// Where the line was found (chip name, label, path, offset, line name).
    public let resolved: GPIOResolvedLine
    private let control: ThreadControl

    /// Requests the line and starts the button thread.
    /// Throws `GPIOError`: `chipNotFound`, `lineNotFound`, `lineBusy` (naming the holder),
    /// or `other` for a failed request (e.g. EOPNOTSUPP bias), each naming the chip and line.
    /// Wraps `gpiod_chip_open`, the line lookup, and `gpiod_line_request` /
    /// `gpiod_chip_request_lines`.
    public static func start(_ configuration: Configuration, log: @escaping GPIOLog,
                             handler: @escaping @Sendable (ButtonEvent) -> Void) throws(GPIOError) -> GPIOButton {
        let address = configuration.address
        let chip = try OpenChip(address)
        defer { chip.close() }
        let offset = try chip.offset()
        let info = try chip.info(offset)
        let line: OpaquePointer
        switch Shim.requestInput(chip.handle, offset: offset, bias: configuration.bias,
                                 activeLow: configuration.activeLow, consumer: configuration.consumer) {
        case .success(let l): line = l
        case .failure(let failure): throw chip.requestError(failure.code, offset: offset)
        }
        let resolved = GPIOResolvedLine(address: address, chipName: chip.name, chipLabel: chip.label,
                                        chipPath: chip.path, info: info)
        do throws(GPIOError) {
            return try start(line: RequestedLine(line), configuration: configuration, resolved: resolved,
                             log: log, handler: handler)
        } catch {
            Shim.release(line)
            throw error
        }
    }

    /// Starts the button thread on an already requested line (the seam tests use).
    static func start(line: some ButtonLineIO, configuration: Configuration, resolved: GPIOResolvedLine,
                      log: @escaping GPIOLog,
                      handler: @escaping @Sendable (ButtonEvent) -> Void) throws(GPIOError) -> GPIOButton {
        let address = configuration.address
        let initial: Bool
        switch line.value() {
        case .success(let v): initial = v
        case .failure(let failure):
            throw address.error(.other, call: Shim.callName(.getValue), errno: failure.code, label: resolved.chipLabel)
        }
        let control: ThreadControl
        do throws(Errno) {
            control = try ThreadControl()
        } catch {
            throw address.error(.other, call: "pipe", errno: error.code, label: resolved.chipLabel)
        }
        let button = GPIOButton(configuration: configuration, resolved: resolved, control: control)
        let loop = ButtonLoop(line: line, control: control, configuration: configuration,
                              resolved: resolved, log: log, handler: handler,
                              debouncer: ButtonDebouncer(timing: configuration.timing, lineActive: initial, at: Sys.now()))
        log(.info, "button: requested \(resolved.describe) (libgpiod v\(Shim.apiVersion), bias \(configuration.bias.rawValue), "
            + "active-low \(configuration.activeLow), debounce \(configuration.timing.debounceMilliseconds) ms, "
            + "long press \(configuration.timing.longPressMilliseconds) ms, stuck \(configuration.timing.stuckMilliseconds) ms)")
        if initial {
            log(.warning, "button: line active at start: held, not a press, until released")
        }
        do throws(Errno) {
            try control.spawn(name: "photobooth-button") { loop.run() }
        } catch {
            throw configuration.address.error(.other, call: "pthread_create", errno: error.code, label: resolved.chipLabel)
        }
        return button
    }

    private init(configuration: Configuration, resolved: GPIOResolvedLine, control: ThreadControl) {
        self.configuration = configuration
        self.resolved = resolved
        self.control = control
    }

    /// Wakes the button thread, waits for it to end (it releases the line), and returns.
    /// Idempotent; safe after the thread ended by itself (`.failed`). No event is delivered
    /// after it returns. Called from `handler` (the button thread) it does not wait: the
    /// thread ends when the handler returns.
    public func stop() { control.stop() }

    deinit { stop() }
}

/// What the button thread needs from a requested input line: the seam between the
/// loop and libgpiod (tests drive the loop through a pipe-backed fake).
protocol ButtonLineIO: Sendable {
    /// Becomes readable (POLLIN) when edges are pending.
    var eventFD: Int32 { get }
    /// Pending edges; [] when none (EAGAIN).
    func readEdges() -> Result<[ButtonEdge], Errno>
    /// The logical level now: true when active.
    func value() -> Result<Bool, Errno>
    /// Releases the line; called once, by the thread as it ends.
    func release()
}

/// A requested line's C handle, moved from `start` to the one thread that uses and
/// releases it; no other code touches it afterwards, hence `@unchecked Sendable`.
final class RequestedLine: ButtonLineIO, @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    var eventFD: Int32 { Shim.eventFD(pointer) }
    func readEdges() -> Result<[ButtonEdge], Errno> { Shim.readEdges(pointer) }
    func value() -> Result<Bool, Errno> { Shim.value(pointer) }
    func release() { Shim.release(pointer) }
}

extension GPIOResolvedLine {
    /// `"gpiochip0 (pinctrl-bcm2711) line 17 'GPIO17'"`.
    var describe: String {
        let label = chipLabel.isEmpty ? "" : " (\(chipLabel))"
        let name = info.name.isEmpty ? "" : " '\(info.name)'"
        return "\(chipName)\(label) line \(info.offset)\(name)"
    }
}

/// The button thread's state; confined to that thread once started.
private final class ButtonLoop<Line: ButtonLineIO>: @unchecked Sendable {
    // @unchecked: created in `start`, then used only by the button thread (`run`).
    let line: Line
    let control: ThreadControl
    let configuration: GPIOButton.Configuration
    let resolved: GPIOResolvedLine
    let log: GPIOLog
    let handler: @Sendable (ButtonEvent) -> Void
    var debouncer: ButtonDebouncer
    /// The re-read that found the line inactive against the edges (a release edge missed), until
    /// the release it makes is logged.
    var missedBy: MonotonicInstant?

    init(line: Line, control: ThreadControl, configuration: GPIOButton.Configuration, resolved: GPIOResolvedLine,
         log: @escaping GPIOLog, handler: @escaping @Sendable (ButtonEvent) -> Void, debouncer: ButtonDebouncer) {
        self.line = line
        self.control = control
        self.configuration = configuration
        self.resolved = resolved
        self.log = log
        self.handler = handler
        self.debouncer = debouncer
    }

    func run() {
        defer {
            line.release()
            log(.info, "button: released \(resolved.describe)")
            control.finish()
        }
        let eventFD = line.eventFD
        while true {
            let timeout = pollTimeout(until: debouncer.nextDeadline, now: Sys.now())
            let revents: [Int16]
            switch Sys.poll([eventFD, control.pipe.readFD], timeoutMilliseconds: timeout) {
            case .success(let r): revents = r
            case .failure(let failure): return fail(call: "poll", errno: failure.code)
            }
            if revents[1] != 0 || control.isStopping { return }  // stop() woke us
            var queueFull = false
            if revents[0] & Int16(POLLIN) != 0 {
                guard let count = readEdges() else { return }
                if count >= ButtonLoop.kernelQueueSize {
                    queueFull = true
                    log(.notice, "button: read \(count) edges at once: the kernel's queue of "
                        + "\(ButtonLoop.kernelQueueSize) may have overflowed; re-reading the line")
                }
            } else if revents[0] & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                return fail(call: "poll", errno: ENODEV)
            }
            let now = Sys.now()
            if queueFull || debouncer.nextDeadline.map({ $0 <= now }) == true {
                let afterLoss = debouncer.needsReRead
                switch line.value() {
                case .success(let active):
                    let said = debouncer.lineActive ? "active" : "inactive"
                    if afterLoss {
                        log(.notice, "button: line re-read at \(now), edges suspected lost: \(active ? "active" : "inactive")"
                            + (active == debouncer.lineActive ? ", as the edges said" : ", edges said \(said): resynchronised"))
                    } else if active != debouncer.lineActive {
                        log(.notice, "button: line re-read at \(now), an edge was missed: \(active ? "active" : "inactive"), "
                            + "edges said \(said) since \(debouncer.lineActiveSince)")
                    }
                    if active != debouncer.lineActive { missedBy = active ? nil : now }
                    // After a full read the edges after the 16th may be lost (libgpiod v1's queue drops the
                    // newest): the level is known only from the re-read, as after SYN_DROPPED.
                    deliver(queueFull ? debouncer.resync(now: now, lineActive: active) : debouncer.poll(now: now, lineActive: active))
                case .failure(let failure):
                    return fail(call: Shim.callName(.getValue), errno: failure.code)
                }
            }
        }
    }

    /// Events the kernel queues per line before it drops some (the v1 uAPI's lineevent
    /// kfifo; the v2 uAPI's default event buffer is 16 per line).
    static var kernelQueueSize: Int { 16 }

    /// Reads edges until none is pending; how many were read, nil when the line failed.
    private func readEdges() -> Int? {
        var count = 0
        while true {
            switch line.readEdges() {
            case .success(let edges):
                if edges.isEmpty { return count }
                count += edges.count
                for edge in edges {
                    log(.debug, "button: edge \(edge)")
                    // The line seen active again: a release the last re-read found is not the next one.
                    if edge.active { missedBy = nil }
                    deliver(debouncer.edge(edge))
                }
            case .failure(let failure):
                fail(call: Shim.callName(.readEvents), errno: failure.code)
                return nil
            }
        }
    }

    private func fail(call: String, errno err: Int32) {
        let error = GPIOError(kind: .lineFailed, call: call, errno: err, chip: configuration.address.chip,
                              chipLabel: resolved.chipLabel, line: configuration.address.line)
        log(.error, "button: \(error)")
        handler(.failed(error.buttonFault))
    }

    private func deliver(_ events: [ButtonEvent]) {
        let debounce = configuration.timing.debounceMilliseconds
        for event in events {
            if control.isStopping { return }
            switch event {
            case .press(let id, let at):
                log(.info, "button: edge accepted: rising at \(at), stable \(debounce) ms: press #\(id)")
            case .longPress(let id, let at):
                log(.info, "button: long press #\(id) at \(at)")
            case .release(let id, let at, let held):
                if let reRead = missedBy {
                    log(.info, "button: release #\(id) found by the line re-read at \(reRead), stable \(debounce) ms (its edge "
                        + "missed): held \(ms(held)) ms, to the last sign of the line active at \(at)")
                } else {
                    log(.info, "button: edge accepted: falling at \(at), stable \(debounce) ms: release #\(id), held \(ms(held)) ms")
                }
                missedBy = nil
            case .rejected(let edge, let reason, let pulse):
                log(.info, "button: edge rejected: \(edge), pulse \(ms(pulse)) ms (\(reason.rawValue), debounce \(debounce) ms)")
            case .stuck(let at):
                log(.warning, "button: stuck: active since \(debouncer.lineActiveSince), "
                    + "longer than \(configuration.timing.stuckMilliseconds) ms at \(at)")
            case .unstuck(let at):
                log(.notice, "button: no longer stuck, released at \(at)")
            case .edgesLost(let count?, let before):
                log(.warning, "button: \(count) \(count == 1 ? "edge" : "edges") lost before \(before) (a gap in the line's "
                    + "sequence numbers: the kernel's event queue overflowed)")
            case .edgesLost(nil, let before):
                log(.warning, "button: edge lost or misreported before \(before): the line was already "
                    + "\(before.active ? "active" : "inactive") (a repeated edge; without sequence numbers, as with "
                    + "libgpiod v1, a lost edge cannot be told from a glitch whose direction the kernel read late)")
            case .releaseLost(let id, let before, let held):
                log(.notice, "button: release #\(id) lost: released at or before \(before), held at most \(ms(held)) ms; "
                    + "the press edge at \(before) is a new press")
            case .failed(let error):
                log(.error, "button: \(error)")
            }
            handler(event)
        }
    }

    private func ms(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let frac = String(abs(thousandths) % 1000)
        return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac)"
    }
}
