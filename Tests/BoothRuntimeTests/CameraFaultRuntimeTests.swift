import BoothCamera
import BoothCore
import BoothPorts
import BoothJPEG
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothControl
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

// Camera faults found by trying the booth (issue 13): a capture size the camera does not offer,
// a camera that stops delivering during a capture, one outage counted as one fault, framing
// from a laptop after the idle stop.

/// A camera that starts but never delivers a frame; its first buffer after STREAMON was the stale
/// one a v4l2loopback node hands out (dropped as `stale`), as a node whose writer stopped does.
private final class SilentCamera: CameraDevice, @unchecked Sendable {
    let identity = "silent"
    private(set) var statistics = CameraStatistics()
    func start(_ request: StreamRequest) throws -> StreamInfo {
        statistics = CameraStatistics()
        statistics.noteDropped(.wholeBufferAfterStreamOn)
        return StreamInfo(devicePath: "/dev/silent", card: "silent", format: .mjpeg, size: request.size,
                          bytesPerLine: 0, frameInterval: nil, warnings: [], controlNotes: [])
    }
    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? { nil }
    func reconfigure(size: FrameSize) throws -> StreamInfo { try start(StreamRequest(size: size)) }
    func stop() {}
}

/// A camera that streams and never delivers; each wait takes 5 ms of real time (not the test's clock).
/// Counts its waits, so a test knows when the worker has turned once more.
private final class QuietCamera: CameraDevice, @unchecked Sendable {
    let identity = "quiet"
    private let waits = Mutex(0)
    var statistics: CameraStatistics { CameraStatistics() }
    /// `nextFrame` calls so far.
    var waitCount: Int { waits.withLock { $0 } }
    /// Waits (real time, up to 10 s) until the worker has asked for two more frames: it has then
    /// handled its requests and checked its deadlines at the clock's current time at least once.
    func awaitTwoMoreWaits() -> Bool {
        let target = waitCount + 2
        return waitUntil(10) { waitCount >= target }
    }
    func start(_ request: StreamRequest) throws -> StreamInfo {
        StreamInfo(devicePath: "/dev/quiet", card: "quiet", format: .yuyv, size: request.size,
                   bytesPerLine: request.size.width * 2, frameInterval: nil, warnings: [], controlNotes: [])
    }
    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        waits.withLock { $0 += 1 }
        usleep(5_000)
        return nil
    }
    func reconfigure(size: FrameSize) throws -> StreamInfo { try start(StreamRequest(size: size)) }
    func stop() {}
}

private final class PostedEvents: @unchecked Sendable {
    private let condition = NSCondition()
    private var events: [BoothEvent] = []
    func post(_ e: BoothEvent) { condition.lock(); events.append(e); condition.broadcast(); condition.unlock() }
    /// The first camera fault's message, waiting up to `seconds`.
    func cameraFault(seconds: Double = 10) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while true {
            for case let .deviceFault(.camera, message) in events { return message }
            if !condition.wait(until: deadline) { return nil }
        }
    }
}

/// `photoboothctl` as built next to the tests (swift build / swift test build it).
private func photoboothctl(_ arguments: [String]) throws -> String {
    runProgram(try builtProgram("photoboothctl"), arguments, in: NSTemporaryDirectory()).output
}

