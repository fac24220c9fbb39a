import BoothClock
import BoothCore
import BoothPorts

/// A library that drives cameras.
public enum CameraBackend: String, Sendable, Hashable, CaseIterable {
    /// Video4Linux2: ``V4L2Camera`` in a ``StreamingCameraSource``.
    case v4l2
    /// libgphoto2: ``GPhoto2CameraSource`` (a DSLR or mirrorless camera on USB).
    case gphoto2
    /// libcamera: ``LibcameraCamera`` in a ``StreamingCameraSource`` (a Raspberry Pi camera module).
    case libcamera
}

/// The camera selection, in one place: which backend drives the camera for `camera.backend` = `setting`,
/// given the capture devices attached (`devices`, as ``CameraDiscovery`` lists them) and the cameras
/// libgphoto2 lists (`gphoto2Cameras`, ``GPhoto2Camera/detect()``, those that can take a still). `camera.device`
/// then names the camera among several within that backend, for every backend.
///
/// `auto`'s order, first match wins:
/// 1. a camera libgphoto2 knows by model → ``CameraBackend/gphoto2`` (a DSLR beside a webcam is the camera
///    the operator brought for the photos; the webcam can give its live view, `camera.live_view_device`);
/// 2. a UVC webcam (driver `uvcvideo`) → ``CameraBackend/v4l2``, always: libcamera's UVC pipeline
///    could drive one too, but V4L2 gives its MJPEG frames as they come and its controls as they are;
///    and before libgphoto2's generic "USB PTP Class Camera" (a phone in PTP mode charging on the booth
///    is one too);
/// 2b. that generic entry, with no webcam → ``CameraBackend/gphoto2`` (a body libgphoto2 has no model for);
/// 3. a camera libcamera lists (`libcameraCameras`) that is not a UVC webcam (libcamera's UVC pipeline
///    lists webcams too; they stay on V4L2, step 2): a Raspberry Pi camera module, vimc → ``CameraBackend/libcamera``;
/// 4. anything else (a capture card, v4l2loopback, vivid, or nothing attached yet) → ``CameraBackend/v4l2``.
public func resolveCameraBackend(_ setting: CameraBackendSetting, devices: [CameraInfo],
                                 gphoto2Cameras: [GPhoto2CameraInfo] = [],
                                 libcameraCameras: [LibcameraCameraInfo] = []) -> CameraBackend {
    switch setting {
    case .v4l2:
        return .v4l2
    case .gphoto2:
        return .gphoto2
    case .libcamera:
        return .libcamera
    case .auto:
        if gphoto2Cameras.contains(where: { !$0.isGenericPTPClass }) { return .gphoto2 }
        if devices.contains(where: { $0.isUsableCapture && $0.driver == "uvcvideo" }) { return .v4l2 }
        if !gphoto2Cameras.isEmpty { return .gphoto2 }
        if libcameraCameras.contains(where: { !$0.isUVC }) { return .libcamera }
        return .v4l2
    }
}

/// The cameras libcamera lists, or none when libcamera cannot start.
public func detectLibcameraCameras() -> [LibcameraCameraInfo] {
    (try? listLibcameraCameras()) ?? []
}

/// The cameras libgphoto2 lists that can take a still, or none when libgphoto2 cannot list them.
public func detectGPhoto2Cameras() -> [GPhoto2CameraInfo] {
    (try? GPhoto2Camera()?.detect()) ?? []
}

/// The camera source for `settings`: ``resolveCameraBackend(_:devices:gphoto2Cameras:)`` on the attached
/// devices (`discover` and `discoverGPhoto2`, called only for `auto`), then that backend's source; for
/// gphoto2 with `camera.live_view_device` naming a V4L2 camera, a ``PairedCameraSource`` with that webcam's
/// live view. The choice is logged. `--simulate` does not come here (it keeps the ``SimulatedCamera``).
public func makeCameraSource(_ settings: Settings, clock: any MonotonicClock, log: Logger,
                             discover: () -> [CameraInfo] = { CameraDiscovery().cameras(detail: .capabilities) },
                             discoverGPhoto2: () -> [GPhoto2CameraInfo] = detectGPhoto2Cameras,
                             discoverLibcamera: () -> [LibcameraCameraInfo] = detectLibcameraCameras)
    -> any CameraSource {
    let auto = settings.camera.backend == .auto
    let gphoto2 = auto ? discoverGPhoto2() : []
    let devices = auto ? discover() : []
    // libcamera only when nothing before it in auto's order is there (its CameraManager opens every media device).
    // A `camera.device` that names a V4L2 node (vivid, /dev/video2) keeps auto off the libcamera cameras it does not name.
    let libcamera = auto && gphoto2.isEmpty && !devices.contains(where: { $0.isUsableCapture && $0.driver == "uvcvideo" })
        ? discoverLibcamera().filter { $0.matches(settings.camera.device) } : []
    let backend = resolveCameraBackend(settings.camera.backend, devices: devices, gphoto2Cameras: gphoto2, libcameraCameras: libcamera)
    switch backend {
    case .v4l2:
        if auto { log.info("camera: backend v4l2 (camera.backend = auto: no camera libgphoto2 or only libcamera can drive is attached)") }
        return StreamingCameraSource(device: { V4L2Camera() }, settings: settings.camera, clock: clock, log: log)
    case .libcamera:
        if auto { log.info("camera: backend libcamera (camera.backend = auto: libcamera \(libcameraVersion()) lists \(libcamera.map(\.description).joined(separator: ", ")))") }
        return StreamingCameraSource(device: { LibcameraCamera() }, settings: settings.camera, clock: clock, log: log)
    case .gphoto2:
        if auto { log.info("camera: backend gphoto2 (camera.backend = auto: libgphoto2 lists \(gphoto2.map(\.description).joined(separator: ", ")))") }
        if settings.camera.captureTimeoutMilliseconds < 10_000 {
            log.warning("camera: camera.capture_timeout = \(settings.camera.captureTimeoutMilliseconds) ms is short for a gphoto2 camera "
                        + "(autofocus, shutter and a 20-45 MP download take seconds): set camera.capture_timeout = 15s or more")
        }
        let liveView = settings.camera.liveViewDevice.trimmingSpaces()
        switch liveView {
        case "":
            return GPhoto2CameraSource(settings: settings.camera, clock: clock, log: log)
        case "none":
            return PairedCameraSource(stills: GPhoto2CameraSource(settings: settings.camera, liveView: false, clock: clock, log: log),
                                      liveView: nil)
        default:
            var webcam = settings.camera
            webcam.device = liveView
            log.info("camera: live view from \(liveView) (camera.live_view_device), stills from the gphoto2 camera")
            return PairedCameraSource(stills: GPhoto2CameraSource(settings: settings.camera, liveView: false, clock: clock, log: log),
                                      liveView: StreamingCameraSource(device: { V4L2Camera() }, settings: webcam, clock: clock, log: log))
        }
    }
}
