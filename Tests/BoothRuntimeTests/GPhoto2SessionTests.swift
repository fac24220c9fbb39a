import BoothCamera
import BoothClock
import BoothCore
import BoothJPEG
import BoothPorts
import BoothStorage
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime
@testable import photoboothd

// A whole 4-shot session through the real runtime with the real gphoto2 backend (GPhoto2CameraSource)
// against libgphoto2's virtual camera (BoothTestSupport's VirtualCamera: Debian 12's ptp2 driver, the
// shared real photos as the camera's card): live view on the screen, four stills downloaded and upright,
// the 2x2 picture composed. The runtime's timers (review) run on an injected ManualClock; the camera's
// own waits are USB time, on the real clock.
@Suite struct GPhoto2SessionTests {
    @Test func aFourShotSessionWithTheVirtualDSLR() async throws {
        let vcam = try VirtualCamera.shared.get()
        try await vcam.exclusively {
            let dir = makeTempDir(); defer { removeTree(dir) }
            var s = fastSettings(dir: dir, reviewMilliseconds: 2000)
            s.camera.backend = .gphoto2
            s.camera.device = "D750"
            s.camera.captureTimeoutMilliseconds = 20_000
            s.session.shots = 4
            s.session.betweenShotsMilliseconds = 0
            s.picture.layout = .grid2x2
            let clock = ManualClock.startingNow()
            let button = FakeButton(clock: clock), display = RecordingDisplay(), logs = LogRecorder()
            let settings = s
            let factory = DeviceFactory(cameraSource: { s, _, log in makeCameraSource(s, clock: SystemClock(), log: log) },
                                        button: { _ in button }, led: { _ in nil }, displays: { _, _, _ in [display] })
            var options = RuntimeOptions()
            options.composer = try makePictureComposer(settings)
            let runtime = BoothRuntime(settings: settings, options: options, factory: factory, clock: clock,
                                       log: logs.logger(threshold: .debug), reloader: { .success(settings) })
            let stop = runOnItsOwnThread(runtime)
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
}
