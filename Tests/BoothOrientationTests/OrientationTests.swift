import BoothCore
import BoothOrientation
import BoothPorts
import Foundation
import Synchronization
import Testing

@Suite("Orientation from an accelerometer")
struct OrientationTests {
    static let g = 9.80665

    /// Gravity's reaction for a device turned so that the drawing must be turned by `degrees` clockwise
    /// (0 upright: +y up; 90: the right edge, +x, up), with `tilt` degrees off that and `z` out of plane.
    static func sample(_ degrees: Double, z: Double = 0) -> Acceleration {
        let r = degrees * .pi / 180
        return Acceleration(x: g * sin(r), y: g * cos(r), z: z)
    }

    @Test("each physical orientation gives its turn", arguments: [(0.0, Rotation.r0), (90, .r90), (180, .r180), (270, .r270), (-90, .r270)])
    func eachOrientation(degrees: Double, expected: Rotation) {
        var e = OrientationEstimator()
        #expect(e.update(Self.sample(degrees)) == expected)
    }

    @Test("noise around 45° does not flap; a clear turn switches")
    func hysteresis() {
        var e = OrientationEstimator(hysteresisDegrees: 15)
        #expect(e.update(Self.sample(10)) == .r0)
        // Noisy samples between 35° and 58°: past 45° but within the hysteresis.
        var rng: UInt32 = 7
        for _ in 0..<200 {
            rng = rng &* 1_103_515_245 &+ 12345
            let noise = Double(rng >> 16 % 1000) / 1000 * 23 - 0  // 0…23
            #expect(e.update(Self.sample(35 + noise)) == .r0)
        }
        #expect(e.update(Self.sample(62)) == .r90, "beyond 45° + 15°")
        // And back: 40° is within 45+15 of 90, so it stays.
        #expect(e.update(Self.sample(40)) == .r90)
        #expect(e.update(Self.sample(25)) == .r0)
    }

    @Test("a device lying flat keeps its turn; nothing before the first upright sample")
    func flat() {
        var e = OrientationEstimator()
        #expect(e.update(Acceleration(x: 0.5, y: 0.3, z: Self.g)) == nil)
        #expect(e.update(Self.sample(180)) == .r180)
        #expect(e.update(Acceleration(x: 3, y: 0, z: Self.g)) == .r180)
    }

    @Test("mount matrix parses and is applied")
    func mountMatrix() throws {
        let m = try #require(MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1\n"))
        let out = m.apply(Acceleration(x: 1, y: 2, z: 3))
        #expect(out == Acceleration(x: 2, y: -1, z: 3))
        #expect(MountMatrix(parsing: "1, 0; 0, 1") == nil)
    }

    /// A fake sysfs tree: an unrelated IIO device, then the accelerometer.
    static func fakeSysfs(raw: (Int, Int, Int), scale: String = "0.009806650", matrix: String?) throws -> String {
        let root = NSTemporaryDirectory() + "booth-iio-\(UUID().uuidString)"
        let fm = FileManager.default
        let other = root + "/bus/iio/devices/iio:device0", accel = root + "/bus/iio/devices/iio:device1"
        try fm.createDirectory(atPath: other, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: accel, withIntermediateDirectories: true)
        try "als\n".write(toFile: other + "/name", atomically: true, encoding: .utf8)
        try "12\n".write(toFile: other + "/in_illuminance_raw", atomically: true, encoding: .utf8)
        try "accel_3d\n".write(toFile: accel + "/name", atomically: true, encoding: .utf8)
        try write(raw, to: accel)
        try "\(scale)\n".write(toFile: accel + "/in_accel_scale", atomically: true, encoding: .utf8)
        if let matrix { try matrix.write(toFile: accel + "/in_accel_mount_matrix", atomically: true, encoding: .utf8) }
        return root
    }

    static func write(_ raw: (Int, Int, Int), to dir: String) throws {
        try "\(raw.0)\n".write(toFile: dir + "/in_accel_x_raw", atomically: true, encoding: .utf8)
        try "\(raw.1)\n".write(toFile: dir + "/in_accel_y_raw", atomically: true, encoding: .utf8)
        try "\(raw.2)\n".write(toFile: dir + "/in_accel_z_raw", atomically: true, encoding: .utf8)
    }

