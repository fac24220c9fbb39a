import BoothButtons
import BoothCamera
import BoothClock
import BoothCore
import BoothDisplay
import BoothGPIO
import BoothOrientation
import BoothPorts
import BoothPrint
import BoothRaster
import BoothRuntime
import BoothStorage
import Glibc
import Synchronization

extension DeviceFactory {
    /// The booth's one orientation source for a set of settings: `camera.rotation` and `display.rotation`,
    /// fixed or from the accelerometer (``OrientationTracker``, BoothDisplay).
    public static let orientationTracker: @Sendable (Settings) -> any OrientationSource = { OrientationTracker(settings: $0) }

    /// The devices around the ones given: the photos directory (``PhotoStore``), the totals
    /// (``StatsStore``) and the print worker (``PrintWorker``, CUPS), with screens that take the
    /// orientation source.
    public init(cameraSource camera: @escaping @Sendable (Settings, any MonotonicClock, Logger) -> any CameraSource,
                button: @escaping @Sendable (Settings) -> any ButtonDevice,
                led: @escaping @Sendable (Settings) -> (any LEDDevice)?,
                screens: @escaping @Sendable (Settings, any MonotonicClock, Logger, any OrientationSource) -> [any DisplaySink],
                opensLED: Bool = true,
                orientation: @escaping @Sendable (Settings) -> any OrientationSource = DeviceFactory.orientationTracker) {
        self.init(cameraSource: camera, button: button, led: led, screens: screens, opensLED: opensLED,
                  orientation: orientation, photoStorage: makePhotoStorage, stats: makeStatsRecorder, printer: makePrinter)
    }

    /// ``init(cameraSource:button:led:screens:opensLED:orientation:)`` with screens that do not turn (tests):
    /// `displays` ignores the orientation source.
    public init(cameraSource camera: @escaping @Sendable (Settings, any MonotonicClock, Logger) -> any CameraSource,
                button: @escaping @Sendable (Settings) -> any ButtonDevice,
                led: @escaping @Sendable (Settings) -> (any LEDDevice)?,
                displays: @escaping @Sendable (Settings, any MonotonicClock, Logger) -> [any DisplaySink],
                opensLED: Bool = true,
                orientation: @escaping @Sendable (Settings) -> any OrientationSource = DeviceFactory.orientationTracker) {
        self.init(cameraSource: camera, button: button, led: led, screens: { s, clock, log, _ in displays(s, clock, log) },
                  opensLED: opensLED, orientation: orientation)
    }

    /// Devices whose camera is a streaming ``CameraDevice`` (`camera` makes it, on the camera's thread),
    /// run by a ``StreamingCameraSource``: the simulated camera, a test's scripted one.
    public init(camera: @escaping @Sendable (Settings) -> any CameraDevice,
                button: @escaping @Sendable (Settings) -> any ButtonDevice,
                led: @escaping @Sendable (Settings) -> (any LEDDevice)?,
                displays: @escaping @Sendable (Settings, any MonotonicClock, Logger) -> [any DisplaySink],
                opensLED: Bool = true,
                orientation: @escaping @Sendable (Settings) -> any OrientationSource = DeviceFactory.orientationTracker) {
        self.init(cameraSource: { s, clock, log in
                      StreamingCameraSource(device: { camera(s) }, settings: s.camera, clock: clock, log: log)
                  },
                  button: button, led: led, displays: displays, opensLED: opensLED, orientation: orientation)
    }

    /// ``init(camera:button:led:displays:opensLED:orientation:)`` with screens that take the orientation source.
    public init(camera: @escaping @Sendable (Settings) -> any CameraDevice,
                button: @escaping @Sendable (Settings) -> any ButtonDevice,
                led: @escaping @Sendable (Settings) -> (any LEDDevice)?,
                screens: @escaping @Sendable (Settings, any MonotonicClock, Logger, any OrientationSource) -> [any DisplaySink],
                opensLED: Bool = true,
                orientation: @escaping @Sendable (Settings) -> any OrientationSource = DeviceFactory.orientationTracker) {
        self.init(cameraSource: { s, clock, log in
                      StreamingCameraSource(device: { camera(s) }, settings: s.camera, clock: clock, log: log)
                  },
                  button: button, led: led, screens: screens, opensLED: opensLED, orientation: orientation)
    }
}

/// The file preview, when `preview.file` is set: the screens drawn at `preview.size`. A font that
/// cannot be loaded is logged and the booth runs without it.
func filePreviewDisplays(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                         _ orientation: any OrientationSource) -> [any DisplaySink] {
    guard !s.preview.file.isEmpty else { return [] }
    do {
        return [try makeFilePreview(s, orientation: orientation, clock: clock, log: log)]
    } catch {
        log.warning("preview: no file preview, running without it: \(error)")
        return []
    }
}

