// The one door to C for BoothCamera: every libv4l2, ioctl, mmap, poll and clock call
// of the module is a thin wrapper in this file, turning C results into Swift values
// and `V4L2Error`s, each carrying BoothSystem's `SystemCallError` (the ioctl's name, errno,
// the node). EINTR is retried in the C shim (`pb_v4l2_ioctl`); EAGAIN from VIDIOC_DQBUF is a
// value (nil).
import BoothClock
import BoothCore
import BoothSystem
import CV4L2  // links libv4l2 (module map `link "v4l2"`) for the shim
import CV4L2Shims
import Glibc

/// Process-level C calls: open/close, poll, clock, sleep.
enum Sys {
    /// Opens `path` read-write and non-blocking, queries it (`VIDIOC_QUERYCAP`) and, when it is a
    /// streaming capture device, hands it to libv4l2 (`v4l2_fd_open`) so libv4l2 can convert formats.
    /// This is what `v4l2_open` does, in steps, so each failure names its call and non-capture
    /// nodes (e.g. UVC metadata nodes) never reach libv4l2. Wraps `open`, `VIDIOC_QUERYCAP`, `v4l2_fd_open`.
    static func openVideo(_ path: String) throws(V4L2Error) -> (V4L2Node, V4L2Capability) {
        let fd = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw V4L2Error.last("open", path) }
        let node = V4L2Node(fd: fd, path: path)
        do throws(V4L2Error) {
            let cap = try node.queryCapability()
            if cap.isVideoCapture && cap.canStream, pb_v4l2_fd_open(fd) < 0 {
                throw V4L2Error.last("v4l2_fd_open", path)
            }
            return (node, cap)
        } catch {
            node.close()
            throw error
        }
    }

    /// What `poll` said about one fd.
    enum PollOutcome: Equatable {
        /// Data ready (`POLLIN`).
        case readable
        /// `POLLERR`, `POLLHUP` or `POLLNVAL`: the device is gone or not streaming.
        case error(revents: Int16)
        /// The timeout passed.
        case timeout
        /// A signal interrupted poll (EINTR); callers loop until their own deadline.
        case interrupted
        /// poll itself failed with this errno.
        case failed(Int32)
    }

    /// Routes libv4l2's own messages to `line` (its priority, the line), or back to stderr with nil.
    /// Wraps `pb_v4l2_route_log` (`v4l2_log_file` on a `fopencookie` stream). False when the stream
    /// could not be made (libv4l2 then keeps writing to stderr).
    static func routeLibv4l2Log(_ line: pb_log_line_fn?) -> Bool { pb_v4l2_route_log(line) == 0 }

    /// Waits up to `timeoutMilliseconds` for `fd` to become readable. Wraps `poll`.
    static func pollReadable(_ fd: Int32, timeoutMilliseconds: Int32) -> PollOutcome {
        var revents: Int16 = 0
        let r = pb_poll_one(fd, Int16(POLLIN), timeoutMilliseconds, &revents)
        if r < 0 { return errno == EINTR ? .interrupted : .failed(errno) }
        if r == 0 { return .timeout }
        if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .error(revents: revents) }
        return .readable
    }
}

/// `VIDIOC_QUERYCAP`'s answer, in Swift types.
struct V4L2Capability: Sendable, Equatable {
    var driver: String
    var card: String
    var busInfo: String
    /// The node's capabilities: `device_caps` when `V4L2_CAP_DEVICE_CAPS` is set, else `capabilities`.
    var capabilities: UInt32

    var isVideoCapture: Bool { capabilities & PB_V4L2_CAP_VIDEO_CAPTURE != 0 }
    var canStream: Bool { capabilities & PB_V4L2_CAP_STREAMING != 0 }
}

/// One `VIDIOC_ENUM_FMT` entry.
struct V4L2FormatDescription: Sendable, Equatable {
    var fourcc: UInt32
    var description: String
    var isEmulated: Bool
}

/// What `VIDIOC_S_FMT` settled on.
struct V4L2NegotiatedFormat: Sendable, Equatable {
    var fourcc: UInt32
    var size: FrameSize
    var bytesPerLine: Int
    var sizeImage: Int
}

