import BoothClock
import BoothCore
import BoothPorts
import Synchronization

/// Hands each saved capture and picture to the picture sinks (``RuntimeOptions/pictureSinks``): one
/// thread per sink ("sink-NAME"), each with its own queue, so a sink that takes long (or never
/// returns) delays neither the storage thread, nor the loop, nor the other sinks. A sink more than
/// ``queueLimit`` pictures behind loses the oldest waiting one (logged).
final class PictureDelivery: Sendable {
    /// Pictures a sink may have waiting.
    static let queueLimit = 32

    private final class Lane: Sendable {
        let sink: any PictureSink
        let wake = MonotonicCondition()
        struct Queue {
            var waiting: [SavedPicture] = []
            var busy = false
            var stop = false
        }
        let queue = Mutex(Queue())
        init(sink: any PictureSink) { self.sink = sink }
    }

    private let lanes: [Lane]
    private let log: Logger

    init(sinks: [any PictureSink], log: Logger) {
        lanes = sinks.map(Lane.init)
        self.log = log
    }

    /// Starts each sink's thread.
    func launch() {
        for lane in lanes {
            let log = self.log
            if !OSThread.start(name: "sink-\(lane.sink.sinkName)", { PictureDelivery.run(lane) }) {
                log.error("\(lane.sink.sinkName): no thread for its pictures (pthread_create failed: the thread limit); it gets none")
            }
        }
    }

    /// Queues `picture` for every sink; returns at once (any thread).
    func deliver(_ picture: SavedPicture) {
        for lane in lanes {
            let dropped = lane.queue.withLock { q -> SavedPicture? in
                guard !q.stop else { return nil }
                q.waiting.append(picture)
                return q.waiting.count > PictureDelivery.queueLimit ? q.waiting.removeFirst() : nil
            }
            if let dropped {
                log.error("\(lane.sink.sinkName): \(PictureDelivery.queueLimit) pictures waiting; \(dropped.path) not handed to it")
            }
            lane.wake.lock(); lane.wake.signal(); lane.wake.unlock()
        }
    }

    /// Lets each sink take what is queued for at most `timeoutSeconds` (together), then stops the threads;
    /// a sink still busy then keeps its thread until it returns, and gets nothing more.
    func finish(timeoutSeconds: Double) {
        let deadline = Monotonic.now().adding(milliseconds: Int64(timeoutSeconds * 1000))
        for lane in lanes {
            lane.wake.lock()
            while lane.queue.withLock({ !$0.waiting.isEmpty || $0.busy }) {
                if !lane.wake.wait(until: deadline) { break }
            }
            let left = lane.queue.withLock { q in defer { q.stop = true; q.waiting = [] }; return q.waiting.count }
            lane.wake.broadcast()
            lane.wake.unlock()
            if left > 0 { log.warning("\(lane.sink.sinkName): \(counted(left, "picture")) not handed to it when stopping") }
        }
    }

    private static func run(_ lane: Lane) {
        while true {
            lane.wake.lock()
            while lane.queue.withLock({ $0.waiting.isEmpty && !$0.stop }) { lane.wake.wait() }
            let next = lane.queue.withLock { q -> SavedPicture? in
                guard !q.stop, !q.waiting.isEmpty else { return nil }
                q.busy = true
                return q.waiting.removeFirst()
            }
            lane.wake.unlock()
            guard let next else { return }
            lane.sink.pictureSaved(next)
            lane.wake.lock()
            lane.queue.withLock { $0.busy = false }
            lane.wake.broadcast()
            lane.wake.unlock()
        }
    }
}
