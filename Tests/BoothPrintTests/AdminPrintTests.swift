import BoothControl
import BoothCore
import BoothJPEG
import BoothPorts
import BoothPrint
import BoothRuntime
import BoothTestSupport
import Foundation
import Glibc
import Testing

// The admin side of printing, end to end: photoboothd on the private CUPS stack and photoboothctl
// over the control socket — printer fields in `status`, printers in `devices`, `test-print [FILE]`,
// `refill`, `prints list | reprint | cancel | purge`.

/// photoboothd and photoboothctl as built in .build/debug; nil (after saying why) without the CUPS
/// tools, or after recording an issue when either is not built.
func builtDaemonAndCtl() -> (daemon: String, ctl: String)? {
    if let why = missingCUPSTools() { print(why); return nil }
    let daemon = "\(packageRoot())/.build/debug/photoboothd", ctl = "\(packageRoot())/.build/debug/photoboothctl"
    guard FileManager.default.isExecutableFile(atPath: daemon), FileManager.default.isExecutableFile(atPath: ctl) else {
        Issue.record("missing prerequisite: photoboothd or photoboothctl not built in .build/debug (swift build first)")
        return nil
    }
    return (daemon, ctl)
}

/// photoboothd's arguments for the tests that run it against `stack`: the simulated camera, files under
/// the stack's directory (an empty config file there), print.mode `mode`, fast polls at 100 dpi, and
/// each of `extra` as a `--set`.
func printingDaemonArguments(_ stack: CUPSStack, mode: String, _ extra: [String] = []) -> [String] {
    let dir = stack.dir
    _ = FileManager.default.createFile(atPath: "\(dir)/empty.conf", contents: Data())
    let sets = ["storage.dir=\(dir)/photos", "storage.session_file=\(dir)/session-number", "storage.min_free=0B", "preview.file=", "print.mode=\(mode)",
                "print.destination=\(stack.queue)", "print.journal=\(dir)/print-journal.json", "print.spool=\(dir)/prints",
                "print.poll_interval=200ms", "print.dpi=100"] + extra
    return ["--simulate", "--config", "\(dir)/empty.conf", "--socket", "\(dir)/control"] + sets.flatMap { ["--set", $0] }
}

/// The JSON object in a command's output, decoded.
func decodeJSON<T: Decodable>(_ type: T.Type, _ output: String) -> T? {
    guard let start = output.firstIndex(of: "{"), let end = output.lastIndex(of: "}") else { return nil }
    return try? JSONDecoder().decode(T.self, from: Data(output[start...end].utf8))
}

// Part of the serialized print suite: CUPS_SERVER is process-wide.
extension PrintWorkerCUPSTests {
    @Test("admin: status and devices show the printer; test-print FILE and the chart print; refill; prints list, reprint within the limit, cancel, purge")
    func admin() async throws {
        guard let (daemon, ctlPath) = builtDaemonAndCtl() else { return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let stack = try CUPSStack()
        defer { stack.stop() }
        let dir = stack.dir
        let env = ["CUPS_SERVER": stack.server]
        let pid = spawn(daemon, printingDaemonArguments(stack, mode: "auto", ["print.sheets=20", "print.reprint_limit=1"]),
                        env: env, output: "\(dir)/daemon.log")
        try #require(pid > 0)
        defer { kill(pid, SIGTERM); _ = waitFor(pid) }
        let daemonLog = { (try? String(contentsOfFile: "\(dir)/daemon.log", encoding: .utf8)) ?? "" }
        func ctl(_ args: String...) -> (status: Int32, out: String) {
            run(ctlPath, args + ["--socket", "\(dir)/control"], env: env)
        }
        func list() -> PrintsReply? { decodeJSON(PrintsReply.self, ctl("prints", "list", "--json").out) }
        func states() -> [String] { list()?.requests.map(\.state) ?? [] }

        // status: the printer's fields, once the worker connected and polled the queue (the queue's
        // name is known as soon as it connects; its health only after the poll that follows).
        #expect(await eventually {
            guard let p = decodeJSON(StatusReport.self, ctl("status", "--json").out)?.printer else { return false }
            return p.queue == stack.queue && p.health != "unknown"
        }, "\(ctl("status", "--json").out)\n\(daemonLog())")
        let status = try #require(decodeJSON(StatusReport.self, ctl("status", "--json").out)?.printer)
        #expect(status.mode == "auto")
        #expect(status.destination == stack.queue)
        #expect(["ready", "warning"].contains(status.health), "\(status)")
        #expect(status.sheetsRemaining == 20)
        #expect(status.held == 0 && status.outstanding == 0)
        #expect(ctl("status").out.contains("\(stack.queue): "), "the printer line")

