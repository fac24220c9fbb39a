import BoothClock
import BoothCore
import BoothPorts
import Synchronization

/// What every camera source that runs on a thread of its own shares (``StreamingCameraSource``,
/// ``GPhoto2CameraSource``): the queue of requests the port's calls append (its own `Request` enum), the
/// "camera" thread we own (``WorkerThread``: `pthread_create`, woken by each request), the runtime's handlers
/// that events are posted to, the ``Heartbeat`` the thread turns, and the box of figures `status` reads.
/// Any thread may call it; the source's own state stays on its thread.
final class CameraWorker<Request: Sendable, Status: Sendable>: Sendable {
    /// The requests not yet taken by the thread, oldest first.
    let requests = Mutex<[Request]>([])
    /// What the thread last reported, for `status` (any thread).
    let statusBox: Mutex<Status>
    /// The "camera" thread.
    let thread: WorkerThread
    /// Turned by the thread at each turn of its loop and before each call into the camera library: a thread
    /// stuck in a call that never returns stops turning it, which the watchdog's liveness check sees.
    let heartbeat = Heartbeat()
    private let handlers = Mutex<CameraSourceHandlers?>(nil)

    /// - Parameters:
    ///   - status: the figures before the thread reports any.
    ///   - name: the thread's name (`pthread_setname_np`, what `top -H` shows), at most 15 bytes.
    init(status: Status, name: String = "camera") {
        statusBox = Mutex(status)
        thread = WorkerThread(name: name)
    }

    /// Keeps `handlers` and starts the thread (`pthread_create`) with `body`; without one (the thread limit)
    /// the camera is a fault, logged and posted.
    func launch(_ handlers: CameraSourceHandlers, log: Logger, _ body: @escaping @Sendable (WorkerThread) -> Void) {
        self.handlers.withLock { $0 = handlers }
        startCameraThread(thread, log: log, post: post, body)
    }

    /// Queues `request` and wakes the thread.
    func send(_ request: Request) {
        requests.withLock { $0.append(request) }
        thread.wake()
    }

    /// Hands `event` to the runtime's handlers (none before ``launch(_:log:_:)``).
    func post(_ event: CameraSourceEvent) { handlers.withLock { $0 }?.event(event) }

    /// Hands a live-view frame to the runtime's handlers (the screens).
    func liveFrame(_ frame: Frame) { handlers.withLock { $0 }?.liveFrame(frame) }

    /// True when a request waits.
    var hasRequests: Bool { requests.withLock { !$0.isEmpty } }

    /// Every waiting request, oldest first, taken off the queue.
    func takeAll() -> [Request] { requests.withLock { r in defer { r.removeAll() }; return r } }

    /// The oldest waiting request, taken off the queue; nil when none waits.
    func takeFirst() -> Request? { requests.withLock { $0.isEmpty ? nil : $0.removeFirst() } }

    /// Sends `request` (the source's shutdown) and waits up to `timeoutSeconds` (s) for the thread to end;
    /// a call that never returns leaves the thread behind after that. Returns whether it ended.
    @discardableResult
    func finish(sending request: Request, timeoutSeconds: Double) -> Bool {
        send(request)
        return thread.finish(timeoutMilliseconds: Int64(max(0, timeoutSeconds) * 1000))
    }
}

/// Starts a camera source's thread (`pthread_create`, ``WorkerThread/start(_:)``) with `body`; without one
/// (the thread limit) the camera is a fault, logged and reported through `post`.
func startCameraThread(_ worker: WorkerThread, log: Logger, post: (CameraSourceEvent) -> Void,
                       _ body: @escaping @Sendable (WorkerThread) -> Void) {
    guard worker.start(body) else {
        log.error("camera: no thread for the camera worker (pthread_create failed: the thread limit)")
        post(.fault("camera not available: no thread for it (pthread_create failed)"))
        return
    }
}
