import BoothCore
import Synchronization
import Testing
@testable import BoothCamera

/// A clock that only moves when the camera sleeps (or the test advances it).
private final class StepClock: Sendable {
    let nanoseconds = Mutex<UInt64>(1_000_000_000)
    var simulated: SimulatedClock {
        SimulatedClock(now: { MonotonicInstant(nanoseconds: self.nanoseconds.withLock { $0 }) },
                       sleep: { ns in self.nanoseconds.withLock { $0 += ns } })
    }
    var now: MonotonicInstant { MonotonicInstant(nanoseconds: nanoseconds.withLock { $0 }) }
}

private let small = FrameSize(width: 64, height: 48)

/// A whole MJPEG frame from the simulated camera (TurboJPEG-encoded test pattern).
private func mjpegFrame() throws -> [UInt8] {
    let camera = SimulatedCamera(clock: StepClock().simulated)
    _ = try camera.start(StreamRequest(format: .mjpeg, size: small, framesPerSecond: 10))
    return try #require(try camera.nextFrame(timeoutMilliseconds: 0)).bytes
}

@Suite struct BufferCheckTests {
    let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x12, 0x34, 0xFF, 0xD9]

    private func check(_ bytes: [UInt8], used: Int? = nil, length: Int = 64, error: Bool = false, first: Bool = false,
                       format: PixelFormat = .mjpeg, frameLength: Int = 0) -> FrameDefect? {
        FrameCheck.defect(of: bytes, buffer: BufferFacts(bytesUsed: used ?? bytes.count, bufferLength: length,
                                                         flaggedError: error, firstAfterStreamOn: first),
                          format: format, frameLength: frameLength)
    }

    @Test func wholeFramesPass() {
        #expect(check(jpeg) == nil)
        #expect(check([UInt8](repeating: 128, count: 32), length: 32, format: .yuyv, frameLength: 32) == nil)
        // Padding after a whole packed frame is not a defect.
        #expect(check([UInt8](repeating: 128, count: 40), length: 40, format: .yuyv, frameLength: 32) == nil)
    }

    @Test func eachDefectByKind() {
        #expect(check(jpeg, error: true) == .flaggedError)
        #expect(check([], used: 0) == .empty)
        #expect(check([], used: 0, format: .yuyv, frameLength: 32) == .empty)
        #expect(check(jpeg, used: 65, length: 64) == .oversize)
        #expect(check([0x12] + jpeg) == .missingStartOfImage)
        #expect(check(Array(jpeg.dropLast(2))) == .missingEndOfImage)
        #expect(check([UInt8](repeating: 128, count: 31), length: 32, format: .yuyv, frameLength: 32) == .shortFrame)
        #expect(check([UInt8](repeating: 128, count: 10), length: 32, format: .rgb24, frameLength: 12) == .shortFrame)
        let whole = jpeg + [UInt8](repeating: 0, count: 54)
        #expect(check(whole, length: whole.count, first: true) == .wholeBufferAfterStreamOn)
    }

    /// The driver's error flag wins over bytes that look whole; an empty buffer is empty whatever its format.
    @Test func flaggedAndEmptyComeFirst() {
        #expect(check(jpeg, error: true, format: .mjpeg) == .flaggedError)
        #expect(check([], used: 0, error: false, first: true) == .empty)
    }

    /// Gaps in the buffer sequence numbers are frames the driver never handed over.
    @Test func sequenceGapsAreLostFrames() {
        #expect(V4L2Camera.lostFrames(after: nil, sequence: 7) == 0)
        #expect(V4L2Camera.lostFrames(after: 7, sequence: 8) == 0)
        #expect(V4L2Camera.lostFrames(after: 7, sequence: 10) == 2)
        #expect(V4L2Camera.lostFrames(after: UInt32.max, sequence: 1) == 1)   // wrap-around
        #expect(V4L2Camera.lostFrames(after: 10, sequence: 3) == 0)           // going back: none
    }

    @Test func kindNamesAreStable() {
        #expect(FrameDefect.allCases.map(\.rawValue) == ["empty", "driver-error", "oversize", "no-soi", "no-eoi", "short", "stale"])
    }

    /// Frames lost count gaps within a stream only: v4l2loopback's first buffer after STREAMON is its last one
    /// again (sequence 0) while its writer is at frame 174; the frames it sent while the booth was not
    /// streaming are none lost. A gap between two buffers of the stream is.
    @Test func framesSentWhileNotStreamingAreNotLost() {
        var sequence = V4L2Camera.StreamSequence()
        for writer in [UInt32(174), 530] {
            sequence.streamOn()
            #expect(sequence.lost(before: 0) == 0, "the left-over buffer")
            #expect(sequence.lost(before: writer) == 0, "frames sent before the stream started")
            #expect(sequence.lost(before: writer + 1) == 0)
            #expect(sequence.lost(before: writer + 4) == 2, "a gap within the stream")
        }
    }
}

