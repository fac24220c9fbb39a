import BoothControl
import BoothCore
import BoothPorts
import BoothRuntime
import FoundationEssentials
import Glibc

/// The print commands' replies as text.
enum PrintsCommand {
    /// Sends a print request and prints the reply: JSON with `--json`, else its message.
    static func send(_ request: ControlRequest, _ args: ParsedArguments) -> Int32 {
        answer(request, args, as: PrintsReply.self) { $0.message }
    }

    /// `prints list`'s table: the paper line, then one line a request.
    static func table(_ r: PrintsReply) -> String {
        var out = ["paper: \(r.sheetsRemaining.map { "\(counted($0, "sheet")) left" } ?? "not counted")"]
        if r.requests.isEmpty { out.append("no print requests"); return out.joined(separator: "\n") }
        out.append("ID    STATE       JOB   COPIES  REQUESTED            SOURCE")
        for e in r.requests {
            let job = e.jobID.map(String.init) ?? "-"
            var line = String(e.id).padding(toLength: 6, withPad: " ", startingAt: 0)
                + e.state.padding(toLength: 12, withPad: " ", startingAt: 0)
                + job.padding(toLength: 6, withPad: " ", startingAt: 0)
                + String(e.copies).padding(toLength: 8, withPad: " ", startingAt: 0)
                + e.requestedAt.padding(toLength: 21, withPad: " ", startingAt: 0) + e.source
            if let note = e.note { line += " (\(note))" }
            out.append(line)
        }
        return out.joined(separator: "\n")
    }

    /// The `printer:` line of `status`.
    static func statusLine(_ p: PrinterStatus) -> String {
        if p.mode == "off" && p.held == 0 && p.outstanding == 0 { return "print.mode off" }
        var line = "\(p.queue ?? (p.destination.isEmpty ? "CUPS default" : p.destination)): \(p.health)"
        if !p.reasons.isEmpty { line += " (\(p.reasons.joined(separator: ", ")))" }
        if let m = p.message { line += " — \(m)" }
        line += "; mode \(p.mode), \(p.held) held, \(p.outstanding) at the printer, \(p.completed) printed"
        if let f = p.failed { line += ", \(f) failed" }
        if let s = p.sheetsRemaining { line += ", \(counted(s, "sheet")) left" }
        if let e = p.lastError { line += "; last error: \(e)" }
        return line
    }
}

/// `prints ACTION ID` (reprint, cancel): the same command but for the action word.
protocol PrintsIDSubcommand: Subcommand {
    /// The word after `prints`, also the request's action.
    static var action: String { get }
}

extension PrintsIDSubcommand {
    static var words: [String] { ["prints", action] }
    static var synopsis: String { "prints \(action) ID [--json] [--socket PATH]" }
    static var options: [Option] { [.json, .socket] }
    static var positionals: ClosedRange<Int> { 1...1 }

    func run() -> Int32 {
        guard let id = args.positional.first.flatMap({ Int($0) }) else {
            warn("prints \(Self.action) needs a numeric ID")
            return ExitCode.dataError
        }
        return PrintsCommand.send(ControlRequest(.prints, action: Self.action, id: id), args)
    }
}

/// `test-print [FILE]`.
struct TestPrint: Subcommand {
    static let words = ["test-print"]
    static let synopsis = "test-print [FILE] [--json] [--socket PATH]"
    static let summary = "Print FILE (a JPEG), or a test chart, through the booth's print path."
    static let details = """
        The picture is rendered for print.media like a guest's and journaled; 'prints list' follows it.
        FILE must be a JPEG; with print.mode off nothing is printed, so test-print is refused.
        Exit codes: 0 queued; 65 FILE not a whole JPEG (empty, PNG, corrupt); 66 FILE unreadable;
        69 daemon not running; 77 not allowed; 78 print.mode is off.
        """
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...1
    let args: ParsedArguments

    func run() -> Int32 {
        var file: String?
        if let f = args.positional.first {
            let absolute = f.hasPrefix("/") ? f : FileManager.default.currentDirectoryPath + "/" + f
            guard FileManager.default.isReadableFile(atPath: absolute) else {
                warn("cannot read \(f)")
                return ExitCode.noInput
            }
            file = absolute
        }
        return PrintsCommand.send(ControlRequest(.testPrint, file: file), args)
    }
}

