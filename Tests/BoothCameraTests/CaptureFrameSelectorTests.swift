import BoothCore
import Testing
@testable import BoothCamera

private func ms(_ v: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000 + v * 1_000_000) }
private func stamp(_ t: UInt64, _ seq: UInt32, monotonic: Bool = true) -> FrameStamp {
    FrameStamp(timestamp: ms(t), isMonotonic: monotonic, sequence: seq)
}

/// Feeds `frames` and returns the decisions.
private func run(_ selector: inout CaptureFrameSelector, _ frames: [FrameStamp]) -> [CaptureDecision] {
    frames.map { selector.feed($0) }
}

@Suite struct CaptureFrameSelectorTests {
    @Test func unarmedFramesArePreview() {
        var s = CaptureFrameSelector()
        #expect(run(&s, [stamp(0, 0), stamp(33, 1)]) == [.preview, .preview])
        #expect(s.lastSequence == 1)
    }

    @Test func monotonicCaptureIsFirstFrameAtOrAfterTrigger() {
        // Recorded: 30 fps preview, trigger at 50 ms; the driver still holds the 33 ms buffer,
        // and the first buffer after the trigger comes at 66 ms.
        var s = CaptureFrameSelector()
        _ = run(&s, [stamp(0, 0)])
        s.arm(at: ms(50))
        let d = run(&s, [stamp(33, 1), stamp(66, 2), stamp(100, 3)])
        #expect(d == [.stale, .capture(latencyMilliseconds: 16), .preview])
        #expect(s.staleFrames == 1)
        #expect(s.trigger == nil)
    }

    @Test func frameExactlyAtTriggerIsTheCapture() {
        var s = CaptureFrameSelector()
        s.arm(at: ms(100))
        #expect(run(&s, [stamp(99, 2), stamp(100, 3)]) == [.stale, .capture(latencyMilliseconds: 0)])
    }

    @Test func severalStaleQueuedBuffersAreAllRejected() {
        // A stalled consumer: four buffers queued before the trigger are dequeued after it.
        var s = CaptureFrameSelector()
        s.arm(at: ms(200))
        let d = run(&s, [stamp(66, 2), stamp(100, 3), stamp(133, 4), stamp(166, 5), stamp(233, 7)])
        #expect(d == [.stale, .stale, .stale, .stale, .capture(latencyMilliseconds: 33)])
        #expect(s.staleFrames == 4)
    }

    @Test func withoutMonotonicTimestampsSequenceNumbersDecide() {
        // Dequeue times are all after the trigger, so they cannot tell stale buffers apart;
        // the last sequence seen at trigger time was 10.
        var s = CaptureFrameSelector()
        _ = run(&s, [stamp(0, 9, monotonic: false), stamp(33, 10, monotonic: false)])
        s.arm(at: ms(40))
        let d = run(&s, [stamp(45, 10, monotonic: false), stamp(46, 11, monotonic: false)])
        #expect(d == [.stale, .capture(latencyMilliseconds: 6)])
    }

    @Test func sequenceFallbackSurvivesWrapAround() {
        var s = CaptureFrameSelector()
        _ = run(&s, [stamp(0, UInt32.max, monotonic: false)])
        s.arm(at: ms(10))
        #expect(run(&s, [stamp(20, UInt32.max, monotonic: false), stamp(30, 0, monotonic: false)])
                == [.stale, .capture(latencyMilliseconds: 20)])
    }

    @Test func afterStreamRestartDequeueTimeDecides() {
        // Size switch for the capture: the new stream's sequence starts at 0 again.
        var s = CaptureFrameSelector()
        _ = run(&s, [stamp(0, 500, monotonic: false)])
        s.arm(at: ms(10))
        s.streamRestarted()
        #expect(run(&s, [stamp(5, 0, monotonic: false), stamp(60, 1, monotonic: false)])
                == [.stale, .capture(latencyMilliseconds: 50)])
    }

    @Test func disarmStopsSelecting() {
        var s = CaptureFrameSelector()
        s.arm(at: ms(10))
        s.disarm()
        #expect(run(&s, [stamp(20, 1)]) == [.preview])
    }

    @Test func feedsFramesDirectly() {
        var s = CaptureFrameSelector()
        s.arm(at: ms(10))
        let frame = Frame(format: .yuyv, size: FrameSize(width: 2, height: 1), bytesPerLine: 4, bytes: [0, 0, 0, 0],
                          timestamp: ms(12), timestampIsMonotonic: true, sequence: 4)
        #expect(s.feed(frame) == .capture(latencyMilliseconds: 2))
    }
}
