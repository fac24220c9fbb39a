import BoothCamera
import BoothClock
import BoothControl
import BoothCore
import BoothDeviceListing
import BoothIndex
import BoothJPEG
import BoothLayout
import BoothPorts
import BoothRuntime
import Dispatch
import Glibc

/// photoboothd's options, as its command line gives them (main.swift parses them).
public struct DaemonOptions: Sendable {
    /// The settings file (`--config`; with `--simulate` and no `--config`, ./photobooth.conf).
    public var configPath = defaultConfigPath
    /// True when `--config` named it: a missing file is then an error.
    public var configGiven = false
    /// `--set KEY=VALUE`, in order.
    public var overrides: [(key: String, value: String)] = []
    /// `--simulate`: the built-in camera, the terminal as the button, everything in the working directory.
    public var simulate = false
    /// `--camera PATH` (with `--simulate`): a real camera instead of the test pattern.
    public var cameraPath: String?
    /// `--corrupt-frames` (with `--simulate`): frames spoiled on purpose.
    public var corruptFrames: SimulatedFrameCorruption?
    /// `--sessions N`: exit 0 after N completed sessions.
    public var sessions: Int?
    /// `--auto-press`: press whenever the booth is idle.
    public var autoPress = false
    /// `--check`: check the settings and devices, then exit.
    public var check = false
    /// `--verbose`: debug lines too.
    public var verbose = false
    /// `--socket PATH`: the control socket (nil: the default for the user and `--simulate`).
    public var socketPath: String?
    /// Test hook `--test-stall-loop-after`: the main loop stops for good after this many ms.
    public var stallLoopAfter: Int?
    /// Soak hook `--test-review`: the review lasts this many ms.
    public var reviewMilliseconds: Int?
    /// Soak hook `--test-auto-press-delay`: `--auto-press` presses this many ms after idle.
    public var autoPressDelay: Int?

    /// The defaults: no option given.
    public init() {}
}

/// photoboothd after its command line: the settings (``DaemonConfig``), the devices (``realDevices(screens:log:)``
/// or ``simulatedDevices(realCamera:corruption:screens:log:)``), the picture composer, `--check`, the control
/// socket's lock and server, the gallery's side, the signals and the alerts, then ``BoothRuntime/run()``.
/// - Parameter fail: says why the daemon does not start and exits with the code (never returns).
/// - Returns: the exit code: `--check`'s, or the runtime's when it stops.
public func runDaemon(_ args: DaemonOptions, fail: (String, Int32) -> Never) -> Int32 {
    // camera.backend's values: the built-in camera backends' names, before the settings are read.
    CameraBackends.installNames()
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
    let loaded: (settings: Settings, notes: [String], warnings: [Diagnostic], sources: SettingSources)
    do {
        loaded = try config.load()
    } catch {
        fail("invalid settings, not starting:\n\(error)", error.exitCode)
    }
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
        return checkDevices(settings: loaded.settings, sources: loaded.sources, factory: factory, log: log)
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
    // made in a nonisolated function: a closure written in main.swift's top-level code would be main-actor
    // isolated, and the runtime's isolation check kills the process when the signal queue runs it. They are
    // kept until the runtime returns.
    let signalSources = installSignalHandlers(runtime: runtime, log: log)
    signal(SIGPIPE, SIG_IGN)

    // The operator's alerts: each change of a fault, the paper or the storage, into the index for photobooth-gallery.
    let alerts = daemonGallery.index.map { AlertRecorder(index: $0, runtime: runtime, log: log) }
    alerts?.start()

    let code = withExtendedLifetime(signalSources) { runtime.run() }
    alerts?.stop()
    galleryAdmin.stopKeeping()
    controlServer.stop()
    return code
}