/// `refill SHEETS`.
struct Refill: Subcommand {
    static let words = ["refill"]
    static let synopsis = "refill SHEETS [--json] [--socket PATH]"
    static let summary = "Set the paper counter after loading paper (completed prints count it down)."
    static let details = "Exit codes: 0; 65 SHEETS not a whole number from 0 to 100000 (print.sheets' range); 69 daemon not running; 77 not allowed."
    static let options: [Option] = [.json, .socket]
    static let positionals = 1...1
    let args: ParsedArguments

    func run() -> Int32 {
        let range = Settings.Print.sheetsRange
        guard let sheets = args.positional.first.flatMap({ Int($0) }), range.contains(sheets) else {
            warn("refill needs a whole number of sheets from \(range.lowerBound) to \(range.upperBound) (print.sheets' range), "
                 + "got '\(args.positional.first ?? "")'")
            return ExitCode.dataError
        }
        return PrintsCommand.send(ControlRequest(.refill, sheets: sheets), args)
    }
}

/// `prints list`.
struct PrintsList: Subcommand {
    static let words = ["prints", "list"]
    static let synopsis = "prints list [--json] [--socket PATH]"
    static let summary = "The print journal: every request, its CUPS job and state."
    static let details = "Exit codes: 0; 69 daemon not running; 77 not allowed."
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        answer(ControlRequest(.prints, action: "list"), args, as: PrintsReply.self, text: PrintsCommand.table)
    }
}

/// `prints` alone: the same as `prints list`.
struct Prints: Subcommand {
    static let words = ["prints"]
    static let synopsis = "prints [list|reprint ID|cancel ID|purge|resume] [--json] [--socket PATH]"
    static let summary = "The print journal (prints list); reprint, cancel or purge requests; resume after a failed job."
    static let details = "Without a word: prints list. Exit codes: 0; 64 unknown word; 69 daemon not running; 77 not allowed."
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 { PrintsList(args: args).run() }
}

/// `prints reprint ID`.
struct PrintsReprint: PrintsIDSubcommand {
    static let action = "reprint"
    static let summary = "Print request ID again (within print.reprint_limit)."
    static let details = "Exit codes: 0 queued; 65 ID not a number; 69 daemon not running; 77 not allowed; 70 refused (unknown ID, limit); 78 print.mode is off."
    let args: ParsedArguments
}

/// `prints cancel ID`.
struct PrintsCancel: PrintsIDSubcommand {
    static let action = "cancel"
    static let summary = "Cancel request ID: held ones at once, printing ones at CUPS."
    static let details = "Exit codes: 0; 65 ID not a number; 69 daemon not running; 77 not allowed; 70 no such live request."
    let args: ParsedArguments
}

/// `prints ACTION` without an ID (purge, resume): the same command but for the action word.
protocol PrintsActionSubcommand: Subcommand {
    /// The word after `prints`, also the request's action.
    static var action: String { get }
}

extension PrintsActionSubcommand {
    static var words: [String] { ["prints", action] }
    static var synopsis: String { "prints \(action) [--json] [--socket PATH]" }
    static var options: [Option] { [.json, .socket] }
    static var positionals: ClosedRange<Int> { 0...0 }

    func run() -> Int32 { PrintsCommand.send(ControlRequest(.prints, action: Self.action), args) }
}

/// `prints purge`.
struct PrintsPurge: PrintsActionSubcommand {
    static let action = "purge"
    static let summary = "Forget finished print requests and delete their rendered pages."
    static let details = "Exit codes: 0; 69 daemon not running; 77 not allowed."
    let args: ParsedArguments
}

/// `prints resume`.
struct PrintsResume: PrintsActionSubcommand {
    static let action = "resume"
    static let summary = "Send held prints again after a job failed at the printer (fix the printer first)."
    static let details = "After a failed job nothing is submitted until a job completes or this. Exit codes: 0; 69 daemon not running; 77 not allowed."
    let args: ParsedArguments
}
