import BoothControl
import BoothCore
import BoothPorts
import BoothPrint
import BoothTestSupport
import Foundation
import Glibc
import Testing

// Issue #35's print faults: a failing job burned the held backlog; test-print queued files it could
// not print and printed with print.mode off; refill took any number; 0 sheets read as paper-low;
// `printed` fell at a purge; "Waiting to print…" during the press-mode grace.

@Suite("Print journal: failed jobs, counts, the review's words")
struct PrintJournalFailureTests {
    func journal(_ n: Int) -> PrintJournal {
        var j = PrintJournal(tag: "t")
        for i in 1...n {
            _ = j.add(captureID: UInt64(i), source: "session \(i)", file: "/spool/\(i).jpg", copies: 1, media: "m", now: Double(i))
        }
        return j
    }

    @Test("a job cancelled at the printer holds its request again under a new title and stops submission until a job completes or a resume")
    func failedJobStopsSubmission() {
        var j = journal(4)
        j.requests[0].state = .submitted; j.requests[0].jobID = 11
        let changes = j.reconcile(jobs: [CUPSJob(id: 11, state: .cancelled, title: j.requests[0].title)], sheetsPerCopy: 1, now: 10)
        #expect(changes.count == 1)
        #expect(j.requests.map(\.state) == [.held, .held, .held, .held], "nothing lost")
        #expect(j.requests[0].failedJobs == 1 && j.requests[0].jobID == nil)
        #expect(j.requests[0].title == "photobooth-t-1-1", "a new title: the failed job's is not taken for it again")
        #expect(j.failedJobs == 1)
        #expect(j.stoppedAfterFailure == "print 1's job 11 cancelled at the printer")
        #expect(j.toSubmit(pendingLimit: 4, health: .ready).isEmpty, "the backlog waits")
        // The same failed job seen again changes nothing.
        #expect(j.reconcile(jobs: [CUPSJob(id: 11, state: .cancelled, title: "photobooth-t-1")], sheetsPerCopy: 1, now: 11).isEmpty)
        #expect(j.resume() == "print 1's job 11 cancelled at the printer")
        #expect(j.toSubmit(pendingLimit: 4, health: .ready).map(\.id) == [1, 2, 3, 4])
        // Aborted the same; a job that completes after it proves the printer.
        j.requests[1].state = .submitted; j.requests[1].jobID = 12
        j.requests[2].state = .submitted; j.requests[2].jobID = 13
        _ = j.reconcile(jobs: [CUPSJob(id: 12, state: .aborted, title: j.requests[1].title),
                               CUPSJob(id: 13, state: .processing, title: j.requests[2].title)], sheetsPerCopy: 1, now: 12)
        #expect(j.stoppedAfterFailure == "print 2's job 12 aborted at the printer")
        #expect(j.failedJobs == 2)
        _ = j.reconcile(jobs: [CUPSJob(id: 13, state: .completed, title: j.requests[2].title)], sheetsPerCopy: 1, now: 13)
        #expect(j.stoppedAfterFailure == nil)
        #expect(j.printed == 1)
    }

    @Test("a request whose job fails at the printer a second time (after a resume, the printer still failing) is held again, not finished")
    func secondFailureHeldAgain() {
        var j = journal(2)
        j.requests[0].state = .submitted; j.requests[0].jobID = 11
        _ = j.reconcile(jobs: [CUPSJob(id: 11, state: .cancelled, title: j.requests[0].title)], sheetsPerCopy: 1, now: 10)
        _ = j.resume()
        j.requests[0].state = .submitted; j.requests[0].jobID = 12
        _ = j.reconcile(jobs: [CUPSJob(id: 12, state: .cancelled, title: j.requests[0].title)], sheetsPerCopy: 1, now: 11)
        #expect(j.requests[0].state == .held, "the failed request stays held, not lost")
        #expect(j.requests[0].failedJobs == 2 && j.requests[0].title == "photobooth-t-1-2")
        #expect(j.failedJobs == 2)
        #expect(j.stoppedAfterFailure == "print 1's job 12 cancelled at the printer")
    }

