/// A frame size in pixels, `width` x `height`, as V4L2's `v4l2_frmsize_discrete`.
public struct FrameSize: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Number of pixels, `width * height`.
    public var area: Int { width * height }

    /// `"1280x720"`, the form the settings use.
    public var description: String { "\(width)x\(height)" }

    /// Parses `"WxH"` (e.g. `"1280x720"`); nil when malformed or not positive.
    public init?(parsing text: String) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    public static func < (a: FrameSize, b: FrameSize) -> Bool {
        (a.area, a.width) < (b.area, b.width)
    }
}

/// A V4L2 pixel format by its fourcc, restricted to those the booth handles.
public enum PixelFormat: String, Sendable, CaseIterable, Hashable {
    /// Motion-JPEG: each buffer is one JPEG image (`V4L2_PIX_FMT_MJPEG`, fourcc `MJPG`).
    case mjpeg = "MJPG"
    /// Packed YUV 4:2:2, Y0 U Y1 V, 2 bytes per pixel (`V4L2_PIX_FMT_YUYV`, fourcc `YUYV`).
    case yuyv = "YUYV"
    /// Packed RGB, 3 bytes per pixel, R G B (`V4L2_PIX_FMT_RGB24`, fourcc `RGB3`).
    case rgb24 = "RGB3"

    /// The fourcc as V4L2 stores it: `a | b << 8 | c << 16 | d << 24`.
    public var fourcc: UInt32 { PixelFormat.fourcc(rawValue) }

    /// Builds a V4L2 fourcc code from four ASCII characters (`v4l2_fourcc`).
    public static func fourcc(_ s: String) -> UInt32 {
        var v: UInt32 = 0
        for (i, b) in s.utf8.prefix(4).enumerated() { v |= UInt32(b) << (8 * UInt32(i)) }
        return v
    }

    /// The four characters of a fourcc code, e.g. `"MJPG"`; non-printable bytes become `?`.
    public static func string(fromFourcc code: UInt32) -> String {
        var s = ""
        for i in 0..<4 {
            let b = UInt8((code >> (8 * UInt32(i))) & 0xFF)
            s.append((0x20...0x7E).contains(b) ? Character(Unicode.Scalar(b)) : "?")
        }
        return s
    }

    /// The format with this fourcc code, or nil for one the booth does not handle.
    public init?(fourcc: UInt32) {
        self.init(rawValue: PixelFormat.string(fromFourcc: fourcc))
    }
}

/// A point on `CLOCK_MONOTONIC`, in nanoseconds since an unspecified start (boot).
/// V4L2 buffer timestamps with `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC` and libgpiod
/// event timestamps are on this clock.
public struct MonotonicInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds on `CLOCK_MONOTONIC`.
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    public static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool { a.nanoseconds < b.nanoseconds }

    /// This instant moved by `milliseconds` (may be negative; clamps at zero).
    public func adding(milliseconds: Int64) -> MonotonicInstant {
        let delta = milliseconds * 1_000_000
        if delta >= 0 { return MonotonicInstant(nanoseconds: nanoseconds &+ UInt64(delta)) }
        let back = UInt64(-delta)
        return MonotonicInstant(nanoseconds: nanoseconds > back ? nanoseconds - back : 0)
    }

    /// Milliseconds from `earlier` to `self` (negative when `earlier` is later), as a Double.
    public func milliseconds(since earlier: MonotonicInstant) -> Double {
        (Double(nanoseconds) - Double(earlier.nanoseconds)) / 1_000_000
    }

    /// `"12.345678s"`.
    public var description: String {
        let s = nanoseconds / 1_000_000_000, us = (nanoseconds % 1_000_000_000) / 1000
        let frac = String(us)
        return "\(s).\(String(repeating: "0", count: 6 - frac.count))\(frac)s"
    }
}

/// One frame from a camera: its bytes (copied out of the driver's buffer), format and timing.
public struct Frame: Sendable {
    /// Pixel format of `bytes`.
    public var format: PixelFormat
    /// Size in pixels.
    public var size: FrameSize
    /// Bytes per line for packed formats (YUYV: `width*2` or more; RGB24: `width*3` or more); 0 for MJPEG.
    public var bytesPerLine: Int
    /// The payload: `bytesused` bytes of the V4L2 buffer.
    public var bytes: [UInt8]
    /// When the frame was captured, on `CLOCK_MONOTONIC` (from `v4l2_buffer.timestamp`
    /// when the driver sets `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`, else the time it was dequeued).
    public var timestamp: MonotonicInstant
    /// True when `timestamp` is the driver's monotonic timestamp, false when it is the dequeue time.
    public var timestampIsMonotonic: Bool
    /// The driver's frame sequence number (`v4l2_buffer.sequence`).
    public var sequence: UInt32
    /// The clockwise turn the camera already gave these pixels (libcamera's orientation, done by the
    /// sensor's flips): the booth turns them by what is left of `camera.rotation`
    /// (``Rotation/remaining(after:)``). `.r0` for cameras that do not turn.
    public var turned: Rotation

    public init(format: PixelFormat, size: FrameSize, bytesPerLine: Int, bytes: [UInt8],
                timestamp: MonotonicInstant, timestampIsMonotonic: Bool = true, sequence: UInt32, turned: Rotation = .r0) {
        self.format = format
        self.size = size
        self.bytesPerLine = bytesPerLine
        self.bytes = bytes
        self.timestamp = timestamp
        self.timestampIsMonotonic = timestampIsMonotonic
        self.sequence = sequence
        self.turned = turned
    }
}
