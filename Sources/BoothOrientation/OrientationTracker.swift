import BoothClock
import BoothCore
import BoothPorts
import Glibc
import Synchronization

/// The booth's ``OrientationSource``: resolves `camera.rotation` and `display.rotation` to the turns in
/// use. A fixed setting as it is; `auto` from an ``IIOAccelerometer`` (sampled at most every
/// `sampleIntervalMilliseconds` when asked, through one ``OrientationEstimator`` with hysteresis), or
/// `fallback` when there is none or it stops answering. One reading (``current``) decides both turns,
/// so with both `auto` the camera and the screens never disagree. Thread-safe: the camera, display and
/// preview threads all ask.
public final class OrientationTracker: OrientationSource {
    /// What `status` and `devices` show.
    public typealias Status = OrientationStatus

    private let intervalNanoseconds: UInt64
    private let now: @Sendable () -> MonotonicInstant
    private let sysfsRoot: String
    private struct State {
        var cameraSetting: RotationSetting
        var displaySetting: RotationSetting
        var fallback: Rotation
        var sensor: IIOAccelerometer?
        var estimator = OrientationEstimator()
        var lastSampleAt: MonotonicInstant?
        var lastSample: Acceleration?
        var sensorAnswers = true
        var usesSensor: Bool { cameraSetting == .auto || displaySetting == .auto }
    }
    private let state: Mutex<State>

    /// - Parameters:
    ///   - accelerometer: the sensor (find it with ``IIOAccelerometer/find(sysfsRoot:name:)``); nil for none.
    ///   - sysfsRoot: where ``reconfigure(_:)`` looks for the accelerometer again.
    ///   - now: the monotonic clock (CLOCK_MONOTONIC by default; tests inject one).
    public init(camera: RotationSetting, display: RotationSetting, fallback: Rotation, accelerometer: IIOAccelerometer?,
                sampleIntervalMilliseconds: Int = 500, sysfsRoot: String = "/sys",
                now: @escaping @Sendable () -> MonotonicInstant = Monotonic.now) {
        let needed = camera == .auto || display == .auto
        state = Mutex(State(cameraSetting: camera, displaySetting: display, fallback: fallback,
                            sensor: needed ? accelerometer : nil))
        intervalNanoseconds = UInt64(max(0, sampleIntervalMilliseconds)) * 1_000_000
        self.sysfsRoot = sysfsRoot
        self.now = now
    }

    /// From the settings: finds the accelerometer under `sysfsRoot` when either rotation is `auto`.
    public convenience init(settings s: Settings, sysfsRoot: String = "/sys", sampleIntervalMilliseconds: Int = 500,
                            now: @escaping @Sendable () -> MonotonicInstant = Monotonic.now) {
        let needed = s.camera.rotation == .auto || s.display.rotation == .auto
        self.init(camera: s.camera.rotation, display: s.display.rotation, fallback: s.display.fallbackRotation.rotation,
                  accelerometer: needed ? IIOAccelerometer.find(sysfsRoot: sysfsRoot, name: s.display.accelerometer) : nil,
                  sampleIntervalMilliseconds: sampleIntervalMilliseconds, sysfsRoot: sysfsRoot, now: now)
    }

    /// Both turns from one reading: at most one sample (when the last is over the interval old), and
    /// both `auto` turns come from the same estimate.
    public var current: Orientation {
        let t = now()
        return state.withLock { s in
            let sensed: Rotation? = resolveSensor(&s, at: t)
            func turn(_ setting: RotationSetting) -> Rotation { setting.fixed ?? sensed ?? s.fallback }
            return Orientation(camera: turn(s.cameraSetting), display: turn(s.displaySetting))
        }
    }

    public var status: OrientationStatus {
        let turns = current
        return state.withLock { s in
            let source: String
            if !s.usesSensor {
                source = "fixed"
            } else if s.sensor == nil {
                source = "fallback: no accelerometer"
            } else if !s.sensorAnswers {
                source = "fallback: accelerometer not answering"
            } else {
                source = "accelerometer"
            }
            return OrientationStatus(accelerometer: s.sensor.map { "\($0.name) (\($0.directory))" }, lastSample: s.lastSample,
                                     camera: turns.camera, display: turns.display, source: source)
        }
    }

    /// Takes the rotations, fallback and accelerometer name from `settings`; finds the accelerometer
    /// again under `sysfsRoot` when a rotation is `auto` (reading sysfs). The estimate so far is kept
    /// when the same sensor stays in use.
    public var settingsInUse: (camera: RotationSetting, display: RotationSetting) {
        state.withLock { ($0.cameraSetting, $0.displaySetting) }
    }

    public func reconfigure(_ settings: Settings) {
        let needed = settings.camera.rotation == .auto || settings.display.rotation == .auto
        let sensor = needed ? IIOAccelerometer.find(sysfsRoot: sysfsRoot, name: settings.display.accelerometer) : nil
        state.withLock { s in
            s.cameraSetting = settings.camera.rotation
            s.displaySetting = settings.display.rotation
            s.fallback = settings.display.fallbackRotation.rotation
            if s.sensor != sensor {
                s.sensor = sensor
                s.estimator = OrientationEstimator()
                s.lastSampleAt = nil
                s.lastSample = nil
                s.sensorAnswers = true
            }
        }
    }

    /// The sensed turn (sampling when due), nil when no sensor is in use, it does not answer, or every
    /// sample so far was flat.
    private func resolveSensor(_ s: inout State, at t: MonotonicInstant) -> Rotation? {
        guard s.usesSensor, let sensor = s.sensor else { return nil }
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
        guard s.sensorAnswers else { return nil }
        return s.estimator.current
    }
}
