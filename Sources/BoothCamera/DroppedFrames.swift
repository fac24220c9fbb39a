import BoothCore

/// The camera's bad frames since the daemon started, by kind, and their log lines, rate-limited:
/// a camera sending garbage at 30 fps gives one line every ``logIntervalMilliseconds``, not 30 a second.
///
/// Fed with the device's own counters (``CameraStatistics/droppedByDefect``, which start again at
/// every stream start) after each frame wait; owned by the camera source's thread.
public struct DroppedFrameTally: Sendable, Equatable {
    /// The shortest time between two log lines about dropped frames, ms.
    public static let logIntervalMilliseconds = 10_000

    /// Frames dropped on arrival since the daemon started, by kind.
    public private(set) var total: [FrameDefect: Int] = [:]
    /// Frames dropped since the last good frame (or stream start): a stall made of these is
    /// "only bad frames", not silence.
    public private(set) var sinceGoodFrame: [FrameDefect: Int] = [:]
    /// The device's counters at the last look (they restart with the stream).
    private var seen: [FrameDefect: Int] = [:]
    /// Dropped but not yet logged.
    private var unlogged: [FrameDefect: Int] = [:]
    private var lastLog: MonotonicInstant?
    /// Frames lost (sequence gaps) since the daemon started.
    public private(set) var lost = 0
    private var seenLost = 0

    public init() {}

    /// ``sinceGoodFrame`` without the stale buffer a driver hands out first after `VIDIOC_STREAMON`
    /// (``FrameDefect/wholeBufferAfterStreamOn``): that one is left over from before the start, no
    /// sign that the camera sends bad frames. Empty: the camera sent no frames at all.
    public var badSinceGoodFrame: [FrameDefect: Int] { DroppedFrameTally.sentByTheCamera(sinceGoodFrame) }

    /// `counts` without the stale buffer from before `VIDIOC_STREAMON` (see ``badSinceGoodFrame``).
    public static func sentByTheCamera(_ counts: [FrameDefect: Int]) -> [FrameDefect: Int] {
        counts.filter { $0.key != .wholeBufferAfterStreamOn && $0.value > 0 }
    }

    /// The sum of ``total``.
    public var totalCount: Int { total.values.reduce(0, +) }

    /// The device's counters start again from zero (a stream start).
    public mutating func streamStarted() {
        seen = [:]
        seenLost = 0
        sinceGoodFrame = [:]
    }

    /// A good frame arrived.
    public mutating func goodFrame() { sinceGoodFrame = [:] }

    /// Takes in the device's counters `counts` (and `lostFrames`, its sequence gaps) at `now`;
    /// returns a log line when drops are waiting to be told and the last line is at least
    /// ``logIntervalMilliseconds`` old (the first drop after a quiet spell is told at once).
    public mutating func update(_ counts: [FrameDefect: Int], lostFrames: Int = 0, at now: MonotonicInstant) -> String? {
        lost += max(0, lostFrames - seenLost)
        seenLost = lostFrames
        for (kind, count) in counts {
            let new = count - seen[kind, default: 0]
            guard new > 0 else { continue }
            total[kind, default: 0] += new
            sinceGoodFrame[kind, default: 0] += new
            unlogged[kind, default: 0] += new
        }
        seen = counts
        guard !unlogged.isEmpty else { return nil }
        if let last = lastLog, now.milliseconds(since: last) < Double(DroppedFrameTally.logIntervalMilliseconds) {
            return nil
        }
        let n = unlogged.values.reduce(0, +)
        let line = "camera: dropped \(n) bad \(n == 1 ? "frame" : "frames") (\(DroppedFrameTally.summary(unlogged)))"
            + (lastLog.map { " in the last \(Int((now.milliseconds(since: $0) / 1000).rounded())) s" } ?? "")
            + "; \(totalCount) since start"
        unlogged = [:]
        lastLog = now
        return line
    }

    /// `"2 no-eoi, 1 empty"`: counts by kind, largest first.
    public static func summary(_ counts: [FrameDefect: Int]) -> String {
        counts.filter { $0.value > 0 }
            .sorted { ($0.value, $1.key.rawValue) > ($1.value, $0.key.rawValue) }
            .map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
    }
}
