import BoothCamera
import BoothClock
import BoothControl
import BoothCore
import BoothJPEG
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothWiring

// A whole 4-shot session through the real runtime with the real gphoto2 backend (GPhoto2CameraSource)
// against libgphoto2's virtual camera (BoothTestSupport's VirtualCamera: Debian 12's ptp2 driver, the
// shared real photos as the camera's card): live view on the screen, four stills downloaded and upright,
// the 2x2 picture composed. The runtime's timers (review) run on an injected ManualClock; the camera's
// own waits are USB time, on the real clock.
@Suite struct GPhoto2SessionTests {
    /// The test settings with the virtual D750 as the camera, a review of 2 s on the manual clock.
    static func settings(dir: String, captureTimeoutMilliseconds: Int = 15_000) -> Settings {
        var s = fastSettings(dir: dir, reviewMilliseconds: 2000)
        s.camera.backend = .gphoto2
        s.camera.device = "D750"
        s.camera.captureTimeoutMilliseconds = captureTimeoutMilliseconds
        return s
    }

    /// The real runtime with the gphoto2 source (its waits on the real clock) and the runtime's timers on a
    /// manual clock, on a thread of its own; `stop` ends it.
    static func running(_ settings: Settings) throws
        -> (BoothRuntime, ManualClock, FakeButton, RecordingDisplay, LogRecorder, stop: () -> Void) {
        let clock = ManualClock.startingNow()
        let button = FakeButton(clock: clock), display = RecordingDisplay(), logs = LogRecorder()
        let factory = DeviceFactory(cameraSource: { s, _, log in makeCameraSource(s, clock: SystemClock(), log: log) },
                                    button: { _ in button }, led: { _ in nil }, displays: { _, _, _ in [display] })
        var options = RuntimeOptions()
        options.composer = try makePictureComposer(settings)
        let runtime = BoothRuntime(settings: settings, options: options, factory: factory, clock: clock,
                                   log: logs.logger(threshold: .debug), reloader: { .success(settings) })
        return (runtime, clock, button, display, logs, runOnItsOwnThread(runtime))
    }

    @Test func aFourShotSessionWithTheVirtualDSLR() async throws {
        let vcam = try VirtualCamera.shared.get()
        try await vcam.exclusively {
            let dir = makeTempDir(); defer { removeTree(dir) }
            var s = Self.settings(dir: dir, captureTimeoutMilliseconds: 20_000)
            s.session.shots = 4
            s.session.betweenShotsMilliseconds = 0
            s.picture.layout = .grid2x2
            let (runtime, clock, button, display, logs, stop) = try Self.running(s)
            defer { stop() }
            let log = { logs.all.joined(separator: "\n") }
            #expect(await eventually { button.isRunning && display.screens.last == .idle(notice: nil) }, "\(log())")
            button.fire(.press(id: 1, at: clock.now()))
            // Four stills through USB, then the picture: the session reaches review.
            #expect(await eventually(timeoutSeconds: 90) { runtime.currentState.isReview }, "\(log())")
            // The picture is saved by the storage thread while review shows it.
            #expect(await eventually { savedCaptures(in: s.storage.dir).count == 5 }, "\(log())")
            let files = savedCaptures(in: s.storage.dir)
            let captures = files.filter { !PhotoStore.isPicture(fileName: ($0 as NSString).lastPathComponent) }
            let pictures = files.filter { PhotoStore.isPicture(fileName: ($0 as NSString).lastPathComponent) }
            #expect(captures.count == 4, "\(files)")
            #expect(pictures.count == 1, "\(files)")
            for path in captures {
                let header = try #require(jpegHeader(ofFile: path), "\(path) decodes")
                #expect(header.size.width * header.size.height > 5_000_000, "a camera-sized still, not a live-view frame: \(header.size)")
                #expect(EXIFOrientation.read(try AtomicFile.read(path)) == .topLeft, "\(path) upright")
                #expect(decodesFully(path))
            }
            #expect(Set(try captures.map { try AtomicFile.read($0) }).count == 4, "four different photos from the card")
            let picture = try #require(pictures.first)
            #expect(decodesFully(picture))
            #expect(logs.all.contains { $0.contains("camera: gphoto2 Nikon DSC D750 at usb:001,001 open") }, "\(log())")
            #expect(logs.all.filter { $0.contains("trigger→shutter") }.count == 4)
            // Each capture was decoded for its slot as it arrived (during the next shot), not all at the end.
            #expect(logs.all.filter { $0.contains("decoded ahead") }.count == 4, "\(log())")
            #expect(display.all.contains { if case .frame = $0 { true } else { false } }, "live view reached the screen")
            clock.advance(milliseconds: s.session.reviewMilliseconds)
            #expect(await eventually { runtime.currentState.isIdle && runtime.counters.completed == 1 }, "\(log())")
        }
    }

