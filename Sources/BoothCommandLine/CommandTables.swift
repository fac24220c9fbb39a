import BoothCore
import BoothRuntime

/// One command-line option of a program, as its `--help` and its man page show it.
public struct CommandLineOption: Sendable, Equatable {
    /// Its spellings as shown, e.g. `["--config"]`, `["--help", "--version"]` (hidden aliases like `-h` left out).
    public var names: [String]
    /// The value it takes, e.g. `"FILE"`; nil for a flag.
    public var argument: String?
    /// What `--help` says of it, one string per line as printed (wrapped by hand); may be empty.
    public var help: [String]
    /// What the man page says when it says more than `help`; nil: `help`'s lines joined.
    public var manual: String?

    /// An option named `names`, taking `argument` (nil: a flag), described by `help`'s lines and `manual`.
    public init(_ names: [String], argument: String? = nil, help: [String], manual: String? = nil) {
        self.names = names
        self.argument = argument
        self.help = help
        self.manual = manual
    }

    /// The option's words as `--help` lists them: `--config FILE`, `--help, --version`.
    public var usageName: String { names.joined(separator: ", ") + (argument.map { " \($0)" } ?? "") }

    /// The man page's text for it: ``manual``, else ``help``'s lines joined by spaces.
    public var manualText: String { manual ?? help.joined(separator: " ") }
}

/// One `photoboothctl` command as its table declares it (photoboothctl's `Subcommand`): the man page and
/// the bash completion are generated from a list of these.
public struct CommandEntry: Sendable, Equatable {
    /// The words that select it: `["config", "set"]`.
    public var words: [String]
    /// The usage line after `photoboothctl`, starting with ``words``: `config set KEY VALUE [--file F]`.
    public var synopsis: String
    /// One line for the command list.
    public var summary: String
    /// More lines for `--help` (prose, wrapped by hand), may be empty.
    public var details: String
    /// Its options besides `--help`.
    public var options: [CommandLineOption]

    /// A command as photoboothctl's table has it (see the properties).
    public init(words: [String], synopsis: String, summary: String, details: String, options: [CommandLineOption]) {
        self.words = words
        self.synopsis = synopsis
        self.summary = summary
        self.details = details
        self.options = options
    }

    /// The placeholders of its positional arguments, in order, read from ``synopsis`` after the words
    /// (options in brackets and their values left out, brackets of optional ones removed):
    /// `config set KEY VALUE [--json]` → `["KEY", "VALUE"]`, `config describe [KEY|SECTION]` → `["KEY|SECTION"]`.
    public var positionals: [String] {
        var tokens = synopsis.split(separator: " ").map(String.init)
        tokens.removeFirst(min(words.count, tokens.count))
        var out: [String] = []
        var inOption = false
        for t in tokens {
            if inOption {
                if t.hasSuffix("]") { inOption = false }
                continue
            }
            if t.hasPrefix("[--") {
                inOption = !t.hasSuffix("]")
                continue
            }
            if t.hasPrefix("--") { continue }
            out.append(String(t.drop { $0 == "[" }.reversed().drop { $0 == "]" }.reversed()))
        }
        return out
    }
}

/// An exit status of a program (sysexits(3)) and what it means there.
public struct ExitStatus: Sendable, Equatable {
    /// The process's exit code, one of ``ExitCode``'s (0, or 64 to 78).
    public var code: Int32
    /// What it means for this program, a phrase without a final full stop.
    public var meaning: String

    /// Exit `code` with its `meaning`.
    public init(_ code: Int32, _ meaning: String) {
        self.code = code
        self.meaning = meaning
    }
}

