import BoothCore

/// An acceleration in m/s² along a device's x (right), y (up) and z (out of the screen) axes, as IIO
/// reports it: at rest it is the reaction to gravity, so a device standing upright reads y ≈ +9.8.
public struct Acceleration: Sendable, Equatable {
    public var x: Double, y: Double, z: Double
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
}

/// The two turns in use, read together: clockwise quarter turns.
public struct Orientation: Sendable, Equatable {
    /// The turn of captures and of the live view's camera frames (`camera.rotation` resolved).
    public var camera: Rotation
    /// The turn of the whole screen drawing (`display.rotation` resolved).
    public var display: Rotation
    public init(camera: Rotation, display: Rotation) { self.camera = camera; self.display = display }
}

/// Where the turns come from, for `status` and `devices`.
public struct OrientationStatus: Sendable, Equatable {
    /// `"accel_3d (/sys/bus/iio/devices/iio:device0)"`, or nil without one.
    public var accelerometer: String?
    /// The last sample in m/s² (after the mount matrix), if any.
    public var lastSample: Acceleration?
    public var camera: Rotation
    public var display: Rotation
    /// `"fixed"`, `"accelerometer"`, `"fallback: no accelerometer"` or `"fallback: accelerometer not answering"`.
    public var source: String
    public init(accelerometer: String?, lastSample: Acceleration?, camera: Rotation, display: Rotation, source: String) {
        self.accelerometer = accelerometer
        self.lastSample = lastSample
        self.camera = camera
        self.display = display
        self.source = source
    }
}

/// The one source of `camera.rotation` and `display.rotation` as they are in force: the booth makes
/// one and hands the same instance to the camera (captures) and to every screen (framebuffer, file
/// preview), so with `auto` one accelerometer reading decides both and they never disagree.
/// Thread-safe: the camera, display and preview threads all ask.
public protocol OrientationSource: AnyObject, Sendable {
    /// Both turns from one reading (with `auto`, at most one accelerometer sample decides both).
    var current: Orientation { get }
    /// What the source is and what it last read.
    var status: OrientationStatus { get }
    /// Takes `camera.rotation`, `display.rotation`, `display.fallback_rotation` and
    /// `display.accelerometer` from `settings` (a reload); the next ``current`` follows them.
    func reconfigure(_ settings: Settings)
    /// `camera.rotation` and `display.rotation` as the source resolves them now (set at start or by
    /// ``reconfigure(_:)``): the settings in force, not the turns (`status` shows those).
    var settingsInUse: (camera: RotationSetting, display: RotationSetting) { get }
}

extension OrientationSource {
    /// The turn for captures and the live view (``current``'s camera).
    public var camera: Rotation { current.camera }
    /// The turn for the whole screen drawing (``current``'s display).
    public var display: Rotation { current.display }
}

/// A source that never changes: fixed turns (tests, a booth with no `auto`).
public final class FixedOrientation: OrientationSource {
    private let turns: Orientation
    public init(camera: Rotation = .r0, display: Rotation = .r0) { turns = Orientation(camera: camera, display: display) }
    public var current: Orientation { turns }
    public var status: OrientationStatus {
        OrientationStatus(accelerometer: nil, lastSample: nil, camera: turns.camera, display: turns.display, source: "fixed")
    }
    /// Fixed: the settings are not read.
    public func reconfigure(_ settings: Settings) {}
    /// The fixed turns, as settings.
    public var settingsInUse: (camera: RotationSetting, display: RotationSetting) {
        (RotationSetting(turns.camera), RotationSetting(turns.display))
    }
}
