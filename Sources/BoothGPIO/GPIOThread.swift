import BoothClock
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking pipe that wakes a thread sleeping in poll(2). Both ends are
/// closed when the last owner (the API object or its thread) lets go, so a
/// write never meets a closed read end (no SIGPIPE).
final class WakePipe: Sendable {
    let readFD: Int32
    let writeFD: Int32

    init() throws(Errno) {
        switch Sys.makeWakePipe() {
        case .success(let (r, w)):
            readFD = r
            writeFD = w
        case .failure(let failure): throw failure
        }
    }

    func wake() { Sys.wake(writeFD) }
    func drain() { Sys.drain(readFD) }

    deinit {
        Sys.close(readFD)
        Sys.close(writeFD)
    }
}

/// Start/stop handshake between an API object and the thread it owns.
final class ThreadControl: Sendable {
    let pipe: WakePipe
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex<(stopping: Bool, thread: pthread_t?)>((false, nil))

    init() throws(Errno) { pipe = try WakePipe() }

    /// Starts `body` on a new thread of its own named `name` (``OSThread``); `finish()` must end it.
    /// - Throws: `Errno(EAGAIN)` when no thread could be created (`pthread_create`); `body` never runs
    ///   and the caller's open fails, so the device becomes a fault that is retried.
    func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) {
        let started = OSThread.start(name: name) { [self] in
            state.withLock { $0.thread = pthread_self() }
            body()
        }
        guard started else { throw Errno(EAGAIN) }
    }

    /// True once `stop` was called.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Called by the thread as its last act.
    func finish() { finished.signal() }

    /// Asks the thread to end and, unless called on that thread, waits until it has.
    /// Idempotent; every waiting caller returns once the thread has finished.
    func stop() {
        let (first, ownThread) = state.withLock { s in
            defer { s.stopping = true }
            let own = s.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            return (!s.stopping, own)
        }
        if first { pipe.wake() }
        guard !ownThread else { return }
        finished.wait()
        finished.signal()
    }
}