@Suite struct FrameCorruptionTests {
    @Test func parsing() {
        #expect(FrameCorruption(parsing: "5") == FrameCorruption(every: 5))
        #expect(FrameCorruption(parsing: "3:no-eoi,empty") == FrameCorruption(every: 3, kinds: [.noEndMarker, .empty]))
        #expect(FrameCorruption(parsing: "0") == nil)
        #expect(FrameCorruption(parsing: "x") == nil)
        #expect(FrameCorruption(parsing: "2:") == nil)
        #expect(FrameCorruption(parsing: "2:bogus") == nil)
        #expect(FrameCorruption(every: 4).description == "1 frame in 4: truncated, no-eoi, empty, garbage, corrupt-data")
    }

    @Test func everyNthFrameTakesTheKindsInTurn() {
        let c = FrameCorruption(every: 3, kinds: [.empty, .garbage])
        let kinds = (0..<12).map { c.kind(forFrame: UInt64($0)) }
        #expect(kinds == [nil, nil, .empty, nil, nil, .garbage, nil, nil, .empty, nil, nil, .garbage])
        #expect(FrameCorruption(every: 1, kinds: [.truncated]).kind(forFrame: 0) == .truncated)
    }

    /// Each kind, applied to a real MJPEG frame, is caught by the arrival check as the defect it
    /// stands for, except corrupt-data, which only a decode can tell (tested in the runtime).
    @Test func mjpegKindsArriveAsTheirDefects() throws {
        let jpeg = try mjpegFrame()
        #expect(FrameCheck.defect(of: jpeg, format: .mjpeg) == nil)
        func arrives(_ kind: FrameCorruption.Kind, seed: UInt64 = 7) -> FrameDefect? {
            let bytes = FrameCorruption.apply(kind, to: jpeg, format: .mjpeg, seed: seed)
            return FrameCheck.defect(of: bytes, buffer: BufferFacts(bytesUsed: bytes.count, bufferLength: 64 * 48 * 2),
                                     format: .mjpeg, frameLength: 64 * 48 * 2)
        }
        #expect(arrives(.truncated) == .missingEndOfImage)
        #expect(arrives(.noEndMarker) == .missingEndOfImage)
        #expect(arrives(.empty) == .empty)
        for seed in 0..<50 as Range<UInt64> { #expect(arrives(.garbage, seed: seed) == .missingStartOfImage) }
        #expect(arrives(.corruptData) == nil)
        let cut = FrameCorruption.apply(.corruptData, to: jpeg, format: .mjpeg, seed: 0)
        #expect(cut.count < jpeg.count && cut.suffix(2) == [0xFF, 0xD9])
        #expect(FrameCorruption.apply(.garbage, to: jpeg, format: .mjpeg, seed: 3)
                != FrameCorruption.apply(.garbage, to: jpeg, format: .mjpeg, seed: 4))
    }

