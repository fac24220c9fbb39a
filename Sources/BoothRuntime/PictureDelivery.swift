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
        let queue: WorkQueue<SavedPicture>
        /// ``PictureDelivery/finish(timeoutSeconds:)`` is done with this lane: nothing more is queued.
        let stopped = Mutex(false)
        init(sink: any PictureSink) {
            self.sink = sink
            queue = WorkQueue(name: "sink-\(sink.sinkName)")
        }
    }

    private let lanes: [Lane]
    private let log: Logger
    private let clock: any MonotonicClock

    /// - Parameter clock: the runtime's injected clock, on which ``finish(timeoutSeconds:)``'s time runs.
    init(sinks: [any PictureSink], log: Logger, clock: any MonotonicClock = SystemClock()) {
        lanes = sinks.map(Lane.init)
        self.log = log
        self.clock = clock
    }

    /// Starts each sink's thread.
    func launch() {
        for lane in lanes {
            let log = self.log
            if !lane.queue.start({ [sink = lane.sink] picture in sink.pictureSaved(picture) }) {
                log.error("\(lane.sink.sinkName): no thread for its pictures (pthread_create failed: the thread limit); it gets none")
            }
        }
    }

    /// Queues `picture` for every sink; returns at once (any thread).
    func deliver(_ picture: SavedPicture) {
        for lane in lanes {
            // Checked and queued under the lane's flag, so nothing is queued after the lane's finish.
            let dropped = lane.stopped.withLock { stopped -> SavedPicture? in
                stopped ? nil : lane.queue.send(picture, keepingAtMost: PictureDelivery.queueLimit)
            }
            if let dropped {
                log.error("\(lane.sink.sinkName): \(PictureDelivery.queueLimit) pictures waiting; \(dropped.path) not handed to it")
            }
        }
    }

    /// Lets each sink take what is queued for at most `timeoutSeconds` (together, on the injected clock; each
    /// lane's own wait is a condition wait for what is left), then stops the threads; a sink still busy then
    /// keeps its thread until it returns, and gets nothing more.
    func finish(timeoutSeconds: Double) {
        let deadline = clock.now().adding(milliseconds: Int64(timeoutSeconds * 1000))
        for lane in lanes {
            lane.queue.finish(timeoutMilliseconds: Int64(max(0, deadline.milliseconds(since: clock.now()))))
            let left = lane.stopped.withLock { stopped in stopped = true; return lane.queue.cancelWaiting().count }
            if left > 0 { log.warning("\(lane.sink.sinkName): \(counted(left, "picture")) not handed to it when stopping") }
        }
    }
}
