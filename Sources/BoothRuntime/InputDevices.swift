import BoothClock
import BoothCore
import BoothPorts
import Synchronization

// The button and LED lifecycle: opened at start and on reload, retried after a fault or a missing line,
// released at shutdown.

/// The booth's input devices, the button and the LED: opened from the factory (``DeviceFactory/button``,
/// ``DeviceFactory/led``), their signals posted to the loop, reopened on reload, retried after a fault or
/// a missing line, released at shutdown. Thread-safe; the loop calls it, `status` reads it.
final class InputDevices: Sendable {
    private struct State {
        var button: (any ButtonDevice)?
        var buttonRunning = false
        var led: (any LEDDevice)?
        /// The pattern the machine last asked for, shown again by an LED opened later.
        var ledPattern: LEDPattern = .off
        /// A configured LED line that could not be opened is tried again (``DeviceRetry``).
        var ledRetry = DeviceRetry()
    }
    private let state = Mutex(State())
    private let factory: DeviceFactory
    private let loop: EventLoop
    private let clock: any MonotonicClock
    private let log: Logger

    init(factory: DeviceFactory, loop: EventLoop, clock: any MonotonicClock, log: Logger) {
        self.factory = factory
        self.loop = loop
        self.clock = clock
        self.log = log
    }

    /// The button made last (open or not), nil before the first start.
    var button: (any ButtonDevice)? { state.withLock { $0.button } }
    /// True when the button was started and has not failed since (its own ``ButtonDevice/isRunning`` aside).
    var buttonStarted: Bool { state.withLock { $0.buttonRunning } }
    /// True while the button is open and running.
    var buttonRunning: Bool { state.withLock { $0.buttonRunning && ($0.button?.isRunning ?? false) } }
    /// The open LED, nil when none is open.
    var led: (any LEDDevice)? { state.withLock { $0.led } }
    /// The pattern the machine last asked for.
    var ledPattern: LEDPattern { state.withLock { $0.ledPattern } }
    /// The LED line's retry schedule.
    var ledRetry: DeviceRetry { state.withLock { $0.ledRetry } }

    /// Shows `pattern` on the LED (and on an LED opened later).
    func setLED(_ pattern: LEDPattern) {
        state.withLock { $0.ledPattern = pattern; return $0.led }?.set(pattern)
    }

    /// The button's fault retried: reopened unless its line is held (a stuck button, cleared by its
    /// release); the loop hears `deviceFault` or `deviceRecovered`.
    func retryButton(_ settings: Settings) {
        if buttonStarted, button?.isRunning ?? false {
            // The line is held; the fault is a stuck button, cleared by its release.
            return
        }
        button?.stop()
        if let message = startButton(settings) {
            loop.post(.deviceFault(.button, message: message))
        } else {
            loop.post(.deviceRecovered(.button))
        }
    }

    /// Opens the LED line (`factory.led`) and shows the current pattern on it. A configured line that
    /// does not open is no fault (the booth runs without its LED); it is tried again from the tick
    /// after 1 s, doubling to 30 s, as a failed button line is (``retryLEDIfDue(_:)``).
    func openLED(_ settings: Settings) {
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
    func retryLEDIfDue(_ settings: Settings) {
        let due = state.withLock { s in s.led == nil && s.ledRetry.isDue(at: clock.now()) }
        guard due else { return }
        openLED(settings)
        if led != nil { log.notice("led: line \(settings.led.line) opened") }
    }

    /// Opens the button (its line or input device); returns the fault message when it cannot.
    func startButton(_ settings: Settings) -> String? {
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

    /// Reload: both lines requested again (the LED's chip defaults to the button's).
    /// - Returns: the button's fault message (also posted to the loop) when it did not open, and whether a
    ///   configured LED line did not open (it is retried).
    func reopen(_ settings: Settings) -> (buttonFault: String?, ledMissing: Bool) {
        let (button, led) = state.withLock { s in
            defer { s.buttonRunning = false; s.led = nil }
            return (s.button, s.led)
        }
        button?.stop()
        led?.stop()
        let message = startButton(settings)
        if let message { loop.post(.deviceFault(.button, message: message)) }
        openLED(settings)
        return (message, factory.opensLED && settings.led.isConfigured && self.led == nil)
    }

    /// Shutdown: the button's line released, the LED turned off and released.
    func release() {
        let (button, led) = state.withLock { ($0.button, $0.led) }
        button?.stop()
        led?.set(.off)
        led?.stop()
    }
}

extension BoothRuntime {
    /// The machine's ``BoothCommand/retry(_:)`` for one kind of fault.
    func retry(_ kind: FaultKind) {
        switch kind {
        case .camera:
            camera.probe()
        case .storage:
            storage.retry()
        case .button:
            inputs.retryButton(state.withLock { $0.settings })
        }
    }
}