/// One `VIDIOC_QUERYCTRL` entry.
struct V4L2ControlDescription: Sendable, Equatable {
    var id: UInt32
    var type: UInt32
    var name: String
    var minimum: Int32
    var maximum: Int32
    var step: Int32
    var defaultValue: Int32
    var flags: UInt32
}

/// One dequeued buffer (`VIDIOC_DQBUF`).
struct V4L2DequeuedBuffer: Sendable, Equatable {
    var index: Int
    var bytesUsed: Int
    var sequence: UInt32
    var flags: UInt32
    /// The driver's timestamp when `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC` is set, else nil.
    var monotonicTimestamp: MonotonicInstant?
    /// `V4L2_BUF_FLAG_ERROR`: the data may be corrupt.
    var hasError: Bool
    /// The buffer's timestamp as the driver set it, whatever its clock (nil when negative).
    var rawTimestamp: MonotonicInstant? = nil
    /// True when the timestamp type bits are `V4L2_BUF_FLAG_TIMESTAMP_UNKNOWN` (0).
    var timestampTypeUnknown = false
}

/// An open video node: each method is one ioctl (or mmap) on it.
struct V4L2Node: Sendable {
    let fd: Int32
    let path: String

    private func check(_ result: Int32, _ call: String) throws(V4L2Error) {
        if result != 0 { throw V4L2Error.last(call, path) }
    }

    /// Closes the fd. Wraps `v4l2_close` (which passes fds libv4l2 does not manage to close(2)).
    func close() { _ = pb_v4l2_close(fd) }