/// photoboothd's command line: its options and exit statuses. Its `--help` (``usage``) and its man page
/// photoboothd(8) are rendered from these tables.
public enum DaemonCommandLine {
    /// The options `--help` lists, in its order. Test hooks (`--test-*`) are not listed.
    public static let options: [CommandLineOption] = [
        CommandLineOption(["--config"], argument: "FILE", help: [
            "settings file (default \(defaultConfigPath), with --simulate",
            "\(simulatedConfigPath); missing = built-in defaults)",
        ], manual: "The settings file, photobooth.conf(5) (default \(defaultConfigPath), with --simulate "
            + "\(simulatedConfigPath)). A missing default file means the built-in defaults; a missing file named here is an error."),
        CommandLineOption(["--set"], argument: "KEY=VALUE", help: [
            "override one setting, e.g. --set session.countdown=5s (repeatable)",
        ]),
        CommandLineOption(["--simulate"], help: [
            "built-in test-pattern camera, the terminal as the button",
            "(Enter = press, c + Enter = long press); everything it keeps",
            "stays in the working directory: photos and totals in ./photos,",
            "the session-number record ./session-number,",
            "file preview ./preview.jpg, print journal ./print-journal.json,",
            "print spool ./prints, gallery index ./gallery/index.sqlite",
            "and secret ./gallery.secret, settings ./photobooth.conf",
            "(--set wins)",
        ]),
        CommandLineOption(["--camera"], argument: "PATH", help: [
            "with --simulate: use this real V4L2 camera (e.g. /dev/video0)",
        ]),
        CommandLineOption(["--corrupt-frames"], argument: "N[:KIND,...]", help: [
            "with --simulate: the test-pattern camera spoils every Nth frame,",
            "KINDs in turn (truncated, no-eoi, empty, garbage, corrupt-data;",
            "default all), as a cheap webcam does; camera.format = mjpeg",
            "makes it send MJPEG",
        ]),
        CommandLineOption(["--sessions"], argument: "N", help: ["exit 0 after N completed sessions"]),
        CommandLineOption(["--auto-press"], help: ["press whenever the booth is idle"]),
        CommandLineOption(["--socket"], argument: "PATH", help: [
            "control socket for photoboothctl (default /run/photobooth/control",
            "as root, else $XDG_RUNTIME_DIR/photobooth/control; --simulate",
            "always uses the latter)",
        ]),
        CommandLineOption(["--check"], help: [
            "check the settings and devices, print what is wrong, exit",
            "(0 when all is well, 69 when a device or CUPS is not",
            "available, 78 when the settings cannot work here)",
        ]),
        CommandLineOption(["--verbose"], help: ["also log debug lines"]),
        CommandLineOption(["--help", "--version"], help: [],
                          manual: "Print this usage (--help) or the version and licence (--version), and exit 0."),
    ]

    /// What each exit status means, in `--help`'s words.
    public static let exitStatuses: [ExitStatus] = [
        ExitStatus(ExitCode.ok, "stopped by SIGTERM or --sessions"),
        ExitStatus(ExitCode.usage, "bad option"),
        ExitStatus(ExitCode.noInput, "config file unreadable"),
        ExitStatus(ExitCode.unavailable, "device unavailable (--check)"),
        ExitStatus(ExitCode.tempFail, "another photoboothd is running on the same control socket (it holds the socket's .lock file)"),
        ExitStatus(ExitCode.config, "invalid settings"),
    ]

    /// The one-line description: `--help`'s second paragraph, the man page's NAME.
    public static let summary = "The photobooth kiosk daemon: live view, countdown, capture, review."

    /// What `photoboothd --help` prints: usage line, summary, the options in two columns (the name padded
    /// to 18 columns, or alone on its line when longer, the help's lines at column 20), the exit codes
    /// wrapped at 83 columns. No trailing newline.
    public static var usage: String {
        var lines = ["Usage: photoboothd [options]", "", summary, "", "Options:"]
        for option in options {
            let name = option.usageName
            var help = option.help
            if help.isEmpty {
                lines.append("  " + name)
                continue
            }
            if name.count + 2 <= 18 {
                lines.append("  " + name + String(repeating: " ", count: 18 - name.count) + help.removeFirst())
            } else {
                lines.append("  " + name)
            }
            lines += help.map { String(repeating: " ", count: 20) + $0 }
        }
        lines.append("")
        let codes = exitStatuses.map { "\($0.code) \($0.meaning)" }.joined(separator: "; ")
        lines += wrap("Exit codes (sysexits): \(codes).", width: 83)
        return lines.joined(separator: "\n")
    }
}

/// photoboothctl's exit statuses (its commands' `--help` name which each uses).
public enum ControlToolCommandLine {
    /// Every code photoboothctl exits with, as its man page lists them; its `--help` names the common ones.
    public static let exitStatuses: [ExitStatus] = [
        ExitStatus(ExitCode.ok, "ok"),
        ExitStatus(ExitCode.usage, "usage: an unknown command, option or key, or a wrong number of arguments"),
        ExitStatus(ExitCode.dataError, "bad value: a value or argument that is not valid"),
        ExitStatus(ExitCode.noInput, "no input file: a file named on the command line cannot be read"),
        ExitStatus(ExitCode.unavailable, "daemon not running (or a device not available)"),
        ExitStatus(ExitCode.software, "the daemon refused or failed the request"),
        ExitStatus(ExitCode.cantCreate, "cannot create a file"),
        ExitStatus(ExitCode.ioError, "I/O error, or the daemon's reply was not understood"),
        ExitStatus(ExitCode.tempFail, "try again: the booth is busy, or refused for now"),
        ExitStatus(ExitCode.noPermission, "not allowed: the control socket is for root and group photobooth"),
        ExitStatus(ExitCode.config, "invalid config"),
    ]
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word stays whole).
func wrap(_ text: String, width: Int) -> [String] {
    var lines: [String] = []
    var current = ""
    for word in text.split(separator: " ") {
        if !current.isEmpty, current.count + 1 + word.count > width {
            lines.append(current)
            current = ""
        }
        current += (current.isEmpty ? "" : " ") + word
    }
    if !current.isEmpty { lines.append(current) }
    return lines
}
