import BoothCore
import BoothPorts
import BoothPrint
import BoothRuntime
import BoothTestSupport
import Foundation
import Glibc
import Testing

/// A small tmpfs mounted at `path` (root only), unmounted by ``unmount()``.
struct SmallFileSystem {
    let path: String

    init(path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let (status, out) = run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard status == 0 else { throw CUPSStack.StackError(message: "mount -t tmpfs \(path) failed (\(status)): \(out)") }
    }

    func unmount() { run("/bin/umount", ["-l", path]) }

    /// Fills what is left with `filler-N` files (writes until ENOSPC); returns the bytes written.
    @discardableResult
    func fill() -> Int {
        let name = "\(path)/filler-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0xA5, count: 4096)
        var total = 0
        while true {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            total += n
        }
        return total
    }

    /// Removes every filler file.
    func free() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where name.hasPrefix("filler-") {
            unlink("\(path)/\(name)")
        }
    }
}

extension PrintWorkerCUPSTests {
    @Test("a full file system under the journal, spool and photos, with restarts: nothing is submitted without a journaled entry, pages are rendered once there is room, each picture reaches the printer exactly once")
    func diskFullRestarts() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let stack = try CUPSStack()
        defer { stack.stop() }
        let fs = try SmallFileSystem(path: stack.dir + "/small", megabytes: 24)
        defer { fs.unmount() }
        var settings = printSettings(dir: fs.path, queue: stack.queue)
        settings.backlog = .all
        // The saved pictures, on the same file system.
        try FileManager.default.createDirectory(atPath: "\(fs.path)/photos", withIntermediateDirectories: true)
        var photos: [UInt64: String] = [:]
        for i in UInt64(1)...6 {
            photos[i] = "\(fs.path)/photos/picture-\(i).jpg"
            _ = FileManager.default.createFile(atPath: photos[i] ?? "", contents: Data(photo))
        }
        let logs = LogLines()
        let clock = ManualWallClock()
        func start() -> PrintWorker {
            let w = PrintWorker(settings: settings, log: logs.logger(), now: { clock.now })
            w.launch()
            return w
        }
        func ask(_ w: PrintWorker, _ i: UInt64) {
            w.noteSaved(captureID: i, path: photos[i] ?? "")
            w.request(jpeg: photo, captureID: i, source: "session \(i)")
        }
        func onDisk() -> PrintJournal? {
            FileManager.default.contents(atPath: settings.journal).flatMap { try? PrintJournal.decode($0) }
        }
        func polls(_ w: PrintWorker, _ n: Int) async -> Bool {
            let p = w.polls
            return await eventually { w.polls >= p + n }
        }
        var worker = start()
        // 1, 2: room for everything: printed.
        ask(worker, 1)
        ask(worker, 2)
        #expect(await eventually { worker.journal.requests.map(\.state) == [.completed, .completed] }, "\(logs.text)")
        // 3, 4: held while the queue is paused, journaled; then the file system fills.
        #expect(stack.lp("cupsdisable", [stack.queue]) == 0)
        #expect(await eventually { worker.status().reasons.contains("paused") })
        ask(worker, 3)
        ask(worker, 4)
        // Journaled at once (the pictures are saved); their pages written before the disk fills.
        #expect(await eventually { onDisk()?.held.filter { $0.renderPending != true }.count == 2 }, "\(logs.text)")
        fs.fill()
        // 5, 6 asked for on the full disk: their pages cannot be written; the journal's reserve
        // makes room for the journal, which names the saved pictures to render them from.
        ask(worker, 5)
        ask(worker, 6)
        #expect(await eventually { onDisk()?.requests.filter { $0.renderPending == true }.count == 2 }, "\(logs.text)")
        #expect(onDisk()?.requests.last?.photo == photos[6])
        // The room the reserve gave is taken too: nothing can be written now. The queue comes back.
        fs.fill()
        #expect(stack.lp("cupsenable", [stack.queue]) == 0)
        #expect(await eventually { worker.health.allowsSubmission }, "\(worker.status())")
        #expect(await polls(worker, 5))
        #expect(stack.printed().count == 2, "submitted without a journaled entry:\n\(logs.text)")
        #expect(try stack.jobs().count == 2)
        #expect(logs.contains("not submitted: the journal could not be written"), "\(logs.text)")
        // Restart 1, still full.
        worker.stop()
        worker = start()
        #expect(await polls(worker, 5))
        #expect(stack.printed().count == 2, "\(logs.text)")
        // Room again: 3 and 4 print, 5 and 6 are rendered from their saved pictures. Restart 2 in the middle.
        fs.free()
        #expect(await eventually { stack.printed().count >= 3 }, "\(logs.text)")
        worker.stop()
        worker = start()
        #expect(await eventually { worker.journal.requests.count == 6 && worker.journal.requests.allSatisfy { $0.state == .completed } },
                "\(worker.journal.requests.map { "\($0.id) \($0.state) \($0.note ?? "")" })\n\(logs.text)")
        // Restart 3: nothing is sent again.
        worker.stop()
        worker = start()
        #expect(await polls(worker, 5))
        worker.stop()
        let names = stack.printed().map { $0.options["IPP_JOB_NAME"] ?? "?" }
        let titles = worker.journal.requests.map(\.title)
        #expect(names.count == 6, "\(names.count) documents at the printer for 6 pictures: \(names)")
        #expect(Set(names) == Set(titles) && Set(names).count == names.count, "each picture exactly once: \(names) vs \(titles)")
        #expect(worker.journal.requests.map(\.source) == (1...6).map { "session \($0)" })
    }
}

@Suite("Print journal recovery without CUPS")
struct PrintJournalRecoveryTests {
    @Test("a page in the spool whose request the journal never recorded (written while the journal could not be) is held again at start, same id and job name")
    func orphanedPageIsRecovered() throws {
        let photo = try #require(samplePhoto(), "no sample photo")
        let dir = NSTemporaryDirectory() + "photobooth-print-orphan-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let settings = printSettings(dir: dir, queue: "booth-nowhere")
        try FileManager.default.createDirectory(atPath: settings.spool, withIntermediateDirectories: true)
        var journal = PrintJournal(tag: "abcd1234")
        _ = journal.add(captureID: nil, source: "session 1", file: "\(settings.spool)/print-abcd1234-1.jpg", copies: 1,
                        media: settings.media, now: 1)
        _ = FileManager.default.createFile(atPath: settings.journal, contents: try JSONEncoder().encode(journal))
        for name in ["print-abcd1234-1.jpg", "print-abcd1234-2.jpg", "print-other-7.jpg", ".tmp-print-abcd1234-3.jpg.99"] {
            _ = FileManager.default.createFile(atPath: "\(settings.spool)/\(name)", contents: Data(photo))
        }
        let logs = LogLines()
        let worker = PrintWorker(settings: settings, log: logs.logger())
        let requests = worker.journal.requests
        #expect(requests.map(\.id) == [1, 2], "\(logs.text)")
        #expect(requests.last?.state == .held)
        #expect(requests.last?.title == "photobooth-abcd1234-2")
        #expect(requests.last?.file == "\(settings.spool)/print-abcd1234-2.jpg")
        #expect(worker.journal.nextID == 3)
        #expect(!FileManager.default.fileExists(atPath: "\(settings.spool)/.tmp-print-abcd1234-3.jpg.99"), "leftover temp removed")
        #expect(logs.contains("print 2", "found in the spool but not in the journal"))
    }
}