    /// Wraps `VIDIOC_QUERYCAP`.
    func queryCapability() throws(V4L2Error) -> V4L2Capability {
        var cap = v4l2_capability()
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_QUERYCAP, &cap), "VIDIOC_QUERYCAP")
        let caps = cap.capabilities & PB_V4L2_CAP_DEVICE_CAPS != 0 ? cap.device_caps : cap.capabilities
        return V4L2Capability(driver: String(cArray: cap.driver), card: String(cArray: cap.card),
                              busInfo: String(cArray: cap.bus_info), capabilities: caps)
    }

    /// Wraps `VIDIOC_ENUM_FMT` for capture; nil past the last index (EINVAL).
    func enumFormat(index: UInt32) throws(V4L2Error) -> V4L2FormatDescription? {
        var d = v4l2_fmtdesc()
        d.index = index
        d.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        if pb_v4l2_ioctl(fd, PB_VIDIOC_ENUM_FMT, &d) != 0 {
            if errno == EINVAL { return nil }
            throw V4L2Error.last("VIDIOC_ENUM_FMT", path)
        }
        return V4L2FormatDescription(fourcc: d.pixelformat, description: String(cArray: d.description),
                                     isEmulated: d.flags & PB_V4L2_FMT_FLAG_EMULATED != 0)
    }

    /// Wraps `VIDIOC_ENUM_FRAMESIZES` (all indices); nil when the driver lists none (EINVAL/ENOTTY at index 0).
    func enumFrameSizes(fourcc: UInt32) throws(V4L2Error) -> FrameSizeOffer? {
        var sizes: [FrameSize] = []
        var index: UInt32 = 0
        while true {
            var e = v4l2_frmsizeenum()
            e.index = index
            e.pixel_format = fourcc
            if pb_v4l2_ioctl(fd, PB_VIDIOC_ENUM_FRAMESIZES, &e) != 0 {
                if errno == EINVAL || errno == ENOTTY { break }
                throw V4L2Error.last("VIDIOC_ENUM_FRAMESIZES", path)
            }
            if e.type == PB_V4L2_FRMSIZE_TYPE_DISCRETE {
                sizes.append(FrameSize(width: Int(e.discrete.width), height: Int(e.discrete.height)))
            } else {
                let s = e.stepwise
                let lo = FrameSize(width: Int(s.min_width), height: Int(s.min_height))
                let hi = FrameSize(width: Int(s.max_width), height: Int(s.max_height))
                if e.type == PB_V4L2_FRMSIZE_TYPE_CONTINUOUS { return .continuous(min: lo, max: hi) }
                return .stepwise(min: lo, max: hi, stepWidth: Int(s.step_width), stepHeight: Int(s.step_height))
            }
            index += 1
        }
        return sizes.isEmpty ? nil : .discrete(sizes)
    }

    /// Wraps `VIDIOC_ENUM_FRAMEINTERVALS` (all indices); nil when the driver lists none.
    func enumFrameIntervals(fourcc: UInt32, size: FrameSize) throws(V4L2Error) -> FrameIntervalOffer? {
        var list: [FrameInterval] = []
        var index: UInt32 = 0
        while true {
            var e = v4l2_frmivalenum()
            e.index = index
            e.pixel_format = fourcc
            e.width = UInt32(clamping: size.width)
            e.height = UInt32(clamping: size.height)
            if pb_v4l2_ioctl(fd, PB_VIDIOC_ENUM_FRAMEINTERVALS, &e) != 0 {
                if errno == EINVAL || errno == ENOTTY { break }
                throw V4L2Error.last("VIDIOC_ENUM_FRAMEINTERVALS", path)
            }
            if e.type == PB_V4L2_FRMIVAL_TYPE_DISCRETE {
                list.append(FrameInterval(numerator: e.discrete.numerator, denominator: e.discrete.denominator))
            } else {
                let s = e.stepwise
                let lo = FrameInterval(numerator: s.min.numerator, denominator: s.min.denominator)
                let hi = FrameInterval(numerator: s.max.numerator, denominator: s.max.denominator)
                if e.type == PB_V4L2_FRMIVAL_TYPE_CONTINUOUS { return .continuous(min: lo, max: hi) }
                return .stepwise(min: lo, max: hi,
                                 step: FrameInterval(numerator: s.step.numerator, denominator: s.step.denominator))
            }
            index += 1
        }
        return list.isEmpty ? nil : .discrete(list)
    }

    /// Wraps `VIDIOC_S_FMT` for single-planar capture; returns what the driver settled on.
    func setFormat(fourcc: UInt32, size: FrameSize) throws(V4L2Error) -> V4L2NegotiatedFormat {
        var f = v4l2_format()
        f.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        f.fmt.pix.width = UInt32(clamping: size.width)
        f.fmt.pix.height = UInt32(clamping: size.height)
        f.fmt.pix.pixelformat = fourcc
        f.fmt.pix.field = PB_V4L2_FIELD_ANY
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_S_FMT, &f), "VIDIOC_S_FMT")
        return V4L2NegotiatedFormat(fourcc: f.fmt.pix.pixelformat,
                                    size: FrameSize(width: Int(f.fmt.pix.width), height: Int(f.fmt.pix.height)),
                                    bytesPerLine: Int(f.fmt.pix.bytesperline), sizeImage: Int(f.fmt.pix.sizeimage))
    }

    /// Wraps `VIDIOC_G_PARM`: whether the frame interval can be set (`V4L2_CAP_TIMEPERFRAME`) and the current one.
    func streamParameters() throws(V4L2Error) -> (canSetInterval: Bool, interval: FrameInterval) {
        var p = v4l2_streamparm()
        p.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_G_PARM, &p), "VIDIOC_G_PARM")
        let t = p.parm.capture.timeperframe
        return (p.parm.capture.capability & PB_V4L2_CAP_TIMEPERFRAME != 0,
                FrameInterval(numerator: t.numerator, denominator: t.denominator))
    }

    /// Wraps `VIDIOC_S_PARM` with `timeperframe = interval`; returns the interval the driver set.
    func setFrameInterval(_ interval: FrameInterval) throws(V4L2Error) -> FrameInterval {
        var p = v4l2_streamparm()
        p.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        p.parm.capture.timeperframe.numerator = interval.numerator
        p.parm.capture.timeperframe.denominator = interval.denominator
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_S_PARM, &p), "VIDIOC_S_PARM")
        let t = p.parm.capture.timeperframe
        return FrameInterval(numerator: t.numerator, denominator: t.denominator)
    }

    /// Wraps `VIDIOC_QUERYCTRL` for `id` (or, with `next`, the first control after `id`,
    /// `V4L2_CTRL_FLAG_NEXT_CTRL`); nil when there is no such control (EINVAL).
    func queryControl(id: UInt32, next: Bool = false) throws(V4L2Error) -> V4L2ControlDescription? {
        var q = v4l2_queryctrl()
        q.id = next ? id | PB_V4L2_CTRL_FLAG_NEXT_CTRL : id
        if pb_v4l2_ioctl(fd, PB_VIDIOC_QUERYCTRL, &q) != 0 {
            if errno == EINVAL || errno == ENOTTY { return nil }
            throw V4L2Error.last("VIDIOC_QUERYCTRL", path)
        }
        return V4L2ControlDescription(id: q.id, type: q.type, name: String(cArray: q.name), minimum: q.minimum,
                                      maximum: q.maximum, step: q.step, defaultValue: q.default_value,
                                      flags: q.flags)
    }

    /// Wraps `VIDIOC_QUERYMENU`: the name of menu item `index` of control `id` (its value for
    /// integer menus); nil when the index is not a valid item.
    func menuItem(id: UInt32, index: UInt32, integerMenu: Bool) -> String? {
        var m = v4l2_querymenu()
        m.id = id
        m.index = index
        guard pb_v4l2_ioctl(fd, PB_VIDIOC_QUERYMENU, &m) == 0 else { return nil }
        return integerMenu ? String(m.value) : String(cArray: m.name)
    }

    /// Wraps `VIDIOC_G_CTRL`.
    func control(id: UInt32) throws(V4L2Error) -> Int32 {
        var c = v4l2_control()
        c.id = id
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_G_CTRL, &c), "VIDIOC_G_CTRL")
        return c.value
    }

    /// Wraps `VIDIOC_S_CTRL`.
    func setControl(id: UInt32, value: Int32) throws(V4L2Error) {
        var c = v4l2_control()
        c.id = id
        c.value = value
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_S_CTRL, &c), "VIDIOC_S_CTRL")
    }

    /// Wraps `VIDIOC_REQBUFS` for mmap capture buffers; returns the count the driver granted.
    func requestBuffers(count: Int) throws(V4L2Error) -> Int {
        var r = v4l2_requestbuffers()
        r.count = UInt32(clamping: count)
        r.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        r.memory = PB_V4L2_MEMORY_MMAP
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_REQBUFS, &r), "VIDIOC_REQBUFS")
        return Int(r.count)
    }

    /// Wraps `VIDIOC_QUERYBUF`: the buffer's mmap offset and length in bytes.
    func queryBuffer(index: Int) throws(V4L2Error) -> (offset: Int64, length: Int) {
        var b = v4l2_buffer()
        b.index = UInt32(clamping: index)
        b.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        b.memory = PB_V4L2_MEMORY_MMAP
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_QUERYBUF, &b), "VIDIOC_QUERYBUF")
        return (Int64(b.m.offset), Int(b.length))
    }

    /// Maps a buffer (`v4l2_mmap`, read-write, shared).
    func map(length: Int, offset: Int64) throws(V4L2Error) -> UnsafeMutableRawPointer {
        guard let p = pb_v4l2_mmap(length, fd, offset) else {
            throw V4L2Error.last("v4l2_mmap", path)
        }
        return p
    }

    /// Unmaps a buffer (`v4l2_munmap`).
    func unmap(_ start: UnsafeMutableRawPointer, length: Int) { _ = pb_v4l2_munmap(start, length) }

    /// Wraps `VIDIOC_QBUF`.
    func queueBuffer(index: Int) throws(V4L2Error) {
        var b = v4l2_buffer()
        b.index = UInt32(clamping: index)
        b.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        b.memory = PB_V4L2_MEMORY_MMAP
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_QBUF, &b), "VIDIOC_QBUF")
    }

    /// Wraps `VIDIOC_DQBUF` on the non-blocking fd; nil when no buffer is ready (EAGAIN).
    func dequeueBuffer() throws(V4L2Error) -> V4L2DequeuedBuffer? {
        var b = v4l2_buffer()
        b.type = PB_V4L2_BUF_TYPE_VIDEO_CAPTURE
        b.memory = PB_V4L2_MEMORY_MMAP
        if pb_v4l2_ioctl(fd, PB_VIDIOC_DQBUF, &b) != 0 {
            if errno == EAGAIN { return nil }
            throw V4L2Error.last("VIDIOC_DQBUF", path)
        }
        // A writer (v4l2loopback) can hand us any timestamp: one that does not fit is "no timestamp".
        var raw: MonotonicInstant? = nil
        if b.timestamp.tv_sec >= 0, b.timestamp.tv_usec >= 0, b.timestamp.tv_usec < 1_000_000 {
            let (seconds, o1) = UInt64(b.timestamp.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
            let (total, o2) = seconds.addingReportingOverflow(UInt64(b.timestamp.tv_usec) * 1000)
            if !o1 && !o2 { raw = MonotonicInstant(nanoseconds: total) }
        }
        let type = b.flags & PB_V4L2_BUF_FLAG_TIMESTAMP_MASK
        return V4L2DequeuedBuffer(index: Int(b.index), bytesUsed: Int(b.bytesused), sequence: b.sequence,
                                  flags: b.flags, monotonicTimestamp: type == PB_V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC ? raw : nil,
                                  hasError: b.flags & PB_V4L2_BUF_FLAG_ERROR != 0,
                                  rawTimestamp: raw, timestampTypeUnknown: type == 0)
    }

    /// Wraps `VIDIOC_STREAMON`.
    func streamOn() throws(V4L2Error) {
        var type = Int32(bitPattern: PB_V4L2_BUF_TYPE_VIDEO_CAPTURE)
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_STREAMON, &type), "VIDIOC_STREAMON")
    }

    /// Wraps `VIDIOC_STREAMOFF`.
    func streamOff() throws(V4L2Error) {
        var type = Int32(bitPattern: PB_V4L2_BUF_TYPE_VIDEO_CAPTURE)
        try check(pb_v4l2_ioctl(fd, PB_VIDIOC_STREAMOFF, &type), "VIDIOC_STREAMOFF")
    }
}

