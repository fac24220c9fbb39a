import BoothCore
import BoothPorts
import BoothPrint
import BoothTestSupport
import Foundation
import Glibc
import Testing

// A print print.mode promises is journaled with the picture's save, on the saving thread, before its
// page is rendered: a kill after `saved` cannot lose it (hardware/system-tests/print-kill-test.sh kills
// a real booth; these check the pieces). No CUPS needed: the queue does not exist.

@Suite("Prints journaled with the picture's save")
struct PrintPromiseTests {
    func tempDir() -> String {
        let d = NSTemporaryDirectory() + "print-promise-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    func onDisk(_ s: Settings.Print) -> PrintJournal? {
        FileManager.default.contents(atPath: s.journal).flatMap { try? PrintJournal.decode($0) }
    }

    @Test("a promise is a held request whose page is rendered from the saved picture; one per picture")
    func journalPromise() {
        var j = PrintJournal(tag: "t")
        let code = PageCode(text: "https://booth/p/x", corner: .bottomRight)
        let r = j.promise(captureID: 7, source: "session 3", photo: "/p/booth-3-1.jpg", spool: "/spool", copies: 2,
                          media: "na_index-4x6_4x6in", code: code, now: 100)
        #expect(r?.state == .held)
        #expect(r?.renderPending == true)
        #expect(r?.photo == "/p/booth-3-1.jpg")
        #expect(r?.file == "/spool/print-t-1.jpg")
        #expect(r?.codeText == code.text)
        #expect(r?.copies == 2)
        #expect(j.requests == [r].compactMap { $0 })
        // Not submitted before its page is written.
        #expect(j.toSubmit(pendingLimit: 5, health: .ready).isEmpty)
        // A second promise (or one after the request) for the same picture adds nothing.
        #expect(j.promise(captureID: 7, source: "session 3", photo: "/p/booth-3-1.jpg", spool: "/spool", copies: 1,
                          media: "na_index-4x6_4x6in", code: nil, now: 101) == nil)
        #expect(j.requests.count == 1)
    }

    @Test("noteSaved with a promise writes the journal before it returns, on the calling thread (no print thread)")
    func promiseIsDurableWithTheSave() throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = printSettings(dir: dir, queue: "nowhere")
        let writer = HeldJournalWriter()
        // Never launched: no print thread, so nothing but this call can write the journal.
        let worker = PrintWorker(settings: s, log: LogLines().logger(), journalWriter: { try writer.write($0, $1) })
        worker.noteSaved(captureID: 4, path: "\(dir)/booth-000002-1.jpg", promise: PrintPromise(source: "session 2", code: nil))
        let journal = try #require(onDisk(s), "no journal written by noteSaved")
        #expect(writer.writes.count == 1)
        let r = try #require(journal.requests.first)
        #expect(journal.requests.count == 1)
        #expect(r.source == "session 2" && r.state == .held && r.renderPending == true)
        #expect(r.photo == "\(dir)/booth-000002-1.jpg")
        // A picture saved without a promise journals nothing.
        worker.noteSaved(captureID: 5, path: "\(dir)/booth-000003-1.jpg", promise: nil)
        #expect(writer.writes.count == 1)
    }

    @Test("a skip before the save keeps the picture from being promised")
    func skippedIsNotPromised() {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = printSettings(dir: dir, queue: "nowhere")
        let worker = PrintWorker(settings: s, log: LogLines().logger())
        worker.skip(captureID: 4)
        worker.noteSaved(captureID: 4, path: "\(dir)/booth-000002-1.jpg", promise: PrintPromise(source: "session 2", code: nil))
        #expect(worker.journal.requests.isEmpty)
        #expect(onDisk(s) == nil)
    }

    /// A promise journaled with its save waited, in memory, for the runtime's request to render its page; when none
    /// came (the session ended at the compose deadline just after the picture's save, or the picture could not be
    /// read back) it stayed held and unrendered for the whole run, printed only after a restart.
    @Test("a promise whose request never comes is rendered from its picture after a while")
    func promiseWithoutRequestIsRendered() async throws {
        let photo = try #require(samplePhoto(), "no sample photo")
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = printSettings(dir: dir, queue: "nowhere")
        let path = "\(dir)/booth-000002-1.jpg"
        try Data(photo).write(to: URL(fileURLWithPath: path))
        let clock = ManualClock()
        let worker = PrintWorker(settings: s, log: LogLines().logger(), clock: clock)
        worker.noteSaved(captureID: 4, path: path, promise: PrintPromise(source: "session 2", code: nil))
        worker.launch()
        defer { worker.stop() }
        try await Task.sleep(nanoseconds: 600_000_000)
        #expect(worker.journal.requests.first?.renderPending == true, "the runtime's request is awaited at first")
        clock.advance(milliseconds: 120_000)
        #expect(await eventually(timeoutSeconds: 10) { worker.journal.requests.first?.renderPending == nil }, "\(worker.journal.requests)")
        let r = try #require(worker.journal.requests.first)
        #expect(r.state == .held && FileManager.default.fileExists(atPath: r.file))
    }

    @Test("the runtime's request renders the promised print (one request); a restart renders a promise from its picture")
    func requestBindsAndRestartRenders() async throws {
        let photo = try #require(samplePhoto(), "no sample photo")
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = printSettings(dir: dir, queue: "nowhere")
        let path = "\(dir)/booth-000002-1.jpg"
        try Data(photo).write(to: URL(fileURLWithPath: path))
        do {
            let worker = PrintWorker(settings: s, log: LogLines().logger())
            worker.noteSaved(captureID: 4, path: path, promise: PrintPromise(source: "session 2", code: nil))
            worker.launch()
            defer { worker.stop() }
            let code = PageCode(text: "https://booth/p/abc", corner: .bottomRight)
            worker.request(jpeg: photo, captureID: 4, source: "session 2", graceMilliseconds: 0, code: code)
            #expect(await eventually { worker.journal.requests.first?.renderPending == nil })
            let r = try #require(worker.journal.requests.first)
            #expect(worker.journal.requests.count == 1)
            #expect(r.state == .held && r.codeText == code.text)
            #expect(FileManager.default.fileExists(atPath: r.file))
        }
        // Killed between the save and the request: the journal holds the promise alone.
        try? FileManager.default.removeItem(atPath: s.journal)
        try? FileManager.default.removeItem(atPath: s.spool)
        let before = PrintWorker(settings: s, log: LogLines().logger())
        before.noteSaved(captureID: 9, path: path, promise: PrintPromise(source: "session 3", code: nil))
        let restarted = PrintWorker(settings: s, log: LogLines().logger())
        restarted.launch()
        defer { restarted.stop() }
        #expect(await eventually { restarted.journal.requests.first?.renderPending == nil })
        let r = try #require(restarted.journal.requests.first)
        #expect(r.source == "session 3" && r.state == .held)
        #expect(FileManager.default.fileExists(atPath: r.file))
    }
}