@Suite(.serialized) struct CameraFaultRuntimeTests {
    /// `camera.capture_size` 1920x1080 on a camera that offers up to 1280x720: the daemon says so
    /// at start, as a warning naming both sizes; `--check` says it too; `status` carries it.
    @Test func aCaptureSizeTheCameraDoesNotOfferIsAWarningAtStartInCheckAndInStatus() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        s.camera.captureSize = FrameSize(width: 1920, height: 1080)
        let offered = [FrameSize(width: 320, height: 240), FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720)]

        let checkLogs = LogRecorder()
        let checkCamera = TestCamera(name: "sim-check", offeredSizes: offered)
        let factory = DeviceFactory(camera: { _ in checkCamera }, button: { _ in FakeButton() }, led: { _ in nil },
                                    displays: { _, _, _ in [] })
        _ = checkDevices(settings: s, factory: factory, log: checkLogs.logger())
        #expect(checkLogs.all.contains { $0.hasPrefix("<4>") && $0.contains("check: camera:")
                    && $0.contains("camera.capture_size 1920x1080") && $0.contains("1280x720") }, "\(checkLogs.all)")

        let booth = TestBooth(s, offeredSizes: offered, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await eventually { booth.camera.isStreaming })
        #expect(await eventually {
            booth.logs.all.contains { $0.hasPrefix("<4>") && $0.contains("camera.capture_size 1920x1080") && $0.contains("1280x720") }
        }, "\(booth.logText)")
        let json = String(decoding: try JSONEncoder().encode(booth.runtime.statusReport(configPath: "")), as: UTF8.self)
        #expect(json.contains("camera.capture_size 1920x1080") && json.contains("1280x720"), "\(json)")

        // The capture is taken at the size the warning named.
        booth.button.press()
        #expect(await eventually { savedCaptures(in: s.storage.dir).count == 1 }, "\(booth.logText)")
        let header = try #require(savedCaptures(in: s.storage.dir).first.flatMap(jpegHeader(ofFile:)))
        #expect(header.size == FrameSize(width: 1280, height: 720))
    }

    /// At the default `camera.capture_timeout` (3 s) a camera that stops delivering at the trigger
    /// fails the capture by its deadline: one retry, then "Sorry, try again" (no camera fault ending
    /// the session). A camera still silent afterwards is the camera fault, saying no frames came.
    @Test func aStallDuringACaptureIsTheCaptureTimeoutsRetryThenSorry() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let s = fastSettings(dir: dir)
        #expect(s.camera.captureTimeoutMilliseconds == Settings.defaults.camera.captureTimeoutMilliseconds)
        let booth = TestBooth(s, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await booth.advance(untilMilliseconds: 5000) {
            booth.camera.isStreaming && booth.runtime.statusReport(configPath: "").camera.framesDelivered >= 3
        })
        booth.camera.stall()
        // The frames delivered before the stall (stamped up to one frame wait ahead of the booth's
        // clock) pass as preview: the press comes after them.
        try #require(await booth.advance(milliseconds: 500))
        booth.button.press()
        let sorry = Screen.idle(notice: BoothMachine.captureFailedNotice)
        #expect(await booth.advance(untilMilliseconds: 10_000) { booth.display.screens.contains(sorry) || booth.state.faultReasons != nil })
        let screens = booth.display.screens
        let firstFault = screens.firstIndex { if case .fault = $0 { true } else { false } }
        #expect(firstFault == nil, "no camera fault before the capture's retry ended: \(screens)\n\(booth.logText)")
        #expect(screens.contains(sorry), "\(booth.logText)")
        #expect(booth.logged("capture failed twice"), "\(booth.logText)")
        #expect(booth.runtime.counters.failed == 1)

        // Still silent after the session: the camera fault, saying no frames came.
        #expect(await booth.advance(untilMilliseconds: 10_000) { booth.state.faultReasons?[.camera] != nil }, "\(booth.logText)")
        let message = booth.state.faultReasons?[.camera] ?? ""
        #expect(message.contains("no frames"), "\(message)")
        booth.camera.resume()
        #expect(await booth.advance(untilMilliseconds: 60_000) { booth.state.isIdle }, "\(booth.logText)")
        #expect(booth.runtime.counters.faults == 1)
    }

    /// A camera unplugged for a while: the fault retries (1 s, 2 s, …) fail, each logged, but the
    /// outage is one fault in the counters, not one per retry.
    @Test func oneOutageIsOneFaultInTheCounters() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let booth = TestBooth(fastSettings(dir: dir), clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await eventually { booth.camera.isStreaming })
        booth.camera.unplug()
        #expect(await eventually { booth.state.faultReasons?[.camera] != nil }, "\(booth.logText)")
        // The fault at error: "camera lost", then once more when the reason becomes "camera not available"
        // at the first retry; the retries that fail the same way again are a debug line each.
        #expect(await booth.advance(untilMilliseconds: 30_000) {
            booth.logs.all.filter { $0.contains("fault (camera) unchanged after the retry") }.count >= 2
        }, "\(booth.logText)")
        #expect(booth.logs.all.filter { $0.contains("fault (camera):") }.count <= 2, "\(booth.logText)")
        #expect(booth.runtime.counters.faults == 1, "\(booth.logText)")
        #expect(booth.runtime.statusReport(configPath: "").counters.faults == 1)
        booth.camera.replug()
        #expect(await booth.advance(untilMilliseconds: 60_000) { booth.state.isIdle }, "\(booth.logText)")
        #expect(booth.runtime.counters.faults == 1)
    }

    /// The same for storage: removable media missing from the start, its retries failing, is one fault.
    @Test func oneStorageOutageIsOneFaultInTheCounters() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        s.storage.mount = "\(dir)/media"
        s.storage.dir = "\(dir)/media/photos"
        let booth = TestBooth(s, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await eventually { booth.state.faultReasons?[.storage] != nil }, "\(booth.logText)")
        #expect(await booth.advance(untilMilliseconds: 30_000) {
            booth.logs.all.filter { $0.contains("fault (storage) unchanged after the retry") }.count >= 2
        }, "\(booth.logText)")
        #expect(booth.logs.all.filter { $0.contains("fault (storage):") }.count == 1, "\(booth.logText)")
        #expect(booth.runtime.counters.faults == 1, "\(booth.logText)")
    }

    /// A capture waiting with a deadline longer than the no-frames time (`camera.capture_timeout =
    /// 10s`): the silent camera is not a fault before the deadline; the no-frames time counts from
    /// the deadline on, and the fault says how long no frame came.
    @Test func aLongerCaptureTimeoutIsNotPreemptedByTheNoFramesTime() {
        let camera = QuietCamera(), events = PostedEvents(), clock = ManualClock()
        let size = FrameSize(width: 16, height: 16)
        let worker = StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .yuyv, size: size), captureSize: size,
                                  jpegQuality: 90, captures: CaptureBox(), clock: clock,
                                  log: Logger(threshold: .error) { _ in }, post: { events.post($0) }, onFrame: { _ in })
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        waitUntil(5) { worker.status.streaming }
        let trigger = clock.now()
        worker.capture(id: 1, trigger: trigger, deadline: trigger.adding(milliseconds: 10_000))
        #expect(camera.awaitTwoMoreWaits(), "the worker arms the capture")
        clock.advance(milliseconds: 5000)
        #expect(camera.awaitTwoMoreWaits())
        #expect(events.cameraFault(seconds: 0) == nil, "a fault before the capture's deadline")
        clock.advance(milliseconds: 5000)
        #expect(camera.awaitTwoMoreWaits())
        #expect(events.cameraFault(seconds: 0) == nil, "a fault as the capture's wait ended")
        clock.advance(milliseconds: 3000)
        let message = events.cameraFault()
        #expect(message?.contains("stream stalled: no frames for 13 s") == true, "\(message ?? "no fault")")
    }

    /// A camera with no frames at all (its one stale buffer from before STREAMON aside) reads
    /// "no frames", not "only bad ones (1 stale)".
    @Test func aProbeThatSeesNoFramesSaysNoFrames() {
        let camera = SilentCamera(), events = PostedEvents()
        let size = FrameSize(width: 16, height: 16)
        let worker = StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .mjpeg, size: size), captureSize: size,
                                  jpegQuality: 90, captures: CaptureBox(), clock: ManualClock(),
                                  log: Logger(threshold: .error) { _ in }, post: { events.post($0) }, onFrame: { _ in })
        worker.launch(); defer { worker.shutdown() }
        worker.probe()
        let message = events.cameraFault()
        #expect(message?.contains("no frames") == true, "\(message ?? "no fault")")
        #expect(message?.contains("only bad") == false, "\(message ?? "no fault")")
    }

    /// After `camera.idle_stop` a snapshot starts the stream for itself and answers with a frame;
    /// the idle stop then counts again from the snapshot.
    @Test func aSnapshotAfterTheIdleStopStartsTheStream() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        s.camera.idleStopMilliseconds = 1000
        let booth = TestBooth(s, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await eventually { booth.camera.isStreaming })
        try #require(await booth.advance(milliseconds: 1000))
        #expect(await eventually { booth.logged("stream stopped after idle time") && !booth.camera.isStreaming })
        let jpeg = booth.runtime.snapshotJPEG()
        #expect(jpeg != nil, "\(booth.logText)")
        if let jpeg { #expect(try JPEGDecoder().header(jpeg).size == s.camera.previewSize) }
        #expect(booth.state.isIdle)
        try #require(await booth.advance(milliseconds: 1000))
        #expect(await eventually {
            booth.logs.all.filter { $0.contains("stream stopped after idle time") }.count == 2 && !booth.camera.isStreaming
        }, "\(booth.logText)")
        #expect(booth.camera.starts == 2)
    }

    /// The idle screen without a stream (after `camera.idle_stop`) is dark behind its text, not the
    /// last frame frozen. On the real clock: the screen's drawing thread (BoothDisplay) ages the last
    /// frame by CLOCK_MONOTONIC.
    @Test func theIdleScreenWithoutAStreamShowsNoStaleFrame() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        s.camera.idleStopMilliseconds = 1000
        s.preview.file = "\(dir)/preview.jpg"
        let booth = TestBooth(s, filePreview: true)
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await eventually { booth.logged("stream stopped after idle time") && !booth.camera.isStreaming })
        let stoppedAt = Date()
        /// The mean of the picture's top half, 0–255 (the live view; the text band is at the bottom).
        func topBrightness() -> Int? {
            guard let bytes = try? AtomicFile.read(s.preview.file), let image = try? JPEGDecoder().decodeRGB(bytes) else { return nil }
            let w = image.size.width, h = image.size.height / 2
            var sum = 0
            for i in 0..<(w * h * 3) { sum += Int(image.bytes[i]) }
            return sum / (w * h * 3)
        }
        // The display treats a frame over 2 s old as no stream; give it that and a redraw.
        #expect(await eventually { Date().timeIntervalSince(stoppedAt) > 3.5 })
        let brightness = try #require(topBrightness())
        #expect(brightness <= 0x30, "the idle screen still shows the last frame (mean \(brightness))")
    }

    /// `photoboothctl status` labels its fault lines and shows the camera's warnings.
    @Test func statusPrintsTheFaultWithItsLabelAndTheCameraWarning() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let ctl = "\(packageRoot())/.build/debug/photoboothctl"
        try #require(access(ctl, X_OK) == 0, "\(ctl) not built (swift build)")
        var s = fastSettings(dir: dir)
        s.camera.captureSize = FrameSize(width: 1920, height: 1080)
        let booth = TestBooth(s, offeredSizes: [FrameSize(width: 320, height: 240), FrameSize(width: 1280, height: 720)])
        let server = ControlServer(path: "\(dir)/control", log: LogRecorder().logger(),
                                   handler: booth.runtime.daemonControlHandler(info: DaemonInfo(
                                       version: photoboothVersion, protocolVersion: 1, pid: getpid(),
                                       configPath: "\(dir)/photobooth.conf", simulated: true)))
        try server.start()
        defer { server.stop() }
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await eventually { booth.camera.isStreaming })
        let streaming = try photoboothctl(["status", "--socket", "\(dir)/control"])
        #expect(streaming.contains("camera.capture_size 1920x1080") && streaming.contains("1280x720"), "\(streaming)")
        booth.camera.unplug()
        #expect(await eventually { booth.state.faultReasons?[.camera] != nil })
        let faulted = try photoboothctl(["status", "--socket", "\(dir)/control"])
        let line = faulted.split(separator: "\n").first { $0.contains("camera lost") || $0.contains("camera not available") }
        #expect(line?.hasPrefix("fault:") == true && line?.contains("camera: camera") == true, "\(faulted)")
    }
}
