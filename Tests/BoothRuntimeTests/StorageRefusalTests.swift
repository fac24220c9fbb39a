import BoothClock
import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage

/// The daemon's own photos folder, with the free space a test sets (`free`, bytes) instead of `statvfs`'s.
final class FreeSpaceStore: PhotoStorage {
    let inner: PhotoStore
    let free: Mutex<UInt64>
    init(_ s: Settings.Storage, free: UInt64) {
        inner = PhotoStore(directory: s.dir, stateFile: s.sessionFile)
        self.free = Mutex(free)
    }
    var directory: String { inner.directory }
    var nextSession: Int { inner.nextSession }
    var sessionFileProblem: String? { inner.sessionFileProblem }
    var powerCutNotes: [String] { inner.powerCutNotes }
    var sessionNumberNotes: [String] { inner.sessionNumberNotes }
    func prepare() throws(FileError) { try inner.prepare() }
    func allocateSession() -> Int { inner.allocateSession() }
    func syncSessionNumber() { inner.syncSessionNumber() }
    func saveCapture(_ jpeg: [UInt8], session: Int, shot: Int, directoryNotSynced: (FileError) -> Void) throws(FileError) -> String {
        try inner.saveCapture(jpeg, session: session, shot: shot, directoryNotSynced: directoryNotSynced)
    }
    func delete(path: String) throws(FileError) { try inner.delete(path: path) }
    func freeBytes() throws(FileError) -> UInt64 { free.withLock { $0 } }
    func mountProblem(mount: String) -> String? { inner.mountProblem(mount: mount) }
    func switchDirectory(to path: String, mount: String) throws(StorageRefusal) -> Int { try inner.switchDirectory(to: path, mount: mount) }
}

@Suite("Sessions refused for free space end when their cause does: at a reload and at the storage check's period (booth's own clock)")
struct StorageRefusalTests {
    private func refusal(_ booth: TestBooth) -> String? { booth.runtime.statusSnapshot().storageRefusal }

    private func idleNotice(_ booth: TestBooth) -> String?? {
        if case let .idle(notice)? = booth.display.lastContent?.screen { return .some(notice) }
        return nil
    }

    @Test("storage.min_free lowered by a reload: the refusal ends at once, on screen and in status, without a press")
    func reloadEndsTheRefusal() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.storage.minFreeBytes = 1_000_000_000_000_000_000  // more than any disk
        let file = ReloadSource(settings)
        let booth = TestBooth(settings, reloaded: file, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.state.isIdle && refusal(booth) != nil }, "\(booth.logText)")
        booth.button.press()
        try #require(await eventually { booth.logged("press refused", "Storage almost full") }, "\(booth.logText)")

        file.settings.withLock { $0.storage.minFreeBytes = 0 }
        guard case .accepted = booth.runtime.requestReload() else { Issue.record("reload refused"); return }
        #expect(await eventually { refusal(booth) == nil }, "status still says sessions refused: \(booth.logText)")
        #expect(await eventually { idleNotice(booth) == .some(nil) }, "the idle screen still says why: \(String(describing: booth.display.lastContent))")
        #expect(booth.runtime.counters.sessions == 0, "no press was needed")
    }

    @Test("space freed (or used up) with no press and no reload: the storage check's period notices, both ways")
    func periodEndsAndBeginsTheRefusal() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.storage.minFreeBytes = 200_000_000
        let store = Mutex<FreeSpaceStore?>(nil)
        let booth = TestBooth(settings, clock: .startingNow(), photoStorage: { s in
            let made = FreeSpaceStore(s, free: 100_000_000)
            store.withLock { $0 = made }
            return made
        })
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.state.isIdle && refusal(booth) != nil }, "\(booth.logText)")
        let free = try #require(store.withLock { $0 })

        free.free.withLock { $0 = 1_000_000_000 }
        #expect(await booth.advance(untilMilliseconds: 15_000, stepMilliseconds: 1000) { refusal(booth) == nil },
                "still refused after 15 s of the booth's time with 1 GB free: \(booth.logText)")
        #expect(await eventually { idleNotice(booth) == .some(nil) }, "\(String(describing: booth.display.lastContent))")

        free.free.withLock { $0 = 50_000_000 }
        #expect(await booth.advance(untilMilliseconds: 15_000, stepMilliseconds: 1000) { refusal(booth) != nil },
                "not refused after 15 s of the booth's time with 50 MB free: \(booth.logText)")
        #expect(await eventually { (idleNotice(booth) ?? nil)?.contains("Storage almost full") == true },
                "the idle screen says why before anyone presses: \(String(describing: booth.display.lastContent))")
        #expect(booth.runtime.counters.sessions == 0)
    }

    @Test("a storage thread held (a disk hung in fsync) does not pile up free-space looks: one at most waits, however long it is held")
    func heldThreadQueuesOneLook() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = fastSettings(dir: dir)
        let store = FreeSpaceStore(settings.storage, free: 1_000_000_000)
        try store.prepare()
        let held = DispatchSemaphore(value: 0)
        let posted = Mutex(0)
        let worker = StorageWorker(store: store, captures: CaptureBox(), minFree: 0, clock: ManualClock(), log: LogRecorder().logger(),
                                   post: { e in
                                       guard case .storageStatus = e else { return }
                                       // The first look holds the thread, as a disk hung under a save would.
                                       if posted.withLock({ n in n += 1; return n }) == 1 { held.wait() }
                                   })
        worker.launch()
        let start = MonotonicInstant(nanoseconds: 1_000_000_000)
        worker.checkFreeSpaceIfDue(now: start)
        waitUntil(5) { posted.withLock { $0 } != 0 }
        try #require(posted.withLock { $0 } == 1)
        // An hour of the main loop's ticks while the thread is held.
        for n in 1...360 { worker.checkFreeSpaceIfDue(now: start.adding(milliseconds: Int64(n) * 10_000)) }
        held.signal()
        #expect(worker.finish(timeoutSeconds: 5))
        #expect(posted.withLock { $0 } <= 2, "\(posted.withLock { $0 }) looks at the free space run once the thread was free")
    }
}