/// The ``FilePreview`` for a set of settings (`preview.*`, the screen's font, texts, scaling, mirror),
/// turned by `orientation` (the booth's one source; nil: one of its own from `s`, for tests), its frame rate
/// kept on `clock` (the booth's).
/// - Throws: ``FontError`` when `display.font` cannot be loaded.
public func makeFilePreview(_ s: Settings, orientation: (any OrientationSource)? = nil, clock: any MonotonicClock = SystemClock(),
                            log: Logger) throws -> FilePreview {
    try FilePreview(path: s.preview.file, size: s.preview.size, framesPerSecond: s.preview.frameRate,
                    fontPath: s.display.font, texts: ScreenTexts(s.text),
                    options: LiveViewOptions(cameraRotation: .r0, scaling: Scaling(s.display.scaling), mirror: s.display.mirror),
                    orientation: orientation ?? OrientationTracker(settings: s), clock: clock, log: log)
}

/// `display.device` resolved among the built-in kinds (``ScreenRegistry/resolve(_:detecting:)``): `auto` is
/// the first `/dev/dri/card*` with a connected connector, else `/dev/fb0` when it exists and is not a DRM
/// card's own fbdev emulation, else the first KMS card (its screen may be plugged in later), else
/// `/dev/fb0` whatever it is, else no screen; a path under `/dev/dri/` is KMS, any other an fbdev.
/// `cards`, `probe` and `fb0` are the machine's; tests give their own.
func resolveScreen(_ device: String, cards: () -> [String] = { KMSFramebuffer.cards() },
                   probe: (String) -> Result<KMSCardInfo, FramebufferError> = probeKMSCard,
                   fb0: () -> FB0 = framebufferZero) -> ScreenChoice {
    ScreenRegistry.builtIn.resolve(device) { kind in
        switch kind.name {
        case ScreenKind.kmsName: detectKMSCards(cards(), probe: probe)
        case ScreenKind.fbdevName: detectFramebufferZero(fb0())
        default: kind.detect?()
        }
    }
}

/// The guest's screen, when `display.device` names one that opens (``ScreenRegistry/deviceScreens(_:)``
/// of the built-in kinds): a DRM/KMS card or a framebuffer. A screen that cannot be opened is logged and
/// the booth runs without it (the file preview still works); a KMS card without a connected screen is
/// waited for (``waitForScreen(_:_:_:_:_:)``).
func framebufferDisplays(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                         _ orientation: any OrientationSource) -> [any DisplaySink] {
    ScreenRegistry.builtIn.deviceScreens(ScreenRequest(device: "", settings: s, clock: clock, log: log, orientation: orientation,
                                                       simulate: false))
}

/// Corrupt frames from the simulated camera on purpose (``BoothCamera/FrameCorruption``), named
/// here for the daemon's `--corrupt-frames`.
public typealias SimulatedFrameCorruption = FrameCorruption

/// `--simulate`: the built-in test-pattern camera (or the real camera `camera.backend` picks, with `--camera`),
/// the terminal as the button, no LED, the file preview, and the screen only when it is the booth's to
/// take: a writable framebuffer, or a KMS card whose DRM master nobody holds (a desktop's compositor does;
/// its console would not be welcome either). `corruption`: the test-pattern camera spoils frames on
/// purpose (`--corrupt-frames`). `screens`: the screen kinds (``ScreenRegistry/builtIn``; a test adds its own).
public func simulatedDevices(realCamera: Bool, corruption: FrameCorruption? = nil, screens: ScreenRegistry = .builtIn,
                             log: Logger) -> DeviceFactory {
    DeviceFactory(
        cameraSource: { s, clock, log in
            realCamera ? makeCameraSource(s, clock: clock, log: log)
                : StreamingCameraSource(device: { SimulatedCamera(corruption: corruption) }, settings: s.camera, clock: clock, log: log)
        },
        button: { _ in KeyboardButton(clock: SystemClock(), log: log) },
        led: { _ in nil },
        screens: { s, clock, log, turns in screens.screens(s, clock, log, turns, simulate: true) },
        opensLED: false)
}

/// The real booth: the camera `camera.backend` picks (``makeCameraSource(_:clock:log:detection:)``: the backends' registry), the button and LED on GPIO lines through libgpiod, the
/// screen `display.device` names among `screens`' kinds (``ScreenRegistry/builtIn``: KMS or fbdev) and the file preview.
public func realDevices(screens: ScreenRegistry = .builtIn, log: Logger) -> DeviceFactory {
    // The LED's open error is warned when it is new; the same error on every retry only at debug.
    let lastLEDError = Mutex<String?>(nil)
    return DeviceFactory(
        cameraSource: { s, clock, log in makeCameraSource(s, clock: clock, log: log) },
        button: { s in makeButton(s, log: log) },
        led: { s -> (any LEDDevice)? in
            guard s.led.isConfigured else { return nil }
            let config = GPIOLED.Configuration(address: GPIOLineAddress(chip: s.led.resolvedChip(buttonChip: s.button.chip),
                                                                        line: s.led.line),
                                               activeLow: s.led.activeLow)
            do {
                let led = GPIOLEDDevice(try GPIOLED.start(config, log: { log.log($0, $1) }))
                lastLEDError.withLock { $0 = nil }
                return led
            } catch {
                let text = "\(error)"
                let new = lastLEDError.withLock { last in defer { last = text }; return last != text }
                log.log(new ? .warning : .debug, "led not available, running without it: \(text)")
                return nil
            }
        },
        screens: { s, clock, log, turns in screens.screens(s, clock, log, turns, simulate: false) })
}

