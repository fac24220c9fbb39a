import BoothCore

/// The timing of one frame, as the trigger logic sees it.
public struct FrameStamp: Sendable, Hashable {
    /// When the frame was captured (or dequeued, when `isMonotonic` is false), `CLOCK_MONOTONIC`.
    public var timestamp: MonotonicInstant
    /// True when `timestamp` is the driver's capture time (`V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`).
    public var isMonotonic: Bool
    /// The driver's sequence number.
    public var sequence: UInt32

    public init(timestamp: MonotonicInstant, isMonotonic: Bool, sequence: UInt32) {
        self.timestamp = timestamp
        self.isMonotonic = isMonotonic
        self.sequence = sequence
    }

    public init(_ frame: Frame) {
        self.init(timestamp: frame.timestamp, isMonotonic: frame.timestampIsMonotonic, sequence: frame.sequence)
    }
}

/// What ``CaptureFrameSelector/feed(_:)`` decided for a frame.
public enum CaptureDecision: Sendable, Equatable {
    /// No trigger is armed: the frame is preview only.
    case preview
    /// A trigger is armed and the frame is older than it (a stale queued buffer): not the capture.
    case stale
    /// This frame is the capture; `latencyMilliseconds` is trigger-to-frame (frame timestamp minus trigger).
    case capture(latencyMilliseconds: Double)
}

/// Picks the capture frame for a trigger: the first frame whose timestamp is at or after the
/// trigger instant (`CLOCK_MONOTONIC`), never a stale queued buffer.
///
/// When a frame's timestamp is not the driver's monotonic capture time (no
/// `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`), the sequence number decides instead: the capture
/// is the first frame whose sequence is greater than the last sequence seen when the trigger
/// was armed (serial-number comparison, so wrap-around is fine). If no frame had been seen
/// since the stream (re)started, the first frame dequeued at or after the trigger is taken.
///
/// Usage: feed every frame the camera delivers; call ``arm(at:)`` at the trigger (the instant
/// the countdown reached zero); the feed that returns `.capture` disarms. Call
/// ``streamRestarted()`` after a size switch or restart (sequence numbers start again).
public struct CaptureFrameSelector: Sendable, Hashable {
    /// The armed trigger instant, or nil.
    public private(set) var trigger: MonotonicInstant?
    /// The newest sequence number fed since the stream (re)started.
    public private(set) var lastSequence: UInt32?
    /// `lastSequence` at the moment of arming.
    public private(set) var sequenceAtTrigger: UInt32?
    /// Frames rejected as stale since the last arming.
    public private(set) var staleFrames: Int = 0

    public init() {}

    /// Arms the selector for a trigger at `instant` (`CLOCK_MONOTONIC`).
    public mutating func arm(at instant: MonotonicInstant) {
        trigger = instant
        sequenceAtTrigger = lastSequence
        staleFrames = 0
    }

    /// Disarms without a capture (e.g. the capture deadline passed).
    public mutating func disarm() {
        trigger = nil
        sequenceAtTrigger = nil
    }

    /// Forgets sequence numbers: the stream restarted and its numbering with it.
    public mutating func streamRestarted() {
        lastSequence = nil
        sequenceAtTrigger = nil
    }

    /// Decides whether the frame with `stamp` is the capture; records its sequence number.
    public mutating func feed(_ stamp: FrameStamp) -> CaptureDecision {
        defer { lastSequence = stamp.sequence }
        guard let trigger else { return .preview }
        let isAfter: Bool
        if stamp.isMonotonic {
            isAfter = stamp.timestamp >= trigger
        } else if let seen = sequenceAtTrigger {
            isAfter = Int32(bitPattern: stamp.sequence &- seen) > 0
        } else {
            isAfter = stamp.timestamp >= trigger
        }
        guard isAfter else {
            staleFrames += 1
            return .stale
        }
        let latency = stamp.timestamp.milliseconds(since: trigger)
        disarm()
        return .capture(latencyMilliseconds: latency)
    }

    /// ``feed(_:)`` for a frame.
    public mutating func feed(_ frame: Frame) -> CaptureDecision { feed(FrameStamp(frame)) }
}