    /// A 2-shot session of a 45 MP body's portrait stills (EXIF Orientation 6, made at test time and served by the
    /// virtual camera's `photo=PATH`): both kept upright, the picture composed, the review reached.
    @Test func aTwoShotSessionOf45MegapixelPortraitStills() async throws {
        let vcam = try VirtualCamera.shared.get()
        let photo = try LargeStill.file(LargeStill.mp45, orientation: 6)
        try await vcam.exclusively {
            let dir = makeTempDir(); defer { removeTree(dir) }
            var s = Self.settings(dir: dir, captureTimeoutMilliseconds: 30_000)
            s.session.shots = 2
            s.session.betweenShotsMilliseconds = 0
            try vcam.say("photo=\(photo.path)")
            let (runtime, clock, button, display, logs, stop) = try Self.running(s)
            defer { stop() }
            let log = { logs.all.joined(separator: "\n") }
            #expect(await eventually { button.isRunning && display.screens.last == .idle(notice: nil) }, "\(log())")
            button.fire(.press(id: 1, at: clock.now()))
            #expect(await eventually(timeoutSeconds: 120) { runtime.currentState.isReview || runtime.counters.failed > 0 }, "\(log())")
            #expect(runtime.currentState.isReview, "\(log())")
            #expect(await eventually { savedCaptures(in: s.storage.dir).count == 3 }, "\(log())")
            let files = savedCaptures(in: s.storage.dir)
            for path in files where !PhotoStore.isPicture(fileName: (path as NSString).lastPathComponent) {
                #expect(jpegHeader(ofFile: path)?.size == FrameSize(width: 5464, height: 8192), "\(path) upright and whole")
            }
            let picture = try #require(files.first { PhotoStore.isPicture(fileName: ($0 as NSString).lastPathComponent) })
            #expect(decodesFully(picture))
            #expect(!logs.all.contains { $0.contains("not kept") || $0.contains("could not be decoded") }, "\(log())")
            clock.advance(milliseconds: s.session.reviewMilliseconds)
            #expect(await eventually { runtime.currentState.isIdle && runtime.counters.completed == 1 }, "\(log())")
        }
    }

    /// The battery of the camera in use reaches `photoboothctl status` (text and `--json`) and `devices` through the
    /// daemon; at 20 % or less `status` warns.
    @Test func theBatteryReachesStatusAndDevicesThroughTheDaemon() async throws {
        let vcam = try VirtualCamera.shared.get()
        let ctl = try builtProgram("photoboothctl")
        try await vcam.exclusively {
            let dir = makeTempDir(); defer { removeTree(dir) }
            try vcam.say("battery=15")
            let (runtime, _, _, _, logs, stop) = try Self.running(Self.settings(dir: dir))
            defer { stop() }
            let server = ControlServer(path: "\(dir)/control", log: LogRecorder().logger(),
                                       handler: runtime.daemonControlHandler(info: DaemonInfo(
                                           version: photoboothVersion, protocolVersion: 1, pid: getpid(),
                                           configPath: "\(dir)/photobooth.conf", simulated: false)))
            try server.start()
            defer { server.stop() }
            #expect(await eventually { runtime.statusReport(configPath: "").camera.batteryPercent == 15 }, "\(logs.all)")
            let text = runProgram(ctl, ["status", "--socket", "\(dir)/control"], in: dir).output
            #expect(text.contains("battery 15%"), "\(text)")
            #expect(text.split(separator: "\n").contains { $0.hasPrefix("warning:") && $0.contains("battery 15%: charge or swap it soon") }, "\(text)")
            let json = runProgram(ctl, ["status", "--json", "--socket", "\(dir)/control"], in: dir).output
            #expect(json.contains("\"batteryPercent\" : 15"), "\(json)")
            let devices = runProgram(ctl, ["devices", "--socket", "\(dir)/control"], in: dir).output
            #expect(devices.contains("in use: camera usb:001,001 (Nikon DSC D750), battery 15%"), "\(devices)")
        }
    }
}
