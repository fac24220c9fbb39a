import BoothCore

/// Why a dequeued frame was rejected on arrival. The raw value is the kind's name in `status`
/// (`camera.framesDroppedByKind`) and in logs.
public enum FrameDefect: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `bytesused` was 0.
    case empty = "empty"
    /// The driver flagged the buffer (`V4L2_BUF_FLAG_ERROR`).
    case flaggedError = "driver-error"
    /// `bytesused` was larger than the buffer (a driver bug: the payload cannot be trusted).
    case oversize = "oversize"
    /// MJPEG without the start-of-image marker FF D8 at the start (garbage).
    case missingStartOfImage = "no-soi"
    /// MJPEG without the end-of-image marker FF D9 at the end (after trailing zero padding): truncated.
    case missingEndOfImage = "no-eoi"
    /// An uncompressed frame (YUYV, RGB24) with fewer bytes than `bytesPerLine` × height: truncated.
    case shortFrame = "short"
    /// The first buffer after `VIDIOC_STREAMON` of a compressed stream came with `bytesused` equal
    /// to the whole buffer: not a frame's payload but the buffer as it was. v4l2loopback 0.12.7
    /// hands a new reader such a buffer (`sequence` 0, old contents, stamped at STREAMON): an old
    /// photo that would pass every other check, and whose timestamp is after the trigger.
    case wholeBufferAfterStreamOn = "stale"

    public var description: String {
        switch self {
        case .empty: return "empty buffer (bytesused 0)"
        case .flaggedError: return "buffer flagged V4L2_BUF_FLAG_ERROR"
        case .oversize: return "bytesused larger than the buffer"
        case .missingStartOfImage: return "MJPEG frame without SOI (FFD8)"
        case .missingEndOfImage: return "MJPEG frame without EOI (FFD9), truncated"
        case .shortFrame: return "frame shorter than bytesPerLine x height, truncated"
        case .wholeBufferAfterStreamOn: return "first MJPEG buffer after STREAMON filled to its whole length (stale)"
        }
    }
}

/// What the driver said about a dequeued buffer, besides its bytes: the input of
/// ``FrameCheck/defect(of:buffer:format:frameLength:)``.
public struct BufferFacts: Sendable, Hashable {
    /// `v4l2_buffer.bytesused`, bytes.
    public var bytesUsed: Int
    /// `v4l2_buffer.length`: the buffer's size, bytes.
    public var bufferLength: Int
    /// `V4L2_BUF_FLAG_ERROR` was set.
    public var flaggedError: Bool
    /// The first buffer dequeued since `VIDIOC_STREAMON`.
    public var firstAfterStreamOn: Bool

    public init(bytesUsed: Int, bufferLength: Int, flaggedError: Bool = false, firstAfterStreamOn: Bool = false) {
        self.bytesUsed = bytesUsed
        self.bufferLength = bufferLength
        self.flaggedError = flaggedError
        self.firstAfterStreamOn = firstAfterStreamOn
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

    /// The cheap check every dequeued frame gets before it is delivered (no decoding): the defect,
    /// or nil when the frame looks whole. In order: ``FrameDefect/flaggedError``,
    /// ``FrameDefect/empty``, ``FrameDefect/oversize`` (`bytesUsed` > `bufferLength`),
    /// ``FrameDefect/wholeBufferAfterStreamOn``, then by format: MJPEG SOI/EOI
    /// (``defect(of:format:)``), YUYV/RGB24 fewer than `frameLength` bytes
    /// (``FrameDefect/shortFrame``; `frameLength` is `bytesPerLine` × height, more is padding).
    /// - Parameter bytes: the buffer's first `min(bytesUsed, bufferLength)` bytes.
    public static func defect(of bytes: UnsafeRawBufferPointer, buffer: BufferFacts, format: PixelFormat,
                              frameLength: Int) -> FrameDefect? {
        if buffer.flaggedError { return .flaggedError }
        if buffer.bytesUsed <= 0 || bytes.isEmpty { return .empty }
        if buffer.bytesUsed > buffer.bufferLength { return .oversize }
        switch format {
        case .mjpeg:
            return defect(of: bytes, format: format, bufferLength: buffer.bufferLength,
                          firstAfterStreamOn: buffer.firstAfterStreamOn)
        case .yuyv, .rgb24:
            return bytes.count < frameLength ? .shortFrame : nil
        }
    }

    /// ``defect(of:buffer:format:frameLength:)`` for an array (its count is `buffer.bytesUsed`
    /// unless that is larger than the buffer).
    public static func defect(of bytes: [UInt8], buffer: BufferFacts, format: PixelFormat, frameLength: Int) -> FrameDefect? {
        bytes.withUnsafeBytes { defect(of: $0, buffer: buffer, format: format, frameLength: frameLength) }
    }

    /// ``defect(of:format:)`` for an array.
    public static func defect(of bytes: [UInt8], format: PixelFormat) -> FrameDefect? {
        bytes.withUnsafeBytes { defect(of: $0, format: format) }
    }
}
