import Glibc  // errno constants only; C calls live in V4L2Calls.swift

/// A failed V4L2 (or camera) call: which call, the errno it set, and on which device.
///
/// Thrown by ``V4L2Camera``, ``CameraDiscovery`` helpers and ``SimulatedCamera``
/// so the runtime can turn device faults into states. Example:
/// `V4L2Error(call: "VIDIOC_S_FMT", errno: EINVAL, device: "/dev/video0")`.
public struct V4L2Error: Error, CustomStringConvertible, Sendable, Equatable {
    /// The C call or ioctl that failed, e.g. `"VIDIOC_S_FMT"`, `"v4l2_open"`, `"poll"`.
    public var call: String
    /// The errno value the call set (e.g. `EINVAL`, `ENODEV`); `EIO` for `POLLERR`/`POLLHUP` from poll.
    public var errno: Int32
    /// The device path (or selector, or simulated camera name) the call was made on.
    public var device: String
    /// Extra context, e.g. `"not a video capture device"`; nil when errno says it all.
    public var detail: String?

    public init(call: String, errno: Int32, device: String, detail: String? = nil) {
        self.call = call
        self.errno = errno
        self.device = device
        self.detail = detail
    }

    /// True when the error means the camera is gone or unusable until it comes back:
    /// `ENODEV`, `ENXIO`, `EIO` (which includes `POLLERR`/`POLLHUP` from poll), or a
    /// missing device node (`ENOENT` from open).
    public var isDisconnect: Bool {
        switch errno {
        case ENODEV, ENXIO, EIO: return true
        case ENOENT: return call.hasSuffix("open")
        default: return false
        }
    }

    /// `"VIDIOC_S_FMT on /dev/video0 failed: Invalid argument (errno 22)"`, plus the detail if any.
    public var description: String {
        var s = "\(call) on \(device) failed: \(V4L2Error.errnoName(errno)) (errno \(errno))"
        if let detail { s += ": \(detail)" }
        return s
    }

    /// `strerror(errno)` as a Swift string.
    static func errnoName(_ code: Int32) -> String { Sys.errorString(code) }
}
