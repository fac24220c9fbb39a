import BoothCore
import BoothPorts
import FoundationEssentials
import Glibc

/// ``BoothPorts/Acceleration``, named here for the display's callers.
public typealias Acceleration = BoothPorts.Acceleration

/// IIO's `mount_matrix`: how the sensor sits on the board, as three rows; the corrected vector is
/// the matrix times the sensor's. Text form: `"x1, y1, z1; x2, y2, z2; x3, y3, z3"`.
public struct MountMatrix: Sendable, Equatable {
    public var rows: [[Double]]
    public static let identity = MountMatrix(rows: [[1, 0, 0], [0, 1, 0], [0, 0, 1]])

    public init(rows: [[Double]]) { self.rows = rows }

    /// Parses sysfs text; nil when it is not 3 rows of 3 numbers.
    public init?(parsing text: String) {
        let rows = text.trimmingWhitespace().split(separator: ";").map { row in
            row.split(separator: ",").compactMap { Double($0.trimmingSpaces()) }
        }
        guard rows.count == 3, rows.allSatisfy({ $0.count == 3 }) else { return nil }
        self.rows = rows
    }

    /// The sample in the device frame: this matrix times `a` (sysfs `mount_matrix` rows; m/s², x y z).
    public func apply(_ a: Acceleration) -> Acceleration {
        let v = [a.x, a.y, a.z]
        func row(_ i: Int) -> Double { zip(rows[i], v).reduce(0) { $0 + $1.0 * $1.1 } }
        return Acceleration(x: row(0), y: row(1), z: row(2))
    }
}

/// Chooses the clockwise turn that makes a drawing upright for the way the device hangs, from
/// gravity in the device's x-y plane, with hysteresis: it changes only once the device is more than
/// `45° + hysteresisDegrees` from the current turn's upright, so it does not flap near 45°. A device
/// lying flat (less than half of gravity in the x-y plane) keeps the current turn.
///
/// Upright (y up) → 0; turned so x points up (the device's right edge at the top) → 90; upside down → 180;
/// left edge at the top → 270.
public struct OrientationEstimator: Sendable {
    public var hysteresisDegrees: Double
    public private(set) var current: Rotation?

    public init(hysteresisDegrees: Double = 15, initial: Rotation? = nil) {
        self.hysteresisDegrees = hysteresisDegrees
        current = initial
    }

    /// Feeds one sample (already through the mount matrix); returns the turn now in use (nil until
    /// a sample that is not flat arrived).
    @discardableResult
    public mutating func update(_ a: Acceleration) -> Rotation? {
        let planar = (a.x * a.x + a.y * a.y).squareRoot()
        let total = (planar * planar + a.z * a.z).squareRoot()
        guard total > 0, planar >= total / 2 else { return current }
        let angle = atan2(a.x, a.y) * 180 / .pi  // 0 upright, +90 x up
        if let c = current {
            var distance = abs(angle - Double(c.rawValue)).truncatingRemainder(dividingBy: 360)
            if distance > 180 { distance = 360 - distance }
            if distance <= 45 + hysteresisDegrees { return c }
        }
        let nearest = Rotation(degrees: Int(angle.rounded()))
        current = nearest
        return nearest
    }
}

/// An IIO accelerometer read through sysfs under a configurable root (`/sys` on the booth, a fake
/// tree in tests): the first `<root>/bus/iio/devices/iio:deviceN` with `in_accel_x_raw` (and, when
/// `name` is given, whose `name` file says so); samples are `(raw + offset) * scale` from
/// `in_accel_{x,y,z}_raw`, `in_accel_scale` or `in_accel_{x,y,z}_scale`, optional `_offset`,
/// corrected by `in_accel_mount_matrix` or `mount_matrix` where present.
public struct IIOAccelerometer: Sendable, Equatable {
    /// The device directory.
    public let directory: String
    /// Its `name` file, e.g. `"accel_3d"`.
    public let name: String
    public let mountMatrix: MountMatrix

    /// Finds the accelerometer; nil when there is none (or none named `name`).
    public static func find(sysfsRoot: String = "/sys", name wanted: String = "") -> IIOAccelerometer? {
        let base = sysfsRoot + "/bus/iio/devices"
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).sorted()
        for entry in entries where entry.hasPrefix("iio:device") {
            let dir = base + "/" + entry
            guard FileManager.default.fileExists(atPath: dir + "/in_accel_x_raw") else { continue }
            let name = read(dir + "/name") ?? entry
            if !wanted.isEmpty && name != wanted { continue }
            let matrix = (read(dir + "/in_accel_mount_matrix") ?? read(dir + "/mount_matrix")).flatMap(MountMatrix.init(parsing:))
            return IIOAccelerometer(directory: dir, name: name, mountMatrix: matrix ?? .identity)
        }
        return nil
    }

    /// One sample in m/s², through the mount matrix; nil when a file cannot be read (device gone).
    public func sample() -> Acceleration? {
        let common = IIOAccelerometer.read(directory + "/in_accel_scale").flatMap(Double.init) ?? 1
        func axis(_ a: String) -> Double? {
            guard let raw = IIOAccelerometer.read(directory + "/in_accel_\(a)_raw").flatMap(Double.init) else { return nil }
            let scale = IIOAccelerometer.read(directory + "/in_accel_\(a)_scale").flatMap(Double.init) ?? common
            let offset = IIOAccelerometer.read(directory + "/in_accel_\(a)_offset").flatMap(Double.init) ?? 0
            return (raw + offset) * scale
        }
        guard let x = axis("x"), let y = axis("y"), let z = axis("z") else { return nil }
        return mountMatrix.apply(Acceleration(x: x, y: y, z: z))
    }

    static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), let s = String(data: data, encoding: .utf8) else { return nil }
        return s.trimmingWhitespace()
    }
}
