import BoothCamera
import BoothClock
import BoothCore
import BoothPorts
import BoothJPEG
import BoothSystem
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothControl
@testable import BoothRuntime
@testable import BoothStorage

// Corrupt camera frames in the runtime: a stream of only bad frames as the camera fault, and a
// capture whose trigger lands on bad frames (the drop tally's own tests: BoothCameraTests/DroppedFramesTests).

/// A camera that drops every frame as truncated until `good` is set, then delivers frames.
/// Its counters restart at `start`, like a real camera's. Shared with the worker's thread under `lock`.
private final class BadFramesCamera: CameraDevice, @unchecked Sendable {
    private let lock = NSLock()
    private var good = false
    private var stats = CameraStatistics()
    private var dropped = 0
    private var sequence: UInt32 = 0
    let identity = "bad frames"

    func setGood(_ value: Bool) { lock.lock(); good = value; lock.unlock() }
    /// Frames dropped over all streams.
    var allDropped: Int { lock.lock(); defer { lock.unlock() }; return dropped }
    var statistics: CameraStatistics { lock.lock(); defer { lock.unlock() }; return stats }

    func start(_ request: StreamRequest) throws -> StreamInfo {
        lock.lock(); stats = CameraStatistics(); lock.unlock()
        return StreamInfo(devicePath: "/dev/bad", card: "bad", format: .yuyv, size: request.size,
                          bytesPerLine: request.size.width * 2, frameInterval: nil, warnings: [], controlNotes: [])
    }

    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        usleep(1000)   // a frame interval; the worker's time comes from its manual clock
        lock.lock(); defer { lock.unlock() }
        guard good else {
            stats.noteDropped(.missingEndOfImage)
            dropped += 1
            return nil
        }
        sequence += 1
        return Frame(format: .yuyv, size: FrameSize(width: 16, height: 16), bytesPerLine: 32,
                     bytes: [UInt8](repeating: 128, count: 512), timestamp: MonotonicInstant(nanoseconds: UInt64(sequence) * 1_000_000),
                     timestampIsMonotonic: true, sequence: sequence)
    }

    func reconfigure(size: FrameSize) throws -> StreamInfo { try start(StreamRequest(size: size)) }
    func stop() {}
}

/// Events the worker posts, awaited with a deadline.
private final class Events: @unchecked Sendable {
    private let condition = NSCondition()
    private var events: [BoothEvent] = []
    func post(_ e: BoothEvent) { condition.lock(); events.append(e); condition.broadcast(); condition.unlock() }
    /// Waits until `ready` holds (checked on each event and every 10 ms), at most `seconds`.
    func wait(seconds: Double = 10, _ ready: ([BoothEvent]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while !ready(events) {
            if Date() >= deadline { return false }
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.01)))
        }
        return true
    }
}

@Suite struct OnlyBadFramesTests {
    /// Frames keep coming but every one is bad: after the stall time that is the camera fault,
    /// named as such; when good frames return, the probe recovers it. The counts since start
    /// match what the camera dropped over both streams.
    @Test func onlyBadFramesForTheStallTimeIsTheCameraFaultUntilGoodFramesReturn() {
        let camera = BadFramesCamera(), events = Events(), clock = ManualClock()
        let size = FrameSize(width: 16, height: 16)
        let worker = StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .yuyv, size: size),
                                  captureSize: size, jpegQuality: 90, captures: CaptureBox(), clock: clock,
                                  log: Logger(threshold: .error) { _ in }, post: { events.post($0) }, onFrame: { _ in })
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        #expect(events.wait { _ in worker.status.framesDropped >= 3 })
        clock.advance(milliseconds: 2900)
        #expect(events.wait { _ in worker.status.framesDropped >= 6 })
        #expect(!events.wait(seconds: 0) { $0.contains { if case .deviceFault = $0 { true } else { false } } })
        clock.advance(milliseconds: 200)
        var message = ""
        #expect(events.wait { list in
            for case let .deviceFault(.camera, m) in list { message = m; return true }
            return false
        })
        #expect(message.contains("camera lost: only bad frames for 3 s"), "\(message)")
        #expect(message.contains("no-eoi"), "\(message)")
        camera.setGood(true)
        worker.probe()
        #expect(events.wait { $0.contains { if case .deviceRecovered(.camera) = $0 { true } else { false } } })
        #expect(worker.status.droppedByDefect == [.missingEndOfImage: camera.allDropped])
        #expect(worker.status.framesDropped == camera.allDropped)
    }
}

