import BoothCore
import BoothPrint
import BoothTestSupport
import Foundation
import Glibc
import Testing

// photoboothd itself against the private CUPS stack: SIGKILLed while its auto print is at the
// printer and started again (the journal reconciles with CUPS's job list, nothing printed twice);
// sessions while the printer is out of paper, then a restart and a refill.

/// photoboothd (`--simulate`, no preview phase, no countdown, `print.mode=auto`) on a private CUPS stack,
/// started as often as a test needs: an empty config, photos, print journal and spool in the stack's folder,
/// its queue polled every 200 ms, pages at 100 dpi; `settings` are more `KEY=VALUE` for `--set`.
private struct StackDaemon {
    let path = "\(packageRoot())/.build/debug/photoboothd"
    let stack: CUPSStack
    let arguments: [String]
    var dir: String { stack.dir }
    let journalPath: String
    var environment: [String: String] { ["CUPS_SERVER": stack.server] }

    /// Starts the CUPS stack (the caller stops it); nil after printing why when the CUPS tools or the
    /// built photoboothd are missing. - Throws: `CUPSStack`'s start error.
    init?(settings: [String]) throws {
        if let why = missingCUPSTools() { print(why); return nil }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            Issue.record("missing prerequisite: \(path) not built (swift build first)")
            return nil
        }
        let stack = try CUPSStack()
        let dir = stack.dir
        self.stack = stack
        journalPath = "\(dir)/print-journal.json"
        _ = FileManager.default.createFile(atPath: "\(dir)/empty.conf", contents: Data())
        let common = ["storage.dir=\(dir)/photos", "storage.session_file=\(dir)/session-number", "storage.min_free=0B", "preview.file=", "session.preview=0s",
                      "session.countdown=0s", "print.mode=auto", "print.destination=\(stack.queue)",
                      "print.journal=\(journalPath)", "print.spool=\(dir)/prints",
                      "print.poll_interval=200ms", "print.dpi=100"]
        arguments = ["--simulate", "--config", "\(dir)/empty.conf", "--socket", "\(dir)/control"]
            + (common + settings).flatMap { ["--set", $0] }
    }

    /// Starts photoboothd with `extra` arguments, its output to `dir/log`; its pid (≤ 0 on failure).
    func start(_ extra: [String] = [], log: String) -> pid_t {
        spawn(path, arguments + extra, env: environment, output: "\(dir)/\(log)")
    }

    /// What photoboothd wrote to `dir/log` so far.
    func output(_ log: String) -> String { (try? String(contentsOfFile: "\(dir)/\(log)", encoding: .utf8)) ?? "" }

    /// The print journal as on disk now; nil while there is none (or it does not decode).
    func journal() -> PrintJournal? {
        FileManager.default.contents(atPath: journalPath).flatMap { try? JSONDecoder().decode(PrintJournal.self, from: $0) }
    }
}

