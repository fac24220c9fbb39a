import BoothSystem
import Glibc  // errno constants only; C calls live in V4L2Calls.swift

/// A failed V4L2 (or camera) call: the ``SystemCallError`` (which call or ioctl, the errno it set, on
/// which device node) plus what V4L2 adds that is not a system call's: a ``detail`` such as "not a video
/// capture device", "stream not started" or the driver granting too few buffers.
///
/// Thrown by ``V4L2Camera``, ``CameraDiscovery`` helpers and ``SimulatedCamera``
/// so the runtime can turn device faults into states. Example:
/// `V4L2Error(call: "VIDIOC_S_FMT", errno: EINVAL, device: "/dev/video0")`.
public struct V4L2Error: Error, CustomStringConvertible, Sendable, Equatable {
    /// The failed call: ``SystemCallError/call`` is the ioctl's name (`"VIDIOC_DQBUF"`) or the C call
    /// (`"open"`, `"v4l2_mmap"`, `"poll"`), ``SystemCallError/subject`` the device node.
    public var failure: SystemCallError
    /// Extra context, e.g. `"not a video capture device"`; nil when errno says it all.
    public var detail: String?

    /// `failure`, with `detail` when V4L2 has more to say than the call's errno.
    public init(_ failure: SystemCallError, detail: String? = nil) {
        self.failure = failure
        self.detail = detail
    }

    /// A failed `call` on `device` with `errno`.
    public init(call: String, errno: Int32, device: String, detail: String? = nil) {
        self.init(SystemCallError(call: call, errno: errno, subject: device), detail: detail)
    }

    /// `call` failed just now on `device`: reads the calling thread's `errno`.
    static func last(_ call: String, _ device: String) -> V4L2Error { V4L2Error(SystemCallError.last(call, device)) }

    /// The C call or ioctl that failed, e.g. `"VIDIOC_S_FMT"`, `"v4l2_open"`, `"poll"`.
    public var call: String {
        get { failure.call }
        set { failure.call = newValue }
    }
    /// The errno value the call set (e.g. `EINVAL`, `ENODEV`); `EIO` for `POLLERR`/`POLLHUP` from poll.
    public var errno: Int32 {
        get { failure.errno }
        set { failure.errno = newValue }
    }
    /// The device path (or selector, or simulated camera name) the call was made on.
    public var device: String {
        get { failure.subject }
        set { failure.subject = newValue }
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

    /// `"VIDIOC_S_FMT on /dev/video0 failed: Invalid argument (errno 22, EINVAL)"`, plus the detail if any.
    public var description: String {
        var s = "\(call) on \(device) failed: \(failure.errnoText)"
        if let detail { s += ": \(detail)" }
        return s
    }
}
