import BoothCamera
import BoothCore
import BoothJPEG
import BoothPorts
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime

/// A camera with a still stream beside its live view (as libcamera's two streams on a Raspberry Pi's ISP):
/// live frames and stills are handed over by the test; `requestStill` is counted, and a still the test
/// pushes is delivered only after one was asked for, as a still buffer joins a request only when asked.
private final class TwoStreamCamera: CameraDevice, @unchecked Sendable {
    private let condition = NSCondition()
    private var live: [Frame] = []
    private var stills: [Frame] = []
    private(set) var stillRequests = 0
    private(set) var reconfigures = 0
    private(set) var startedStillSize: FrameSize?
    let identity = "two-stream"
    var statistics: CameraStatistics { CameraStatistics() }
    var stillStreamSize: FrameSize? { condition.lock(); defer { condition.unlock() }; return startedStillSize }

    func pushLive(_ frame: Frame) { condition.lock(); live.append(frame); condition.signal(); condition.unlock() }
    func pushStill(_ frame: Frame) { condition.lock(); stills.append(frame); condition.signal(); condition.unlock() }
    func requests() -> Int { condition.lock(); defer { condition.unlock() }; return stillRequests }
    func reconfigureCount() -> Int { condition.lock(); defer { condition.unlock() }; return reconfigures }

    func start(_ request: StreamRequest) throws -> StreamInfo {
        condition.lock(); startedStillSize = request.stillSize; condition.unlock()
        return StreamInfo(devicePath: "/dev/two-stream", card: "two-stream", format: .yuyv, size: request.size,
                          bytesPerLine: request.size.width * 2, frameInterval: nil, warnings: [], controlNotes: [])
    }
    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        condition.lock(); defer { condition.unlock() }
        if live.isEmpty { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(timeoutMilliseconds) / 1000)) }
        return live.isEmpty ? nil : live.removeFirst()
    }
    /// The next requestStill throws (the camera gone).
    var failNextRequest = false
    func requestStill() throws {
        condition.lock(); defer { condition.unlock() }
        if failNextRequest {
            failNextRequest = false
            throw LibcameraError(call: "request_still", code: ENODEV, camera: identity, detail: "gone")
        }
        stillRequests += 1
    }
    func failNext() { condition.lock(); failNextRequest = true; condition.unlock() }
    func takeStillFrame() -> Frame? {
        condition.lock(); defer { condition.unlock() }
        return stills.isEmpty ? nil : stills.removeFirst()
    }
    func reconfigure(size: FrameSize) throws -> StreamInfo {
        condition.lock(); reconfigures += 1; condition.unlock()
        return try start(StreamRequest(size: size))
    }
    func stop() {}
}

private final class Seen: @unchecked Sendable {
    private let condition = NSCondition()
    private var liveFrames: [Frame] = []
    private var events: [BoothEvent] = []
    func frame(_ f: Frame) { condition.lock(); liveFrames.append(f); condition.broadcast(); condition.unlock() }
    func post(_ e: BoothEvent) { condition.lock(); events.append(e); condition.broadcast(); condition.unlock() }
    func wait(seconds: Double = 5, _ ready: (_ live: [Frame], _ events: [BoothEvent]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while !ready(liveFrames, events) {
            if !condition.wait(until: deadline) { return ready(liveFrames, events) }
        }
        return true
    }
}

private func yuyv(_ size: FrameSize, atMilliseconds ms: UInt64, sequence: UInt32) -> Frame {
    Frame(format: .yuyv, size: size, bytesPerLine: size.width * 2, bytes: [UInt8](repeating: 128, count: size.width * size.height * 2),
          timestamp: MonotonicInstant(nanoseconds: ms * 1_000_000), timestampIsMonotonic: true, sequence: sequence)
}

@Suite struct StillStreamTests {
    static let preview = FrameSize(width: 16, height: 16)
    static let stillSize = FrameSize(width: 32, height: 24)