/// The button `button.source` names: the GPIO line (``GPIOButtonDevice``), an input device's key or
/// tap (``InputButtonDevice``), or both as one ``ButtonSet``.
public func makeButton(_ s: Settings, log: Logger) -> any ButtonDevice {
    let members: [(name: String, device: any ButtonDevice)] = s.button.sources.map { source in
        switch source {
        case .gpio: (source.rawValue, GPIOButtonDevice(settings: s, log: log))
        case .input: (source.rawValue, InputButtonDevice(settings: s, log: log))
        }
    }
    if members.count == 1, let only = members.first { return only.device }
    return ButtonSet(members, log: log)
}

/// The button on a GPIO line (libgpiod, both edges, debounced), as a ``ButtonDevice``.
public final class GPIOButtonDevice: ButtonDevice {
    private let configuration: GPIOButton.Configuration
    private let log: Logger
    private let stuckLimit: Int
    private let button = Mutex<GPIOButton?>(nil)
    private let running = Mutex(false)

    public init(settings s: Settings, log: Logger) {
        configuration = GPIOButton.Configuration(
            address: GPIOLineAddress(chip: s.button.chip, line: s.button.line), bias: s.button.bias,
            activeLow: s.button.activeLow,
            timing: ButtonTiming(debounceMilliseconds: Int64(s.button.debounceMilliseconds),
                                 longPressMilliseconds: Int64(s.button.longPressMilliseconds),
                                 stuckMilliseconds: Int64(s.button.stuckLimitMilliseconds)))
        stuckLimit = s.button.stuckLimitMilliseconds
        self.log = log
    }

    public var identity: String { "\(configuration.address) (bias \(configuration.bias.rawValue), active-low \(configuration.activeLow))" }
    public var isRunning: Bool { running.withLock { $0 } }

    public func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        let log = self.log, stuckLimit = self.stuckLimit
        // Running before the thread starts: a line that fails at once must be seen as failed.
        running.withLock { $0 = true }
        let b: GPIOButton
        do {
            b = try startLine(handler, log: log, stuckLimit: stuckLimit)
        } catch {
            running.withLock { $0 = false }
            throw error
        }
        button.withLock { $0 = b }
    }

    private func startLine(_ handler: @escaping @Sendable (ButtonSignal) -> Void, log: Logger,
                           stuckLimit: Int) throws(GPIOError) -> GPIOButton {
        try GPIOButton.start(configuration, log: { log.log($0, $1) }) { [weak self] event in
            switch event {
            case let .press(id, at): handler(.press(id: id, at: at))
            case let .longPress(id, _): handler(.longPress(id: id))
            case .release, .rejected, .edgesLost, .releaseLost: break
            case .stuck: handler(.stuck("button stuck: held longer than \(stuckLimit / 1000) s (check the wiring)"))
            case .unstuck: handler(.unstuck)
            case let .failed(error):
                self?.running.withLock { $0 = false }
                handler(.failed("button line failed: \(error.message)"))
            }
        }
    }

    public func stop() {
        running.withLock { $0 = false }
        button.withLock { $0 }?.stop()
    }
}

/// The LED on a GPIO line, as an ``LEDDevice``.
public final class GPIOLEDDevice: LEDDevice {
    private let led: GPIOLED
    init(_ led: GPIOLED) { self.led = led }
    public func set(_ pattern: LEDPattern) { led.set(pattern) }
    public func stop() { led.stop() }
}

// MARK: Storage and printer (BoothStorage, BoothPrint): the runtime sees them only through their ports
// (DeviceFactory's `photoStorage`, `stats` and `printer`).

/// The photos directory (`storage.dir`) with the booth's session-number record (`storage.session_file`),
/// behind the storage port.
@Sendable func makePhotoStorage(_ s: Settings.Storage) -> any PhotoStorage { PhotoStore(directory: s.dir, stateFile: s.sessionFile) }

/// The totals file in `directory` (`<storage.dir>/.photobooth-stats.json`), behind the storage port.
@Sendable func makeStatsRecorder(_ directory: String, _ log: Logger) -> any StatsRecording { StatsStore(directory: directory, log: log) }

/// The print worker for `[print]` (CUPS), behind the printer port.
/// - Parameters:
///   - now: the wall clock, seconds since 1970 (the journal's times).
///   - clock: the monotonic clock that ages this run's held requests.
@Sendable func makePrinter(_ settings: Settings.Print, _ log: Logger, _ now: @escaping @Sendable () -> Double,
                           _ clock: any MonotonicClock) -> any Printer {
    PrintWorker(settings: settings, log: log, now: now, clock: clock)
}
