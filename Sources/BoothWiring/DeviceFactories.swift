import BoothCamera
import BoothClock
import BoothCore
import BoothDisplay
import BoothGPIO
import BoothPorts
import BoothPrint
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
        return [try makeFilePreview(s, orientation: orientation, log: log)]
    } catch {
        log.warning("preview: no file preview, running without it: \(error)")
        return []
    }
}

/// The ``FilePreview`` for a set of settings (`preview.*`, the screen's font, texts, scaling, mirror),
/// turned by `orientation` (the booth's one source; nil: one of its own from `s`, for tests).
/// - Throws: ``FontError`` when `display.font` cannot be loaded.
public func makeFilePreview(_ s: Settings, orientation: (any OrientationSource)? = nil, log: Logger) throws -> FilePreview {
    try FilePreview(path: s.preview.file, size: s.preview.size, framesPerSecond: s.preview.frameRate,
                    fontPath: s.display.font, texts: ScreenTexts(s.text),
                    options: LiveViewOptions(cameraRotation: .r0, scaling: Scaling(s.display.scaling), mirror: s.display.mirror),
                    orientation: orientation ?? OrientationTracker(settings: s), log: log)
}

/// Which screen `display.device` names: a DRM/KMS card, an fbdev device, or none (with why).
enum ScreenChoice: Equatable {
    case kms(String)
    case fbdev(String)
    case none(String)
}

/// What `/dev/fb0` is, for `auto`.
enum FB0: Equatable {
    /// No `/dev/fb0`.
    case none
    /// A DRM card's own fbdev emulation (`/sys/class/graphics/fb0/device/drm` exists).
    case drmEmulation
    /// Any other framebuffer (a firmware `simplefb`, an fbdev-only driver).
    case plain
}

/// `display.device` resolved: `auto` is the first `/dev/dri/card*` with a connected connector, else
/// `/dev/fb0` when it exists and is not a DRM card's own fbdev emulation, else the first KMS card (its
/// screen may be plugged in later), else `/dev/fb0` whatever it is, else no screen; a path under
/// `/dev/dri/` is KMS, any other an fbdev. `cards`, `probe` and `fb0` are the machine's; tests give their own.
func resolveScreen(_ device: String, cards: () -> [String] = { KMSFramebuffer.cards() },
                   probe: (String) -> Result<KMSCardInfo, FramebufferError> = { p in Result { () throws(FramebufferError) in try KMSFramebuffer.probe(p) } },
                   fb0: () -> FB0 = framebufferZero) -> ScreenChoice {
    if device.isEmpty { return .none("display.device is empty") }
    if device.lowercased() == "auto" {
        var seen: [String] = [], unplugged: String?
        for card in cards() {
            let info: KMSCardInfo
            switch probe(card) {
            case .success(let i): info = i
            // The shim's sentence names the card and the errno's words already.
            case .failure(.call(let why, _, _)): seen.append(why); continue
            case .failure(let e): seen.append("\(card): \(e)"); continue
            }
            if info.connected > 0 { return .kms(card) }
            if info.connectors > 0 && unplugged == nil { unplugged = card }
            seen.append("\(card) (\(info.driver)): no connected screen among \(info.connectors) connectors")
        }
        let fb = fb0()
        if fb == .plain { return .fbdev("/dev/fb0") }
        if let unplugged { return .kms(unplugged) }
        if fb != .none { return .fbdev("/dev/fb0") }
        return .none("display.device = auto found no screen (" + (seen.isEmpty ? "no /dev/dri/card*" : seen.joined(separator: "; "))
                     + ", no /dev/fb0)")
    }
    return device.hasPrefix("/dev/dri/") ? .kms(device) : .fbdev(device)
}

/// `/dev/fb0` on this machine: none, a DRM card's emulation (its sysfs device has a `drm` folder), or plain.
func framebufferZero() -> FB0 {
    guard access("/dev/fb0", F_OK) == 0 else { return .none }
    return access("/sys/class/graphics/fb0/device/drm", F_OK) == 0 ? .drmEmulation : .plain
}

/// The guest's screen, when `display.device` names one that opens: a DRM/KMS card or a framebuffer
/// (``resolveScreen(_:cards:probe:fb0:)``). A screen that cannot be opened is logged and the booth
/// runs without it (the file preview still works); a KMS card without a connected screen is waited
/// for (``waitForScreen(_:_:_:_:_:)``).
func framebufferDisplays(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                         _ orientation: any OrientationSource) -> [any DisplaySink] {
    screenDisplays(s, clock, log, orientation, simulate: false)
}

/// As ``framebufferDisplays(_:_:_:_:)``; `simulate`: a KMS card only when the booth gets DRM master at
/// once (a desktop's compositor holds it: no fight over the screen), an fbdev only when writable,
/// nothing waited for.
func screenDisplays(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                    _ orientation: any OrientationSource, simulate: Bool) -> [any DisplaySink] {
    switch resolveScreen(s.display.device) {
    case .none(let why):
        if !s.display.device.isEmpty && !simulate { log.warning("display: no screen, running without it: \(why)") }
        return []
    case .kms(let path):
        if access(path, F_OK) != 0 {
            if simulate { return [] }
            // A typo, or a driver that has not made its card yet (probe order, a USB display): said now,
            // with the cards there are, and waited for as a card without a screen is.
            let cards = KMSFramebuffer.cards()
            log.warning("display: \(path): no such device (DRM cards here: \(cards.isEmpty ? "none" : cards.joined(separator: ", "))); "
                        + "looking again every 5 s. display.device = auto picks the card with a connected screen")
            return [waitForScreen(path, s, clock, log, orientation)]
        }
        do {
            return try kmsDisplay(path, s, clock, log, orientation, simulate: simulate).map { [$0] } ?? []
        } catch FramebufferError.call(let why, let code, _) where code == ENOLINK && !simulate {
            // No screen plugged in (or switched off): wait for one, as an operator plugs the HDMI cable in late.
            log.warning("display: \(why); looking again every 5 s")
            return [waitForScreen(path, s, clock, log, orientation)]
        } catch {
            log.warning("display: no screen, running without it: \(error)")
            return []
        }
    case .fbdev(let path):
        if simulate && access(path, W_OK) != 0 { return [] }
        do {
            let fb = try FramebufferDevice(path: path)
            return try [startScreen(fb, described: "\(fb.path) (\(fb.driver)) \(fb.format)", s, log, orientation)]
        } catch {
            log.warning("display: no screen, running without it: \(error)")
            return []
        }
    }
}

