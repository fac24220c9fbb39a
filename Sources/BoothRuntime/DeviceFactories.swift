import BoothCamera
import BoothCore

/// The camera stream request for a set of settings (preview size, format, frame rate, controls).
public func streamRequest(from s: Settings) -> StreamRequest {
    StreamRequest(device: s.camera.device.isEmpty ? "auto" : s.camera.device,
                  format: s.camera.format, size: s.camera.previewSize,
                  framesPerSecond: Double(s.camera.frameRate), settleFrames: s.camera.settleFrames,
                  controls: CameraControlSettings(powerLineFrequency: s.camera.powerLineFrequency,
                                                  exposure: s.camera.exposure, whiteBalance: s.camera.whiteBalance,
                                                  focus: s.camera.focus))
}

/// The file preview, when `preview.file` is set.
func filePreviewDisplays(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger) -> [any DisplaySink] {
    guard !s.preview.file.isEmpty else { return [] }
    return [FilePreview(path: s.preview.file, framesPerSecond: s.preview.frameRate, clock: clock, log: log)]
}

/// `--simulate`: the built-in test-pattern camera (or a real V4L2 camera with `--camera`),
/// the terminal as the button, no LED, the file preview.
public func simulatedDevices(realCamera: Bool, log: Logger) -> DeviceFactory {
    DeviceFactory(
        camera: { _ -> any CameraDevice in realCamera ? V4L2Camera() : SimulatedCamera() },
        button: { _ in KeyboardButton(clock: SystemClock(), log: log) },
        led: { _ in nil },
        displays: filePreviewDisplays)
}
