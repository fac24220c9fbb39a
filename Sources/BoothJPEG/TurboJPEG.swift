import BoothCore
import CTurboJPEG

/// A failed TurboJPEG call: which function, and the library's message (`tjGetErrorStr2`).
public struct TurboJPEGError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The TurboJPEG function that failed, e.g. `"tjDecompress2"`.
    public var call: String
    /// The message from `tjGetErrorStr2`, e.g. `"Premature end of JPEG file"`.
    public var message: String
    /// True when `tjGetErrorCode` said `TJERR_WARNING`: libjpeg warned during the call that the
    /// data was corrupt or truncated (a decode then still fills the output, partly grey). A fatal
    /// error may have followed the warning (then `message` is the fatal one): TurboJPEG 2.1 does
    /// not tell the two apart. False for `TJERR_FATAL` without an earlier warning.
    public var isWarning: Bool

    public init(call: String, message: String, isWarning: Bool = false) {
        self.call = call
        self.message = message
        self.isWarning = isWarning
    }

    public var description: String {
        "\(call): \(message)\(isWarning ? " (warning)" : "")"
    }
}

/// A problem with a `Frame` handed to `JPEGEncoder`, found before TurboJPEG is called.
public enum JPEGFrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The frame is MJPEG, already compressed; save it as it is (after `JPEGDecoder.validate`).
    case alreadyCompressed
    /// Width or height is not positive, or too large for TurboJPEG (an `Int32` of bytes per plane).
    case invalidSize(FrameSize)
    /// `bytesPerLine` is below the row size the format needs (`minimum` bytes).
    case bytesPerLineTooSmall(bytesPerLine: Int, minimum: Int)
    /// `bytes` is shorter than `(height - 1) * bytesPerLine + row bytes` (`needed`).
    case tooFewBytes(count: Int, needed: Int)
    /// Quality outside 1…100.
    case invalidQuality(Int)

    public var description: String {
        switch self {
        case .alreadyCompressed: return "frame is MJPEG: already a JPEG, not re-encoded"
        case .invalidSize(let size): return "frame size \(size) cannot be encoded"
        case .bytesPerLineTooSmall(let bpl, let minimum):
            return "frame bytesPerLine \(bpl) is below the \(minimum) bytes a row needs"
        case .tooFewBytes(let count, let needed): return "frame has \(count) bytes, needs \(needed)"
        case .invalidQuality(let q): return "JPEG quality \(q) is outside 1...100"
        }
    }
}

/// The one door to TurboJPEG: a handle, destroyed with its owner, and the error of its last call.
/// Not thread-safe (TurboJPEG handles are not); owned by exactly one encoder or decoder.
final class TurboJPEGHandle {
    let raw: tjhandle

    /// Wraps `tjInitCompress` or `tjInitDecompress` (by `call`).
    init(compress: Bool) throws(TurboJPEGError) {
        let handle = compress ? tjInitCompress() : tjInitDecompress()
        guard let handle else {
            // With a NULL handle, tjGetErrorStr2 returns the library's global error message.
            throw TurboJPEGError(call: compress ? "tjInitCompress" : "tjInitDecompress",
                                 message: TurboJPEGHandle.message(nil))
        }
        raw = handle
    }

    /// Adopts a handle from `tjInitTransform`.
    init(raw: tjhandle) { self.raw = raw }

    deinit { tjDestroy(raw) }

    /// The error of the last failed call on this handle, naming `call`.
    func error(_ call: String) -> TurboJPEGError {
        TurboJPEGError(call: call, message: TurboJPEGHandle.message(raw),
                       isWarning: tjGetErrorCode(raw) == Int32(TJERR_WARNING.rawValue))
    }

    static func message(_ handle: tjhandle?) -> String {
        guard let cString = tjGetErrorStr2(handle) else { return "unknown error" }
        return String(cString: cString)
    }
}