    @Test func packedKindsArriveShortOrEmpty() {
        let yuyv = [UInt8](repeating: 128, count: 64 * 48 * 2)
        for kind in FrameCorruption.Kind.allCases {
            let bytes = FrameCorruption.apply(kind, to: yuyv, format: .yuyv, seed: 1)
            let defect = FrameCheck.defect(of: bytes, buffer: BufferFacts(bytesUsed: bytes.count, bufferLength: yuyv.count),
                                           format: .yuyv, frameLength: yuyv.count)
            #expect(defect == (kind == .empty ? .empty : .shortFrame), "\(kind)")
        }
    }
}

@Suite struct SimulatedCorruptionTests {
    /// Every 3rd frame spoilt: the caller only ever gets whole frames, the spoilt ones are
    /// counted by kind, and the camera waits on for the next good one.
    @Test func corruptFramesAreDroppedAndCountedByKind() throws {
        let clock = StepClock()
        let camera = SimulatedCamera(clock: clock.simulated,
                                     corruption: FrameCorruption(every: 3, kinds: [.truncated, .empty, .garbage, .noEndMarker]))
        let info = try camera.start(StreamRequest(format: .mjpeg, size: small, framesPerSecond: 10))
        #expect(info.format == .mjpeg && info.warnings.isEmpty)
        var frames: [Frame] = []
        for _ in 0..<9 { if let f = try camera.nextFrame(timeoutMilliseconds: 1000) { frames.append(f) } }
        // Frames 2, 5, 8, 11 are spoilt.
        #expect(frames.map(\.sequence) == [0, 1, 3, 4, 6, 7, 9, 10, 12])
        #expect(frames.allSatisfy { FrameCheck.defect(of: $0.bytes, format: .mjpeg) == nil })
        let s = camera.statistics
        #expect(s.framesDelivered == 9)
        #expect(s.framesDropped == 4)
        #expect(s.droppedByDefect == [.missingEndOfImage: 2, .empty: 1, .missingStartOfImage: 1])
        #expect(camera.corruptFramesSent == [.truncated: 1, .empty: 1, .garbage: 1, .noEndMarker: 1])
    }

    /// The test API: the frames due from an instant on are spoilt in the order given, then whole again.
    @Test func scriptedCorruptionFromAnInstant() throws {
        let clock = StepClock()
        let camera = SimulatedCamera(clock: clock.simulated)
        _ = try camera.start(StreamRequest(format: .yuyv, size: small, framesPerSecond: 10))
        let f0 = try #require(try camera.nextFrame(timeoutMilliseconds: 0))
        // Frame 2 is due 200 ms after frame 0: it and frame 3 are spoilt.
        camera.corrupt(framesDueFrom: f0.timestamp.adding(milliseconds: 150), kinds: [.garbage, .empty])
        var seqs: [UInt32] = []
        for _ in 0..<3 { if let f = try camera.nextFrame(timeoutMilliseconds: 1000) { seqs.append(f.sequence) } }
        #expect(seqs == [1, 4, 5])
        #expect(camera.statistics.droppedByDefect == [.shortFrame: 1, .empty: 1])
        #expect(camera.corruptFramesSent == [.garbage: 1, .empty: 1])
    }

    /// Only bad frames: `nextFrame` returns nil at its timeout (like a V4L2 camera), counting them.
    @Test func onlyBadFramesTimeOut() throws {
        let clock = StepClock()
        let camera = SimulatedCamera(clock: clock.simulated, corruption: FrameCorruption(every: 1, kinds: [.noEndMarker]))
        _ = try camera.start(StreamRequest(format: .mjpeg, size: small, framesPerSecond: 10))
        #expect(try camera.nextFrame(timeoutMilliseconds: 450) == nil)
        #expect(camera.statistics.droppedByDefect == [.missingEndOfImage: 5])   // frames 0…4 (0, 100, …, 400 ms)
        #expect(camera.statistics.framesDelivered == 0)
    }
}
