import BoothCamera
import BoothCommandLine
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
// (`CameraBackends.register(ShutterBackend())`): `camera.backend = shutter-test` passes the settings
// check, `auto` picks it by its own detection (its rank puts it before every built-in backend), `devices`
// lists its section, and a whole session runs with the source it makes, named or picked by `auto`,
// through the generic factory the daemon uses (makeCameraSource), nothing else changed. The generated
// files (settings table, default config, man pages, completion) still list the built-in backends only.

/// The test's backend: ShutterCamera (CustomCameraTests.swift), detected when `camera.device` names it.
struct ShutterBackend: CameraBackendDescriptor {
    static let device = "shutter-test-camera"
    /// The cameras it made, for the test to look at.
    static let made = Mutex<[ShutterCamera]>([])

    var name: CameraBackendName { "shutter-test" }

    var summary: String { "the tests' shutter camera" }

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

// Serialized: the sessions' cameras are told apart by ShutterBackend.made, which both arguments append to.
@Suite(.serialized) struct TestBackendTests {
    init() { CameraBackends.register(ShutterBackend()) }

    @Test func itsNameIsACameraBackendSettingInThisProcessOnly() throws {
        let named = Settings.check(text: "[camera]\nbackend = shutter-test\n", file: "booth.conf")
        #expect(named.diagnostics.isEmpty, "\(named.diagnostics)")
        #expect(named.settings?.camera.backend == CameraBackendSetting(rawValue: "shutter-test"))
        let named2 = try #require(named.settings)
        #expect(resolveCameraBackend(named2.camera.backend, detection: CameraDetection(settings: named2)).name == "shutter-test")
        // An unknown name is still refused, in the words of any choice: the registered one among them.
        let wrong = Settings.check(text: "[camera]\nbackend = shutter-tset\n", file: "booth.conf")
        #expect(wrong.diagnostics.map(\.description) == ["booth.conf:2: camera.backend: 'shutter-tset' is not one of auto, v4l2, gphoto2, libcamera or shutter-test; did you mean 'shutter-test'?"])
        // The generated files list the built-in backends only.
        let spec = try #require(Schema.spec(for: "camera.backend"))
        #expect(spec.type == .choice(["auto", "v4l2", "gphoto2", "libcamera"]))
        for text in [spec.description, spec.allowed, Schema.markdownTable(), Schema.defaultConfigText(), ManPages.photoboothConf(),
                     BashCompletion.photoboothctl([])] {
            #expect(!text.contains("shutter-test") && !text.contains("tests' shutter camera"), "a test's backend leaked into a generated text")
        }
    }

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

    /// photoboothd and photoboothctl install the built-in backends' names at start: an unknown one is refused
    /// in the words it had when the names were an enum (the test's backend is this process's alone).
    @Test func theProgramsRefuseAnUnknownBackendInTheSameWords() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let expected = "camera.backend: 'gphoto3' is not one of auto, v4l2, gphoto2 or libcamera; did you mean 'gphoto2'?"
        try Data("[camera]\nbackend = gphoto3\n".utf8).write(to: URL(fileURLWithPath: "\(dir)/booth.conf"))
        let ctl = runProgram(try builtProgram("photoboothctl"), ["config", "validate", "\(dir)/booth.conf"], in: dir)
        #expect(ctl.status == 78 && ctl.output.contains("booth.conf:2: \(expected)"), "\(ctl.output)")
        let daemon = runProgram(try builtProgram("photoboothd"), ["--simulate", "--socket", "\(dir)/control", "--set", "camera.backend=gphoto3"], in: dir)
        #expect(daemon.status == 78 && daemon.output.contains(expected), "\(daemon.output)")
        let shutter = runProgram(try builtProgram("photoboothctl"), ["config", "set", "camera.backend", "shutter-test", "--file", "\(dir)/booth.conf"], in: dir)
        #expect(shutter.status != 0 && shutter.output.contains("'shutter-test' is not one of auto, v4l2, gphoto2 or libcamera"), "\(shutter.output)")
    }

    @Test(arguments: ["auto", "shutter-test"]) func aSessionRunsWithItsSource(backend: String) async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        // As a config file names it: through the settings check.
        s.camera.backend = try #require(Settings.check(text: "[camera]\nbackend = \(backend)\n", file: "booth.conf").settings).camera.backend
        let before = ShutterBackend.made.withLock { $0.count }
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
        #expect(logs.all.contains { $0.contains("camera: backend shutter-test (camera.backend = auto") } == (backend == "auto"), "\(log())")

        // Press → countdown on the injected clock → the still asked of the test's camera → saved → review.
        button.fire(.press(id: 1, at: clock.now()))
        #expect(await eventually { runtime.currentState.isCountdown }, "\(log())")
        for remaining in [3, 2, 1] {
            #expect(await eventually { display.screens.last == .countdown(remaining: remaining, shot: 1, of: 1) }, "\(log())")
            clock.advance(milliseconds: 1000)
        }
        let asked = { ShutterBackend.made.withLock { made in made.dropFirst(before).first { !$0.requests.isEmpty } } }
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
