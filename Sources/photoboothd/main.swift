import BoothCamera
import BoothCommandLine
import BoothRuntime
import BoothWiring
import Glibc

// photoboothd: the kiosk daemon. Thin: its options, then BoothWiring's runDaemon (settings, devices, BoothRuntime.run()).

// --help: rendered from photoboothd's option table (BoothCommandLine), which its man page photoboothd(8) is made of too.
let usage = DaemonCommandLine.usage

/// The options parsed (``DaemonOptions``, BoothWiring's).
typealias Arguments = DaemonOptions

/// Writes why the daemon does not start and exits with `code`. Each line carries syslog priority err
/// (`<3>`, as the log's lines carry theirs, so journald files it under `-p err`), except a usage
/// error's (exit 64: someone typing at a terminal).
func fail(_ message: String, _ code: Int32) -> Never {
    let prefix = code == ExitCode.usage ? "" : "<3>"
    let text = "photoboothd: \(message)".split(separator: "\n", omittingEmptySubsequences: false).map { "\(prefix)\($0)\n" }.joined()
    var line = Array(text.utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    exit(code)
}

func parseArguments(_ argv: [String]) -> Arguments {
    var a = Arguments()
    var i = 1
    func value(_ flag: String) -> String {
        i += 1
        guard i < argv.count else { fail("\(flag) needs a value; see --help", ExitCode.usage) }
        return argv[i]
    }
    while i < argv.count {
        let arg = argv[i]
        switch arg {
        case "--help", "-h": print(usage); exit(0)
        case "--version": print(versionText(program: "photoboothd")); exit(0)
        case "--config": a.configPath = value(arg); a.configGiven = true
        case "--set":
            let kv = value(arg)
            guard let eq = kv.firstIndex(of: "=") else { fail("--set takes KEY=VALUE, got '\(kv)'", ExitCode.usage) }
            a.overrides.append((String(kv[..<eq]), String(kv[kv.index(after: eq)...])))
        case "--simulate": a.simulate = true
        case "--camera": a.cameraPath = value(arg)
        case "--corrupt-frames":
            let v = value(arg)
            guard let c = SimulatedFrameCorruption(parsing: v) else {
                fail("--corrupt-frames takes N or N:KIND,KIND... (kinds: \(SimulatedFrameCorruption.Kind.allCases.map(\.rawValue).joined(separator: ", "))), got '\(v)'", ExitCode.usage)
            }
            a.corruptFrames = c
        case "--sessions":
            let v = value(arg)
            guard let n = Int(v), n > 0 else { fail("--sessions takes a positive whole number, got '\(v)'", ExitCode.usage) }
            a.sessions = n
        case "--auto-press": a.autoPress = true
        case "--check": a.check = true
        case "--socket": a.socketPath = value(arg)
        case "--verbose", "-v": a.verbose = true
        case "--test-stall-loop-after":
            // Test hook, not in --help: the main loop stops for good after this many ms (watchdog tests).
            let v = value(arg)
            guard let ms = Int(v), ms >= 0 else { fail("--test-stall-loop-after takes milliseconds, got '\(v)'", ExitCode.usage) }
            a.stallLoopAfter = ms
        case "--test-review":
            // Soak hook, not in --help: the review lasts this many ms, below session.review's 1 s floor.
            let v = value(arg)
            guard let ms = Int(v), (0...300_000).contains(ms) else { fail("--test-review takes 0 to 300000 milliseconds, got '\(v)'", ExitCode.usage) }
            a.reviewMilliseconds = ms
        case "--test-auto-press-delay":
            // Soak hook, not in --help: --auto-press presses this many ms after idle (default 300).
            let v = value(arg)
            guard let ms = Int(v), (0...60_000).contains(ms) else { fail("--test-auto-press-delay takes 0 to 60000 milliseconds, got '\(v)'", ExitCode.usage) }
            a.autoPressDelay = ms
        default: fail("unknown option '\(arg)'; see --help", ExitCode.usage)
        }
        i += 1
    }
    if a.cameraPath != nil && !a.simulate { fail("--camera goes with --simulate; set camera.device in the config instead", ExitCode.usage) }
    if a.corruptFrames != nil && (!a.simulate || a.cameraPath != nil) {
        fail("--corrupt-frames goes with --simulate and its test-pattern camera (not --camera)", ExitCode.usage)
    }
    // The simulated booth reads its settings from the working directory too, never the system booth's file.
    if a.simulate && !a.configGiven { a.configPath = simulatedConfigPath }
    return a
}

let args = parseArguments(CommandLine.arguments)
exit(runDaemon(args, fail: fail))
