import BoothCore
import BoothPorts
import Synchronization

/// A capture taken by the camera thread, waiting to be saved: JPEG bytes plus its timing.
public struct CaptureRecord: Sendable {
    /// The machine's capture id.
    public var id: UInt64
    /// Session number and shot index (1-based) it belongs to; shot 0 is the session's composed picture.
    public var session: Int
    public var shot: Int
    /// The JPEG file contents (an MJPEG frame as it came, DHT inserted if it lacked one; or encoded).
    public var jpeg: [UInt8]
    /// The trigger instant and the chosen frame's timestamp (CLOCK_MONOTONIC).
    public var trigger: MonotonicInstant
    public var frameTimestamp: MonotonicInstant
    /// When the JPEG bytes were ready (CLOCK_MONOTONIC).
    public var readyAt: MonotonicInstant
    /// Frame size and pixel format of the capture.
    public var size: FrameSize
    public var format: PixelFormat
    /// True when the JPEG is the camera's MJPEG frame, unchanged but for inserted Huffman tables (and ``turn``).
    public var passedThrough: Bool
    /// How `camera.rotation` turned it: not at all, losslessly (DCT domain), decoded and re-encoded, in its
    /// pixels, or by the camera itself.
    public var turn: StillTurn = .unchanged

    /// How the JPEG was made, for the log: `as sent by the camera`, `encoded`, and how it was turned
    /// (`turned losslessly`, `decoded, turned and re-encoded`, `turned in its pixels, then encoded`,
    /// `turned by the camera's sensor`).
    public var madeBy: String {
        let source = passedThrough ? "as sent by the camera" : "encoded"
        switch turn {
        case .unchanged: return source
        case .lossless: return source + ", turned losslessly"
        case .reencoded: return source + ", decoded, turned and re-encoded"
        case .pixels: return "turned in its pixels, then encoded"
        case .camera: return source + ", turned by the camera's sensor"
        }
    }
}

/// Captures between the camera thread (which takes them) and the storage thread (which saves
/// them); also what the review screen shows. Thread-safe.
public final class CaptureBox: Sendable {
    private let records = Mutex<[UInt64: CaptureRecord]>([:])
    private let sessions = Mutex<[UInt64: (session: Int, shot: Int)]>([:])
    private let shelf = Mutex<[UInt64: [UInt8]]>([:])

    public init() {}

    /// Notes which session and shot capture `id` belongs to (set when the capture is requested).
    public func assign(id: UInt64, session: Int, shot: Int) {
        sessions.withLock { $0[id] = (session, shot) }
    }

    /// The session and shot of capture `id` (session 0, shot 1 when unknown).
    public func slot(of id: UInt64) -> (session: Int, shot: Int) {
        sessions.withLock { $0[id] } ?? (0, 1)
    }

    /// Holds a capture (camera thread) until it is saved.
    public func put(_ record: CaptureRecord) { records.withLock { $0[record.id] = record } }
    /// The held capture `id`, or nil once it is saved (or was never taken).
    public func get(_ id: UInt64) -> CaptureRecord? { records.withLock { $0[id] } }

    /// Forgets capture `id` once it is saved.
    public func remove(_ id: UInt64) {
        _ = records.withLock { $0.removeValue(forKey: id) }
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// Leaves a composed picture's bytes for the main loop (compose thread), which takes them
    /// when it handles `composed`: the held record may be saved and removed before that.
    public func shelve(pictureID: UInt64, jpeg: [UInt8]) { shelf.withLock { $0[pictureID] = jpeg } }
    /// Takes a shelved picture's bytes (nil when there are none).
    public func takeShelved(pictureID: UInt64) -> [UInt8]? { shelf.withLock { $0.removeValue(forKey: pictureID) } }

    /// Ids of captures held (not yet saved), oldest first.
    public var heldIDs: [UInt64] { records.withLock { $0.keys.sorted() } }
}
