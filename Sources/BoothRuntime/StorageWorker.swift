import BoothClock
import BoothCore
import BoothPorts
import FoundationEssentials
import Glibc
import Synchronization

/// Saves captures on a thread of its own, so fsync never stalls the main loop or the camera, into the
/// photos directory behind the storage port (``PhotoStorage``). Each durable save is handed to
/// `saved` (the picture sinks) and then posted to the loop as `saved`.
/// A capture whose save fails (ENOSPC, EIO, the directory gone) stays in memory and is saved
/// by ``retry()`` once the storage fault clears: nothing is lost.
public final class StorageWorker: Sendable {
    private let store: any PhotoStorage
    private let onSaved: @Sendable (SavedPicture) -> Void
    private let captures: CaptureBox
    private let clock: any MonotonicClock
    private let log: Logger
    private let post: @Sendable (BoothEvent) -> Void
    private let queue = WorkQueue<Job>(name: "storage")
    private let minFree: Mutex<UInt64>
    private let savedCount = Mutex(0)
    private let mount: Mutex<String>

    /// Where the latest saves went, by capture id (the newest 64), for ``delete(captureIDs:)``.
    private let savedPaths = Mutex<[(id: UInt64, path: String)]>([])

    enum Job: Sendable { case save(UInt64), delete([UInt64]), retry, syncSessionNumber, checkFreeSpace }

    /// How often the free space is looked at between presses (``checkFreeSpaceIfDue(now:)``), in
    /// milliseconds: a refusal ends, or begins, within this long of its cause.
    public static let freeSpaceCheckMilliseconds: Int64 = 10_000
    /// When ``checkFreeSpaceIfDue(now:)`` last queued a look.
    private let lastFreeSpaceCheck = Mutex<MonotonicInstant?>(nil)
    /// A look queued and not begun yet: another is not queued (a thread held by a hung disk gathers one, not one per tick).
    private let freeSpaceCheckQueued = Mutex(false)

    /// - Parameter minFree: `storage.min_free` in bytes: below it sessions are refused.
    /// - Parameter mount: `storage.mount`: removable media that must be mounted under the photos (empty: none).
    /// - Parameter saved: called on the storage thread with each capture or picture once it is durably
    ///   saved, before `saved` is posted; must return at once (``PictureDelivery`` queues for slow sinks).
    public init(store: any PhotoStorage, captures: CaptureBox, minFree: UInt64, mount: String = "", clock: any MonotonicClock,
                log: Logger, post: @escaping @Sendable (BoothEvent) -> Void,
                saved: @escaping @Sendable (SavedPicture) -> Void = { _ in }) {
        self.onSaved = saved
        self.mount = Mutex(mount)
        self.store = store
        self.captures = captures
        self.minFree = Mutex(minFree)
        self.clock = clock
        self.log = log
        self.post = post
    }

    public func launch() {
        if !queue.start({ [self] job in run(job) }) {
            log.error("storage: no thread for saving photos (pthread_create failed: the thread limit); the watchdog restarts the booth")
        }
    }

    /// Queues capture `id` for saving; answers with `saved` or `saveFailed`.
    public func save(captureID: UInt64) { enqueue(.save(captureID)) }
    /// Deletes captures of a cancelled series (`session.cancelled_captures = delete`), after any save
    /// of them queued before: a saved file is unlinked, bytes still held are dropped. Returns at once.
    public func delete(captureIDs: [UInt64]) { enqueue(.delete(captureIDs)) }
    /// Rechecks the directory and saves held captures; answers with `deviceRecovered(.storage)`
    /// or `deviceFault(.storage)`.
    public func retry() { enqueue(.retry) }
    /// Makes the session number just handed out durable (``PhotoStorage/syncSessionNumber()``), before the
    /// session's first capture is taken, so a power cut in its countdown does not hand it out again. Returns at once.
    public func syncSessionNumber() { enqueue(.syncSessionNumber) }
    /// Sets `storage.min_free` (bytes).
    public func setMinFree(_ bytes: UInt64) { minFree.withLock { $0 = bytes } }
    /// Looks at the free space on the storage thread (`statvfs`, ``refusal()``) and posts
    /// `storageStatus` with the answer: a refusal ends when its cause does, not at the next press. Returns at once;
    /// while a look is queued and not begun, no other is queued (it reads the settings in force when it runs).
    public func checkFreeSpace() {
        let queued = freeSpaceCheckQueued.withLock { q in defer { q = true }; return q }
        if !queued { enqueue(.checkFreeSpace) }
    }
    /// ``checkFreeSpace()`` when ``freeSpaceCheckMilliseconds`` passed since the last one (from the main loop's tick).
    public func checkFreeSpaceIfDue(now: MonotonicInstant) {
        let due = lastFreeSpaceCheck.withLock { last -> Bool in
            if let l = last, now.milliseconds(since: l) < Double(StorageWorker.freeSpaceCheckMilliseconds) { return false }
            last = now
            return true
        }
        if due { checkFreeSpace() }
    }
    /// The worker thread's sign of life, for the watchdog's liveness check.
    public let heartbeat = Heartbeat()
    /// Sets `storage.mount`.
    public func setMount(_ path: String) { mount.withLock { $0 = path } }
    /// Why the photos directory must not be written now (removable media gone), or nil. See ``StorageGuard``.
    public func mountProblem() -> String? {
        store.mountProblem(mount: mount.withLock { $0 })
    }
    /// Captures saved since start.
    public var saved: Int { savedCount.withLock { $0 } }

