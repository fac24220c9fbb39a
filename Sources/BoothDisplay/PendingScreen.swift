import BoothClock
import BoothCore
import BoothPorts
import Synchronization

/// A screen that is not there yet: a KMS card whose connectors are all disconnected (the HDMI
/// screen is plugged in later, or switched on later). A ``DisplaySink`` that tries `open` on a thread
/// of its own every `intervalMilliseconds` until it returns the real screen, then hands it the last
/// content shown and forwards everything to it; until then it keeps the content and drops frames.
public final class PendingScreen: DisplaySink {
    private let open: @Sendable () -> (any DisplaySink)?
    private let intervalMilliseconds: Int64
    private let worker = WorkerThread(name: "screen-wait")
    private struct State {
        var screen: (any DisplaySink)?
        var content = ScreenContent(.idle(notice: nil))
        var closed = false
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - open: makes the real screen, nil while it cannot (called on the waiting thread).
    ///   - intervalMilliseconds: between attempts (5 s on a booth).
    public init(intervalMilliseconds: Int64 = 5000, open: @escaping @Sendable () -> (any DisplaySink)?) {
        self.open = open
        self.intervalMilliseconds = intervalMilliseconds
    }

    /// Starts the attempts. - Returns: false when no thread could be made (the booth runs without the screen).
    @discardableResult
    public func start() -> Bool {
        worker.start { [self] w in
            while true {
                if case .stop = w.waitForWork(until: Monotonic.now().adding(milliseconds: intervalMilliseconds)) { return }
                guard let screen = open() else { continue }
                // Shown inside the lock, as `show` does: a newer content cannot reach the screen
                // before the kept one.
                let closed = state.withLock { s in
                    if !s.closed {
                        s.screen = screen
                        screen.show(s.content)
                    }
                    return s.closed
                }
                if closed { screen.close() }
                return
            }
        }
    }

    /// The real screen, once it opened.
    public var opened: Bool { state.withLock { $0.screen != nil } }

    /// Kept, and handed to the real screen once it is there (a ``DisplaySink``'s `show` only hands
    /// data over, so it is called inside the lock to keep the order).
    public func show(_ content: ScreenContent) {
        state.withLock { s in
            s.content = content
            s.screen?.show(content)
        }
    }

    public func frame(_ frame: Frame) { state.withLock { $0.screen }?.frame(frame) }

    public func close() {
        let screen = state.withLock { s in
            s.closed = true
            return s.screen
        }
        worker.finish(timeoutMilliseconds: nil)
        screen?.close()
    }
}
