import BoothCamera
import BoothClock
import BoothControl
import BoothCore
import BoothDeviceListing
import BoothJPEG
import BoothLayout
import BoothPorts
import BoothRuntime
import BoothWiring
import Dispatch
import Glibc

// photoboothd: the kiosk daemon. Thin: options, settings, devices, then BoothRuntime.run().

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

struct Arguments {
    var configPath = defaultConfigPath
    var configGiven = false
    var overrides: [(key: String, value: String)] = []
    var simulate = false
    var cameraPath: String?
    var corruptFrames: SimulatedFrameCorruption?
    var sessions: Int?
    var autoPress = false
    var check = false
    var verbose = false
    var socketPath: String?
    var stallLoopAfter: Int?
    var reviewMilliseconds: Int?
    var autoPressDelay: Int?
}

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
var overrides: [(key: String, value: String)] = args.overrides
if args.simulate {
    // The simulated booth keeps everything in the working directory unless --set says otherwise.
    overrides.insert(contentsOf: simulatedOverrides, at: 0)
    if let cam = args.cameraPath { overrides.append((key: "camera.device", value: cam)) }
}
let log = Logger(threshold: args.verbose ? .debug : .info)
// libv4l2's and libcamera's own messages, which they write to stderr bare, into this log at their priority.
for problem in CameraLibraryLogs.route(to: log) { log.warning("camera: \(problem)") }
let config = DaemonConfig(path: args.configPath, required: args.configGiven, overrides: overrides,
                          reviewMilliseconds: args.reviewMilliseconds)
func loadOrExit(_ config: DaemonConfig) -> (settings: Settings, notes: [String], warnings: [Diagnostic], sources: SettingSources) {
    do {
        return try config.load()
    } catch {
        fail("invalid settings, not starting:\n\(error)", error.exitCode)
    }
}
let loaded = loadOrExit(config)
for note in loaded.notes { log.info(note) }
for warning in loaded.warnings { log.warning(warning.description) }

if let c = args.corruptFrames { log.notice("simulated camera: corrupt frames on purpose, \(c)") }
let factory = args.simulate ? simulatedDevices(realCamera: args.cameraPath != nil, corruption: args.corruptFrames, log: log)
    : realDevices(log: log)

// The [picture] layout: its font, overlay and background image are read now (also by --check), so a
// missing file stops the start with the key to fix instead of failing the first series.
let composer: (any PictureComposing)?
do {
    composer = try makePictureComposer(loaded.settings)
} catch {
    let why = pictureDiagnostics(loaded.settings, sources: loaded.sources).map(\.description)
    fail("invalid settings, not starting:\n" + (why.isEmpty ? "\(args.configPath): [picture]: \(error)" : why.joined(separator: "\n")), 78)
}
if composer == nil {
    // Not needed with one shot; said now rather than when the shot count changes.
    for d in pictureDiagnostics(loaded.settings, sources: loaded.sources) { log.warning(d.description) }
}

if args.check {
    exit(checkDevices(settings: loaded.settings, sources: loaded.sources, factory: factory, log: log))
}

// One daemon per control socket: its lock is taken before any device is opened or any file written (after
// the settings, the picture files and --check were read), and held until exit.
let socketPath = args.socketPath ?? ControlSocketPath.forDaemon(simulated: args.simulate)
var socketLock: ControlSocketLock?
do {
    // A daemon that is stopping (a restart by hand: kill -TERM, then start) is waited for, up to 10 s.
    socketLock = try ControlSocketLock.take(socketPath: socketPath, log: { log.notice("control socket: \($0)") })
} catch {
    switch error {
    case .held, .stillStopping: fail("not starting: \(error)", ExitCode.tempFail)
    case .failed: break
    }
    // The lock could not even be tried (its file unreadable, a directory, a link): still never a second
    // booth beside one that answers on this socket, opening the same camera and button.
    if let probe = try? ControlClient.connect(socketPath) {
        close(probe)
        fail("not starting: another photoboothd answers on the control socket \(socketPath), and its lock is "
             + "not available (\(error)); stop it first, or give this one another --socket PATH", ExitCode.tempFail)
    }
    log.error("control socket lock not available, photoboothctl cannot reach this daemon: \(error)")
}

var runtimeOptions = RuntimeOptions(sessionLimit: args.sessions, autoPress: args.autoPress)
let daemonGallery = gallery(loaded.settings, log: log)
if let sink = daemonGallery.sink {
    runtimeOptions.pictureSinks.append(sink)
    runtimeOptions.pictureLink = daemonGallery.link
}
runtimeOptions.composer = composer
runtimeOptions.composerFactory = { try makePictureComposer($0) }
// Under systemd (Type=notify): READY/STATUS/WATCHDOG to $NOTIFY_SOCKET; nil otherwise.
runtimeOptions.systemd = SystemdNotifier.fromEnvironment()
runtimeOptions.stallLoopAfterMilliseconds = args.stallLoopAfter
if let ms = args.autoPressDelay { runtimeOptions.autoPressDelayMilliseconds = ms }
// `status` compares the file on disk with the settings in force: read as a reload would, not logged.
runtimeOptions.configReader = { config.read() }
if let n = runtimeOptions.systemd {
    log.info("systemd: notifications to \(n.socketPath)"
             + (n.watchdogIntervalMilliseconds.map { ", WATCHDOG=1 every \($0) ms while alive" } ?? ", no watchdog"))
}
let runtime = BoothRuntime(
    settings: loaded.settings,
    options: runtimeOptions,
    factory: factory, log: log,
    reloader: { config.reload(log: log) })

// The control socket for photoboothctl, served on a thread of its own. Without it the booth still runs.
var info = DaemonInfo(version: photoboothVersion, protocolVersion: ControlProtocol.version, pid: getpid(),
                      configPath: absolutePath(config.path), simulated: args.simulate)
info.overriddenKeys = Array(Set(config.overrides.map(\.key))).sorted()
let galleryAdmin = daemonGallery.admin(photosDir: { runtime.photosDirectory }, removed: { runtime.forgetIdleLink(token: $0) },
                                      configured: { try? config.load().settings.gallery })
// An index deleted or replaced while the booth runs is made again from the photos (looked at every 2 s).
galleryAdmin.startKeeping()
let controlServer = ControlServer(path: socketPath, lock: socketLock, log: log, handler: runtime.controlHandler(
    info: info, devices: { DeviceReport.gather(source: $0, screens: ScreenRegistry.builtIn.deviceSections) }, jpegSize: { try? JPEGDecoder().header($0).size },
    gallery: galleryAdmin))
if socketLock != nil {
    do {
        try controlServer.start()
    } catch {
        log.error("control socket not available, photoboothctl cannot reach this daemon: \(error)")
    }
}

// Signals arrive on a dispatch queue of their own and become events for the main loop. The handlers are
// made in a nonisolated function: a closure written here in top-level code would be main-actor isolated,
// and the runtime's isolation check kills the process when the signal queue runs it.
let signalSources = installSignalHandlers(runtime: runtime, log: log)
signal(SIGPIPE, SIG_IGN)

// The operator's alerts: each change of a fault, the paper or the storage, into the index for photobooth-gallery.
let alerts = daemonGallery.index.map { AlertRecorder(index: $0, runtime: runtime, log: log) }
alerts?.start()

let code = runtime.run()
alerts?.stop()
galleryAdmin.stopKeeping()
controlServer.stop()
exit(code)