/// Control ids and values the booth sets, from `<linux/v4l2-controls.h>` via the shim.
enum V4L2ControlID {
    static let powerLineFrequency = PB_V4L2_CID_POWER_LINE_FREQUENCY
    static let exposureAuto = PB_V4L2_CID_EXPOSURE_AUTO
    static let exposureAbsolute = PB_V4L2_CID_EXPOSURE_ABSOLUTE
    static let autoWhiteBalance = PB_V4L2_CID_AUTO_WHITE_BALANCE
    static let whiteBalanceTemperature = PB_V4L2_CID_WHITE_BALANCE_TEMPERATURE
    static let focusAuto = PB_V4L2_CID_FOCUS_AUTO
    static let focusAbsolute = PB_V4L2_CID_FOCUS_ABSOLUTE
    static let lock3A = PB_V4L2_CID_3A_LOCK
    static let lockExposure = Int32(bitPattern: PB_V4L2_LOCK_EXPOSURE)
    static let lockWhiteBalance = Int32(bitPattern: PB_V4L2_LOCK_WHITE_BALANCE)
    static let lockFocus = Int32(bitPattern: PB_V4L2_LOCK_FOCUS)
    static let exposureModeAuto = PB_V4L2_EXPOSURE_AUTO
    static let exposureModeManual = PB_V4L2_EXPOSURE_MANUAL
    static let exposureModeAperturePriority = PB_V4L2_EXPOSURE_APERTURE_PRIORITY
    static let powerLineOff = PB_V4L2_CID_POWER_LINE_FREQUENCY_DISABLED
    static let powerLine50Hz = PB_V4L2_CID_POWER_LINE_FREQUENCY_50HZ
    static let powerLine60Hz = PB_V4L2_CID_POWER_LINE_FREQUENCY_60HZ
    static let powerLineAuto = PB_V4L2_CID_POWER_LINE_FREQUENCY_AUTO

    static let typeInteger = PB_V4L2_CTRL_TYPE_INTEGER
    static let typeBoolean = PB_V4L2_CTRL_TYPE_BOOLEAN
    static let typeMenu = PB_V4L2_CTRL_TYPE_MENU
    static let typeIntegerMenu = PB_V4L2_CTRL_TYPE_INTEGER_MENU
    static let typeButton = PB_V4L2_CTRL_TYPE_BUTTON
    static let typeClass = PB_V4L2_CTRL_TYPE_CTRL_CLASS
    static let flagDisabled = PB_V4L2_CTRL_FLAG_DISABLED
}