    @Test("sysfs: finds the accelerometer by name, scales raw values, applies the mount matrix")
    func sysfs() throws {
        // Sensor mounted turned: its x is the board's -y. Raw x = -1000 → board y = +9.8 (upright).
        let root = try Self.fakeSysfs(raw: (-1000, 0, 0), matrix: "0, 0, 0; -1, 0, 0; 0, 0, 1")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let accel = try #require(IIOAccelerometer.find(sysfsRoot: root))
        #expect(accel.name == "accel_3d")
        let a = try #require(accel.sample())
        #expect(abs(a.y - 9.80665) < 0.001 && abs(a.x) < 0.001)
        #expect(IIOAccelerometer.find(sysfsRoot: root, name: "bmi160") == nil)
        #expect(IIOAccelerometer.find(sysfsRoot: root + "/missing") == nil)
    }

    @Test("tracker: auto follows the sensor at its sampling interval; fixed and fallback as configured")
    func tracker() throws {
        let root = try Self.fakeSysfs(raw: (0, 1000, 0), matrix: nil)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dir = root + "/bus/iio/devices/iio:device1"
        let clock = Mutex<UInt64>(1_000_000_000)
        let tracker = OrientationTracker(camera: .auto, display: .r180, fallback: .r270,
                                         accelerometer: IIOAccelerometer.find(sysfsRoot: root),
                                         sampleIntervalMilliseconds: 500,
                                         now: { MonotonicInstant(nanoseconds: clock.withLock { $0 }) })
        #expect(tracker.camera == .r0)
        #expect(tracker.display == .r180)
        try Self.write((1000, 0, 0), to: dir)  // right edge up
        #expect(tracker.camera == .r0, "not sampled again within 500 ms")
        clock.withLock { $0 += 600_000_000 }
        #expect(tracker.camera == .r90)
        #expect(tracker.status.source == "accelerometer")
        try FileManager.default.removeItem(atPath: dir + "/in_accel_x_raw")
        clock.withLock { $0 += 600_000_000 }
        #expect(tracker.camera == .r270, "sensor gone: the fallback")
        #expect(tracker.status.source.hasPrefix("fallback"))
        let none = OrientationTracker(camera: .auto, display: .auto, fallback: .r90, accelerometer: nil)
        #expect(none.camera == .r90 && none.display == .r90)
        #expect(none.status.source == "fallback: no accelerometer")
    }

    /// Raw values (scale 1) for a device turned so the drawing must turn by `degrees` clockwise.
    static func raw(_ degrees: Double) -> (Int, Int, Int) {
        let a = sample(degrees)
        return (Int((a.x * 1000).rounded()), Int((a.y * 1000).rounded()), 0)
    }

    @Test("one source: with both auto, one reading decides the camera's and the screens' turn, so they never disagree")
    func oneReadingDecidesBoth() throws {
        let root = try Self.fakeSysfs(raw: (0, 1000, 0), matrix: nil)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dir = root + "/bus/iio/devices/iio:device1"
        let clock = Mutex<UInt64>(1_000_000_000)
        // Interval 0: every reading samples the sensor anew, the worst case for a disagreement.
        let source: any OrientationSource = OrientationTracker(
            camera: .auto, display: .auto, fallback: .r0, accelerometer: IIOAccelerometer.find(sysfsRoot: root),
            sampleIntervalMilliseconds: 0, now: { MonotonicInstant(nanoseconds: clock.withLock { $0 }) })
        var seen: Set<Rotation> = []
        for step in 0..<48 {
            try Self.write(Self.raw(Double(step) * 37), to: dir)
            clock.withLock { $0 += 1_000_000 }
            let turns = source.current
            #expect(turns.camera == turns.display, "step \(step): camera \(turns.camera), screen \(turns.display)")
            seen.insert(turns.camera)
        }
        #expect(seen == Set(Rotation.allCases), "the turns followed the sensor all the way round: \(seen)")
    }

    @Test("reconfigure: a reload's rotations, fallback and accelerometer apply at the next reading")
    func reconfigure() throws {
        let root = try Self.fakeSysfs(raw: Self.raw(90), matrix: nil)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var s = Settings.defaults
        let source = OrientationTracker(settings: s, sysfsRoot: root)
        #expect(source.current == Orientation(camera: .r0, display: .r0))
        #expect(source.status.source == "fixed")
        s.camera.rotation = .r90
        s.display.rotation = .r270
        source.reconfigure(s)
        #expect(source.current == Orientation(camera: .r90, display: .r270))
        s.camera.rotation = .auto
        s.display.rotation = .auto
        source.reconfigure(s)
        #expect(source.current == Orientation(camera: .r90, display: .r90), "the accelerometer says 90")
        #expect(source.status.source == "accelerometer")
        s.display.accelerometer = "bmi160"
        s.display.fallbackRotation = .r180
        source.reconfigure(s)
        #expect(source.current == Orientation(camera: .r180, display: .r180), "no bmi160: the new fallback")
        #expect(source.status.source == "fallback: no accelerometer")
    }
}
