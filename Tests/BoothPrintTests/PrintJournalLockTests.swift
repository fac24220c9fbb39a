import BoothCore
import BoothPorts
import BoothPrint
import BoothRuntime
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

// The journal's durable write (encode, write, fsync, rename) runs without the lock the main loop
// takes: a write held indefinitely does not hold up the loop's calls. No CUPS needed (print.mode off).

/// A journal writer the test can hold: while held, a write waits (as a stalled fsync would).
final class HeldJournalWriter: Sendable {
    private let state = Mutex<(hold: Bool, waiting: Int, writes: [[UInt8]])>((false, 0, []))

    func hold(_ on: Bool) { state.withLock { $0.hold = on } }
    /// Writes waiting right now.
    var waiting: Int { state.withLock { $0.waiting } }
    /// Every journal written, in order.
    var writes: [[UInt8]] { state.withLock { $0.writes } }

    func write(_ bytes: [UInt8], _ path: String) throws {
        state.withLock { $0.waiting += 1 }
        while state.withLock({ $0.hold }) { usleep(1_000) }
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        state.withLock { $0.waiting -= 1; $0.writes.append(bytes) }
    }
}

@Suite("Print journal writes and the main loop's lock")
struct PrintJournalLockTests {
    func settings(_ dir: String) -> Settings.Print {
        var p = printSettings(dir: dir, queue: "nowhere")
        p.mode = .off
        return p
    }

    func tempDir() -> String {
        let d = NSTemporaryDirectory() + "journal-lock-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    @Test("a journal write held on the print thread does not block request, skip, noteSaved, reviewText, status or health")
    func loopNeverWaitsForTheDisk() async throws {
        let photo = try #require(samplePhoto(), "no sample photo")
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = HeldJournalWriter()
        let s = settings(dir)
        let worker = PrintWorker(settings: s, log: LogLines().logger(), journalWriter: { try writer.write($0, $1) })
        worker.launch()
        defer { writer.hold(false); worker.stop() }
        writer.hold(true)
        worker.request(jpeg: photo, captureID: 1, source: "session 1")
        // The print thread rendered the page and is now inside the journal write, held.
        #expect(await eventually(timeoutSeconds: 20) { writer.waiting == 1 })
        // The main loop's calls, from another thread, all return while the write is still held.
        let done = Box(false)
        let seen = Box<(String?, PrinterStatus?)>((nil, nil))
        let loop = Thread {
            worker.noteSaved(captureID: 1, path: "\(dir)/photo-1.jpg")
            let text = worker.reviewText(captureID: 1)
            let status = worker.status()
            _ = worker.health
            worker.request(jpeg: photo, captureID: 2, source: "session 2")
            worker.skip(captureID: 2)
            seen.set((text, status))
            done.set(true)
        }
        loop.start()
        #expect(await eventually(timeoutSeconds: 10) { done.get }, "a loop call waited for the held journal write")
        #expect(writer.waiting == 1, "the write is still held")
        #expect(writer.writes.isEmpty)
        // In memory the request is there already; on disk it is not yet.
        #expect(seen.get.0 == "Waiting to print…")
        #expect(seen.get.1?.held == 1)
        #expect(!FileManager.default.fileExists(atPath: s.journal))
        writer.hold(false)
        // Released: the journal on disk catches up with memory (request 1 held, request 2 skipped).
        func onDisk() -> PrintJournal? {
            FileManager.default.contents(atPath: s.journal).flatMap { try? JSONDecoder().decode(PrintJournal.self, from: $0) }
        }
        #expect(await eventually(timeoutSeconds: 20) {
            onDisk()?.requests.map(\.state) == [.held, .cancelled] && onDisk() == worker.journal
        }, "\(String(describing: onDisk()))")
    }

    @Test("concurrent changes from several threads: the journal on disk ends as the newest, never an older snapshot")
    func newestWins() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = HeldJournalWriter()
        let s = settings(dir)
        let worker = PrintWorker(settings: s, log: Logger(threshold: .error) { _ in }, journalWriter: { try writer.write($0, $1) })
        let finished = Box(0)
        for t in 0..<6 {
            Thread {
                for i in 0..<25 { worker.refill(sheets: t * 100 + i) }
                finished.update { $0 += 1 }
            }.start()
        }
        #expect(await eventually(timeoutSeconds: 60) { finished.get == 6 })
        let disk = try #require(FileManager.default.contents(atPath: s.journal).flatMap { try? JSONDecoder().decode(PrintJournal.self, from: $0) })
        #expect(disk == worker.journal)
        #expect(disk.sheetsRemaining.map { $0 % 100 } == 24, "the last refill of some thread")
        // Writes that would only repeat a newer journal are skipped, never written after it.
        #expect(writer.writes.count <= 150)
    }
}
