import BoothClock
import BoothStorage
import BoothSystem
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothGallery

/// The sync's look at its backlog: date folders listed instead of every picture opened, and rclone's
/// timeout kept by a thread waiting on a condition instead of a sleep-and-poll loop.
@Suite("GallerySync's look and its child process")
struct SyncLookTests {
    @Test("PhotoFolderListing lists a picture exactly when BeneathFile would open it (a linked date folder, a picture that is a link, a FIFO, a folder, missing, not DATE/NAME: not listed); storage.dir itself may be a link")
    func listingAgreesWithBeneathFile() throws {
        var template = Array("/tmp/photobooth-synclook-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/photos/2026-12-01/sub", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(dir)/elsewhere", withIntermediateDirectories: true)
        try AtomicFile.write([1, 2, 3], to: "\(dir)/photos/2026-12-01/a.jpg")
        try AtomicFile.write([4, 5], to: "\(dir)/elsewhere/b.jpg")
        try #require(symlink("\(dir)/elsewhere", "\(dir)/photos/2026-12-05") == 0)
        try #require(symlink("../../elsewhere/b.jpg", "\(dir)/photos/2026-12-01/b.jpg") == 0)
        try #require(mkfifo("\(dir)/photos/2026-12-01/fifo.jpg", 0o600) == 0)
        try #require(symlink("\(dir)/photos", "\(dir)/photos-link") == 0)
        let paths = ["2026-12-01/a.jpg", "2026-12-05/b.jpg", "2026-12-01/b.jpg", "2026-12-01/fifo.jpg", "2026-12-01/sub",
                     "2026-12-01/missing.jpg", "2026-12-09/a.jpg", "a.jpg", "2026-12-01/sub/x.jpg", "../elsewhere/b.jpg", "./2026-12-01"]
        for root in ["\(dir)/photos", "\(dir)/photos-link"] {
            var listing = PhotoFolderListing(photosDir: root)
            for path in paths {
                let opens: Bool
                do {
                    close(try BeneathFile.open(path, under: root).fd)
                    opens = true
                } catch {
                    opens = false
                }
                let listed = listing.lists(path)
                #expect(listed == opens, "\(path) under \(root): BeneathFile \(opens ? "opens" : "refuses") it")
            }
            let again = listing.lists("2026-12-01/a.jpg")
            #expect(again, "asked again: the folder's listing is kept")
        }
    }

    @Test("a child that outlives its timeout is sent SIGTERM by the timer thread (no sleep-and-poll); one that exits is collected at once with its code; its end is told before it is collected")
    func childProcessTimeoutAndExit() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("photobooth-child-\(getpid()).log").path
        defer { unlink(output) }
        let told = Mutex<[String]>([])
        let start = Date()
        let slow = ChildProcess.run(["/bin/sleep", "30"], environment: [], output: output, timeoutMilliseconds: 200,
                                    started: { _ in told.withLock { $0.append("started") } },
                                    reaped: { told.withLock { $0.append("reaped") } })
        #expect(slow == .timedOut)
        #expect(Date().timeIntervalSince(start) < 10, "killed at the timeout, not after 30 s")
        #expect(told.withLock { $0 } == ["started", "reaped"])
        let quick = Date()
        #expect(ChildProcess.run(["/bin/sh", "-c", "exit 3"], environment: [], output: output, timeoutMilliseconds: 60_000,
                                 started: { _ in }, reaped: {}) == .exited(3))
        #expect(Date().timeIntervalSince(quick) < 10, "an exit is seen when it happens, not at the 60 s timeout")
        #expect(ChildProcess.run(["/nonexistent/rclone"], environment: [], output: output, timeoutMilliseconds: 1000,
                                 started: { _ in }, reaped: {}) == .notStarted(ENOENT))
    }

    @Test("without a thread for the timeout (pthread_create failed) the child still runs to its end, and one that outlives its timeout is still killed")
    func childProcessWithoutTimerThread() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("photobooth-child-nothread-\(getpid()).log").path
        defer { unlink(output) }
        let noThread: (WorkerThread, @escaping @Sendable (WorkerThread) -> Void) -> Bool = { _, _ in false }
        let told = Mutex<[String]>([])
        // rclone that finishes well within its timeout: its own outcome, not a timeout.
        let done = ChildProcess.run(["/bin/sh", "-c", "sleep 0.3; exit 3"], environment: [], output: output, timeoutMilliseconds: 60_000,
                                    started: { _ in told.withLock { $0.append("started") } },
                                    reaped: { told.withLock { $0.append("reaped") } }, startTimer: noThread)
        #expect(done == .exited(3), "killed at once instead of run to its end")
        #expect(told.withLock { $0 } == ["started", "reaped"])
        let start = Date()
        let slow = ChildProcess.run(["/bin/sleep", "30"], environment: [], output: output, timeoutMilliseconds: 200,
                                    started: { _ in }, reaped: {}, startTimer: noThread)
        #expect(slow == .timedOut)
        #expect(Date().timeIntervalSince(start) < 10, "killed at the timeout, not after 30 s")
    }
}
