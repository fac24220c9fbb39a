import BoothCamera
import BoothClock
import BoothCore
import BoothPorts

// The built-in backends' listings given as lists (the tests' attached cameras), over the registry's
// CameraDetection: what `auto` picks from them, and the source it makes.

/// The backend `setting` picks with these cameras attached.
func resolveCameraBackend(_ setting: CameraBackendSetting, devices: [CameraInfo], gphoto2Cameras: [GPhoto2CameraInfo] = [],
                          libcameraCameras: [LibcameraCameraInfo] = []) -> CameraBackendName {
    let d = CameraDetection(settings: Settings.defaults)
    d.list("v4l2") { devices }
    d.list("gphoto2") { gphoto2Cameras }
    d.list("libcamera") { libcameraCameras }
    return resolveCameraBackend(setting, detection: d).name
}

/// ``makeCameraSource(_:clock:log:detection:)`` with each listing made by the closure given (only when
/// `auto`'s order reaches it; the detection does not outlive the call).
func makeCameraSource(_ settings: Settings, clock: any MonotonicClock, log: Logger,
                      discover: () -> [CameraInfo],
                      discoverGPhoto2: () -> [GPhoto2CameraInfo] = { [] },
                      discoverLibcamera: () -> [LibcameraCameraInfo] = { [] }) -> any CameraSource {
    withoutActuallyEscaping(discover) { v4l2 in
        withoutActuallyEscaping(discoverGPhoto2) { gphoto2 in
            withoutActuallyEscaping(discoverLibcamera) { libcamera in
                let d = CameraDetection(settings: settings)
                d.list("v4l2", with: v4l2)
                d.list("gphoto2", with: gphoto2)
                d.list("libcamera", with: libcamera)
                return makeCameraSource(settings, clock: clock, log: log, detection: d)
            }
        }
    }
}
