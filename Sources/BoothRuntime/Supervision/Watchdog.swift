import BoothCore
import BoothPorts
import Synchronization

// `Heartbeat`, the worker threads' sign of life, is in BoothPorts (a camera source has one).

/// The liveness check behind `WATCHDOG=1`: run on the main loop's thread (so the loop turning is
/// the first condition), it checks that the state machine is not stuck in a session step beyond that
/// step's own deadlines, and that every worker is in a known condition — turning, deliberately idle,
/// or in a fault the machine has recorded.
public struct LivenessCheck: Sendable {
    /// A worker thread busy longer than this without turning is stuck (ms). The camera turns at
    /// least every 200 ms while streaming; a stream start on a slow USB camera takes about 2 s.
    public var cameraLimitMilliseconds = 10_000
    /// A save (write + fsync of a few MB on an SD card) longer than this is stuck (ms).
    public var storageLimitMilliseconds = 20_000
    /// Slack on top of a session step's own deadline before it counts as stuck (ms).
    public var stateSlackMilliseconds = 10_000

    public init() {}

    /// What the check looks at, gathered on the loop's thread.
    public struct Inputs: Sendable {
        public var now: MonotonicInstant
        public var state: BoothState
        /// When the machine entered `state` (its name).
        public var stateSince: MonotonicInstant
        public var config: CoreConfig
        public var camera: Heartbeat
        public var storage: Heartbeat
        /// The button's thread runs (a stopped button must be a recorded fault).
        public var buttonRunning: Bool
    }

    /// nil when alive, else why not (for the log: the watchdog is then left to expire).
    public func problem(_ i: Inputs) -> String? {
        var recorded: Set<FaultKind> = []
        if case let .fault(reasons) = i.state { recorded = Set(reasons.keys) }
        if let ms = i.camera.stuckFor(now: i.now, limitMilliseconds: cameraLimitMilliseconds) {
            return "camera thread stuck for \(Int(ms)) ms"
        }
        if let ms = i.storage.stuckFor(now: i.now, limitMilliseconds: storageLimitMilliseconds) {
            return "storage thread stuck for \(Int(ms)) ms"
        }
        if !i.buttonRunning && !recorded.contains(.button) {
            return "button not running and no button fault recorded"
        }
        if let limit = stepLimit(i.state, i.config) {
            let ms = i.now.milliseconds(since: i.stateSince)
            if ms > Double(limit + stateSlackMilliseconds) {
                return "state \(i.state.name) for \(Int(ms)) ms, beyond its deadline of \(limit) ms"
            }
        }
        return nil
    }

    /// The longest a session step lasts by the settings (ms); nil for idle, fault and stopped.
    func stepLimit(_ state: BoothState, _ c: CoreConfig) -> Int? {
        switch state {
        case .preview: max(c.previewMilliseconds ?? 0, c.previewTimeoutMilliseconds)
        case .countdown: c.countdownSeconds * 1000 + 1000
        case .capture: 2 * c.captureTimeoutMilliseconds
        case .betweenShots: c.betweenShotsMilliseconds
        case .composing: c.composeTimeoutMilliseconds
        case .review: c.reviewMilliseconds
        default: nil
        }
    }
}
