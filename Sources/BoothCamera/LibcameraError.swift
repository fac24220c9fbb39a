import BoothSystem
import Glibc  // errno constants only

/// A failed libcamera call (through the CLibcameraShim): which call, the code it returned, and on which camera.
///
/// Thrown by ``LibcameraCamera`` and ``listLibcameraCameras()``; libcamera's own type, not V4L2's (the
/// camera sources log and show any camera error by its description). Example:
/// `LibcameraError(call: "Camera::acquire", code: EBUSY, camera: "platform/vimc.0 Sensor B")`.
public struct LibcameraError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The libcamera call that failed, without the `libcamera ` prefix: `"CameraManager::start"`,
    /// `"Camera::acquire"`, `"Camera::configure"`, `"Camera::start"`, `"request completion"`, `"request_still"`.
    public var call: String
    /// The errno value libcamera returned (its calls return `-errno`; stored positive): `ENODEV`, `EBUSY`, `EINVAL`.
    public var code: Int32
    /// The camera: libcamera's camera id (`platform/vimc.0 Sensor B`), the `camera.device` asked for when none
    /// matched, or `"libcamera"` for the camera manager itself.
    public var camera: String
    /// libcamera's own words (its last error line) or the booth's, e.g. `"no camera matches camera.device = …"`; nil when the code says it all.
    public var detail: String?

    /// - Parameter code: the errno value; a negative one (libcamera's `-errno`) is stored negated.
    public init(call: String, code: Int32, camera: String, detail: String? = nil) {
        self.call = call
        self.code = code < 0 ? -code : code
        self.camera = camera
        self.detail = detail
    }

    /// True when the camera is gone or not there: `ENODEV`, `ENXIO`, `EIO`.
    public var isDisconnect: Bool {
        switch code {
        case ENODEV, ENXIO, EIO: return true
        default: return false
        }
    }

    /// `"libcamera Camera::acquire on platform/vimc.0 Sensor B failed: Device or resource busy (errno 16)"`,
    /// plus the detail if any: the words the booth logged and showed when this was a ``V4L2Error``.
    public var description: String {
        var s = "libcamera \(call) on \(camera) failed: \(SystemCallError.reason(of: code)) (errno \(code))"
        if let detail { s += ": \(detail)" }
        return s
    }
}