    /// `prints reprint` with print.mode off answered `request N reprints M`, exit 0, and printed nothing, then printed
    /// it whenever printing was next on (days later, at another event): the surprise print test-print was refused for.
    @Test("prints reprint with print.mode off is refused, nothing journaled")
    func reprintWithPrintingOff() throws {
        let dir = NSTemporaryDirectory() + "reprint-off-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir + "/prints", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var s = printSettings(dir: dir, queue: "nowhere")
        s.mode = .off
        var j = PrintJournal(tag: "t")
        _ = j.add(captureID: 1, source: "session 1", file: "\(dir)/prints/print-t-1.jpg", copies: 1, media: s.media, now: 1)
        j.requests[0].state = .completed
        try Data("page".utf8).write(to: URL(fileURLWithPath: j.requests[0].file))
        try JSONEncoder().encode(j).write(to: URL(fileURLWithPath: s.journal))
        let worker = PrintWorker(settings: s, log: LogLines().logger())
        #expect(worker.journal.requests.count == 1, "the journal was read")
        switch worker.reprint(requestID: 1) {
        case .success(let id): Issue.record("reprint \(id) journaled with printing off")
        case .failure(let refusal): #expect(refusal.code == "printing-off", "\(refusal)")
        }
        #expect(worker.journal.requests.count == 1)
    }

    @Test("a job the booth cancelled (skip, operator) is not a failure")
    func boothCancelIsNoFailure() {
        var j = journal(1)
        j.requests[0].state = .submitted; j.requests[0].jobID = 11; j.requests[0].note = "skipped by a long press"
        _ = j.reconcile(jobs: [CUPSJob(id: 11, state: .cancelled, title: j.requests[0].title)], sheetsPerCopy: 1, now: 10)
        #expect(j.requests[0].state == .cancelled)
        #expect(j.stoppedAfterFailure == nil && j.failedJobs == nil)
        #expect(reviewPrintText(health: .ready, request: j.requests[0]) == "Not printing")
    }

    @Test("the review reads a failure as a failure; a print waiting out the press-mode grace with nothing ahead reads Printing…")
    func reviewWords() {
        var r = PrintRequest(id: 1, captureID: 1, source: "session 1", file: "", copies: 1, media: "m", requestedAt: 0, title: "t")
        r.state = .cancelled
        r.note = PrintJournal.cancelledAtPrinter
        #expect(reviewPrintText(health: .ready, request: r) == "Printing failed — your photo is saved")
        r.state = .held
        r.note = nil
        let stopped = PrinterHealth.unavailable(reasons: ["job-failed"], message: "printing stopped")
        #expect(reviewPrintText(health: stopped, request: r) == "Printer needs attention — your photo is saved")
        r.failedJobs = 1
        #expect(reviewPrintText(health: stopped, request: r) == "Printing failed — your photo is saved")
        #expect(reviewPrintText(health: .ready, request: r) == "Printing failed — your photo is saved")
        r.failedJobs = nil
        #expect(reviewPrintText(health: .ready, request: r) == "Waiting to print…")
        #expect(reviewPrintText(health: .ready, request: r, sentNext: true) == "Printing…")
    }

    @Test("printed counts every completed job: a purge or forgotten requests do not lower it")
    func printedSurvivesPurge() throws {
        var j = journal(2)
        for i in 0..<2 { j.requests[i].state = .submitted; j.requests[i].jobID = 10 + i }
        _ = j.reconcile(jobs: [CUPSJob(id: 10, state: .completed, title: j.requests[0].title),
                               CUPSJob(id: 11, state: .completed, title: j.requests[1].title)], sheetsPerCopy: 1, now: 5)
        #expect(j.printed == 2)
        #expect(j.purge() == 2)
        #expect(j.printed == 2)
        let again = try PrintJournal.decode(try JSONEncoder().encode(j))
        #expect(again.printed == 2)
    }
}

