import BoothCore
import BoothPrint
import Foundation
import Glibc
import Testing

// photoboothd itself against the private CUPS stack: SIGKILLed while its auto print is at the
// printer and started again (the journal reconciles with CUPS's job list, nothing printed twice);
// sessions while the printer is out of paper, then a restart and a refill.

// Part of the serialized print suite: CUPS_SERVER is process-wide.
extension PrintWorkerCUPSTests {
    @Test("SIGKILL mid-print, restart: the journal takes the job's end from CUPS, no duplicate")
    func sigkillMidPrint() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let daemon = "\(packageRoot())/.build/debug/photoboothd"
        guard FileManager.default.isExecutableFile(atPath: daemon) else {
            print("skipped: \(daemon) not built (swift build first)")
            return
        }
        let stack = try CUPSStack()
        defer { stack.stop() }
        stack.setJobMode("hold")
        let dir = stack.dir
        let journalPath = "\(dir)/print-journal.json"
        _ = FileManager.default.createFile(atPath: "\(dir)/empty.conf", contents: Data())
        let common = ["--simulate", "--config", "\(dir)/empty.conf", "--socket", "\(dir)/control",
                      "--set", "storage.dir=\(dir)/photos", "--set", "storage.min_free=0B",
                      "--set", "preview.file=", "--set", "session.preview=0s", "--set", "session.countdown=0s",
                      "--set", "session.review=30s", "--set", "print.mode=auto", "--set", "print.destination=\(stack.queue)",
                      "--set", "print.journal=\(journalPath)", "--set", "print.spool=\(dir)/prints",
                      "--set", "print.poll_interval=200ms", "--set", "print.dpi=100", "--set", "print.sheets=20"]
        let env = ["CUPS_SERVER": stack.server]
        let first = spawn(daemon, common + ["--auto-press"], env: env, output: "\(dir)/daemon1.log")
        try #require(first > 0)
        var killed = false
        defer { if !killed { kill(first, SIGKILL); _ = waitFor(first) } }
        func journal() -> PrintJournal? {
            FileManager.default.contents(atPath: journalPath).flatMap { try? JSONDecoder().decode(PrintJournal.self, from: $0) }
        }
        let log1 = { (try? String(contentsOfFile: "\(dir)/daemon1.log", encoding: .utf8)) ?? "" }
        // The print reaches the printer (its command holds the job) and the journal knows the job id.
        #expect(await eventually(timeoutSeconds: 30) {
            stack.printed().count == 1 && journal()?.requests.first?.state == .submitted
        }, "\(log1())")
        kill(first, SIGKILL)
        #expect(waitFor(first) == 128 + SIGKILL)
        killed = true
        let before = try #require(journal())
        try #require(before.requests.count == 1, "\(before)")
        let job = try #require(before.requests[0].jobID)

        // Started again without auto-press: the request is at CUPS, so nothing is submitted again.
        let second = spawn(daemon, common, env: env, output: "\(dir)/daemon2.log")
        try #require(second > 0)
        defer { kill(second, SIGTERM); _ = waitFor(second) }
        let log2 = { (try? String(contentsOfFile: "\(dir)/daemon2.log", encoding: .utf8)) ?? "" }
        // The second daemon has polled (its first poll says how the printer is, then reconciles and
        // submits); a second of further polls later the request is still the one job at CUPS.
        #expect(await eventually(timeoutSeconds: 30) {
            let log = log2()
            return ["printer ready", "printer warning", "printer unavailable"].contains { log.contains($0) }
        }, "\(log2())")
        try? await Task.sleep(nanoseconds: 1_000_000_000)
        #expect(journal()?.requests.first?.state == .submitted, "\(log2())")
        #expect(try stack.jobs().count == 1, "submitted again after the restart")
        stack.release()
        #expect(await eventually(timeoutSeconds: 30) { journal()?.requests.first?.state == .completed }, "\(log2())")
        let after = try #require(journal())
        #expect(after.requests.count == 1)
        #expect(after.requests[0].jobID == job)
        #expect(after.sheetsRemaining == 19)
        #expect(stack.printed().count == 1, "printed twice")
    }

    @Test("out of paper at the booth: sessions still save, one job out; stopped and started again, refilled: every picture prints once, oldest first")
    func outOfPaperAtTheBooth() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let daemon = "\(packageRoot())/.build/debug/photoboothd"
        guard FileManager.default.isExecutableFile(atPath: daemon) else {
            print("skipped: \(daemon) not built (swift build first)")
            return
        }
        let stack = try CUPSStack()
        defer { stack.stop() }
        stack.setEmpty(true)
        let dir = stack.dir
        let journalPath = "\(dir)/print-journal.json"
        _ = FileManager.default.createFile(atPath: "\(dir)/empty.conf", contents: Data())
        let common = ["--simulate", "--config", "\(dir)/empty.conf", "--socket", "\(dir)/control",
                      "--set", "storage.dir=\(dir)/photos", "--set", "storage.min_free=0B",
                      "--set", "preview.file=", "--set", "session.preview=0s", "--set", "session.countdown=0s",
                      "--set", "session.review=1s", "--set", "print.mode=auto", "--set", "print.destination=\(stack.queue)",
                      "--set", "print.journal=\(journalPath)", "--set", "print.spool=\(dir)/prints",
                      "--set", "print.poll_interval=200ms", "--set", "print.dpi=100"]
        let env = ["CUPS_SERVER": stack.server]
        func journal() -> PrintJournal? {
            FileManager.default.contents(atPath: journalPath).flatMap { try? JSONDecoder().decode(PrintJournal.self, from: $0) }
        }
        // Three sessions while the printer is out of paper: all saved, the daemon exits (--sessions 3).
        let first = spawn(daemon, common + ["--auto-press", "--sessions", "3"], env: env, output: "\(dir)/daemon1.log")
        try #require(first > 0)
        let status = waitFor(first)
        let log1 = (try? String(contentsOfFile: "\(dir)/daemon1.log", encoding: .utf8)) ?? ""
        #expect(status == 0, "\(log1)")
        let photos = (FileManager.default.enumerator(atPath: "\(dir)/photos")?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".jpg") }
        #expect(photos.count == 3, "\(log1)")
        let held = try #require(journal())
        #expect(held.requests.count == 3)
        #expect(held.outstanding <= 1, "the pending limit: \(held.requests.map(\.state))")
        #expect(stack.printed().count <= 1)

        // Started again and refilled: the held pictures print, each once, oldest first.
        let second = spawn(daemon, common, env: env, output: "\(dir)/daemon2.log")
        try #require(second > 0)
        defer { kill(second, SIGTERM); _ = waitFor(second) }
        stack.setEmpty(false)
        let log2 = { (try? String(contentsOfFile: "\(dir)/daemon2.log", encoding: .utf8)) ?? "" }
        // Three jobs one after the other through cupsd and the printer: generous for a loaded machine.
        #expect(await eventually(timeoutSeconds: 60) {
            journal()?.requests.map(\.state) == [.completed, .completed, .completed]
        }, "\(log2())")
        let printed = stack.printed()
        #expect(printed.count == 3)
        #expect(printed.map { $0.options["IPP_JOB_NAME"] ?? "" } == (journal()?.requests.map(\.title) ?? []))
    }
}
