import BoothCore
import BoothPorts
import FoundationEssentials

extension BoothRuntime {
    /// State confined to the loop's thread (inside `run()`), kept in a Mutex only to be Sendable.
    struct LoopState {
        var machine: BoothMachine
        var settings: Settings
        var pendingSettings: Settings?
        /// The reload whose settings are `pendingSettings` (``requestReload()`` waits for its outcome).
        var pendingReloadTicket: UInt64 = 0
        var lastReloadTicket: UInt64 = 0
        /// The newest reload applied: its ticket and what each changed key did.
        var appliedReload: (ticket: UInt64, reply: ReloadReply)?
        /// The composer made for `pendingSettings` (`.some(nil)`: none needed); nil: keep the current one.
        var pendingComposer: (any PictureComposing)??
        var session = 0
        /// The highest session with a capture on disk: the totals file records captures and this
        /// together, so a restart's reconciliation with the photos counts each photo exactly once.
        var lastSavedSession = 0
        var counters = BoothCounters()
        var nextAutoPressID: UInt64 = 1 << 62
        var exitCode: Int32 = 0
        /// Asked to stop (SIGTERM, or its last session done): `hello` says so, for a new daemon waiting for the socket's lock.
        var stopping = false
        /// JPEG bytes of the session's captures and its picture, by id, for composing, the review
        /// screen and printing (a held capture leaves the ``CaptureBox`` once saved). Emptied when a
        /// session begins.
        var sessionJPEGs: [UInt64: [UInt8]] = [:]
        /// The frame timestamp of the session's latest capture (the compose job's starting point in logs).
        var lastFrameAt: MonotonicInstant?
        /// When the session began (wall clock, ``RuntimeOptions/sessionDate``): the picture's date.
        var sessionStartedAt = Date()
        /// Captures of a cancelled series being deleted: their `saved` is not counted.
        var deleting: Set<UInt64> = []
        /// Captures saved (and counted) in the session under way, by id.
        var savedThisSession: Set<UInt64> = []
        /// Where the latest saved captures and pictures are, by id (the review's QR code); 16 kept.
        var savedPaths: [(id: UInt64, path: String)] = []
    }
}
