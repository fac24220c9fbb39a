import BoothCamera
import BoothCore
import BoothJPEG
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime

/// A camera with one stream (a webcam through V4L2, libcamera's vimc): it streams the nearest of the sizes it
/// offers; live frames are handed over by the test. A size switch (`reconfigure`) takes `switchMilliseconds`
/// of the booth's clock (a large sensor's reconfigure on a slow CPU), or fails as v4l2loopback's did
/// (`VIDIOC_REQBUFS` EBUSY) when `switchFails`.
private final class OneStreamCamera: CameraDevice, @unchecked Sendable {
    private let condition = NSCondition()
    private let clock: ManualClock
    private let offered: [FrameSize]
    private let switchMilliseconds: Int
    private let switchFails: Bool
    private var live: [Frame] = []
    private var switches: [FrameSize] = []
    private var pollsSinceSwitch = 0
    let identity = "one-stream"
    var statistics: CameraStatistics { CameraStatistics() }

    /// False: ``offeredSize(nearestTo:)`` cannot tell (nil, as a libcamera camera whose validate fails), though
    /// the camera still streams the nearest size it offers.
    private let tellsOffered: Bool

    init(offered: [FrameSize], clock: ManualClock, switchMilliseconds: Int = 0, switchFails: Bool = false, tellsOffered: Bool = true) {
        self.tellsOffered = tellsOffered
        self.offered = offered
        self.clock = clock
        self.switchMilliseconds = switchMilliseconds
        self.switchFails = switchFails
    }

    func pushLive(_ frame: Frame) { condition.lock(); live.append(frame); condition.signal(); condition.unlock() }
    /// The sizes switched to, in order.
    func switched() -> [FrameSize] { condition.lock(); defer { condition.unlock() }; return switches }
    /// Frame waits that ended with no frame since the last switch.
    func emptyPollsSinceSwitch() -> Int { condition.lock(); defer { condition.unlock() }; return pollsSinceSwitch }

    func offeredSize(nearestTo size: FrameSize) -> FrameSize? {
        tellsOffered ? FrameSizeOffer.discrete(offered).nearest(to: size) : nil
    }
    private func info(_ size: FrameSize) -> StreamInfo {
        let got = FrameSizeOffer.discrete(offered).nearest(to: size) ?? size
        return StreamInfo(devicePath: "/dev/one-stream", card: "one-stream", format: .yuyv, size: got,
                          bytesPerLine: got.width * 2, frameInterval: nil, warnings: [], controlNotes: [])
    }
    func start(_ request: StreamRequest) throws -> StreamInfo { info(request.size) }
    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        condition.lock(); defer { condition.unlock() }
        if live.isEmpty { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(min(timeoutMilliseconds, 20)) / 1000)) }
        if live.isEmpty { pollsSinceSwitch += 1; condition.broadcast(); return nil }
        return live.removeFirst()
    }
    func reconfigure(size: FrameSize) throws -> StreamInfo {
        if switchFails {
            throw V4L2Error(call: "VIDIOC_REQBUFS", errno: EBUSY, device: identity)
        }
        clock.advance(milliseconds: switchMilliseconds)
        condition.lock(); switches.append(size); pollsSinceSwitch = 0; condition.unlock()
        return info(size)
    }
    func stop() {}

    /// Waits (real time, at most `seconds`) until `ready` holds.
    func wait(seconds: Double = 5, _ ready: @escaping () -> Bool) -> Bool {
        waitUntil(seconds, ready)
    }
}

private final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [BoothEvent] = []
    private var frames: [Frame] = []
    func post(_ e: BoothEvent) { lock.lock(); events.append(e); lock.unlock() }
    func frame(_ f: Frame) { lock.lock(); frames.append(f); lock.unlock() }
    var all: [BoothEvent] { lock.lock(); defer { lock.unlock() }; return events }
    var liveFrames: [Frame] { lock.lock(); defer { lock.unlock() }; return frames }
    var faults: Int { all.filter { if case .deviceFault(.camera, _) = $0 { true } else { false } }.count }
    var succeeded: Bool { all.contains { if case .captureSucceeded = $0 { true } else { false } } }
}

private func yuyv(_ size: FrameSize, at instant: MonotonicInstant, sequence: UInt32) -> Frame {
    Frame(format: .yuyv, size: size, bytesPerLine: size.width * 2, bytes: [UInt8](repeating: 128, count: size.width * size.height * 2),
          timestamp: instant, timestampIsMonotonic: true, sequence: sequence)
}

@Suite struct OneStreamStillTests {
    static let preview = FrameSize(width: 16, height: 16)
    static let stillSize = FrameSize(width: 32, height: 24)

