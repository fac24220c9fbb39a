import BoothClock
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

/// Start/stop handshake between an API object and the thread it owns: a ``WorkerThread`` (BoothClock's
/// one worker-thread helper) whose body sleeps in poll(2) on the device and on ``pipe``.
final class ThreadControl: Sendable {
    let pipe: WakePipe
    /// Made by `spawn` (the thread's name is known then).
    private let worker = Mutex<WorkerThread?>(nil)

    init() throws(Errno) { pipe = try WakePipe() }

    /// Starts `body` on a new thread of its own named `name` (``WorkerThread``); `stop()` ends it.
    /// - Throws: `Errno(EAGAIN)` when no thread could be created (`pthread_create`); `body` never runs
    ///   and the caller's open fails, so the device becomes a fault that is retried.
    func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(Errno) {
        let thread = WorkerThread(name: name)
        worker.withLock { $0 = thread }
        guard thread.start({ _ in body() }) else { throw Errno(EAGAIN) }
    }

    /// True once `stop` was called.
    var isStopping: Bool { worker.withLock { $0 }?.isStopping ?? false }

    /// Called by the thread as its last act. Nothing to do: the worker counts as ended when the body returns.
    func finish() {}

    /// Asks the thread to end and, unless called on that thread, waits until it has.
    /// Idempotent; every waiting caller returns once the thread has finished.
    func stop() {
        guard let thread = worker.withLock({ $0 }) else { return }
        let first = !thread.isStopping
        thread.finish(timeoutMilliseconds: 0)  // marks it stopping before the wake
        if first { pipe.wake() }
        thread.finish(timeoutMilliseconds: nil)
    }
}
