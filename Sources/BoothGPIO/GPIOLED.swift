import BoothClock
import BoothCore
import BoothSystem
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// The booth's LED on a GPIO output line, driven by a small thread of its own that
/// switches it at the pattern's edges (`LEDPattern.nextChange`) and sleeps in poll(2)
/// otherwise. A failed write is logged (once per run of failures) and retried at the
/// next switch; the LED never stops the booth.
public final class GPIOLED: Sendable {
    /// What to request.
    public struct Configuration: Sendable, Hashable {
        /// Chip and line (`led.line`; chip as the button's unless set).
        public var address: GPIOLineAddress
        /// True when the LED lights with the line low.
        public var activeLow: Bool
        public var timing: LEDTiming
        public var consumer: String

        public init(address: GPIOLineAddress, activeLow: Bool = false, timing: LEDTiming = LEDTiming(),
                    consumer: String = "photobooth") {
            self.address = address
            self.activeLow = activeLow
            self.timing = timing
            self.consumer = consumer
        }
    }

    public let configuration: Configuration
    /// Where the line was found.
    public let resolved: GPIOResolvedLine
    private let control: ThreadControl
    private let shown: LEDShown

    /// Requests the line as an output, off, and starts the LED thread.
    /// Throws `GPIOError` as `GPIOButton.start` does (chip or line not found, busy).
    /// Wraps `gpiod_chip_open` and `gpiod_line_request` / `gpiod_chip_request_lines`.
    public static func start(_ configuration: Configuration, log: @escaping GPIOLog) throws(GPIOError) -> GPIOLED {
        let address = configuration.address
        let chip = try OpenChip(address)
        defer { chip.close() }
        let offset = try chip.offset()
        let info = try chip.info(offset)
        let line: OpaquePointer
        switch Shim.requestOutput(chip.handle, offset: offset, activeLow: configuration.activeLow, on: false,
                                  consumer: configuration.consumer) {
        case .success(let l): line = l
        case .failure(let failure): throw chip.requestError(failure.code, offset: offset)
        }
        let resolved = GPIOResolvedLine(address: address, chipName: chip.name, chipLabel: chip.label,
                                        chipPath: chip.path, info: info)
        do throws(GPIOError) {
            return try start(line: RequestedLine(line), configuration: configuration, resolved: resolved, log: log)
        } catch {
            Shim.release(line)
            throw error
        }
    }

    /// Starts the LED thread on an already requested output line (the seam tests use).
    static func start(line: some LEDLineIO, configuration: Configuration, resolved: GPIOResolvedLine,
                      log: @escaping GPIOLog) throws(GPIOError) -> GPIOLED {
        let control: ThreadControl
        do throws(Errno) {
            control = try ThreadControl()
        } catch {
            throw configuration.address.error(.other, call: "pipe", errno: error.code, label: resolved.chipLabel)
        }
        let shown = LEDShown()
        let loop = LEDLoop(line: line, control: control, shown: shown, configuration: configuration,
                           resolved: resolved, log: log)
        log(.info, "led: requested \(resolved.describe) (active-low \(configuration.activeLow))")
        do throws(Errno) {
            try control.spawn(name: "photobooth-led") { loop.run() }
        } catch {
            throw configuration.address.error(.other, call: "pthread_create", errno: error.code, label: resolved.chipLabel)
        }
        return GPIOLED(configuration: configuration, resolved: resolved, control: control, shown: shown)
    }

    private init(configuration: Configuration, resolved: GPIOResolvedLine, control: ThreadControl, shown: LEDShown) {
        self.configuration = configuration
        self.resolved = resolved
        self.control = control
        self.shown = shown
    }

    /// Shows `pattern`, starting its cycle now; setting the current pattern again keeps its phase.
    public func set(_ pattern: LEDPattern) {
        if shown.set(pattern) { control.pipe.wake() }
    }

    /// The pattern being shown.
    public var pattern: LEDPattern { shown.current.pattern }

    /// Stops the thread, which turns the LED off and releases the line; waits for it
    /// unless called on the LED thread. Idempotent.
    public func stop() { control.stop() }

    deinit { stop() }
}

/// The pattern to show and since when, shared by `GPIOLED` and its thread.
private final class LEDShown: Sendable {
    private let state = Mutex<(pattern: LEDPattern, since: MonotonicInstant)>((.off, Sys.now()))

    var current: (pattern: LEDPattern, since: MonotonicInstant) { state.withLock { $0 } }

    /// False when `pattern` is already shown.
    func set(_ pattern: LEDPattern) -> Bool {
        state.withLock { s in
            guard s.pattern != pattern else { return false }
            s = (pattern, Sys.now())
            return true
        }
    }
}

/// The LED thread's state; confined to that thread once started.
/// What the LED thread needs from a requested output line (tests use a fake).
protocol LEDLineIO: Sendable {
    /// Sets the logical value: true lights the LED.
    func set(on: Bool) -> Result<Void, Errno>
    /// Releases the line; called once, by the thread as it ends.
    func release()
}

extension RequestedLine: LEDLineIO {
    func set(on: Bool) -> Result<Void, Errno> { Shim.setValue(pointer, on: on) }
}

private final class LEDLoop<Line: LEDLineIO>: @unchecked Sendable {
    // @unchecked: created in `start`, then used only by the LED thread (`run`).
    let line: Line
    let control: ThreadControl
    let shown: LEDShown
    let configuration: GPIOLED.Configuration
    let resolved: GPIOResolvedLine
    let log: GPIOLog
    var lit: Bool? = nil
    var failing = false

    init(line: Line, control: ThreadControl, shown: LEDShown, configuration: GPIOLED.Configuration,
         resolved: GPIOResolvedLine, log: @escaping GPIOLog) {
        self.line = line
        self.control = control
        self.shown = shown
        self.configuration = configuration
        self.resolved = resolved
        self.log = log
    }

    func run() {
        let timing = configuration.timing
        let name = resolved.describe
        defer {
            _ = line.set(on: false)
            line.release()
            log(.info, "led: released \(name)")
            control.finish()
        }
        while !control.isStopping {
            let (pattern, since) = shown.current
            let now = Sys.now()
            let elapsed = Int64(now.milliseconds(since: since))
            let on = pattern.isOn(atElapsedMilliseconds: elapsed, timing: timing)
            if on != lit {
                switch line.set(on: on) {
                case .success:
                    lit = on
                    if failing { log(.notice, "led: \(name) writable again") }
                    failing = false
                case .failure(let failure):
                    if !failing {
                        let error = GPIOError(kind: .lineFailed, call: Shim.callName(.setValue), errno: failure.code,
                                              chip: configuration.address.chip, chipLabel: resolved.chipLabel,
                                              line: configuration.address.line)
                        log(.error, "led: \(error)")
                    }
                    failing = true
                }
            }
            var deadline = pattern.nextChange(afterElapsedMilliseconds: elapsed, timing: timing)
                .map { since.adding(milliseconds: $0) }
            if failing, deadline == nil { deadline = now.adding(milliseconds: 1000) }
            switch Sys.poll([control.pipe.readFD], timeoutMilliseconds: pollTimeout(until: deadline, now: Sys.now())) {
            case .success(let revents):
                if revents[0] != 0 { control.pipe.drain() }
            case .failure(let failure):
                log(.error, "led: poll failed (errno \(failure.code), \(SystemCallError.name(of: failure.code))); the LED stops")
                return
            }
        }
    }
}
