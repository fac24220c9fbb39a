import BoothCamera
import BoothCore
import BoothPorts
@testable import BoothRuntime

/// A ``StreamingCameraSource`` wired to the runtime's own camera handlers (``makeCameraHandlers``:
/// a still into the ``CaptureBox``, then `captureSucceeded`; faults and recoveries as the loop's
/// events), so the camera tests drive the source exactly as the runtime does and see what the loop sees.
final class StreamingCameraHarness: Sendable {
    let source: StreamingCameraSource
    private let captures: CaptureBox
    private let post: @Sendable (BoothEvent) -> Void
    private let onFrame: @Sendable (Frame) -> Void
    private let jpegQuality: Int
    private let rotation: Rotation

    init(rotation: Rotation = .r0, device: @escaping @Sendable () -> any CameraDevice, stream: StreamRequest,
         captureSize: FrameSize, jpegQuality: Int, captures: CaptureBox, clock: any MonotonicClock, log: Logger,
         post: @escaping @Sendable (BoothEvent) -> Void, onFrame: @escaping @Sendable (Frame) -> Void) {
        source = StreamingCameraSource(device: device, stream: stream, captureSize: captureSize, clock: clock, log: log)
        self.captures = captures
        self.post = post
        self.onFrame = onFrame
        self.jpegQuality = jpegQuality
        self.rotation = rotation
    }

    func launch() {
        let handlers = makeCameraHandlers(captures: captures, displays: [], post: post)
        source.launch(CameraSourceHandlers(event: handlers.event, liveFrame: onFrame))
    }
    func startStream() { source.startLiveView() }
    func stopStream() { source.stopLiveView() }
    func probe() { source.probe() }
    func capture(id: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant? = nil) {
        source.takeStill(StillRequest(captureID: id, trigger: trigger, deadline: deadline, rotation: rotation,
                                      jpegQuality: jpegQuality))
    }
    var status: StreamingCameraSource.Status { source.detailedStatus }
    func shutdown() { source.shutdown(timeoutSeconds: 3) }
}
