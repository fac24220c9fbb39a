import BoothClock
import BoothCore
import BoothPorts

/// A library that drives cameras.
public enum CameraBackend: String, Sendable, Hashable, CaseIterable {
    /// Video4Linux2: ``V4L2Camera`` in a ``StreamingCameraSource``.
    case v4l2
}

/// The camera selection, in one place: which backend drives the camera for `camera.backend` = `setting`,
/// given the capture devices attached (`devices`, as ``CameraDiscovery`` lists them; `camera.device`
/// then names the camera among several within that backend, for every backend).
///
/// `auto`'s order, first match wins:
/// 1. a UVC webcam (driver `uvcvideo`) → ``CameraBackend/v4l2``, always: libcamera's UVC pipeline
///    could drive one too, but V4L2 gives its MJPEG frames as they come and its controls as they are;
/// 2. (where the gphoto2 backend goes) a camera libgphoto2 lists → gphoto2;
/// 3. (where the libcamera backend goes) a sensor behind a libcamera pipeline (a Raspberry Pi camera
///    module, no `uvcvideo`) → libcamera;
/// 4. anything else (a capture card, v4l2loopback, vivid, or nothing attached yet) → ``CameraBackend/v4l2``.
///
/// Today only V4L2 exists, so every answer is `.v4l2`; the order is what the next backends slot into.
public func resolveCameraBackend(_ setting: CameraBackendSetting, devices: [CameraInfo]) -> CameraBackend {
    switch setting {
    case .v4l2:
        return .v4l2
    case .auto:
        if devices.contains(where: { $0.isUsableCapture && $0.driver == "uvcvideo" }) { return .v4l2 }
        return .v4l2
    }
}

/// The camera source for `settings`: ``resolveCameraBackend(_:devices:)`` on the attached devices
/// (`discover`, called only for `auto`), then that backend's source. `--simulate` does not come here
/// (it keeps the ``SimulatedCamera``).
public func makeCameraSource(_ settings: Settings, clock: any MonotonicClock, log: Logger,
                             discover: () -> [CameraInfo] = { CameraDiscovery().cameras(detail: .capabilities) })
    -> any CameraSource {
    let backend = resolveCameraBackend(settings.camera.backend,
                                       devices: settings.camera.backend == .auto ? discover() : [])
    switch backend {
    case .v4l2:
        return StreamingCameraSource(device: { V4L2Camera() }, settings: settings.camera, clock: clock, log: log)
    }
}
