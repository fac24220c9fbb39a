import BoothCore
import Glibc
import Synchronization

/// A thread the booth owns (``OSThread``) with the handshake every worker needs, written once: wake
/// it, let it wait for work with a deadline on `CLOCK_MONOTONIC` (``MonotonicCondition``), ask it to
/// finish and wait for that with a timeout. The thread's body is the caller's loop; ``WorkQueue`` is
/// the same with a queue of jobs.
///
/// The body's state lives with the caller (in its own `Mutex`); the caller changes it, then calls
/// ``wake()``: a ``waitForWork(until:_:)`` that checked its predicate before the change is woken, one
/// that checks after sees it (the predicate is tested under the worker's lock, which ``wake()`` takes).
public final class WorkerThread: Sendable {
    /// How a ``waitForWork(until:_:)`` ended.
    public enum Wake: Sendable, Equatable {
        /// The predicate holds (checked first: work asked for before ``finish(timeoutMilliseconds:)`` is done first).
        case work
        /// ``finish(timeoutMilliseconds:)`` was asked and the predicate does not hold: the body should return.
        case stop
        /// The deadline passed.
        case timeout
    }

    /// The thread's name (`ps -L`, at most 15 bytes are kept).
    public let name: String
    private let condition = MonotonicCondition()
    private struct State {
        var stopping = false
        var woken = false
        /// No thread runs the body (not started, failed to start, or returned).
        var ended = true
        var thread: pthread_t?
    }
    // Read and written with `condition` locked (the Mutex only makes it Sendable; it is never contended).
    private let state = Mutex(State())

    public init(name: String) { self.name = name }

    /// Starts `body` on a new thread named ``name``; the worker counts as ended when `body` returns.
    /// - Returns: false when no thread could be made (`pthread_create` failed, see ``OSThread/start(name:_:)``);
    ///   `body` never runs, and ``finish(timeoutMilliseconds:)`` returns at once.
    @discardableResult
    public func start(_ body: @escaping @Sendable (WorkerThread) -> Void) -> Bool {
        locked { $0.ended = false; $0.stopping = false }
        let started = OSThread.start(name: name) { [self] in
            locked { $0.thread = pthread_self() }
            body(self)
            condition.lock()
            state.withLock { $0.ended = true; $0.thread = nil }
            condition.broadcast()
            condition.unlock()
        }
        if !started { locked { $0.ended = true } }
        return started
    }

    /// True once ``finish(timeoutMilliseconds:)`` was asked.
    public var isStopping: Bool { locked { $0.stopping } }

    /// True when no thread runs the body (before ``start(_:)``, when it failed, or once the body returned).
    public var hasEnded: Bool { locked { $0.ended } }

    /// Wakes the thread's ``waitForWork(until:_:)`` (a wake with nobody waiting is kept for the next wait).
    public func wake() {
        condition.lock()
        state.withLock { $0.woken = true }
        condition.broadcast()
        condition.unlock()
    }

    /// On the worker's thread: waits until `ready()` holds, ``finish(timeoutMilliseconds:)`` is asked,
    /// or `CLOCK_MONOTONIC` reaches `deadline` (nil: no deadline). A ``wake()`` with `ready()` false
    /// (and no stop) ends the wait as `.work` too, so a body with no predicate can use the default.
    /// `ready` runs with the worker's lock held: it may take the caller's own locks, never this worker's.
    public func waitForWork(until deadline: MonotonicInstant? = nil, _ ready: () -> Bool = { false }) -> Wake {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if ready() { state.withLock { $0.woken = false }; return .work }
            let (stopping, woken) = state.withLock { s in defer { s.woken = false }; return (s.stopping, s.woken) }
            if stopping { return .stop }
            if woken { return .work }
            if let deadline {
                if Monotonic.now() >= deadline || !condition.wait(until: deadline) {
                    if ready() { return .work }
                    return state.withLock { $0.stopping } ? .stop : .timeout
                }
            } else {
                condition.wait()
            }
        }
    }

    /// Asks the body to return (its ``waitForWork(until:_:)`` answers `.stop` once no work is left) and
    /// waits, unless called on the worker's own thread, at most `timeoutMilliseconds` (nil: until it
    /// has) for the body to return. Safe to call twice and from several threads.
    /// - Returns: true when the body has returned (or never ran), false at the timeout or when called
    ///   on the worker's own thread.
    @discardableResult
    public func finish(timeoutMilliseconds: Int64?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let own = state.withLock { s in
            s.stopping = true
            return s.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        }
        condition.broadcast()
        if own { return false }
        let deadline = timeoutMilliseconds.map { Monotonic.now().adding(milliseconds: max(0, $0)) }
        while !state.withLock({ $0.ended }) {
            if let deadline {
                if !condition.wait(until: deadline) { return state.withLock { $0.ended } }
            } else {
                condition.wait()
            }
        }
        return true
    }

    private func locked<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return state.withLock { body(&$0) }
    }
}