extension PrintWorkerCUPSTests {
    @Test("a failing printer costs one job: the held backlog stays held, status counts the failure, resume sends them once mended")
    func failingJobKeepsBacklog() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let rig = try PrintRig { $0.pendingLimit = 1 }
        defer { rig.stop() }
        #expect(rig.stack.lp("cupsdisable", [rig.stack.queue]) == 0)
        #expect(await eventually { rig.worker.status().reasons.contains("paused") })
        for i in UInt64(1)...4 { rig.worker.request(jpeg: photo, captureID: i, source: "session \(i)") }
        #expect(await eventually { rig.states() == [.held, .held, .held, .held] && rig.worker.journal.requests.allSatisfy { $0.renderPending == nil } },
                "\(rig.logs.text)")
        rig.stack.setJobMode("fail")
        #expect(rig.stack.lp("cupsenable", [rig.stack.queue]) == 0)
        #expect(await eventually { rig.worker.status().failed == 1 }, "\(rig.worker.status())\n\(rig.logs.text)")
        #expect(await eventually { rig.worker.status().reasons.contains("job-failed") }, "\(rig.worker.status())")
        let polls = rig.worker.polls
        #expect(await eventually { rig.worker.polls >= polls + 5 })
        #expect(rig.stack.printed().count == 1, "one job sent to the failing printer, not the backlog")
        #expect(rig.states() == [.held, .held, .held, .held], "\(rig.logs.text)")
        #expect(rig.worker.status().failed == 1)
        // The one whose job failed reads as a failure; the three never tried wait on the operator.
        let words = (UInt64(1)...4).map { rig.worker.reviewText(captureID: $0) }
        #expect(words.filter { $0 == "Printing failed — your photo is saved" }.count == 1, "\(words)")
        #expect(words.filter { $0 == "Printer needs attention — your photo is saved" }.count == 3, "\(words)")
        // Mended, resumed: all four print, once each.
        rig.stack.setJobMode("ok")
        #expect(rig.worker.resume() != nil)
        #expect(await eventually { rig.states() == [.completed, .completed, .completed, .completed] }, "\(rig.logs.text)")
        #expect(rig.stack.printed().count == 5)
        #expect(rig.worker.status().completed == 4)
        #expect(rig.worker.status().failed == 1)
    }

    @Test("print.mode off: a request journaled before (an earlier run's) is not printed; 0 sheets counted reads paper-out")
    func offPrintsNothing() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let rig = try PrintRig { $0.mode = .off }
        defer { rig.stop() }
        rig.worker.request(jpeg: photo, captureID: nil, source: "test print")
        #expect(await eventually { rig.states() == [.held] })
        let polls = rig.worker.polls
        #expect(await eventually { rig.worker.polls >= polls + 5 }, "\(rig.logs.text)")
        #expect(rig.stack.printed().isEmpty, "\(rig.logs.text)")
        #expect(try rig.stack.jobs().isEmpty)
        #expect(rig.states() == [.held])
        #expect(rig.logs.contains("print.mode is off: 1 held request not printed"), "\(rig.logs.text)")
        // 0 sheets with nothing it could print: out of paper, not low.
        rig.worker.refill(sheets: 0)
        #expect(await eventually { rig.worker.status().reasons.contains("paper-out") }, "\(rig.worker.status())")
        #expect(!rig.worker.status().reasons.contains("paper-low"))
        #expect(rig.worker.status().health == "unavailable")
        #expect(rig.logs.contains("paper refilled: 0 sheets"))
        rig.worker.refill(sheets: 1)
        #expect(rig.logs.contains("paper refilled: 1 sheet\n") || rig.logs.text.hasSuffix("paper refilled: 1 sheet"), "\(rig.logs.text)")
    }

    @Test("photoboothctl: test-print refuses an empty, PNG or garbage file naming it, and with print.mode off; refill within print.sheets' range; 1 sheet; a press that prints says so")
    func testPrintAndRefillRefusals() async throws {
        guard let (daemon, ctlPath) = builtDaemonAndCtl() else { return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let stack = try CUPSStack()
        defer { stack.stop() }
        let dir = stack.dir
        let env = ["CUPS_SERVER": stack.server]
        func start(_ mode: String) -> pid_t {
            spawn(daemon, printingDaemonArguments(stack, mode: mode, ["session.preview=0s", "session.countdown=0s", "session.review=5min"]),
                  env: env, output: "\(dir)/daemon-\(mode).log")
        }
        func ctl(_ args: String...) -> (status: Int32, out: String) { run(ctlPath, args + ["--socket", "\(dir)/control"], env: env) }
        func list() -> PrintsReply? { decodeJSON(PrintsReply.self, ctl("prints", "list", "--json").out) }
        let good = "\(dir)/guest.jpg", png = "\(dir)/guest.png", garbage = "\(dir)/garbage.jpg", empty = "\(dir)/empty.jpg"
        _ = FileManager.default.createFile(atPath: good, contents: Data(photo))
        _ = FileManager.default.createFile(atPath: png, contents: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 7, count: 64)))
        _ = FileManager.default.createFile(atPath: garbage, contents: Data("not a picture at all\n".utf8))
        _ = FileManager.default.createFile(atPath: empty, contents: Data())

        // print.mode off: refused, nothing journaled; not printed at a start with printing off either.
        var pid = start("off")
        try #require(pid > 0)
        #expect(await eventually { ctl("status").status == 0 })
        let off = ctl("test-print", good)
        #expect(off.status == 78, "\(off.out)")
        #expect(off.out.contains("print.mode is off"), "\(off.out)")
        #expect(list()?.requests.isEmpty == true)
        kill(pid, SIGTERM); _ = waitFor(pid)

        pid = start("press")
        try #require(pid > 0)
        defer { kill(pid, SIGTERM); _ = waitFor(pid) }
        #expect(await eventually { ctl("status").status == 0 })
        for file in [png, garbage, empty] {
            let r = ctl("test-print", file)
            #expect(r.status == ExitCodeForTests.dataError, "\(file): \(r.out)")
            #expect(r.out.contains(file), "the error names the file: \(r.out)")
            #expect(!r.out.contains("queued"), "\(r.out)")
        }
        #expect(list()?.requests.isEmpty == true)
        #expect(decodeJSON(StatusReport.self, ctl("status", "--json").out)?.printer?.lastError == nil)
        #expect(stack.printed().isEmpty)

        // refill: print.sheets' range, said in the refusal; the daemon refuses it too.
        for sheets in ["100001", "9223372036854775807", "-1"] {
            let r = ctl("refill", sheets)
            #expect(r.status == ExitCodeForTests.dataError, "\(sheets): \(r.out)")
            #expect(r.out.contains("0 to 100000"), "\(r.out)")
        }
        let one = ctl("refill", "1")
        #expect(one.status == 0)
        #expect(one.out.contains("paper counter set to 1 sheet") && !one.out.contains("1 sheets"), "\(one.out)")
        #expect(ctl("prints", "list").out.contains("paper: 1 sheet left"), "\(ctl("prints", "list").out)")
        #expect(!ctl("status").out.contains("1 sheets"), "\(ctl("status").out)")

        // print.mode press: the press in review asks for the print, and its reply says so.
        #expect(ctl("press").status == 0)
        #expect(await eventually { decodeJSON(StatusReport.self, ctl("status", "--json").out)?.state == "review" })
        let press = ctl("press")
        #expect(press.status == 0)
        #expect(press.out.contains("print requested"), "\(press.out)")
    }
}

