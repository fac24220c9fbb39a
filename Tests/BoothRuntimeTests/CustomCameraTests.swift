import BoothCore
import BoothJPEG
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Synchronization
import Testing
import BoothStorage
@testable import BoothRuntime
@testable import BoothWiring

// Adding a camera backend needs no change to BoothRuntime: this file's camera is a `CameraSource` of
// its own (no V4L2, no BoothCamera), a shutter-style camera whose still arrives 300 ms after the
// trigger and whose live view is frames it makes itself, and a whole session runs through the real
// runtime with it. The runtime's timers (countdown, capture deadline, review) and the still's
// 300 ms run on an injected `ManualClock` the test advances.

/// A camera of the test's own: live view of frames it draws (64x48 YUYV, a grey that changes per
/// frame), and stills as a shutter camera takes them: the request is noted, the shutter "releases"
/// once the clock is ``shutterMilliseconds`` past the trigger, and the still is a JPEG it encodes itself.
final class ShutterCamera: CameraSource {
    /// Trigger to still, ms on the injected clock.
    static let shutterMilliseconds = 300
    static let liveSize = FrameSize(width: 64, height: 48)
    static let stillSize = FrameSize(width: 96, height: 64)

    private struct State {
        var handlers: CameraSourceHandlers?
        var live = false
        var pending: StillRequest?
        var stopping = false
        var sequence: UInt32 = 0
        var liveFramesSent = 0
        var stills: [CameraStill] = []
        var requests: [StillRequest] = []
        /// When ``prepareStill()`` was called (the injected clock).
        var prepared: [MonotonicInstant] = []
    }
    private let state = Mutex(State())
    private let clock: any MonotonicClock
    let heartbeat = Heartbeat()

    init(clock: any MonotonicClock) { self.clock = clock }

    var capabilities: CameraCapabilities {
        CameraCapabilities(hasLiveView: true, liveViewModes: [LiveViewMode(format: .yuyv, sizes: [Self.liveSize])],
                           stillSizes: [Self.stillSize])
    }

    func launch(_ handlers: CameraSourceHandlers) {
        state.withLock { $0.handlers = handlers }
        let thread = Thread { [self] in run() }
        thread.name = "shutter-camera"
        thread.start()
    }

    func startLiveView() { state.withLock { $0.live = true } }
    func stopLiveView() {
        let (failed, handlers) = state.withLock { s in
            defer { s.live = false; s.pending = nil }
            return (s.pending, s.handlers)
        }
        if let failed { handlers?.event(.stillFailed(captureID: failed.captureID, message: "stream stopped", at: clock.now())) }
    }
    func takeStill(_ request: StillRequest) { state.withLock { $0.pending = request; $0.requests.append(request) } }
    func prepareStill() { let now = clock.now(); state.withLock { $0.prepared.append(now) } }
    var prepared: [MonotonicInstant] { state.withLock { $0.prepared } }
    func probe() { state.withLock { $0.handlers }?.event(.recovered) }
    func snapshot(rotation: Rotation, jpegQuality: Int, _ reply: @escaping @Sendable ([UInt8]?) -> Void) { reply(nil) }
    func reconfigure(_ settings: Settings.Camera) {}
    func shutdown(timeoutSeconds: Double) { state.withLock { $0.stopping = true } }
    func check() -> CameraCheckResult { .works(description: "shutter camera (test)", warnings: []) }
    var status: CameraSourceStatus {
        var s = CameraSourceStatus()
        s.streaming = state.withLock { $0.live }
        s.devicePath = "shutter"
        return s
    }

    /// The stills it delivered, and the requests it had.
    var stills: [CameraStill] { state.withLock { $0.stills } }
    var requests: [StillRequest] { state.withLock { $0.requests } }
    var liveFramesSent: Int { state.withLock { $0.liveFramesSent } }

    /// The camera's thread: a live frame every 5 ms (real time) while live view is on; the still once
    /// the injected clock reached its trigger plus the shutter time.
    private func run() {
        while !state.withLock({ $0.stopping }) {
            heartbeat.turn(at: clock.now())
            let now = clock.now()
            let (handlers, live, due, n) = state.withLock { s -> (CameraSourceHandlers?, Bool, StillRequest?, UInt32) in
                var due: StillRequest?
                if let p = s.pending, now >= p.trigger.adding(milliseconds: Int64(Self.shutterMilliseconds)) {
                    due = p
                    s.pending = nil
                }
                if s.live { s.sequence += 1 }
                return (s.handlers, s.live, due, s.sequence)
            }
            if let due, let handlers {
                let still = makeStill(for: due, at: now)
                state.withLock { $0.stills.append(still) }
                handlers.event(.still(still))
            }
            if live, let handlers {
                handlers.liveFrame(Self.frame(size: Self.liveSize, grey: UInt8(truncatingIfNeeded: n), at: now, sequence: n))
                state.withLock { $0.liveFramesSent += 1 }
            }
            usleep(5_000)
        }
    }