/// A ``WorkerThread`` that runs jobs one at a time, in the order sent: the compose, print and storage
/// workers' shape. ``finish(timeoutMilliseconds:)`` lets the queued jobs finish first.
public final class WorkQueue<Job: Sendable>: Sendable {
    private let worker: WorkerThread
    private struct Queue { var jobs: [Job] = []; var busy = false }
    private let queue = Mutex(Queue())

    public init(name: String) { worker = WorkerThread(name: name) }

    /// Starts the thread; `handle` runs on it for each job.
    /// - Returns: false when no thread could be made (`pthread_create` failed); jobs sent then wait
    ///   for nobody and ``finish(timeoutMilliseconds:)`` reports them unfinished.
    @discardableResult
    public func start(_ handle: @escaping @Sendable (Job) -> Void) -> Bool {
        worker.start { [self] w in
            while true {
                switch w.waitForWork(until: nil, { queue.withLock { !$0.jobs.isEmpty } }) {
                case .stop: return
                case .timeout: continue
                case .work: break
                }
                let job: Job? = queue.withLock { q in
                    guard !q.jobs.isEmpty else { return nil }
                    q.busy = true
                    return q.jobs.removeFirst()
                }
                guard let job else { continue }
                handle(job)
                queue.withLock { $0.busy = false }
            }
        }
    }

    /// Queues `job` and wakes the thread.
    public func send(_ job: Job) {
        queue.withLock { $0.jobs.append(job) }
        worker.wake()
    }

    /// Queues `job` and wakes the thread; when more than `limit` jobs then wait (the running one not
    /// counted), the oldest waiting one is taken off the queue, never run, and returned: a consumer
    /// that falls behind loses its oldest work, not its newest.
    @discardableResult
    public func send(_ job: Job, keepingAtMost limit: Int) -> Job? {
        let dropped = queue.withLock { q -> Job? in
            q.jobs.append(job)
            return q.jobs.count > max(0, limit) ? q.jobs.removeFirst() : nil
        }
        worker.wake()
        return dropped
    }

    /// Takes the jobs still waiting off the queue (the one running, if any, goes on) and returns them,
    /// oldest first; none of them is run.
    public func cancelWaiting() -> [Job] {
        queue.withLock { q in defer { q.jobs = [] }; return q.jobs }
    }

    /// Jobs queued or running.
    public var pending: Int { queue.withLock { $0.jobs.count + ($0.busy ? 1 : 0) } }

    /// True when no thread runs the jobs (before ``start(_:)``, when it failed, or once it ended).
    public var hasEnded: Bool { worker.hasEnded }

    /// Lets the queued jobs finish (at most `timeoutMilliseconds`; nil: as long as they take), then
    /// the thread ends. Jobs sent after this are not run.
    /// - Returns: false when a job was still queued or running at the deadline.
    @discardableResult
    public func finish(timeoutMilliseconds: Int64?) -> Bool {
        worker.finish(timeoutMilliseconds: timeoutMilliseconds) && queue.withLock { $0.jobs.isEmpty && !$0.busy }
    }
}
