import BoothCore
import BoothPorts
import FoundationEssentials

/// How `photoboothd` was started, beyond the settings.
public struct RuntimeOptions: Sendable {
    /// `--sessions N`: exit 0 after N completed sessions.
    public var sessionLimit: Int?
    /// `--auto-press`: press whenever the booth is idle (demo, soak tests).
    public var autoPress = false
    /// Delay before an automatic press, in milliseconds.
    public var autoPressDelayMilliseconds = 300
    /// The wall clock of the print journal (seconds since 1970): request times, and the backlog age of
    /// requests from before a restart (this run's are aged on the runtime's monotonic clock).
    public var wallClock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
    /// systemd's notification socket (`Type=notify`): READY, STATUS and WATCHDOG go there (ServiceSupervision.swift).
    public var systemd: SystemdNotifier?
    /// Test hook (`--test-stall-loop-after`): the main loop stops for good this long after start.
    public var stallLoopAfterMilliseconds: Int?
    /// Composes a session's captures into its picture (the print layout), on a thread of the
    /// runtime's own. nil: a one-shot session's capture is its picture (review and print show the
    /// capture, no picture file), and sessions of 2–4 shots end failed at compose ("no composer").
    public var composer: (any PictureComposing)?
    /// Makes the composer for reloaded settings (photoboothd: ``makePictureComposer(_:)``), called
    /// off the main loop when a reload is asked for; a throw refuses the reload. Nil: `composer`
    /// stays for the daemon's life.
    public var composerFactory: (@Sendable (Settings) throws -> (any PictureComposing)?)?
    /// Reads the config file as a reload would (with the command line's overrides), without logging
    /// or applying anything: `status` compares it with the settings in force. Nil: the reloader is used.
    public var configReader: (@Sendable () -> Result<Settings, SettingsError>)?
    /// The wall clock read when a session begins, handed to the composer as the picture's `takenAt`.
    public var sessionDate: @Sendable () -> Date = { Date() }
    /// Whatever wants each saved capture and picture besides the printer (a gallery, a QR code, a
    /// sync): each gets them after storage's durable save, in order, on a delivery thread of its own
    /// (``PictureDelivery``), so none of them ever delays a session.
    public var pictureSinks: [any PictureSink] = []
    /// The URL a guest fetches a saved photo at (the gallery's), from its path and size in bytes;
    /// nil: no QR code on the review. Called on the main loop: it must not block (the daemon's derives
    /// a token; its folder's id is read once per photos folder).
    public var pictureLink: (@Sendable (_ path: String, _ bytes: Int) -> String?)?

    public init(sessionLimit: Int? = nil, autoPress: Bool = false) {
        self.sessionLimit = sessionLimit
        self.autoPress = autoPress
    }
}

/// Makes the devices for a set of settings: real ones for the booth, simulated ones for `--simulate`,
/// a test's own. The runtime's port of construction: it names only ports, so the runtime never sees a
/// concrete device; photoboothd's wiring (DeviceFactories.swift) fills it with the device modules' kinds.
public struct DeviceFactory: Sendable {
    /// The camera for a set of settings (the source resolved by `camera.backend`, or a test's own),
    /// with the runtime's clock and log; called once, at the runtime's start (and by `--check`).
    public var camera: @Sendable (Settings, any MonotonicClock, Logger) -> any CameraSource
    public var button: @Sendable (Settings) -> any ButtonDevice
    public var led: @Sendable (Settings) -> (any LEDDevice)?
    /// The screens, turned by the booth's one orientation source (the one the camera turns by).
    public var screens: @Sendable (Settings, any MonotonicClock, Logger, any OrientationSource) -> [any DisplaySink]
    /// ``screens`` for screens that do not turn (tests): set, it replaces them.
    public var displays: @Sendable (Settings, any MonotonicClock, Logger) -> [any DisplaySink] {
        get { { [screens, orientation] s, clock, log in screens(s, clock, log, orientation(s)) } }
        set { screens = { s, clock, log, _ in newValue(s, clock, log) } }
    }
    /// The booth's one ``OrientationSource``, made once at start and handed to the camera and every screen.
    public var orientation: @Sendable (Settings) -> any OrientationSource
    /// False when `led` never opens a line by design (`--simulate`): a configured `led.line` is then
    /// not retried.
    public var opensLED: Bool
    /// The photos directory for `[storage]` (`storage.dir`, an absolute or relative path, and the booth's
    /// session-number record `storage.session_file`), made once at start.
    public var photoStorage: @Sendable (Settings.Storage) -> any PhotoStorage
    /// The totals across restarts, kept in the directory given (`storage.dir`), made once at start.
    public var stats: @Sendable (String, Logger) -> any StatsRecording
    /// The printer for `[print]`, made once at start. Its arguments: the settings, the log, the wall
    /// clock in seconds since 1970 (the journal's times) and the monotonic clock that ages this run's
    /// held requests.
    public var printer: @Sendable (Settings.Print, Logger, @escaping @Sendable () -> Double, any MonotonicClock) -> any Printer

    /// Every part given: no defaults here, the concrete kinds are the wiring's.
    public init(cameraSource camera: @escaping @Sendable (Settings, any MonotonicClock, Logger) -> any CameraSource,
                button: @escaping @Sendable (Settings) -> any ButtonDevice,
                led: @escaping @Sendable (Settings) -> (any LEDDevice)?,
                screens: @escaping @Sendable (Settings, any MonotonicClock, Logger, any OrientationSource) -> [any DisplaySink],
                opensLED: Bool,
                orientation: @escaping @Sendable (Settings) -> any OrientationSource,
                photoStorage: @escaping @Sendable (Settings.Storage) -> any PhotoStorage,
                stats: @escaping @Sendable (String, Logger) -> any StatsRecording,
                printer: @escaping @Sendable (Settings.Print, Logger, @escaping @Sendable () -> Double, any MonotonicClock) -> any Printer) {
        self.camera = camera
        self.button = button
        self.led = led
        self.screens = screens
        self.opensLED = opensLED
        self.orientation = orientation
        self.photoStorage = photoStorage
        self.stats = stats
        self.printer = printer
    }
}

// BoothCounters (the counts for logs, `status` and the totals) is the storage port's: BoothPorts/Storage.swift.

// counted(_:_:) ("1 session", "3 sessions") is BoothPorts' (Log.swift), shared with the print worker.

/// The core's timings from the settings. `composesSingleShot`: the runtime has a picture composer,
/// so one-shot sessions are composed too.
public func coreConfig(from s: Settings, composesSingleShot: Bool = false) -> CoreConfig {
    CoreConfig(previewMilliseconds: s.session.previewMilliseconds,
               previewTimeoutMilliseconds: s.session.previewTimeoutMilliseconds,
               countdownSeconds: s.session.countdownSeconds,
               reviewMilliseconds: s.session.reviewMilliseconds,
               captureTimeoutMilliseconds: s.camera.captureTimeoutMilliseconds,
               idleStopMilliseconds: s.camera.idleStopMilliseconds,
               printMode: s.print.mode, shots: s.session.shots,
               betweenShotsMilliseconds: s.session.betweenShotsMilliseconds,
               cancelledCaptures: s.session.cancelledCaptures, composesSingleShot: composesSingleShot)
}