    /// `camera` streaming through a ``StreamingCameraHarness`` (preview 16x16 asked, captures at 32x24) on `clock`.
    fileprivate static func streaming(_ camera: OneStreamCamera, clock: ManualClock, events: Events, captures: CaptureBox,
                                      captureSize: FrameSize = stillSize) -> StreamingCameraHarness {
        let worker = StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .yuyv, size: preview),
                                            captureSize: captureSize, jpegQuality: 90, captures: captures, clock: clock,
                                            log: Logger(threshold: .error) { _ in }, post: { events.post($0) }, onFrame: { events.frame($0) })
        worker.launch()
        worker.startStream()
        return worker
    }

    /// A still on a one-stream camera switches the stream to the capture size and back; the booth's own time
    /// on it (the switches, the encode) is not the camera's silence: with the switch back taking longer than
    /// the stall window, no "camera lost" follows while the camera is asked for frames and has none yet. The
    /// stall window then counts from the end of the switch: a camera silent for it after that is a fault.
    @Test func theBoothsOwnSwitchAfterAStillDoesNotCountAsTheCamerasSilence() throws {
        let clock = ManualClock()
        let camera = OneStreamCamera(offered: [Self.preview, Self.stillSize], clock: clock,
                                     switchMilliseconds: StreamingCameraSource.stallMilliseconds + 500)
        let events = Events(), captures = CaptureBox()
        let worker = Self.streaming(camera, clock: clock, events: events, captures: captures)
        defer { worker.shutdown() }
        camera.pushLive(yuyv(Self.preview, at: clock.now(), sequence: 1))
        #expect(camera.wait { events.liveFrames.count == 1 })

        captures.assign(id: 1, session: 1, shot: 1)
        let trigger = clock.now()
        worker.capture(id: 1, trigger: trigger, deadline: trigger.adding(milliseconds: 60_000))
        #expect(camera.wait { camera.switched() == [Self.stillSize] }, "switched to the capture size")
        camera.pushLive(yuyv(Self.stillSize, at: clock.now(), sequence: 1))
        #expect(camera.wait { events.succeeded && camera.switched().count == 2 }, "the still taken, the stream switched back")
        #expect(camera.wait { camera.emptyPollsSinceSwitch() >= 3 }, "the camera is asked for frames after the switch")
        #expect(events.faults == 0, "the switch's own time is no stall: \(events.all)")

        camera.pushLive(yuyv(Self.preview, at: clock.now(), sequence: 1))
        #expect(camera.wait { events.liveFrames.count == 2 })
        clock.advance(milliseconds: StreamingCameraSource.stallMilliseconds + 1)
        #expect(camera.wait { events.faults == 1 }, "a camera silent for the stall window while asked for frames is lost")
    }

    /// A camera that offers one size streams it for the live view whatever `camera.preview_size` asks; a
    /// `camera.capture_size` at that size needs no switch (compared as negotiated, not as configured): the
    /// still is the next live frame, and a switch that would fail (v4l2loopback's `VIDIOC_REQBUFS` EBUSY)
    /// is never tried.
    @Test func aCaptureSizeTheLiveViewAlreadyStreamsNeedsNoSwitch() throws {
        let clock = ManualClock()
        let camera = OneStreamCamera(offered: [Self.stillSize], clock: clock, switchFails: true)
        let events = Events(), captures = CaptureBox()
        let worker = Self.streaming(camera, clock: clock, events: events, captures: captures)
        defer { worker.shutdown() }
        camera.pushLive(yuyv(Self.stillSize, at: clock.now(), sequence: 1))
        #expect(camera.wait { events.liveFrames.count == 1 })
        for id in UInt64(1)...3 {
            captures.assign(id: id, session: Int(id), shot: 1)
            clock.advance(milliseconds: 1000)
            let trigger = clock.now()
            worker.capture(id: id, trigger: trigger, deadline: trigger.adding(milliseconds: 10_000))
            camera.pushLive(yuyv(Self.stillSize, at: trigger.adding(milliseconds: 10), sequence: UInt32(id) + 1))
            #expect(camera.wait { captures.get(id) != nil || events.faults > 0 })
            #expect(try #require(captures.get(id)).size == Self.stillSize)
        }
        #expect(events.faults == 0, "\(events.all)")
        #expect(camera.switched().isEmpty)
    }

    /// A camera that cannot tell the size it would give (``CameraDevice/offeredSize(nearestTo:)`` nil) and streams
    /// another size than `camera.preview_size` asks: with `camera.capture_size` equal to `preview_size` nothing needs a
    /// switch (as before the negotiated comparison), not a switch from the negotiated live size to the asked one.
    @Test func equalSizesOnACameraThatCannotTellNeedNoSwitch() throws {
        let clock = ManualClock()
        let camera = OneStreamCamera(offered: [Self.stillSize], clock: clock, switchFails: true, tellsOffered: false)
        let events = Events(), captures = CaptureBox()
        let worker = Self.streaming(camera, clock: clock, events: events, captures: captures, captureSize: Self.preview)
        defer { worker.shutdown() }
        camera.pushLive(yuyv(Self.stillSize, at: clock.now(), sequence: 1))
        #expect(camera.wait { events.liveFrames.count == 1 })
        captures.assign(id: 1, session: 1, shot: 1)
        clock.advance(milliseconds: 1000)
        let trigger = clock.now()
        worker.capture(id: 1, trigger: trigger, deadline: trigger.adding(milliseconds: 10_000))
        camera.pushLive(yuyv(Self.stillSize, at: trigger.adding(milliseconds: 10), sequence: 2))
        #expect(camera.wait { captures.get(1) != nil || events.faults > 0 })
        #expect(events.faults == 0, "\(events.all)")
        #expect(camera.switched().isEmpty)
    }
}