        // devices: the queue and where it sends jobs.
        let devices = try #require(decodeJSON(DeviceReport.self, ctl("devices", "--json").out), "\(ctl("devices", "--json").out)")
        let queue = try #require(devices.printers?.first { $0.name == stack.queue }, "\(devices)")
        #expect(queue.deviceURI?.hasPrefix("ipp://localhost:") == true, "\(queue)")

        // test-print FILE: rendered for the media (4x6 at 100 dpi) and printed.
        let file = "\(dir)/guest.jpg"
        _ = FileManager.default.createFile(atPath: file, contents: Data(photo))
        let queued = ctl("test-print", file)
        #expect(queued.status == 0, "\(queued.out)")
        #expect(await eventually { states() == ["completed"] }, "\(ctl("prints").out)\n\(daemonLog())")
        #expect(list()?.requests.first?.source == "test print of \(file)")
        // test-print without a file: the chart.
        #expect(ctl("test-print").status == 0)
        #expect(await eventually { states() == ["completed", "completed"] }, "\(ctl("prints").out)")
        #expect(list()?.requests.last?.source == "test print")
        var printed = stack.printed()
        try #require(printed.count == 2)
        for page in printed { #expect(try JPEGDecoder().header(page.doc).size == FrameSize(width: 400, height: 600)) }
        #expect(list()?.sheetsRemaining == 18)

        // refill: the counter, in the reply and in status.
        let refill = ctl("refill", "7", "--json")
        #expect(refill.status == 0)
        #expect(decodeJSON(PrintsReply.self, refill.out)?.sheetsRemaining == 7)
        #expect(decodeJSON(StatusReport.self, ctl("status", "--json").out)?.printer?.sheetsRemaining == 7)
        #expect(ctl("refill", "lots").status == ExitCodeForTests.dataError)

        // reprint: the same page again, once (print.reprint_limit = 1); a second one is refused.
        let reprint = ctl("prints", "reprint", "1")
        #expect(reprint.status == 0, "\(reprint.out)")
        #expect(reprint.out.contains("request 3 reprints 1"))
        #expect(await eventually { states() == ["completed", "completed", "completed"] }, "\(ctl("prints").out)")
        #expect(list()?.requests.last?.source == "reprint of 1")
        printed = stack.printed()
        try #require(printed.count == 3)
        #expect(printed[2].doc == printed[0].doc, "the reprint is the same page")
        #expect(list()?.sheetsRemaining == 6)
        let again = ctl("prints", "reprint", "1")
        #expect(again.status == 70, "\(again.out)")
        #expect(again.out.contains("reprinted 1 time(s) already (print.reprint_limit)"), "\(again.out)")
        #expect(ctl("prints", "reprint", "3").status == 70, "a reprint of the reprint counts against the original")
        #expect(ctl("prints", "reprint", "99").out.contains("no print request 99"))

        // cancel: a request held while the queue is paused is cancelled and never printed.
        #expect(stack.lp("cupsdisable", [stack.queue]) == 0)
        #expect(await eventually { decodeJSON(StatusReport.self, ctl("status", "--json").out)?.printer?.reasons.contains("paused") == true })
        #expect(ctl("test-print").status == 0)
        #expect(await eventually { states().last == "held" }, "\(ctl("prints").out)")
        let cancel = ctl("prints", "cancel", "4")
        #expect(cancel.status == 0, "\(cancel.out)")
        #expect(cancel.out.contains("request 4 cancelled"))
        #expect(states() == ["completed", "completed", "completed", "cancelled"])
        #expect(ctl("prints", "cancel", "4").status == 70, "no longer live")
        #expect(stack.lp("cupsenable", [stack.queue]) == 0)
        #expect(await eventually { decodeJSON(StatusReport.self, ctl("status", "--json").out)?.printer?.reasons.contains("paused") == false })
        #expect(stack.printed().count == 3)

        // list, as a person reads it.
        let table = ctl("prints", "list").out
        #expect(table.contains("paper: 6 sheets left"), "\(table)")
        for line in ["1     completed", "3     completed", "4     cancelled"] { #expect(table.contains(line), "\(table)") }
        #expect(table.contains("(cancelled by the operator)"))

        // purge: finished requests forgotten, their pages deleted.
        let pages = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/prints")
        #expect(!pages.isEmpty)
        let purge = ctl("prints", "purge")
        #expect(purge.status == 0)
        #expect(purge.out.contains("4 finished requests forgotten"), "\(purge.out)")
        #expect(list()?.requests.isEmpty == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/prints").isEmpty)
        #expect(ctl("prints").out.contains("no print requests"))
    }
}

/// photoboothctl's exit codes the tests check (sysexits).
enum ExitCodeForTests {
    static let dataError: Int32 = 65
}
