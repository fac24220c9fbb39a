import BoothCore
import BoothPorts

// SIGTERM's end: asked to stop, the loop ends; saves in flight finish and the devices are released.

extension BoothRuntime {
    /// Asks the booth to stop (SIGTERM): a save in flight finishes, devices are released.
    public func requestShutdown() {
        state.withLock { $0.stopping = true }
        supervisor.stopping()
        loop.post(.shutdown)
    }

    /// True once the booth was asked to stop (``requestShutdown()``, or its main loop ended): it is
    /// releasing its devices and exits next. Thread-safe.
    public var isStopping: Bool { state.withLock { $0.stopping } }

    /// SIGTERM's end: saves in flight finish (≤ 2 s), the stream stops, the lines are released.
    func shutdownDevices() -> Int32 {
        // SIGHUP's reload thread ends too (a reload asked for now would wait for a loop that has stopped).
        reloads.stop()
        // The camera first: a frame it took for a capture after the loop stopped is in the box
        // by then. Every capture still held (taken but not saved, or kept back by a storage fault)
        // gets one more save before the storage thread finishes.
        camera.shutdown(timeoutSeconds: 3)
        // A picture being composed is finished (it goes to storage from there) before the last saves.
        if !composeWorker.finish(timeoutSeconds: 2) {
            log.error("the picture being composed was not finished within 2 s when stopping")
        }
        for id in captures.heldIDs { storage.save(captureID: id) }
        if !storage.finish(timeoutSeconds: 2) || !captures.heldIDs.isEmpty {
            let held = captures.heldIDs.map(String.init).joined(separator: ", ")
            log.error("captures not saved when stopping (disk full or too slow within 2 s): \(held)")
        }
        printer.stop()
        delivery.finish(timeoutSeconds: 1)
        for d in displays { d.close() }
        admin.stats.record(counters, highestSession: state.withLock { $0.lastSavedSession })
        admin.stats.finish(timeoutSeconds: 2)
        inputs.release()
        let c = counters
        log.notice("photoboothd stopped: \(counted(c.sessions, "session")) (\(c.completed) completed, \(c.cancelled) cancelled, "
                   + "\(c.failed) failed), \(counted(storage.saved, "capture")) saved")
        return state.withLock { $0.exitCode }
    }
}
