import BoothClock
import BoothCore
import BoothPorts
import BoothRuntime
import BoothSystem
import FoundationEssentials
import Glibc
import Synchronization

/// The terminal as the button, for `--simulate`: Enter = press, `c` then Enter = long press
/// (cancel). At end of input the keyboard button switches off (the thread ends: no busy loop) and
/// ``ended`` says so for `status`; it stays ``isRunning`` (no fault: other presses still work).
public final class KeyboardButton: ButtonDevice {
    public let identity = "keyboard (Enter = press, c + Enter = long press)"
    private let fd: Int32
    private let clock: any MonotonicClock
    private let log: Logger
    private let worker = WorkerThread(name: "keyboard")
    private let stopped = Mutex(false)
    private let inputEnded = Mutex(false)
    private let nextID = Mutex<UInt64>(1)

    /// - Parameter fd: the input to read (standard input by default).
    public init(fd: Int32 = 0, clock: any MonotonicClock, log: Logger) {
        self.fd = fd
        self.clock = clock
        self.log = log
    }

    public func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        let started = worker.start { [self] w in
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while !w.isStopping {
                let n = retryingEINTR { read(fd, &byte, 1) }
                if n <= 0 {
                    inputEnded.withLock { $0 = true }
                    log.info("keyboard: end of input, keyboard button off")
                    return
                }
                if w.isStopping { return }
                guard byte == UInt8(ascii: "\n") else { line.append(byte); continue }
                let text = String(decoding: line, as: UTF8.self).trimmingSpaces()
                line.removeAll()
                let id = nextID.withLock { n in defer { n += 1 }; return n }
                if text == "c" {
                    log.info("keyboard: long press")
                    handler(.longPress(id: id))
                } else {
                    log.info("keyboard: press")
                    handler(.press(id: id, at: clock.now()))
                }
            }
        }
        if !started {
            inputEnded.withLock { $0 = true }
            log.warning("keyboard: no thread to read the terminal (pthread_create failed), keyboard button off")
        }
    }

    /// Stops delivering presses. The thread may sit in `read(2)` until the next line or the end of
    /// input; it delivers nothing more either way (it is not waited for).
    public func stop() {
        stopped.withLock { $0 = true }
        worker.finish(timeoutMilliseconds: 0)
    }
    public var isRunning: Bool { !stopped.withLock { $0 } }
    /// `"input ended"` once the input reached its end (or failed), nil before.
    public var ended: String? { inputEnded.withLock { $0 } ? "input ended" : nil }
}

/// A button that never presses: `--simulate` with standard input not a terminal and no keyboard wanted.
public final class NoButton: ButtonDevice {
    public let identity = "none"
    public init() {}
    public func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {}
    public func stop() {}
    public var isRunning: Bool { true }
}
