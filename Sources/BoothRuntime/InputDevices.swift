import BoothClock
import BoothCore
import BoothPorts
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

// The button and LED lifecycle: opened at start and on reload, retried after a fault or a missing line.

extension BoothRuntime {
    func retry(_ kind: FaultKind) {
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
    func retryLEDIfDue() {
        let (due, settings) = state.withLock { s in (s.led == nil && s.ledRetry.isDue(at: clock.now()), s.settings) }
        guard due else { return }
        openLED(settings)
        if state.withLock({ $0.led }) != nil { log.notice("led: line \(settings.led.line) opened") }
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
}
