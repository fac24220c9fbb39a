import BoothCamera
import BoothClock
import BoothControl
import BoothCommandLine
import BoothCore
import BoothDeviceListing
import BoothJPEG
import BoothLayout
import BoothPorts
import BoothRuntime
import Dispatch
import Glibc

// photoboothd: the kiosk daemon. Thin: options, settings, devices, then BoothRuntime.run().

// --help: rendered from photoboothd's option table (BoothCommandLine), which its man page photoboothd(8) is made of too.
let usage = DaemonCommandLine.usage

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
/// The settings as loaded, with the soak hooks that go below the schema's floors applied.
func withTestHooks(_ s: Settings, _ args: Arguments) -> Settings {
    var s = s
    if let ms = args.reviewMilliseconds { s.session.reviewMilliseconds = ms }
    return s
}
func loadOrExit(_ args: Arguments, _ overrides: [(key: String, value: String)])
    -> (settings: Settings, notes: [String], warnings: [Diagnostic], sources: SettingSources) {
    do {
        let loaded = try loadSettings(path: args.configPath, required: args.configGiven, overrides: overrides)
        return (withTestHooks(loaded.settings, args), loaded.notes, loaded.warnings, loaded.sources)
    } catch {
        fail("invalid settings, not starting:\n\(error)", error.exitCode)
    }
}
let loaded = loadOrExit(args, overrides)
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

let configPath = args.configPath, configGiven = args.configGiven, finalOverrides = overrides
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
runtimeOptions.configReader = {
    do {
        return .success(withTestHooks(try loadSettings(path: configPath, required: configGiven, overrides: finalOverrides).settings, args))
    } catch let ConfigLoadError.invalid(e) {
        return .failure(e)
    } catch {
        return .failure(SettingsError(diagnostics: [Diagnostic(file: configPath, line: nil, key: nil,
                                                               message: "\(error)", severity: Diagnostic.Severity.error)]))
    }
}
if let n = runtimeOptions.systemd {
    log.info("systemd: notifications to \(n.socketPath)"
             + (n.watchdogIntervalMilliseconds.map { ", WATCHDOG=1 every \($0) ms while alive" } ?? ", no watchdog"))
}
let runtime = BoothRuntime(
    settings: loaded.settings,
    options: runtimeOptions,
    factory: factory, log: log,
    reloader: {
        do {
            let reloaded = try loadSettings(path: configPath, required: configGiven, overrides: finalOverrides)
            // Located where each key was set (a --set flag, not the file), before the runtime makes the composer.
            let picture = pictureDiagnostics(reloaded.settings, sources: reloaded.sources)
            if picture.contains(where: { $0.severity == .error }) { return .failure(SettingsError(diagnostics: picture)) }
            for w in reloaded.warnings + picture { log.warning(w.description) }
            return .success(withTestHooks(reloaded.settings, args))
        } catch let ConfigLoadError.invalid(e) {
            return .failure(e)
        } catch {
            return .failure(SettingsError(diagnostics: [Diagnostic(file: configPath, line: nil, key: nil,
                                                                   message: "\(error)", severity: Diagnostic.Severity.error)]))
        }
    })

// The control socket for photoboothctl, served on a thread of its own. Without it the booth still runs.
var info = DaemonInfo(version: photoboothVersion, protocolVersion: ControlProtocol.version, pid: getpid(),
                      configPath: absolutePath(configPath), simulated: args.simulate)
info.overriddenKeys = Array(Set(finalOverrides.map(\.key))).sorted()
let galleryAdmin = daemonGallery.admin(photosDir: { runtime.photosDirectory }, removed: { runtime.forgetIdleLink(token: $0) },
                                      configured: { try? loadSettings(path: configPath, required: configGiven, overrides: finalOverrides).settings.gallery })
// An index deleted or replaced while the booth runs is made again from the photos (looked at every 2 s).
galleryAdmin.startKeeping()
let controlServer = ControlServer(path: socketPath, lock: socketLock, log: log, handler: runtime.controlHandler(
    info: info, devices: { DeviceReport.gather(source: $0) }, jpegSize: { try? JPEGDecoder().header($0).size },
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
