import BoothCore
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothCamera

/// A clock that only moves when the camera sleeps (or the test advances it).
private final class ManualClock: Sendable {
    let nanoseconds = Mutex<UInt64>(5_000_000_000)
    var simulated: SimulatedClock {
        SimulatedClock(now: { MonotonicInstant(nanoseconds: self.nanoseconds.withLock { $0 }) },
                       sleep: { ns in self.nanoseconds.withLock { $0 += ns } })
    }
    func advance(milliseconds: UInt64) { nanoseconds.withLock { $0 += milliseconds * 1_000_000 } }
    var now: MonotonicInstant { MonotonicInstant(nanoseconds: nanoseconds.withLock { $0 }) }
}

private let small = FrameSize(width: 320, height: 240)

@Suite struct SimulatedCameraTests {
    @Test func framesDifferAndCarryIncreasingSequenceAndTimestamps() throws {
        let clock = ManualClock()
        let camera = SimulatedCamera(clock: clock.simulated)
        let info = try camera.start(StreamRequest(device: "sim", size: small, framesPerSecond: 25))
        #expect(info.format == .yuyv && info.size == small && info.bytesPerLine == 640)
        #expect(info.frameInterval == FrameInterval(numerator: 1, denominator: 25))
        var frames: [Frame] = []
        for _ in 0..<3 { if let f = try camera.nextFrame(timeoutMilliseconds: 100) { frames.append(f) } }
        #expect(frames.count == 3)
        #expect(frames.map(\.sequence) == [0, 1, 2])
        #expect(frames.map { $0.timestamp.milliseconds(since: frames[0].timestamp) } == [0, 40, 80])
        #expect(frames.allSatisfy { $0.bytes.count == 320 * 240 * 2 && $0.timestampIsMonotonic })
        #expect(frames[0].bytes != frames[1].bytes && frames[1].bytes != frames[2].bytes)
        // Paced on the clock: the third frame is due 80 ms after the start.
        #expect(clock.now.milliseconds(since: frames[0].timestamp) == 80)
        #expect(camera.statistics.framesDelivered == 3)
    }

    @Test func timeoutBeforeTheNextFrameReturnsNil() throws {
        let clock = ManualClock()
        let camera = SimulatedCamera(clock: clock.simulated)
        _ = try camera.start(StreamRequest(size: small, framesPerSecond: 10))
        #expect(try camera.nextFrame(timeoutMilliseconds: 0) != nil)  // frame 0 is due at once
        let before = clock.now
        #expect(try camera.nextFrame(timeoutMilliseconds: 30) == nil)  // frame 1 is due at 100 ms
        #expect(clock.now.milliseconds(since: before) == 30)
        #expect(try camera.nextFrame(timeoutMilliseconds: 100)?.sequence == 1)
    }

    @Test func lateCallerGetsNewestFrameAndStaleOnesAreSkipped() throws {
        let clock = ManualClock()
        let camera = SimulatedCamera(clock: clock.simulated)
        _ = try camera.start(StreamRequest(size: small, framesPerSecond: 10))
        _ = try camera.nextFrame(timeoutMilliseconds: 0)
        clock.advance(milliseconds: 350)
        let frame = try camera.nextFrame(timeoutMilliseconds: 0)
        #expect(frame?.sequence == 3)
        #expect(camera.statistics.framesSkipped == 2)
    }

