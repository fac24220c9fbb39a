import BoothCamera
import BoothControl
import BoothCore
import BoothPorts
import BoothRuntime
import Glibc

// photoboothctl: the operator's admin CLI. Each subcommand is one type (ConfigCommands.swift,
// DaemonCommands.swift); this file picks it from the words on the command line.

let commands: [any Subcommand.Type] = [
    ConfigShow.self, ConfigGet.self, ConfigSet.self, ConfigValidate.self, ConfigDescribe.self, ConfigInit.self,
    Status.self, Devices.self, Press.self, Snapshot.self, Reload.self, Stats.self,
    TestPrint.self, Refill.self, Prints.self, PrintsList.self, PrintsReprint.self, PrintsCancel.self, PrintsPurge.self, PrintsResume.self,
    Gallery.self, GalleryStatusCommand.self, GalleryURL.self, GalleryRemove.self, GalleryRebuild.self, GalleryTestAlert.self,
]

let usage: String = {
    var text = """
        Usage: photoboothctl [options] COMMAND [options]

        The photobooth's admin tool: configure the booth, check it, drive it.

        Commands:

        """
    // The longest command's name and two spaces: a name is never cut into its summary.
    var width = 0
    for c in commands { width = max(width, c.name.count + 2) }
    for c in commands {
        text += "  " + c.name.padding(toLength: width, withPad: " ", startingAt: 0) + c.summary + "\n"
    }
    text += """

        'photoboothctl COMMAND --help' explains each. Data commands take --json. Options go before or
        after the command (photoboothctl --socket PATH status = photoboothctl status --socket PATH).
        The daemon is reached on its control socket (\(ControlSocketPath.system) for the system booth,
        \(ControlSocketPath.user()) for photoboothd --simulate; --socket PATH names another); it answers
        root and members of group 'photobooth'.
        Exit codes (sysexits): 0 ok; 64 usage; 65 bad value; 66 no input file; 69 daemon not running;
        73 cannot create a file; 74 I/O error; 75 try again; 77 not allowed; 78 invalid config.
        """
    return text
}()

/// The command line with options given before the command moved after its words: options go before or
/// after the command (`--socket PATH status` = `status --socket PATH`); each command then checks its own.
@MainActor func commandFirst(_ argv: [String]) -> [String] {
    let takesValue = Set(commands.flatMap { $0.options.filter(\.takesValue).map(\.name) })
    var leading: [String] = []
    var i = 0
    while i < argv.count, argv[i].hasPrefix("--"), argv[i].count > 2, !["--help", "--version"].contains(argv[i]) {
        leading.append(argv[i])
        if !argv[i].contains("="), takesValue.contains(argv[i]) {
            guard i + 1 < argv.count else {
                warn("\(argv[i]) needs a value; see photoboothctl --help")
                exit(ExitCode.usage)
            }
            leading.append(argv[i + 1])
            i += 1
        }
        i += 1
    }
    let rest = Array(argv[i...])
    guard !leading.isEmpty else { return argv }
    guard !rest.isEmpty else {
        warn("no command after \(leading.joined(separator: " ")); see photoboothctl --help")
        exit(ExitCode.usage)
    }
    // Not a whole command (`config` alone, a typo): the words alone, so the error names them, not an option.
    guard let command = commands.filter({ rest.starts(with: $0.words) }).max(by: { $0.words.count < $1.words.count })
    else { return rest }
    return command.words + leading + Array(rest.dropFirst(command.words.count))
}

// camera.backend's values: the built-in camera backends' names (checked by `config validate`, `config set`,
// listed by `config describe`, the man pages and the completion).
CameraBackends.installNames()

// Hidden: the man pages and the bash completion, generated from the table above (tools/regen-man).
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--generate" { exit(generate(CommandLine.arguments[2])) }
let argv = commandFirst(Array(CommandLine.arguments.dropFirst()))
switch argv.first {
case "--help", "-h", "help":
    print(usage)
    exit(ExitCode.ok)
case "--version":
    print(versionText(program: "photoboothctl"))
    exit(ExitCode.ok)
case nil:
    print(usage)
    exit(ExitCode.usage)
default:
    break
}

// The longest match of words wins: "config set" before a lone "config".
let match = commands
    .filter { argv.starts(with: $0.words) }
    .max { $0.words.count < $1.words.count }
/// `; did you mean 'NAME'?` for the name closest to a mistyped `word`, as for a mistyped key (Spelling, BoothCore); else empty.
func suggestion(_ word: String, among names: [String]) -> String {
    Spelling.closest(to: word, among: names).map { "; did you mean '\($0)'?" } ?? ""
}

guard let command = match else {
    if argv.first == "config" {
        let known = commands.filter { $0.words.first == "config" }.map { $0.words.dropFirst().joined() }
        warn(argv.count > 1 ? "unknown config command '\(argv[1])'\(suggestion(argv[1], among: known)); known: \(known.joined(separator: ", "))"
                            : "config needs a command: \(known.joined(separator: ", "))")
    } else {
        let firstWords = Array(Set(commands.compactMap { $0.words.first })).sorted()
        warn("unknown command '\(argv[0])'\(suggestion(argv[0], among: firstWords)); see photoboothctl --help")
    }
    exit(ExitCode.usage)
}
do {
    let parsed = try command.parse(Array(argv.dropFirst(command.words.count)))
    exit(command.init(args: parsed).run())
} catch let UsageError.message(message) {
    warn(message)
    exit(ExitCode.usage)
}