// Part of the serialized print suite: CUPS_SERVER is process-wide.
extension PrintWorkerCUPSTests {
    @Test("--check against cupsd: the queue is found; a queue CUPS does not have is a settings error (78) listing its queues")
    func checkLooksTheQueueUp() throws {
        guard let daemon = try StackDaemon(settings: []) else { return }
        let stack = daemon.stack
        defer { stack.stop() }
        let found = run(daemon.path, daemon.arguments + ["--check"], env: daemon.environment)
        #expect(found.0 == 0, "\(found.1)")
        #expect(found.1.contains("check: ok: print queue booth (print.mode = auto)"), "\(found.1)")
        let missing = run(daemon.path, daemon.arguments + ["--set", "print.destination=no-such-queue", "--check"], env: daemon.environment)
        #expect(missing.0 == 78, "\(missing.1)")
        #expect(missing.1.contains("check: print: print.mode = auto (--set print.mode=auto) prints to the CUPS queue no-such-queue "
                                   + "(print.destination = no-such-queue (--set print.destination=no-such-queue)), which does not exist"),
                "\(missing.1)")
        #expect(missing.1.contains("CUPS has booth: set print.destination to one of them"), "\(missing.1)")
    }

    @Test("SIGKILL mid-print, restart: the journal takes the job's end from CUPS, no duplicate")
    func sigkillMidPrint() async throws {
        guard let daemon = try StackDaemon(settings: ["session.review=30s", "print.sheets=20"]) else { return }
        let stack = daemon.stack
        defer { stack.stop() }
        stack.setJobMode("hold")
        let first = daemon.start(["--auto-press"], log: "daemon1.log")
        try #require(first > 0)
        var killed = false
        defer { if !killed { kill(first, SIGKILL); _ = waitFor(first) } }
        let log1 = { daemon.output("daemon1.log") }
        // The print reaches the printer (its command holds the job) and the journal knows the job id.
        #expect(await eventually(timeoutSeconds: 30) {
            stack.printed().count == 1 && daemon.journal()?.requests.first?.state == .submitted
        }, "\(log1())")
        kill(first, SIGKILL)
        #expect(waitFor(first) == 128 + SIGKILL)
        killed = true
        let before = try #require(daemon.journal())
        try #require(before.requests.count == 1, "\(before)")
        let job = try #require(before.requests[0].jobID)

        // Started again without auto-press: the request is at CUPS, so nothing is submitted again.
        let second = daemon.start(log: "daemon2.log")
        try #require(second > 0)
        defer { kill(second, SIGTERM); _ = waitFor(second) }
        let log2 = { daemon.output("daemon2.log") }
        // The second daemon has polled (its first poll says how the printer is, then reconciles and
        // submits); a second of further polls later the request is still the one job at CUPS.
        #expect(await eventually(timeoutSeconds: 30) {
            let log = log2()
            return ["printer ready", "printer warning", "printer unavailable"].contains { log.contains($0) }
        }, "\(log2())")
        try? await Task.sleep(nanoseconds: 1_000_000_000)
        #expect(daemon.journal()?.requests.first?.state == .submitted, "\(log2())")
        #expect(try stack.jobs().count == 1, "submitted again after the restart")
        stack.release()
        #expect(await eventually(timeoutSeconds: 30) { daemon.journal()?.requests.first?.state == .completed }, "\(log2())")
        let after = try #require(daemon.journal())
        #expect(after.requests.count == 1)
        #expect(after.requests[0].jobID == job)
        #expect(after.sheetsRemaining == 19)
        #expect(stack.printed().count == 1, "printed twice")
    }

    @Test("out of paper at the booth: sessions still save, one job out; stopped and started again, refilled: every picture prints once, oldest first")
    func outOfPaperAtTheBooth() async throws {
        guard let daemon = try StackDaemon(settings: ["session.review=1s"]) else { return }
        let stack = daemon.stack, dir = daemon.dir
        defer { stack.stop() }
        stack.setEmpty(true)
        // Three sessions while the printer is out of paper: all saved, the daemon exits (--sessions 3).
        let first = daemon.start(["--auto-press", "--sessions", "3"], log: "daemon1.log")
        try #require(first > 0)
        let status = waitFor(first)
        let log1 = daemon.output("daemon1.log")
        #expect(status == 0, "\(log1)")
        let photos = (FileManager.default.enumerator(atPath: "\(dir)/photos")?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".jpg") }
        #expect(photos.count == 3, "\(log1)")
        let held = try #require(daemon.journal())
        #expect(held.requests.count == 3)
        #expect(held.outstanding <= 1, "the pending limit: \(held.requests.map(\.state))")
        #expect(stack.printed().count <= 1)

        // Started again and refilled: the held pictures print, each once, oldest first.
        let second = daemon.start(log: "daemon2.log")
        try #require(second > 0)
        defer { kill(second, SIGTERM); _ = waitFor(second) }
        stack.setEmpty(false)
        let log2 = { daemon.output("daemon2.log") }
        // Three jobs one after the other through cupsd and the printer: generous for a loaded machine.
        #expect(await eventually(timeoutSeconds: 60) {
            daemon.journal()?.requests.map(\.state) == [.completed, .completed, .completed]
        }, "\(log2())")
        let printed = stack.printed()
        #expect(printed.count == 3)
        #expect(printed.map { $0.options["IPP_JOB_NAME"] ?? "" } == (daemon.journal()?.requests.map(\.title) ?? []))
    }
}