/// The KMS card `path` as a started display; nil under `simulate` when another client holds DRM master.
/// - Throws: ``FramebufferError`` from ``KMSFramebuffer/init(path:mode:retryMilliseconds:now:log:info:)``
///   (ENOLINK: no connected screen), the font's error.
func kmsDisplay(_ path: String, _ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                _ orientation: any OrientationSource, simulate: Bool) throws -> (any DisplaySink)? {
    let kms = try KMSFramebuffer(path: path, now: { clock.now() }, log: { log.warning($0) }, info: { log.info($0) })
    if simulate && !kms.currentStats.isMaster { kms.close(); return nil }
    let i = kms.info
    let described = "\(path) (\(i.driver), KMS) \(i.connector ?? "?") \(kms.format.size)@\(i.refreshHz ?? 0) Hz, "
        + "page flips on vblank\(kms.currentStats.isMaster ? "" : "; not DRM master yet")"
    do {
        return try startScreen(kms, described: described, s, log, orientation)
    } catch {
        kms.close()
        throw error
    }
}

/// A ``FramebufferDisplay`` on `framebuffer`, its thread started, and `display: <described>` logged.
/// - Throws: the font's error (``FramebufferDisplay`` init).
private func startScreen(_ framebuffer: any Framebuffer, described: String, _ s: Settings, _ log: Logger,
                         _ orientation: any OrientationSource) throws -> any DisplaySink {
    let display = try FramebufferDisplay(
        framebuffer: framebuffer, fontPath: s.display.font, texts: ScreenTexts(s.text),
        options: LiveViewOptions(cameraRotation: .r0, scaling: Scaling(s.display.scaling), mirror: s.display.mirror),
        orientation: orientation, framesPerSecond: s.display.frameRate,
        console: s.display.console.isEmpty ? nil : s.display.console, log: { log.warning($0) })
    display.start()
    log.info("display: \(described)")
    return display
}

/// A ``PendingScreen`` for the KMS card `path` while it is missing or none of its connectors is
/// connected: every 5 s it asks the card (``KMSFramebuffer/probe(_:)``) and opens the screen once one is.
func waitForScreen(_ path: String, _ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                   _ orientation: any OrientationSource) -> any DisplaySink {
    let lastWarning = Mutex<String?>(nil)
    let pending = PendingScreen { () -> (any DisplaySink)? in
        guard let info = try? KMSFramebuffer.probe(path), info.connected > 0 else { return nil }
        do {
            let display = try kmsDisplay(path, s, clock, log, orientation, simulate: false)
            log.notice("display: \(path): \(info.connector ?? "a connector") connected")
            return display
        } catch {
            // Said once while it stays the same (every 5 s otherwise).
            let sentence = "display: \(path): \(info.connector ?? "a connector") connected, but: \(error); looking again every 5 s"
            if lastWarning.withLock({ l in defer { l = sentence }; return l != sentence }) { log.warning(sentence) }
            return nil
        }
    }
    if !pending.start() { log.warning("display: no thread to wait for a screen on \(path) (pthread_create failed); running without it") }
    return pending
}

/// Corrupt frames from the simulated camera on purpose (``BoothCamera/FrameCorruption``), named
/// here for the daemon's `--corrupt-frames`.
public typealias SimulatedFrameCorruption = FrameCorruption

/// `--simulate`: the built-in test-pattern camera (or the real camera `camera.backend` picks, with `--camera`),
/// the terminal as the button, no LED, the file preview. `corruption`: the test-pattern camera
/// spoils frames on purpose (`--corrupt-frames`).
public func simulatedDevices(realCamera: Bool, corruption: FrameCorruption? = nil, log: Logger) -> DeviceFactory {
    DeviceFactory(
        cameraSource: { s, clock, log in
            realCamera ? makeCameraSource(s, clock: clock, log: log)
                : StreamingCameraSource(device: { SimulatedCamera(corruption: corruption) }, settings: s.camera, clock: clock, log: log)
        },
        button: { _ in KeyboardButton(clock: SystemClock(), log: log) },
        led: { _ in nil },
        screens: { s, clock, log, turns in filePreviewDisplays(s, clock, log, turns) + simulatedScreen(s, clock, log, turns) },
        opensLED: false)
}

/// `--simulate` draws on the screen only when it is the booth's to take: a writable framebuffer, or
/// a KMS card whose DRM master nobody holds (a desktop's compositor does; its console would not be
/// welcome either).
func simulatedScreen(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                     _ orientation: any OrientationSource) -> [any DisplaySink] {
    screenDisplays(s, clock, log, orientation, simulate: true)
}

/// The real booth: the camera `camera.backend` picks (``makeCameraSource(_:clock:log:discover:)``), the button and LED on GPIO lines through libgpiod, the framebuffer
/// screen and the file preview.
public func realDevices(log: Logger) -> DeviceFactory {
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
        screens: { s, clock, log, turns in framebufferDisplays(s, clock, log, turns) + filePreviewDisplays(s, clock, log, turns) })
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
