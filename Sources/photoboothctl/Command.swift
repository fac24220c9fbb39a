import BoothClock
import BoothControl
import BoothCore
import BoothPorts
import BoothRuntime
import BoothSystem
import FoundationEssentials
import Glibc

/// One `photoboothctl` subcommand: its words, help, options and what it does. One type per subcommand.
protocol Subcommand {
    /// The words that select it: `["config", "set"]`, `["status"]`.
    static var words: [String] { get }
    /// The usage line after `photoboothctl`, e.g. `config set KEY VALUE [--file F] [--socket PATH]`.
    static var synopsis: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// More lines for `--help`: what it does, its exit codes.
    static var details: String { get }
    /// Options it takes besides `--help`.
    static var options: [Option] { get }
    /// How many positional arguments: a range.
    static var positionals: ClosedRange<Int> { get }
    /// What `parse` found on the command line.
    var args: ParsedArguments { get }
    /// The memberwise initializer of a subcommand whose only stored property is `let args`.
    init(args: ParsedArguments)
    /// Runs it; returns the exit code (sysexits).
    func run() -> Int32
}

/// A command-line option.
struct Option: Hashable {
    var name: String
    /// Takes a value (`--file F`).
    var takesValue: Bool
    var help: String
    /// What `--help` calls its value: `F` for `--file`, `PATH` for `--socket`, else `VALUE`.
    var placeholder: String { name == "--file" ? "F" : name == "--socket" ? "PATH" : "VALUE" }

    static let json = Option(name: "--json", takesValue: false, help: "print the data as JSON")
    static let file = Option(name: "--file", takesValue: true, help: "work on this config file, without asking the daemon")
    static let socket = Option(name: "--socket", takesValue: true,
                               help: "the daemon's control socket (default \(ControlSocketPath.system), else \(ControlSocketPath.user()))")
    static let markdown = Option(name: "--markdown", takesValue: false, help: "print all settings as docs/settings.md's Markdown table")
    static let force = Option(name: "--force", takesValue: false, help: "replace an existing FILE")
    static let local = Option(name: "--local", takesValue: false, help: "list the devices without asking the daemon")
    static let reset = Option(name: "--reset", takesValue: false, help: "zero the totals (prints them first)")
}

/// Options and positional arguments after the subcommand's words.
struct ParsedArguments {
    var positional: [String] = []
    var flags: Set<String> = []
    var values: [String: String] = [:]

    func has(_ o: Option) -> Bool { flags.contains(o.name) }
    func value(_ o: Option) -> String? { values[o.name] }
    var json: Bool { has(.json) }
    var socket: String? { value(.socket) }
}

enum UsageError: Error { case message(String) }

extension Subcommand {
    static var name: String { words.joined(separator: " ") }

    static var help: String {
        var text = "Usage: photoboothctl \(synopsis)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        let all = options + [Option(name: "--help", takesValue: false, help: "show this help")]
        text += "\nOptions:\n"
        for o in all {
            let left = o.takesValue ? "\(o.name) \(o.placeholder)" : o.name
            text += "  " + left.padding(toLength: max(18, left.count + 2), withPad: " ", startingAt: 0) + o.help + "\n"
        }
        return text
    }

    /// Parses `argv` (after the words). `--help` prints help and exits 0.
    static func parse(_ argv: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var i = 0
        var onlyPositional = false
        while i < argv.count {
            let a = argv[i]
            if !onlyPositional, a == "--" { onlyPositional = true; i += 1; continue }
            if !onlyPositional, a == "--help" || a == "-h" {
                print(help, terminator: "")
                exit(ExitCode.ok)
            }
            if !onlyPositional, a.hasPrefix("--"), a.count > 2 {
                var name = a, inline: String?
                if let eq = a.firstIndex(of: "=") { name = String(a[..<eq]); inline = String(a[a.index(after: eq)...]) }
                guard let option = options.first(where: { $0.name == name }) else {
                    throw .message("\(Self.name): unknown option '\(name)'; see photoboothctl \(Self.name) --help")
                }
                if option.takesValue {
                    if let inline {
                        parsed.values[name] = inline
                    } else {
                        i += 1
                        guard i < argv.count else { throw .message("\(name) needs a value; see photoboothctl \(Self.name) --help") }
                        parsed.values[name] = argv[i]
                    }
                } else {
                    guard inline == nil else { throw .message("\(name) takes no value") }
                    parsed.flags.insert(name)
                }
            } else {
                parsed.positional.append(a)
            }
            i += 1
        }
        guard positionals.contains(parsed.positional.count) else {
            throw .message("usage: photoboothctl \(synopsis)")
        }
        return parsed
    }
}

