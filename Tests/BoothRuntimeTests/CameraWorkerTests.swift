import BoothCamera
import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Testing
@testable import BoothRuntime

/// A camera whose frames the test hands over; `nextFrame` waits (up to its timeout) for one.
/// Shared between the test and the worker's thread through `condition`, hence `@unchecked`.
private final class ScriptedCamera: CameraDevice, @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [Frame] = []
    let identity = "scripted"
    var statistics: CameraStatistics { CameraStatistics() }

    func push(_ frame: Frame) {
        condition.lock(); queue.append(frame); condition.signal(); condition.unlock()
    }

    func start(_ request: StreamRequest) throws -> StreamInfo {
        StreamInfo(devicePath: "/dev/scripted", card: "scripted", format: .yuyv, size: request.size,
                   bytesPerLine: request.size.width * 2, frameInterval: nil, warnings: [], controlNotes: [])
    }

    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        condition.lock(); defer { condition.unlock() }
        if queue.isEmpty { _ = condition.wait(until: Date(timeIntervalSinceNow: Double(timeoutMilliseconds) / 1000)) }
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    func reconfigure(size: FrameSize) throws -> StreamInfo { try start(StreamRequest(size: size)) }
    func stop() {}
}

/// Collects what the worker reports, and lets the test wait for it (event-driven, with a deadline).
private final class Reports: @unchecked Sendable {
    private let condition = NSCondition()
    private var previewFrames = 0
    private var events: [BoothEvent] = []

    func frame() { condition.lock(); previewFrames += 1; condition.broadcast(); condition.unlock() }
    func post(_ e: BoothEvent) { condition.lock(); events.append(e); condition.broadcast(); condition.unlock() }

    /// Waits until `ready` holds, at most `seconds`; returns whether it did.
    func wait(seconds: Double = 5, _ ready: (_ previewFrames: Int, _ events: [BoothEvent]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while !ready(previewFrames, events) {
            if !condition.wait(until: deadline) { return ready(previewFrames, events) }
        }
        return true
    }
}

private func succeeded(_ events: [BoothEvent]) -> Bool {
    events.contains { if case .captureSucceeded = $0 { true } else { false } }
}

private func frame(atMilliseconds ms: UInt64, sequence: UInt32, monotonic: Bool = true) -> Frame {
    let size = FrameSize(width: 16, height: 16)
    return Frame(format: .yuyv, size: size, bytesPerLine: 32, bytes: [UInt8](repeating: 128, count: 16 * 16 * 2),
                 timestamp: MonotonicInstant(nanoseconds: ms * 1_000_000), timestampIsMonotonic: monotonic,
                 sequence: sequence)
}

@Suite struct CameraWorkerTests {
    private func makeWorker(_ camera: ScriptedCamera, _ reports: Reports, _ captures: CaptureBox,
                            clock: ManualClock = ManualClock()) -> StreamingCameraHarness {
        let size = FrameSize(width: 16, height: 16)
        return StreamingCameraHarness(device: { camera }, stream: StreamRequest(format: .yuyv, size: size),
                            captureSize: size, jpegQuality: 90, captures: captures, clock: clock,
                            log: Logger(threshold: .error) { _ in }, post: { reports.post($0) },
                            onFrame: { _ in reports.frame() })
    }

    /// A press is known only after its debounce: the first frame at or after its edge may have
    /// gone by as preview before the capture is asked for. That frame is the capture.
    @Test func takesAFrameAlreadyDequeuedWhenItIsAfterTheTrigger() {
        let camera = ScriptedCamera(), reports = Reports(), captures = CaptureBox()
        let worker = makeWorker(camera, reports, captures)
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        camera.push(frame(atMilliseconds: 60, sequence: 1))
        camera.push(frame(atMilliseconds: 100, sequence: 2))
        #expect(reports.wait { frames, _ in frames == 2 })
        captures.assign(id: 1, session: 1, shot: 1)
        worker.capture(id: 1, trigger: MonotonicInstant(nanoseconds: 90_000_000))
        #expect(reports.wait { _, events in succeeded(events) })
        #expect(captures.get(1)?.frameTimestamp == MonotonicInstant(nanoseconds: 100_000_000))
    }

    @Test func aKeptFrameBeforeTheTriggerIsNotTheCapture() {
        let camera = ScriptedCamera(), reports = Reports(), captures = CaptureBox()
        let worker = makeWorker(camera, reports, captures)
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        camera.push(frame(atMilliseconds: 100, sequence: 1))
        #expect(reports.wait { frames, _ in frames == 1 })
        captures.assign(id: 1, session: 1, shot: 1)
        worker.capture(id: 1, trigger: MonotonicInstant(nanoseconds: 150_000_000))
        camera.push(frame(atMilliseconds: 160, sequence: 2))
        #expect(reports.wait { _, events in succeeded(events) })
        #expect(captures.get(1)?.frameTimestamp == MonotonicInstant(nanoseconds: 160_000_000))
    }

    /// Without the driver's capture timestamp (dequeue time only) a kept frame proves nothing:
    /// the next frame after the request is taken.
    @Test func keptFramesWithoutMonotonicTimestampsAreNotTaken() {
        let camera = ScriptedCamera(), reports = Reports(), captures = CaptureBox()
        let worker = makeWorker(camera, reports, captures)
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        camera.push(frame(atMilliseconds: 100, sequence: 1, monotonic: false))
        #expect(reports.wait { frames, _ in frames == 1 })
        captures.assign(id: 1, session: 1, shot: 1)
        worker.capture(id: 1, trigger: MonotonicInstant(nanoseconds: 90_000_000))
        camera.push(frame(atMilliseconds: 140, sequence: 2, monotonic: false))
        #expect(reports.wait { _, events in succeeded(events) })
        #expect(captures.get(1)?.frameTimestamp == MonotonicInstant(nanoseconds: 140_000_000))
    }

    /// A stream that goes quiet (a v4l2loopback whose writer stopped) is a camera fault.
    @Test func aStreamWithoutFramesForThreeSecondsIsAFault() {
        let camera = ScriptedCamera(), reports = Reports(), clock = ManualClock()
        let worker = makeWorker(camera, reports, CaptureBox(), clock: clock)
        worker.launch(); defer { worker.shutdown() }
        worker.startStream()
        camera.push(frame(atMilliseconds: 100, sequence: 1))
        #expect(reports.wait { frames, _ in frames == 1 })
        clock.advance(milliseconds: 2900)
        camera.push(frame(atMilliseconds: 200, sequence: 2))   // still in time: no fault
        #expect(reports.wait { frames, _ in frames == 2 })
        clock.advance(milliseconds: 3000)
        let faulted = reports.wait { _, events in
            events.contains { if case let .deviceFault(.camera, message) = $0 { message.contains("stalled") } else { false } }
        }
        #expect(faulted)
        #expect(reports.wait(seconds: 0) { frames, _ in frames == 2 })
    }
}