extension PrintWorkerCUPSTests {
    /// A skip (or `prints cancel`) of a job at CUPS cancelled it first and journaled its note after: a kill between
    /// the two left a cancelled job whose request had no note, which the restart read as cancelled at the printer
    /// (a failure: held again, printing stopped until `prints resume`, and the skipped picture printed then).
    @Test("a skip's note is on disk before its job is cancelled at CUPS")
    func skipNoteBeforeCancel() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let stack = try CUPSStack()
        defer { stack.release(); stack.stop() }
        stack.setJobMode("hold")
        let s = printSettings(dir: stack.dir, queue: stack.queue)
        // For each journal written with the skip's note: the job's state at CUPS as it was written.
        let seen = Box<[String]>([])
        let worker = PrintWorker(settings: s, log: LogLines().logger(), journalWriter: { bytes, path in
            if let j = try? PrintJournal.decode(Data(bytes)), let r = j.requests.first, r.note == "skipped by a long press",
               let id = r.jobID {
                let state = (try? stack.jobs())?.first { $0.id == id }?.state
                seen.update { $0.append(state.map(\.rawValue) ?? "not listed") }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        })
        worker.launch()
        defer { worker.stop() }
        worker.request(jpeg: photo, captureID: 1, source: "session 1")
        #expect(await eventually { worker.journal.requests.first?.state == .submitted })
        worker.skip(captureID: 1)
        #expect(await eventually { worker.journal.requests.first?.state == .cancelled }, "\(worker.journal.requests)")
        #expect(seen.get.first.map { $0 != "cancelled" } == true, "the note was journaled with the job \(seen.get)")
        #expect(worker.journal.failedJobs == nil && worker.journal.stoppedAfterFailure == nil)
    }
}