// MARK: Output

/// Writes a line to stderr, prefixed `photoboothctl: `.
func warn(_ message: String) { FileHandleOutput.stderr("photoboothctl: \(message)") }

enum FileHandleOutput {
    /// Writes `line` and a newline to stderr (fd 2, unbuffered) with ``writeAll(_:to:call:subject:using:)``;
    /// a failure is dropped (there is nowhere left to say it).
    static func stderr(_ line: String) {
        try? writeAll(Array("\(line)\n".utf8), to: 2, subject: "stderr")
    }

    /// Writes `bytes` to stdout (fd 1) whole with ``writeAll(_:to:call:subject:using:)`` (short writes
    /// continued, EINTR retried). - Throws: ``SystemCallError`` from `write(2)` (EPIPE: the reader went away; ENOSPC…).
    static func stdout(_ bytes: [UInt8]) throws(SystemCallError) {
        try writeAll(bytes, to: 1, subject: "stdout")
    }
}

/// Prints `value` as pretty JSON with sorted keys.
func printJSON<T: Encodable>(_ value: T) {
    guard let data = try? ControlProtocol.encoder(pretty: true).encode(value) else { return }
    print(String(decoding: data, as: UTF8.self))
}

/// The exit code for a failed daemon request, after printing why.
func report(_ error: ControlClientError) -> Int32 {
    warn(error.description)
    switch error {
    case .notRunning: return ExitCode.unavailable
    case .notAllowed: return ExitCode.noPermission
    case let .failed(failure):
        switch failure.code {
        case "reload-refused", "printing-off": return ExitCode.config
        case "bad-file", "out-of-range": return ExitCode.dataError
        case "unavailable", "busy": return ExitCode.tempFail
        default: return ExitCode.software
        }
    case .broken: return ExitCode.ioError
    }
}

/// Sends one request to the daemon and waits up to `timeoutSeconds` (s) for its reply, decoded as `type`.
/// - Throws: `ControlClientError` (not running, not allowed, refused, broken reply).
func ask<R: Codable & Sendable>(_ request: ControlRequest, socket: String?, as type: R.Type,
                                 timeoutSeconds: Int = 10) throws(ControlClientError) -> R {
    let client = try ControlClient(socket: socket)
    return try client.send(request, expecting: type, timeoutSeconds: timeoutSeconds)
}

/// Sends `command` (with `reset`) to the daemon: `ask(ControlRequest(command, reset: reset), …)`.
func ask<R: Codable & Sendable>(_ command: ControlProtocol.Command, socket: String?, reset: Bool? = nil,
                                 as type: R.Type, timeoutSeconds: Int = 10) throws(ControlClientError) -> R {
    try ask(ControlRequest(command, reset: reset), socket: socket, as: type, timeoutSeconds: timeoutSeconds)
}

/// Sends `request` to the daemon (`--socket`) and prints the reply: as JSON with `--json`, else `text(reply)`.
/// Returns 0, or after printing why, the exit code for the failed request (`report`).
func answer<R: Codable & Sendable>(_ request: ControlRequest, _ args: ParsedArguments, as type: R.Type,
                                    json: (R) -> R = { $0 }, text: (R) -> String, code: (R) -> Int32 = { _ in ExitCode.ok }) -> Int32 {
    do {
        let reply = try ask(request, socket: args.socket, as: type)
        if args.json { printJSON(json(reply)) } else { print(text(reply)) }
        return code(reply)
    } catch { return report(error) }
}

/// `1h 2m 3s`.
func formatDuration(seconds: Int) -> String {
    let d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60
    if d > 0 { return "\(d)d \(h)h \(m)m" }
    if h > 0 { return "\(h)h \(m)m \(s)s" }
    if m > 0 { return "\(m)m \(s)s" }
    return "\(s)s"
}

/// A number of frames per second without needless decimals: `30`, `29.97`.
func formatRate(_ fps: Double) -> String {
    let r = (fps * 100).rounded() / 100
    return r == r.rounded() ? String(Int(r)) : String(r)
}

extension String {
    /// The string cut or padded with `pad` to `length` characters, as Foundation's NSString method of this
    /// name does for the one-character pads used here (photoboothctl imports only FoundationEssentials,
    /// which lacks it).
    func padding(toLength length: Int, withPad pad: String, startingAt _: Int) -> String {
        count >= length ? String(prefix(length)) : self + String(repeating: pad, count: length - count)
    }
}