    /// With a still stream, a still at the capture size is the still stream's first still exposed at or after
    /// the trigger (an earlier one asks for another); the live view goes on meanwhile (no live frame is taken
    /// as the capture) and the stream's size is never switched.
    @Test func aStillFromTheStillStreamLeavesTheLiveViewRunning() throws {
        let camera = TwoStreamCamera(), seen = Seen(), captures = CaptureBox()
        let worker = StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .yuyv, size: Self.preview),
                                            captureSize: Self.stillSize, jpegQuality: 90, captures: captures, clock: ManualClock(),
                                            log: Logger(threshold: .error) { _ in }, post: { seen.post($0) }, onFrame: { seen.frame($0) })
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 100, sequence: 1))
        #expect(seen.wait { live, _ in live.count == 1 })
        #expect(camera.stillStreamSize == Self.stillSize, "the camera was started with the capture size for its still stream")

        captures.assign(id: 1, session: 1, shot: 1)
        worker.capture(id: 1, trigger: MonotonicInstant(nanoseconds: 1_000_000_000))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 1_010, sequence: 2))
        #expect(seen.wait { live, _ in live.count == 2 }, "a live frame after the trigger goes to the screens, not into the capture")
        #expect(camera.requests() == 1)

        // A still whose exposure began before the trigger: not the capture; another is asked for.
        camera.pushStill(yuyv(Self.stillSize, atMilliseconds: 990, sequence: 7))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 1_040, sequence: 3))
        #expect(seen.wait { live, _ in live.count == 3 })
        #expect(captures.get(1) == nil)
        #expect(camera.requests() == 2)

        camera.pushStill(yuyv(Self.stillSize, atMilliseconds: 1_060, sequence: 8))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 1_070, sequence: 4))
        #expect(seen.wait { _, events in events.contains { if case .captureSucceeded = $0 { true } else { false } } })
        let record = try #require(captures.get(1))
        #expect(record.size == Self.stillSize && record.frameTimestamp == MonotonicInstant(nanoseconds: 1_060_000_000))
        #expect(seen.wait { live, _ in live.count == 4 && live.allSatisfy { $0.size == Self.preview } })
        #expect(camera.reconfigureCount() == 0, "no size switch with a still stream")
        #expect(camera.requests() == 2)

        // A still that comes after its capture ended is dropped, not kept for the next one.
        camera.pushStill(yuyv(Self.stillSize, atMilliseconds: 1_100, sequence: 9))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 1_110, sequence: 5))
        #expect(seen.wait { live, _ in live.count == 5 })
        captures.assign(id: 2, session: 1, shot: 2)
        worker.capture(id: 2, trigger: MonotonicInstant(nanoseconds: 2_000_000_000))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 2_010, sequence: 6))
        #expect(seen.wait { live, _ in live.count == 6 })
        #expect(captures.get(2) == nil && camera.requests() == 3)
    }

    /// A still-stream capture whose deadline passes ends its wait without a size switch (the machine fails it by
    /// its own timer); the still that comes later is dropped. A still that cannot be asked for (the camera gone)
    /// fails that capture and faults the camera, once.
    @Test func aDeadlineOrAFailedRequestEndsAStillStreamCaptureWithoutASwitch() throws {
        let camera = TwoStreamCamera(), seen = Seen(), captures = CaptureBox(), clock = ManualClock()
        let worker = StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .yuyv, size: Self.preview),
                                            captureSize: Self.stillSize, jpegQuality: 90, captures: captures, clock: clock,
                                            log: Logger(threshold: .error) { _ in }, post: { seen.post($0) }, onFrame: { seen.frame($0) })
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 100, sequence: 1))
        #expect(seen.wait { live, _ in live.count == 1 })
        captures.assign(id: 1, session: 1, shot: 1)
        worker.capture(id: 1, trigger: clock.now(), deadline: clock.now().adding(milliseconds: 3000))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 200, sequence: 2))
        #expect(seen.wait { live, _ in live.count == 2 })
        #expect(camera.requests() == 1)
        clock.advance(milliseconds: 3001)
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 300, sequence: 3))
        #expect(seen.wait { live, _ in live.count == 3 })
        camera.pushStill(yuyv(Self.stillSize, atMilliseconds: 3_500, sequence: 9))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 400, sequence: 4))
        #expect(seen.wait { live, _ in live.count == 4 })
        #expect(captures.get(1) == nil, "a still after its capture's deadline is not kept")
        #expect(camera.reconfigureCount() == 0)
        #expect(camera.requests() == 1, "a dropped still asks for no other")

        camera.failNext()
        captures.assign(id: 2, session: 1, shot: 2)
        worker.capture(id: 2, trigger: clock.now(), deadline: clock.now().adding(milliseconds: 3000))
        #expect(seen.wait { _, events in
            events.contains { if case .captureFailed(id: 2, _, _) = $0 { true } else { false } }
                && events.contains { if case .deviceFault(.camera, _) = $0 { true } else { false } }
        })
        let failures = seen.wait(seconds: 0) { _, events in
            events.filter { if case .captureFailed = $0 { true } else { false } }.count == 1
        }
        #expect(failures, "capture 2 failed once, and no other capture with it")
    }

    /// Where the capture size is the preview size there is no still stream to ask for: the camera is started
    /// without one and the capture is the first live frame at or after the trigger.
    @Test func withTheCaptureSizeOfThePreviewNoStillStreamIsAskedFor() throws {
        let camera = TwoStreamCamera(), seen = Seen(), captures = CaptureBox()
        let worker = StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .yuyv, size: Self.preview),
                                            captureSize: Self.preview, jpegQuality: 90, captures: captures, clock: ManualClock(),
                                            log: Logger(threshold: .error) { _ in }, post: { seen.post($0) }, onFrame: { seen.frame($0) })
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 100, sequence: 1))
        #expect(seen.wait { live, _ in live.count == 1 })
        #expect(camera.stillStreamSize == nil)
        captures.assign(id: 1, session: 1, shot: 1)
        worker.capture(id: 1, trigger: MonotonicInstant(nanoseconds: 150_000_000))
        camera.pushLive(yuyv(Self.preview, atMilliseconds: 160, sequence: 2))
        #expect(seen.wait { _, events in events.contains { if case .captureSucceeded = $0 { true } else { false } } })
        #expect(try #require(captures.get(1)).frameTimestamp == MonotonicInstant(nanoseconds: 160_000_000))
        #expect(camera.requests() == 0)
    }

    /// A frame the camera turned already (``Frame/turned``, libcamera's sensor flips for camera.rotation 180) is
    /// encoded as it came when that was the whole turn (StillTurn.camera), and turned by what is left when
    /// camera.rotation asks for more (90 after 180 is 270: width and height swap); an unturned frame is turned by us.
    @Test(arguments: [(Rotation.r180, Rotation.r180), (.r90, .r180), (.r180, .r0)])
    func aFrameTheCameraTurnedIsTurnedByWhatIsLeft(rotation: Rotation, turned: Rotation) throws {
        let camera = TwoStreamCamera(), seen = Seen(), captures = CaptureBox()
        let size = FrameSize(width: 32, height: 16)
        let worker = StreamingCameraHarness(rotation: rotation, device: { camera }, stream: StreamRequest(format: .yuyv, size: size),
                                            captureSize: size, jpegQuality: 95, captures: captures, clock: ManualClock(),
                                            log: Logger(threshold: .error) { _ in }, post: { seen.post($0) }, onFrame: { seen.frame($0) })
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        // Left half dark (Y 16), right half bright (Y 235), chroma neutral.
        var bytes = [UInt8](repeating: 128, count: size.width * size.height * 2)
        for y in 0..<size.height { for x in 0..<size.width { bytes[(y * size.width + x) * 2] = x < size.width / 2 ? 16 : 235 } }
        func frame(_ ms: UInt64, _ sequence: UInt32) -> Frame {
            Frame(format: .yuyv, size: size, bytesPerLine: size.width * 2, bytes: bytes, timestamp: MonotonicInstant(nanoseconds: ms * 1_000_000),
                  sequence: sequence, turned: turned)
        }
        camera.pushLive(frame(100, 1))
        #expect(seen.wait { live, _ in live.count == 1 })
        captures.assign(id: 1, session: 1, shot: 1)
        worker.capture(id: 1, trigger: MonotonicInstant(nanoseconds: 150_000_000))
        camera.pushLive(frame(160, 2))
        #expect(seen.wait { _, events in events.contains { if case .captureSucceeded = $0 { true } else { false } } })
        let record = try #require(captures.get(1))
        let left = rotation.remaining(after: turned)
        #expect(record.turn == (left == .r0 ? .camera : .pixels))
        let image = try JPEGDecoder().decodeRGB(record.jpeg)
        #expect(image.size == left.rotated(size) && record.size == image.size)
        func luma(_ x: Int, _ y: Int) -> Int { Int(image.bytes[(y * image.size.width + x) * 3 + 1]) }
        let (w, h) = (image.size.width, image.size.height)
        switch left {
        case .r0: #expect(luma(2, h / 2) < 60 && luma(w - 3, h / 2) > 200, "as the camera turned it: dark left")
        case .r180: #expect(luma(2, h / 2) > 200 && luma(w - 3, h / 2) < 60, "turned by us: dark right")
        case .r270: #expect(luma(w / 2, h - 3) < 60 && luma(w / 2, 2) > 200, "a quarter turn anticlockwise: the dark left at the bottom")
        case .r90: #expect(luma(w / 2, 2) < 60 && luma(w / 2, h - 3) > 200)
        }
    }
}
