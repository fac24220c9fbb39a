import BoothClock
import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage

// The runtime's side of storage: the storage worker, the event loop's timers, the log's lines, and session
// numbers across restarts of a whole booth (BoothStorageTests has the photo store's own tests).

@Suite struct StorageWorkerTests {
    @Test func storageWorkerReportsSavedOnceWithAWarning() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        // Every directory fsync fails (EIO): the file is in place, its durability not confirmed.
        let store = PhotoStore(directory: dir, dateFolder: { "2026-11-29" },
                               syncDirectory: { dir throws(FileError) in throw FileError(call: "fsync", errno: EIO, path: dir) })
        try store.prepare()
        let captures = CaptureBox(), events = Mutex<[BoothEvent]>([]), logs = LogRecorder()
        let worker = StorageWorker(store: store, captures: captures, minFree: 0, clock: ManualClock(),
                                   log: logs.logger(), post: { e in events.withLock { $0.append(e) } })
        let now = MonotonicInstant(nanoseconds: 1_000_000_000)
        captures.put(CaptureRecord(id: 1, session: 1, shot: 1, jpeg: [0xFF, 0xD8, 0xFF, 0xD9], trigger: now,
                                   frameTimestamp: now, readyAt: now, size: FrameSize(width: 16, height: 16),
                                   format: .mjpeg, passedThrough: true))
        worker.launch()
        worker.save(captureID: 1)
        worker.retry()  // what the machine does after a storage fault: it must find nothing to write again
        #expect(worker.finish(timeoutSeconds: 5))
        let posted = events.withLock { $0 }
        #expect(posted.contains { if case .saved(1, "\(dir)/2026-11-29/booth-000001-1.jpg") = $0 { true } else { false } })
        #expect(!posted.contains { if case .saveFailed = $0 { true } else { false } })
        #expect(listDirectory("\(dir)/2026-11-29") == ["booth-000001-1.jpg"], "never a second copy")
        #expect(captures.heldIDs.isEmpty)
        #expect(logs.all.contains { $0.hasPrefix("<4>") && $0.contains("durability") && $0.contains("not confirmed") })
    }
}

@Suite struct EventLoopTests {
    @Test func timersFireInDeadlineOrderWithTheirDeadline() {
        let clock = ManualClock()
        let loop = EventLoop(clock: clock)
        let t0 = clock.now()
        loop.schedule(token: 2, milliseconds: 200)
        loop.schedule(token: 1, milliseconds: 100)
        #expect(loop.drain().isEmpty)
        clock.advance(milliseconds: 150)
        #expect(loop.drain() == [.timer(token: 1, at: t0.adding(milliseconds: 100))])
        loop.post(.shutdown)
        clock.advance(milliseconds: 100)
        #expect(loop.drain() == [.shutdown, .timer(token: 2, at: t0.adding(milliseconds: 200))])
        #expect(loop.drain().isEmpty)
    }

    @Test("the machine's timer replaces earlier token timers; delayed events stay")
    func replacingTokenTimers() {
        let clock = ManualClock()
        let loop = EventLoop(clock: clock)
        let t0 = clock.now()
        loop.post(.longPress(id: 3), afterMilliseconds: 400)
        for token in UInt64(1)...1000 { loop.scheduleReplacingEarlierTokens(token: token, milliseconds: 300_000) }
        loop.scheduleReplacingEarlierTokens(token: 1001, milliseconds: 100)
        #expect(loop.pendingTimerCount == 2, "one token timer and the delayed event, not 1,002 timers")
        clock.advance(milliseconds: 400)
        #expect(loop.drain() == [.timer(token: 1001, at: t0.adding(milliseconds: 100)), .longPress(id: 3)])
        clock.advance(milliseconds: 300_000)
        #expect(loop.drain().isEmpty, "the replaced five-minute timers never fire")
    }

    @Test func delayedEvents() {
        let clock = ManualClock()
        let loop = EventLoop(clock: clock)
        loop.post(.longPress(id: 3), afterMilliseconds: 50)
        clock.advance(milliseconds: 49)
        #expect(loop.drain().isEmpty)
        clock.advance(milliseconds: 1)
        #expect(loop.drain() == [.longPress(id: 3)])
    }
}

@Suite struct LoggerTests {
    @Test func prefixesEachLineWithItsPriority() {
        let rec = LogRecorder()
        let log = rec.logger(threshold: .info)
        log.info("state: idle -> preview")
        log.debug("hidden")
        log.error("two\nlines")
        #expect(rec.all == ["<6>state: idle -> preview", "<3>two", "<3>lines"])
    }
}

@Suite struct SessionNumberRuntimeTests {
    @Test("restarts alternating between two photos folders (A 1,2; B; A; B): no session number is handed out twice, and each folder's file says the highest")
    func numbersNeverRepeatAcrossRestartsInTwoFolders() async throws {
        let root = makeTempDir(); defer { removeTree(root) }
        var seen: [String] = []
        // One run of the booth with storage.dir = `folder`: `sessions` sessions; the files it saved.
        func run(_ folder: String, sessions: Int) async throws -> [String] {
            var settings = fastSettings(dir: root)
            settings.storage.dir = "\(root)/\(folder)"
            let booth = TestBooth(settings, clock: .startingNow())
            booth.start()
            defer { booth.shutdownAndWait() }
            try #require(await eventually { booth.camera.isStreaming }, "\(booth.logText)")
            for n in 1...sessions {
                booth.button.press()
                try #require(await booth.finishSession(completed: n), "\(booth.logText)")
            }
            // Every save done before the files are counted.
            booth.shutdownAndWait()
            return savedCaptures(in: settings.storage.dir)
        }
        for (folder, sessions) in [("A", 2), ("B", 2), ("A", 1), ("B", 1)] {
            let before = Set(seen)
            let all = try await run(folder, sessions: sessions)
            let new = all.filter { !before.contains($0) }
            #expect(new.count == sessions, "\(folder): \(all)")
            seen += new
        }
        let numbers = seen.compactMap { PhotoStore.sessionNumber(inFileName: String($0.split(separator: "/").last ?? "")) }
        #expect(numbers == [1, 2, 3, 4, 5, 6], "\(seen)")
        #expect(try AtomicFile.read("\(root)/A/\(PhotoStore.sessionFileName)").starts(with: Array("000000000000005".utf8)))
    }

    @Test("a garbage .photobooth-session is warned of, naming the file, what it holds and the number used")
    func garbageSessionFileIsWarnedOf() async throws {
        let root = makeTempDir(); defer { removeTree(root) }
        let settings = fastSettings(dir: root)
        try makeDirectories("\(settings.storage.dir)/2026-11-29")
        try AtomicFile.write([1], to: "\(settings.storage.dir)/2026-11-29/booth-000007-1.jpg")
        try AtomicFile.write(Array("x7 not a number\n".utf8), to: "\(settings.storage.dir)/\(PhotoStore.sessionFileName)")
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.logged("storage: \(settings.storage.dir), next session 8") }, "\(booth.logText)")
        #expect(await eventually {
            booth.logged("<4>", "storage: \(settings.storage.dir)/\(PhotoStore.sessionFileName) holds \"x7 not a number\\n\", not a session number",
                         "ignored; next session 8")
        }, "\(booth.logText)")
    }
}
