import BoothClock
import BoothCore
import Glibc
import Synchronization

/// Resolves `camera.rotation` and `display.rotation` to the turns in use: a fixed setting as it is;
/// `auto` from an ``IIOAccelerometer`` (sampled at most every `sampleIntervalMilliseconds` when asked,
/// through an ``OrientationEstimator`` with hysteresis), or `fallback` when there is none or it stops
/// answering. Thread-safe: the camera and display threads both ask.
public final class OrientationTracker: Sendable {
    /// What `status` and `devices` show.
    public struct Status: Sendable, Equatable {
        /// `"accel_3d (/sys/bus/iio/devices/iio:device0)"`, or nil without one.
        public var accelerometer: String?
        /// The last sample in m/s² (after the mount matrix), if any.
        public var lastSample: Acceleration?
        public var camera: Rotation
        public var display: Rotation
        /// `"fixed"`, `"accelerometer"` or `"fallback: no accelerometer"`.
        public var source: String
    }

    /// The settings in use, replaced by ``reconfigure(_:)``.
    private struct Config {
        var camera: RotationSetting
        var display: RotationSetting
        var fallback: Rotation
        var sensor: IIOAccelerometer?
    }
    private let config: Mutex<Config>
    private let sysfsRoot: String
    private var cameraSetting: RotationSetting { config.withLock { $0.camera } }
    private var displaySetting: RotationSetting { config.withLock { $0.display } }
    private var fallback: Rotation { config.withLock { $0.fallback } }
    private var sensor: IIOAccelerometer? { config.withLock { $0.sensor } }
    private let intervalNanoseconds: UInt64
    private let now: @Sendable () -> MonotonicInstant
    private struct State {
        var estimator = OrientationEstimator()
        var lastSampleAt: MonotonicInstant?
        var lastSample: Acceleration?
        var sensorAnswers = true
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - accelerometer: the sensor (find it with ``IIOAccelerometer/find(sysfsRoot:name:)``); nil for none.
    ///   - now: the monotonic clock (CLOCK_MONOTONIC by default; tests inject one).
    ///   - sysfsRoot: where ``reconfigure(_:)`` looks for an accelerometer.
    public init(camera: RotationSetting, display: RotationSetting, fallback: Rotation, accelerometer: IIOAccelerometer?,
                sampleIntervalMilliseconds: Int = 500, now: @escaping @Sendable () -> MonotonicInstant = monotonicNow,
                sysfsRoot: String = "/sys") {
        config = Mutex(Config(camera: camera, display: display, fallback: fallback,
                              sensor: (camera == .auto || display == .auto) ? accelerometer : nil))
        self.sysfsRoot = sysfsRoot
        intervalNanoseconds = UInt64(max(0, sampleIntervalMilliseconds)) * 1_000_000
        self.now = now
    }

    /// From the settings: finds the accelerometer under `sysfsRoot` when either rotation is `auto`.
    public convenience init(settings s: Settings, sysfsRoot: String = "/sys") {
        let needed = s.camera.rotation == .auto || s.display.rotation == .auto
        self.init(camera: s.camera.rotation, display: s.display.rotation, fallback: s.display.fallbackRotation.rotation,
                  accelerometer: needed ? IIOAccelerometer.find(sysfsRoot: sysfsRoot, name: s.display.accelerometer) : nil,
                  sysfsRoot: sysfsRoot)
    }

    /// New `camera.rotation`, `display.rotation`, `display.fallback_rotation` and `display.accelerometer`
    /// (a reload): the next ``camera`` and ``display`` answer with them. The accelerometer is looked up
    /// again (under the `sysfsRoot` given at init) when either rotation is `auto`; the estimator's
    /// hysteresis starts again when the sensor changes.
    public func reconfigure(_ s: Settings) {
        let needed = s.camera.rotation == .auto || s.display.rotation == .auto
        let sensor = needed ? IIOAccelerometer.find(sysfsRoot: sysfsRoot, name: s.display.accelerometer) : nil
        let changedSensor = config.withLock { c in
            let changed = c.sensor?.directory != sensor?.directory
            c = Config(camera: s.camera.rotation, display: s.display.rotation, fallback: s.display.fallbackRotation.rotation,
                       sensor: sensor)
            return changed
        }
        if changedSensor { state.withLock { $0 = State() } }
    }

    /// `camera.rotation` and `display.rotation` as this tracker resolves them (set at init or by
    /// ``reconfigure(_:)``): the settings in use, not the turns.
    public var settingsInUse: (camera: RotationSetting, display: RotationSetting) {
        config.withLock { ($0.camera, $0.display) }
    }

    /// The turn for captures and the live view.
    public var camera: Rotation { resolve(cameraSetting) }
    /// The turn for the whole screen drawing.
    public var display: Rotation { resolve(displaySetting) }

    public var status: Status {
        let cam = camera, disp = display
        return state.withLock { s in
            let source: String
            if cameraSetting != .auto && displaySetting != .auto {
                source = "fixed"
            } else if sensor == nil {
                source = "fallback: no accelerometer"
            } else if !s.sensorAnswers {
                source = "fallback: accelerometer not answering"
            } else {
                source = "accelerometer"
            }
            return Status(accelerometer: sensor.map { "\($0.name) (\($0.directory))" }, lastSample: s.lastSample,
                          camera: cam, display: disp, source: source)
        }
    }

    private func resolve(_ setting: RotationSetting) -> Rotation {
        if let fixed = setting.fixed { return fixed }
        guard let sensor else { return fallback }
        let t = now()
        return state.withLock { s in
            if s.lastSampleAt.map({ t.nanoseconds &- $0.nanoseconds >= intervalNanoseconds || t < $0 }) ?? true {
                s.lastSampleAt = t
                if let a = sensor.sample() {
                    s.lastSample = a
                    s.sensorAnswers = true
                    s.estimator.update(a)
                } else {
                    s.sensorAnswers = false
                }
            }
            guard s.sensorAnswers else { return fallback }
            return s.estimator.current ?? fallback
        }
    }
}

/// CLOCK_MONOTONIC now (``Monotonic/now()``).
@Sendable public func monotonicNow() -> MonotonicInstant { Monotonic.now() }