    @Test func unplugThrowsDisconnectAndReplugAllowsRestart() throws {
        let clock = ManualClock()
        let camera = SimulatedCamera(clock: clock.simulated)
        _ = try camera.start(StreamRequest(size: small))
        camera.unplug()
        #expect { _ = try camera.nextFrame(timeoutMilliseconds: 100) } throws: { error in
            (error as? V4L2Error)?.isDisconnect == true && (error as? V4L2Error)?.call == "VIDIOC_DQBUF"
        }
        #expect { _ = try camera.start(StreamRequest(size: small)) } throws: { error in
            (error as? V4L2Error)?.isDisconnect == true
        }
        camera.replug()
        _ = try camera.start(StreamRequest(size: small))
        #expect(try camera.nextFrame(timeoutMilliseconds: 100) != nil)
    }

    @Test func reconfigureRestartsSequenceAndDropsSettleFrames() throws {
        let clock = ManualClock()
        let camera = SimulatedCamera(clock: clock.simulated)
        _ = try camera.start(StreamRequest(size: small, framesPerSecond: 30, settleFrames: 2))
        let first = try camera.nextFrame(timeoutMilliseconds: 200)
        #expect(first?.sequence == 2)
        #expect(camera.statistics.framesSettling == 2)
        let info = try camera.reconfigure(size: FrameSize(width: 640, height: 480))
        #expect(info.size == FrameSize(width: 640, height: 480))
        let after = try camera.nextFrame(timeoutMilliseconds: 200)
        #expect(after?.sequence == 2 && after?.size == info.size && after?.bytes.count == 640 * 480 * 2)
        #expect(camera.statistics.framesSettling == 4)
    }

    @Test func rgb24AndMJPEGWhenAsked() throws {
        let camera = SimulatedCamera(clock: ManualClock().simulated)
        let rgb = try camera.start(StreamRequest(format: .rgb24, size: small))
        #expect(rgb.format == .rgb24 && rgb.bytesPerLine == 960)
        #expect(try camera.nextFrame(timeoutMilliseconds: 10)?.bytes.count == 320 * 240 * 3)
        // MJPEG: the pattern encoded by TurboJPEG, one whole JPEG per frame.
        let mjpeg = try camera.start(StreamRequest(format: .mjpeg, size: small))
        #expect(mjpeg.format == .mjpeg && mjpeg.bytesPerLine == 0 && mjpeg.warnings.isEmpty)
        let frame = try #require(try camera.nextFrame(timeoutMilliseconds: 10))
        #expect(frame.format == .mjpeg && frame.size == small)
        #expect(frame.bytes.count > 100 && frame.bytes.count < 320 * 240 * 2)
        #expect(FrameCheck.defect(of: frame.bytes, format: .mjpeg) == nil)
    }

    @Test func frameNumberIsDrawnInTheTopLeftStrip() {
        // Same scroll position (index 0 vs 100*320/8 wraps) is not needed: compare only the text strip,
        // which shows the digits and the time; different numbers must give different pixels there.
        let pattern = TestPattern(format: .yuyv, size: small)
        func strip(_ index: UInt32) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: pattern.frameLength)
            bytes.withUnsafeMutableBytes { pattern.render(index: index, seconds: 1.5, into: $0.baseAddress!) }
            return Array(bytes[0..<(pattern.bytesPerLine * 18)])
        }
        #expect(strip(1) != strip(7))
        #expect(strip(7) == strip(7))
        // The strip's background is black (Y 16) and the glyphs white (Y 235).
        let s = strip(8)
        #expect(s.contains(235) && s[0] == 16)
    }

    @Test func generatesFramesAt1280x720() throws {
        // The clock advances by sleeping, so this measures generation cost alone.
        let camera = SimulatedCamera(clock: ManualClock().simulated)
        _ = try camera.start(StreamRequest(size: FrameSize(width: 1280, height: 720), framesPerSecond: 30))
        let count = 60
        let started = Date()
        var last: UInt32 = 0
        for _ in 0..<count {
            let f = try camera.nextFrame(timeoutMilliseconds: 100)
            #expect(f?.bytes.count == 1280 * 720 * 2)
            last = f?.sequence ?? 0
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(last == UInt32(count - 1))
        print("simulated camera: \(count) frames of 1280x720 YUYV in \(String(format: "%.3f", seconds)) s = \(String(format: "%.0f", Double(count) / seconds)) frames/s")
    }
}
