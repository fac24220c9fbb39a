import BoothCamera
import BoothCore
import BoothGPIO
import Synchronization

/// The camera stream request for a set of settings (preview size, format, frame rate, controls).
public func streamRequest(from s: Settings) -> StreamRequest {
    StreamRequest(device: s.camera.device.isEmpty ? "auto" : s.camera.device,
                  format: s.camera.format, size: s.camera.previewSize,
                  framesPerSecond: Double(s.camera.frameRate), settleFrames: s.camera.settleFrames,
                  controls: CameraControlSettings(powerLineFrequency: s.camera.powerLineFrequency,
                                                  exposure: s.camera.exposure, whiteBalance: s.camera.whiteBalance,
                                                  focus: s.camera.focus))
}

/// The file preview, when `preview.file` is set.
func filePreviewDisplays(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger) -> [any DisplaySink] {
    guard !s.preview.file.isEmpty else { return [] }
    return [FilePreview(path: s.preview.file, framesPerSecond: s.preview.frameRate, clock: clock, log: log)]
}

/// `--simulate`: the built-in test-pattern camera (or a real V4L2 camera with `--camera`),
/// the terminal as the button, no LED, the file preview.
public func simulatedDevices(realCamera: Bool, log: Logger) -> DeviceFactory {
    DeviceFactory(
        camera: { _ -> any CameraDevice in realCamera ? V4L2Camera() : SimulatedCamera() },
        button: { _ in KeyboardButton(clock: SystemClock(), log: log) },
        led: { _ in nil },
        displays: filePreviewDisplays)
}

/// The real booth: the V4L2 camera, the button and LED on GPIO lines through libgpiod, the file preview.
public func realDevices(log: Logger) -> DeviceFactory {
    DeviceFactory(
        camera: { _ in V4L2Camera() },
        button: { s in GPIOButtonDevice(settings: s, log: log) },
        led: { s -> (any LEDDevice)? in
            guard s.led.isConfigured else { return nil }
            let config = GPIOLED.Configuration(address: GPIOLineAddress(chip: s.led.resolvedChip(buttonChip: s.button.chip),
                                                                        line: s.led.line),
                                               activeLow: s.led.activeLow)
            do {
                return GPIOLEDDevice(try GPIOLED.start(config, log: { log.log($0, $1) }))
            } catch {
                log.warning("led not available, running without it: \(error)")
                return nil
            }
        },
        displays: filePreviewDisplays)
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
        let b = try GPIOButton.start(configuration, log: { log.log($0, $1) }) { [weak self] event in
            switch event {
            case let .press(id, at): handler(.press(id: id, at: at))
            case let .longPress(id, _): handler(.longPress(id: id))
            case .release, .rejected: break
            case .stuck: handler(.stuck("button stuck: held longer than \(stuckLimit / 1000) s (check the wiring)"))
            case .unstuck: handler(.unstuck)
            case let .failed(error):
                self?.running.withLock { $0 = false }
                handler(.failed("button line failed: \(error.message)"))
            }
        }
        button.withLock { $0 = b }
        running.withLock { $0 = true }
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
