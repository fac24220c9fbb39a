import BoothCamera
import BoothControl
import BoothCore
import BoothDeviceListing
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime

// A camera backend defined here, in a test target, and registered with one line
// (`CameraBackends.register(ShutterBackend())`): `auto` picks it by its own detection (its rank puts it
// before every built-in backend), `devices` lists its section, and a whole session runs with the
// source it makes, through the generic factory the daemon uses (makeCameraSource), nothing else changed.

/// The test's backend: ShutterCamera (CustomCameraTests.swift), detected when `camera.device` names it.
struct ShutterBackend: CameraBackendDescriptor {
    static let device = "shutter-test-camera"
    /// The cameras it made, for the test to look at.
    static let made = Mutex<[ShutterCamera]>([])

    var name: CameraBackendName { "shutter-test" }

    var autoSteps: [CameraAutoStep] {
        [CameraAutoStep(rank: 50) { $0.settings.camera.device == Self.device }]
    }

    func makeSource(_ settings: Settings, choice: CameraBackendChoice, clock: any MonotonicClock, log: Logger) -> any CameraSource {
        if choice.auto { log.info("camera: backend shutter-test (camera.backend = auto: camera.device = \(Self.device))") }
        let camera = ShutterCamera(clock: clock)
        Self.made.withLock { $0.append(camera) }
        return camera
    }

    func devicesSection(_ context: CameraDevicesContext) -> CameraDevicesSection? {
        CameraDevicesSection(backend: name, lines: ["shutter-test cameras (camera.device = \(Self.device)):",
                                                    "  \(Self.device): a shutter camera of the test's own"],
                             json: Array(#"{"shutterCameras": ["\#(Self.device)"], "count": 1, "ready": true}"#.utf8))
    }
}

@Suite struct TestBackendTests {
    init() { CameraBackends.register(ShutterBackend()) }

    @Test func theRegisteredBackendIsListedByDevices() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let report = DeviceReport.gather(source: "test", devRoot: dir)
        let section = try #require(report.cameraBackends.first { $0.backend == "shutter-test" }, "\(report.cameraBackends.map(\.backend))")
        #expect(section.lines == ["shutter-test cameras (camera.device = shutter-test-camera):",
                                  "  shutter-test-camera: a shutter camera of the test's own"])
        #expect(section.fields?["shutterCameras"] == .array([.string("shutter-test-camera")]))
        #expect(section.fields?["count"] == .number(1) && section.fields?["ready"] == .bool(true))
        // The built-in backends' sections are there as before, after V4L2's nodes.
        #expect(report.cameraBackends.map(\.backend).prefix(2) == ["gphoto2", "libcamera"])
        // Sent over the control socket and back, the section is the same.
        let again = try JSONDecoder().decode(DeviceReport.self, from: JSONEncoder().encode(report))
        #expect(again.cameraBackends == report.cameraBackends)
    }

    @Test func autoPicksItAndASessionRunsWithItsSource() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        s.camera.backend = .auto
        s.camera.device = ShutterBackend.device
        s.session.countdownMilliseconds = 3000
        s.session.reviewMilliseconds = 2000
        let clock = ManualClock()
        let button = FakeButton(), display = RecordingDisplay(), logs = LogRecorder()
        // The daemon's camera factory: one call into the registry.
        let factory = DeviceFactory(cameraSource: { s, clock, log in makeCameraSource(s, clock: clock, log: log) },
                                    button: { _ in button }, led: { _ in nil }, displays: { _, _, _ in [display] })
        let settings = s
        let runtime = BoothRuntime(settings: settings, options: RuntimeOptions(), factory: factory, clock: clock,
                                   log: logs.logger(threshold: .debug), reloader: { .success(settings) })
        let stop = runOnItsOwnThread(runtime)
        defer { stop() }
        let log = { logs.all.joined(separator: "\n") }
        #expect(await eventually { button.isRunning && display.screens.last == .idle(notice: nil) }, "\(log())")
        #expect(logs.all.contains { $0.contains("camera: backend shutter-test (camera.backend = auto") }, "\(log())")

        // Press → countdown on the injected clock → the still asked of the test's camera → saved → review.
        button.fire(.press(id: 1, at: clock.now()))
        #expect(await eventually { runtime.currentState.isCountdown }, "\(log())")
        for remaining in [3, 2, 1] {
            #expect(await eventually { display.screens.last == .countdown(remaining: remaining, shot: 1, of: 1) }, "\(log())")
            clock.advance(milliseconds: 1000)
        }
        let asked = { ShutterBackend.made.withLock { made in made.first { !$0.requests.isEmpty } } }
        #expect(await eventually { asked() != nil }, "the still was asked of the backend's camera:\n\(log())")
        let camera = try #require(asked())
        clock.advance(milliseconds: ShutterCamera.shutterMilliseconds + 10)
        #expect(await eventually { runtime.currentState.isReview }, "\(log())")
        #expect(await eventually { savedCaptures(in: s.storage.dir).count == 1 }, "\(log())")
        let saved = try #require(savedCaptures(in: s.storage.dir).first)
        let still = try #require(camera.stills.first)
        #expect(try AtomicFile.read(saved) == still.jpeg, "the photo on disk is the backend's still")
        clock.advance(milliseconds: s.session.reviewMilliseconds)
        #expect(await eventually { runtime.currentState.isIdle && runtime.counters.completed == 1 }, "\(log())")
    }
}