    /// Why a session should be refused now (free space below `storage.min_free`), or nil.
    /// Wraps `statvfs`; cheap enough to call on every press.
    public func refusal() -> String? {
        let limit = minFree.withLock { $0 }
        do {
            let free = try store.freeBytes()
            return free < limit ? "Storage almost full (\(formatBytes(free)) free, \(formatBytes(limit)) needed)" : nil
        } catch {
            return "Storage not available: \(error)"
        }
    }

    /// Finishes queued saves, waiting at most `timeoutSeconds`; then stops the thread.
    /// Returns false when saves were still in flight at the deadline.
    @discardableResult
    public func finish(timeoutSeconds: Double) -> Bool {
        queue.finish(timeoutMilliseconds: Int64(max(0, timeoutSeconds) * 1000))
    }

    private func enqueue(_ job: Job) { queue.send(job) }

    /// One job on the storage thread; the heartbeat turns as it starts and waits once nothing is left.
    private func run(_ job: Job) {
        heartbeat.turn(at: clock.now())
        switch job {
        case let .save(id): saveOne(id)
        case let .delete(ids): deleteSaved(ids)
        case .retry: retryHeld()
        case .syncSessionNumber: store.syncSessionNumber()
        case .checkFreeSpace:
            freeSpaceCheckQueued.withLock { $0 = false }
            post(.storageStatus(refusal: refusal()))
        }
        if queue.pending <= 1 { heartbeat.waiting() }
    }

    @discardableResult
    private func saveOne(_ id: UInt64) -> Bool {
        guard let record = captures.get(id) else { return true }
        if let problem = mountProblem() {
            log.error("capture \(id) not saved, kept in memory: \(problem)")
            post(.deviceFault(.storage, message: problem))
            return false
        }
        do {
            let path = try store.saveCapture(record.jpeg, session: record.session, shot: record.shot) { error in
                log.warning("capture \(id) saved, but durability of its directory entry is not confirmed "
                            + "(directory fsync failed after the rename): \(error)")
            }
            let savedAt = clock.now()
            captures.remove(id)
            savedPaths.withLock { $0.append((id, path)); if $0.count > 64 { $0.removeFirst($0.count - 64) } }
            let name = String(path.split(separator: "/").last ?? "")
            onSaved(SavedPicture(path: path, session: PhotoFileName.sessionNumber(in: name) ?? record.session, shot: record.shot,
                               kind: record.shot == 0 ? .picture : .capture, captureID: id, bytes: record.jpeg))
            if record.shot == 0 {
                log.info("session \(record.session)'s picture saved: \(path) (\(record.jpeg.count) bytes, \(record.size)); "
                         + "last frame to saved \(format(savedAt.milliseconds(since: record.frameTimestamp))) ms")
                post(.saved(captureID: id, path: path))
                return true
            }
            savedCount.withLock { $0 += 1 }
            log.info("capture \(id) saved: \(path) (\(record.jpeg.count) bytes, \(record.size) \(record.format.rawValue)"
                     + ", \(record.madeBy)); "
                     + "trigger-to-frame \(format(record.frameTimestamp.milliseconds(since: record.trigger))) ms, "
                     + "frame-to-saved \(format(savedAt.milliseconds(since: record.frameTimestamp))) ms")
            post(.saved(captureID: id, path: path))
            return true
        } catch {
            log.error("capture \(id) not saved, kept in memory: \(error)")
            post(.saveFailed(captureID: id, noSpace: error.isNoSpace, message: "\(error)"))
            return false
        }
    }

    private func deleteSaved(_ ids: [UInt64]) {
        for id in ids {
            if captures.get(id) != nil {
                captures.remove(id)
                log.info("capture \(id) deleted before it was saved (cancelled series)")
                continue
            }
            guard let path = savedPaths.withLock({ list in list.first { $0.id == id }?.path }) else {
                log.warning("capture \(id) not deleted: no file of it is known")
                continue
            }
            do {
                try store.delete(path: path)
                savedPaths.withLock { $0.removeAll { $0.id == id } }
                log.info("capture \(id) deleted: \(path) (cancelled series)")
            } catch {
                log.error("capture \(id) not deleted: \(error)")
            }
        }
    }

    private func retryHeld() {
        if let problem = mountProblem() {
            post(.deviceFault(.storage, message: problem))
            return
        }
        do {
            try store.prepare()
        } catch {
            post(.deviceFault(.storage, message: "photos directory not writable: \(error)"))
            return
        }
        for id in captures.heldIDs where !saveOne(id) { return }
        post(.deviceRecovered(.storage))
    }
}

/// The fix to name when the photos directory cannot be written because the service's sandbox
/// (`ProtectSystem=strict`) makes it read-only: empty for other failures.
func writablePathsHint(_ dir: String, _ error: FileError) -> String {
    guard error.errno == EROFS || error.errno == EACCES, !ServicePaths.isWritable(absolutePath(dir)) else { return "" }
    return "; \(ServicePaths.fix(for: dir))"
}
