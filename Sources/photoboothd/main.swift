import BoothCamera
import BoothRuntime
import BoothWiring
import Glibc

// photoboothd: the kiosk daemon. Thin: its options, then BoothWiring's runDaemon (settings, devices, BoothRuntime.run()).

let usage = """
    Usage: photoboothd [options]

    The photobooth kiosk daemon: live view, countdown, capture, review.

    Options:
      --config FILE     settings file (default \(defaultConfigPath), with --simulate
                        \(simulatedConfigPath); missing = built-in defaults)
      --set KEY=VALUE   override one setting, e.g. --set session.countdown=5s (repeatable)
      --simulate        built-in test-pattern camera, the terminal as the button
                        (Enter = press, c + Enter = long press); everything it keeps
                        stays in the working directory: photos and totals in ./photos,
                        the session-number record ./session-number,
                        file preview ./preview.jpg, print journal ./print-journal.json,
                        print spool ./prints, gallery index ./gallery/index.sqlite
                        and secret ./gallery.secret, settings ./photobooth.conf
                        (--set wins)
      --camera PATH     with --simulate: use this real V4L2 camera (e.g. /dev/video0)
      --corrupt-frames N[:KIND,...]
                        with --simulate: the test-pattern camera spoils every Nth frame,
                        KINDs in turn (truncated, no-eoi, empty, garbage, corrupt-data;
                        default all), as a cheap webcam does; camera.format = mjpeg
                        makes it send MJPEG
      --sessions N      exit 0 after N completed sessions
      --auto-press      press whenever the booth is idle
      --socket PATH     control socket for photoboothctl (default /run/photobooth/control
                        as root, else $XDG_RUNTIME_DIR/photobooth/control; --simulate
                        always uses the latter)
      --check           check the settings and devices, print what is wrong, exit
                        (0 when all is well, 69 when a device or CUPS is not
                        available, 78 when the settings cannot work here)
      --verbose         also log debug lines
      --help, --version

    Exit codes (sysexits): 0 stopped by SIGTERM or --sessions; 64 bad option; 66 config
    file unreadable; 69 device unavailable (--check); 75 another photoboothd is running
    on the same control socket (it holds the socket's .lock file); 78 invalid settings.
    """

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
