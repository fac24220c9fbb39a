import BoothCore

/// Why a dequeued frame was rejected.
public enum FrameDefect: Sendable, Equatable, CustomStringConvertible {
    /// `bytesused` was 0.
    case empty
    /// The driver flagged the buffer (`V4L2_BUF_FLAG_ERROR`).
    case flaggedError
    /// MJPEG without the start-of-image marker FF D8 at the start.
    case missingStartOfImage
    /// MJPEG without the end-of-image marker FF D9 at the end (after trailing zero padding).
    case missingEndOfImage
    /// The first buffer after `VIDIOC_STREAMON` of a compressed stream came with `bytesused` equal
    /// to the whole buffer: not a frame's payload but the buffer as it was. v4l2loopback 0.12.7
    /// hands a new reader such a buffer (`sequence` 0, old contents, stamped at STREAMON): an old
    /// photo that would pass every other check, and whose timestamp is after the trigger.
    case wholeBufferAfterStreamOn

    public var description: String {
        switch self {
        case .empty: return "empty buffer (bytesused 0)"
        case .flaggedError: return "buffer flagged V4L2_BUF_FLAG_ERROR"
        case .missingStartOfImage: return "MJPEG frame without SOI (FFD8)"
        case .missingEndOfImage: return "MJPEG frame without EOI (FFD9), truncated"
        case .wholeBufferAfterStreamOn: return "first MJPEG buffer after STREAMON filled to its whole length (stale)"
        }
    }
}

/// Checks frames before they are delivered.
public enum FrameCheck {
    /// The defect of a `format` payload, or nil when it looks whole: non-empty and, for MJPEG,
    /// starting FF D8 and ending FF D9, tolerating zero bytes after the end marker (some UVC
    /// cameras pad the buffer).
    public static func defect(of bytes: UnsafeRawBufferPointer, format: PixelFormat) -> FrameDefect? {
        if bytes.isEmpty { return .empty }
        guard format == .mjpeg else { return nil }
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return .missingStartOfImage }
        var end = bytes.count
        while end > 2, bytes[end - 1] == 0 { end -= 1 }
        guard end >= 4, bytes[end - 2] == 0xFF, bytes[end - 1] == 0xD9 else { return .missingEndOfImage }
        return nil
    }

    /// ``defect(of:format:)``, and for the first buffer dequeued after `VIDIOC_STREAMON`
    /// (`firstAfterStreamOn`) of an MJPEG stream whose `bytesused` is the buffer's whole
    /// `bufferLength` (bytes), ``FrameDefect/wholeBufferAfterStreamOn``.
    public static func defect(of bytes: UnsafeRawBufferPointer, format: PixelFormat, bufferLength: Int,
                              firstAfterStreamOn: Bool) -> FrameDefect? {
        if firstAfterStreamOn, format == .mjpeg, bufferLength > 0, bytes.count >= bufferLength {
            return .wholeBufferAfterStreamOn
        }
        return defect(of: bytes, format: format)
    }

    /// ``defect(of:format:bufferLength:firstAfterStreamOn:)`` for an array.
    public static func defect(of bytes: [UInt8], format: PixelFormat, bufferLength: Int,
                              firstAfterStreamOn: Bool) -> FrameDefect? {
        bytes.withUnsafeBytes { defect(of: $0, format: format, bufferLength: bufferLength, firstAfterStreamOn: firstAfterStreamOn) }
    }

    /// ``defect(of:format:)`` for an array.
    public static func defect(of bytes: [UInt8], format: PixelFormat) -> FrameDefect? {
        bytes.withUnsafeBytes { defect(of: $0, format: format) }
    }
}