/// A clock for regenerating the simulated camera's frames: it moves only when told.
private final class FrozenClock: Sendable {
    let nanoseconds = Mutex<UInt64>(0)
    var simulated: SimulatedClock {
        SimulatedClock(now: { MonotonicInstant(nanoseconds: self.nanoseconds.withLock { $0 }) },
                       sleep: { ns in self.nanoseconds.withLock { $0 += ns } })
    }
}

/// Frame `sequence` of the simulated camera's MJPEG stream for `request` (the pattern and its
/// encoding depend only on the frame's number, size and rate).
private func simulatedFrame(_ sequence: UInt32, _ request: StreamRequest) throws -> [UInt8] {
    let clock = FrozenClock()
    let camera = SimulatedCamera(name: "regenerate", clock: clock.simulated)
    _ = try camera.start(request)
    let period = UInt64(FrameInterval(framesPerSecond: request.framesPerSecond).seconds * 1e9)
    clock.nanoseconds.withLock { $0 += UInt64(sequence) * period }
    let frame = try #require(try camera.nextFrame(timeoutMilliseconds: 0))
    #expect(frame.sequence == sequence)
    return frame.bytes
}

@Suite(.serialized) struct CorruptFramesAtTheTriggerTests {
    /// The frames right at the trigger are corrupt (truncated, no EOI, empty, garbage, then one whose
    /// entropy data is cut with its EOI put back, which only the capture's full decode catches): the
    /// saved photo is the next good frame, byte for byte; no corrupt file is saved; the counts in
    /// `status` are those of what was sent.
    @Test func captureTakesTheNextGoodFrameAfterCorruptOnesAtTheTrigger() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var s = fastSettings(dir: dir)
        s.camera.format = .mjpeg
        // 10 fps: the corrupt-data frame (the fifth spoilt one) is among the worker's four kept frames.
        s.camera.frameRate = 10
        let booth = TestBooth(s, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(await booth.advance(untilMilliseconds: 5000) {
            booth.camera.isStreaming && booth.runtime.statusReport(configPath: "").camera.framesDelivered >= 5
        })

        // The camera renders at most 200 ms (its frame wait) ahead of the booth's clock: a trigger
        // 300 ms ahead is after every frame delivered so far, and the capture is armed before the
        // first frame due from it is made (those come as the clock moves).
        let trigger = try #require(booth.clock).now().adding(milliseconds: 300)
        booth.camera.simulated.corrupt(framesDueFrom: trigger, kinds: [.noEndMarker, .truncated, .empty, .garbage, .corruptData])
        booth.button.fire(.press(id: 900, at: trigger))
        let photos = s.storage.dir
        #expect(await booth.advance(untilMilliseconds: 2500) { savedCaptures(in: photos).count == 1 }, "\(booth.logText)")
        // The clock moved on in steps until the file was there: the review may have ended meanwhile.
        #expect(await booth.advance(untilMilliseconds: 2000) { booth.runtime.counters.completed == 1 && booth.state.isIdle },
                "\(booth.logText)")

        let sent = booth.camera.simulated.corruptFramesSent
        #expect(sent == [.noEndMarker: 1, .truncated: 1, .empty: 1, .garbage: 1, .corruptData: 1])
        let status = booth.runtime.statusReport(configPath: "").camera
        #expect(status.framesDroppedByKind == ["no-eoi": 2, "empty": 1, "no-soi": 1])
        #expect(status.framesDropped == 4)
        #expect(status.badFrames == 1, "the corrupt-data frame is rejected by the capture's decode")
        #expect(booth.logged("capture", "(1 frame before it did not decode)"), "\(booth.logText)")

        // The saved photo is the frame the log names, byte for byte, and that frame was due after the trigger.
        let line = try #require(booth.logs.all.first { $0.contains(": frame #") && $0.contains("trigger-to-frame") })
        let number = try #require(line.split(separator: "#").last?.split(separator: " ").first.flatMap { UInt32($0) })
        let saved = try #require(savedCaptures(in: photos).first)
        let request = StreamRequest(format: .mjpeg, size: s.camera.captureSize, framesPerSecond: Double(s.camera.frameRate))
        #expect(try AtomicFile.read(saved) == simulatedFrame(number, request))
        #expect(decodesFully(saved))
        // Five frames due from the trigger on were spoilt; the capture is a later one.
        let latency = try #require(line.components(separatedBy: "trigger-to-frame ").last?.split(separator: " ").first
            .flatMap { Double($0) })
        #expect(latency >= 4 * 1000.0 / Double(s.camera.frameRate), "\(line)")
    }
}