    private func makeStill(for request: StillRequest, at now: MonotonicInstant) -> CameraStill {
        let frame = Self.frame(size: Self.stillSize, grey: UInt8(truncatingIfNeeded: 40 + request.captureID), at: now, sequence: 0)
        let jpeg = (try? JPEGEncoder().encode(frame, quality: request.jpegQuality)) ?? []
        return CameraStill(captureID: request.captureID, jpeg: jpeg, trigger: request.trigger,
                           frameTimestamp: request.trigger.adding(milliseconds: Int64(Self.shutterMilliseconds)),
                           readyAt: now, size: Self.stillSize, format: .mjpeg, passedThrough: true, turn: .unchanged)
    }

    private static func frame(size: FrameSize, grey: UInt8, at: MonotonicInstant, sequence: UInt32) -> Frame {
        var bytes = [UInt8](repeating: 128, count: size.width * size.height * 2)
        for i in stride(from: 0, to: bytes.count, by: 2) { bytes[i] = grey }
        return Frame(format: .yuyv, size: size, bytesPerLine: size.width * 2, bytes: bytes, timestamp: at,
                     timestampIsMonotonic: true, sequence: sequence)
    }
}

@Suite struct CustomCameraTests {
    @Test func aSessionRunsThroughTheRealRuntimeWithACameraOfItsOwn() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        s.session.countdownMilliseconds = 3000
        s.session.reviewMilliseconds = 2000
        let clock = ManualClock()
        let camera = ShutterCamera(clock: clock)
        let button = FakeButton(), display = RecordingDisplay(), logs = LogRecorder()
        let factory = DeviceFactory(cameraSource: { _, _, _ in camera }, button: { _ in button }, led: { _ in nil },
                                    displays: { _, _, _ in [display] })
        let settings = s
        let runtime = BoothRuntime(settings: settings, options: RuntimeOptions(), factory: factory, clock: clock,
                                   log: logs.logger(threshold: .debug), reloader: { .success(settings) })
        let stop = runOnItsOwnThread(runtime)
        defer { stop() }
        let log = { logs.all.joined(separator: "\n") }
        // Running: the button's line is held (a press before that would be lost) and idle is on screen.
        #expect(await eventually { button.isRunning && display.screens.last == .idle(notice: nil) }, "\(log())")

        // Press → countdown: live view starts, and its frames reach the screen.
        let pressedAt = clock.now()
        button.fire(.press(id: 1, at: pressedAt))
        #expect(await eventually { runtime.currentState.isCountdown }, "\(log())")
        // The countdown's first number asks the camera to prepare (a DSLR focuses then), once.
        #expect(await eventually { camera.prepared == [pressedAt] }, "\(camera.prepared)")
        #expect(await eventually { (display.frameSizes(afterLast: .countdown(remaining: 3, shot: 1, of: 1))?.count ?? 0) >= 3 },
                "\(display.all.suffix(5))")
        #expect(display.frameSizes(afterLast: .countdown(remaining: 3, shot: 1, of: 1))?.allSatisfy { $0 == ShutterCamera.liveSize } == true)

        // The countdown runs out on the injected clock, a second per step: the still is asked for
        // with the trigger (the instant the countdown reached zero).
        for remaining in [3, 2, 1] {
            #expect(await eventually { display.screens.last == .countdown(remaining: remaining, shot: 1, of: 1) }, "\(log())")
            clock.advance(milliseconds: 1000)
        }
        var asked: StillRequest?
        _ = await eventually { asked = camera.requests.first; return asked != nil }
        let request = try #require(asked, "\(log())")
        #expect(request.trigger == clock.now())
        #expect(request.deadline == clock.now().adding(milliseconds: Int64(s.camera.captureTimeoutMilliseconds)))
        #expect(request.jpegQuality == s.storage.jpegQuality)
        #expect(request.rotation == .r0)
        // The shutter has not released yet: nothing arrives until 300 ms after the trigger.
        clock.advance(milliseconds: ShutterCamera.shutterMilliseconds - 10)
        try await Task.sleep(for: .milliseconds(50))
        #expect(camera.stills.isEmpty)
        #expect({ if case .capture = runtime.currentState { true } else { false } }())
        clock.advance(milliseconds: 20)

        // Capture → saved photo → review.
        #expect(await eventually { runtime.currentState.isReview }, "\(log())")
        let still = try #require(camera.stills.first)
        #expect(still.frameTimestamp == request.trigger.adding(milliseconds: Int64(ShutterCamera.shutterMilliseconds)))
        #expect(await eventually { savedCaptures(in: s.storage.dir).count == 1 }, "\(log())")
        let saved = try #require(savedCaptures(in: s.storage.dir).first)
        #expect(try AtomicFile.read(saved) == still.jpeg, "the photo on disk is the camera's still, byte for byte")
        #expect(!still.jpeg.isEmpty)
        #expect(display.reviewJPEGs.last == still.jpeg)

        // Review → idle once its time passed on the injected clock.
        #expect(!runtime.currentState.isIdle)
        clock.advance(milliseconds: s.session.reviewMilliseconds)
        #expect(await eventually { runtime.currentState.isIdle }, "\(log())")
        #expect(runtime.counters.completed == 1)
        #expect(runtime.counters.captures == 1)
        #expect(camera.liveFramesSent >= 3)
        #expect(camera.prepared.count == 1, "prepared once, at the countdown's start, not at each number")
    }
}
