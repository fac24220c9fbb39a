import BoothClock
import BoothCore
import BoothPorts

extension CameraBackendName {
    /// Video4Linux2: a UVC webcam, a capture card, v4l2loopback, vivid.
    public static let v4l2: CameraBackendName = "v4l2"
}

extension CameraDetection {
    /// The V4L2 video nodes (``CameraDiscovery``, capabilities only), listed once.
    public var v4l2Devices: [CameraInfo] { listing("v4l2", default: { CameraDiscovery().cameras(detail: .capabilities) }) }
}

/// The V4L2 backend: ``V4L2Camera`` in a ``StreamingCameraSource``. In `auto`'s order twice: a UVC webcam
/// (driver `uvcvideo`) at rank 200, before libgphoto2's generic PTP camera and libcamera (V4L2 gives a
/// webcam's MJPEG frames as they come and its controls as they are); and anything else at rank 1000, the
/// last step (a capture card, v4l2loopback, vivid, or nothing attached yet). Its nodes are in every
/// `devices` listing (``CameraDiscovery``), so it has no section of its own.
public struct V4L2Backend: CameraBackendDescriptor {
    public init() {}

    public var name: CameraBackendName { .v4l2 }

    public var summary: String { "Video4Linux2 (webcams, capture cards)" }

    public var autoSteps: [CameraAutoStep] {
        [CameraAutoStep(rank: 200) { d in d.v4l2Devices.contains { $0.isUsableCapture && $0.driver == "uvcvideo" } },
         CameraAutoStep(rank: 1000) { _ in true }]
    }

    public func makeSource(_ settings: Settings, choice: CameraBackendChoice, clock: any MonotonicClock, log: Logger) -> any CameraSource {
        if choice.auto { log.info("camera: backend v4l2 (camera.backend = auto: no camera libgphoto2 or only libcamera can drive is attached)") }
        return StreamingCameraSource(device: { V4L2Camera() }, settings: settings.camera, clock: clock, log: log)
    }

    public func devicesSection(_ context: CameraDevicesContext) -> CameraDevicesSection? { nil }
}
