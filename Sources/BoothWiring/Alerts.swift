import BoothClock
import BoothCore
import BoothIndex
import BoothPorts
import BoothRuntime
import Glibc

/// The conditions an operator is alerted to, as `status` shows them: condition → the operator's
/// words. `fault:KIND` while the booth is in a fault of that kind (camera, button, storage);
/// `paper-out` (media-empty or media-needed, or the paper count at 0), else `paper-low` (the paper
/// count at or below `print.paper_warning`, or media-low), else `printer-unavailable` (offline, paused,
/// a jam…) while printing is on; `storage-low` while sessions are refused for free space or fewer
/// than twice `storage.min_free` bytes are free; `camera-battery-low` while the camera reports a
/// battery at ``CameraSourceStatus/batteryLowPercent`` or below (`batteryPercent`: none of today's
/// backends reports one; a V4L2 webcam has none).
func alertConditions(state: BoothState, storageRefusal: String?, freeBytes: UInt64?, minFreeBytes: Int,
                     printMode: PrintMode, printer: PrinterStatus, batteryPercent: Int? = nil) -> [String: String] {
    var out: [String: String] = [:]
    if let battery = batteryPercent, battery <= CameraSourceStatus.batteryLowPercent {
        out["camera-battery-low"] = "the camera's battery is at \(battery)%: charge it or put the mains adapter on"
    }
    if case let .fault(reasons) = state {
        for (kind, message) in reasons { out["fault:\(kind.rawValue)"] = message }
    }
    if printMode != .off {
        let reasons = Set(printer.reasons)
        let sheets = printer.sheetsRemaining.map { " (\($0) sheet\($0 == 1 ? "" : "s") counted)" } ?? ""
        if reasons.contains("media-empty") || reasons.contains("media-needed") || printer.sheetsRemaining == 0 {
            out["paper-out"] = "the printer is out of paper\(sheets): load paper, then photoboothctl refill SHEETS"
        } else if reasons.contains("paper-low") || reasons.contains("media-low") {
            out["paper-low"] = "the printer's paper is low\(sheets)"
        } else if printer.health == "unavailable" {
            out["printer-unavailable"] = "the printer cannot print: " + (printer.message ?? printer.reasons.joined(separator: ", "))
        }
    }
    if let storageRefusal {
        out["storage-low"] = "the booth takes no sessions: \(storageRefusal)"
    } else if let freeBytes, minFreeBytes > 0, freeBytes < UInt64(minFreeBytes) {
        // Below it already (the daemon's next look at the space refuses sessions): not "stops taking them".
        out["storage-low"] = "\(freeBytes / 1_000_000) MB free for the photos, below storage.min_free (\(minFreeBytes / 1_000_000) MB): "
            + "the booth takes no sessions until there is room"
    } else if let freeBytes, minFreeBytes > 0, freeBytes < 2 * UInt64(minFreeBytes) {
        out["storage-low"] = "\(freeBytes / 1_000_000) MB free for the photos; the booth stops taking them below "
            + "\(minFreeBytes / 1_000_000) MB (storage.min_free)"
    }
    return out
}

/// The conditions that began and ended between two looks: each change once, in a fixed order
/// (ended first, then begun, each by name). A message that changes while its condition stays
/// (fewer MB free) is not a change.
struct AlertTracker {
    var active: [String: String]

    mutating func update(_ now: [String: String]) -> [(condition: String, active: Bool, message: String)] {
        var changes: [(String, Bool, String)] = []
        for (condition, message) in active.sorted(by: { $0.key < $1.key }) where now[condition] == nil {
            changes.append((condition, false, "cleared (it was: \(message))"))
        }
        for (condition, message) in now.sorted(by: { $0.key < $1.key }) where active[condition] == nil {
            changes.append((condition, true, message))
        }
        active = now
        return changes
    }
}

/// Writes each change of ``alertConditions(state:storageRefusal:freeBytes:minFreeBytes:printMode:printer:batteryPercent:)``
/// into the gallery's index (``PictureIndex/recordAlert(_:active:message:at:)``), looking every
/// `intervalMilliseconds` on a thread of its own (`pb-alerts`); photobooth-gallery sends them
/// (`gallery.alert_url`). Starts from the conditions the index last had active, so a restart of
/// the daemon repeats nothing: for `graceMilliseconds` after the start a condition carried over
/// is not ended (the camera and the printer have not reported yet), and the printer's conditions
/// stay as they were while its health is `unknown` (not polled yet). The daemon itself has no network.
///
/// The grace is measured on the injected `clock` (the runtime's), each alert's time read from the
/// injected `wallClock`; the looks come every `intervalMilliseconds` of real time, and at once after
/// each step of a ``ManualClock``.
public final class AlertRecorder: Sendable {
    private let index: PictureIndex
    private let runtime: BoothRuntime
    private let log: Logger
    private let clock: any MonotonicClock
    private let wallClock: @Sendable () -> Int64
    private let intervalMilliseconds: Int64
    private let graceMilliseconds: Int64
    private let thread = WorkerThread(name: "pb-alerts")

    /// - Parameters:
    ///   - clock: the monotonic clock the grace is measured on: the runtime's (``SystemClock`` in the daemon).
    ///   - wallClock: an alert's time, seconds since 1970 (`time(2)` in the daemon).
    ///   - intervalMilliseconds: how often the runtime's status is looked at; `graceMilliseconds`: as above.
    public init(index: PictureIndex, runtime: BoothRuntime, log: Logger, clock: any MonotonicClock = SystemClock(),
                wallClock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) },
                intervalMilliseconds: Int64 = 2000, graceMilliseconds: Int64 = 30_000) {
        self.index = index
        self.runtime = runtime
        self.log = log
        self.clock = clock
        self.wallClock = wallClock
        self.intervalMilliseconds = intervalMilliseconds
        self.graceMilliseconds = graceMilliseconds
    }

    static let printerConditions: Set<String> = ["paper-out", "paper-low", "printer-unavailable"]

    /// Starts the thread (`pb-alerts`); without one (pthread_create failed) it logs that the operator gets no alerts.
    public func start() {
        // A test's clock moves in steps: each step is looked at at once, not at the next real interval.
        if let manual = clock as? ManualClock { manual.onAdvance { [thread] in thread.wake() } }
        let started = thread.start { [self] w in
            let carried = (try? index.activeAlerts()) ?? [:]
            var tracker = AlertTracker(active: carried)
            let graceEnds = clock.now().adding(milliseconds: graceMilliseconds)
            while true {
                let s = runtime.statusSnapshot()
                var now = alertConditions(state: s.state, storageRefusal: s.storageRefusal, freeBytes: s.freeBytes,
                                          minFreeBytes: s.settings.storage.minFreeBytes, printMode: s.settings.print.mode, printer: s.printer,
                                          batteryPercent: s.camera.batteryPercent)
                if s.printer.health == "unknown" {
                    for (k, v) in tracker.active where AlertRecorder.printerConditions.contains(k) { now[k] = v }
                }
                if clock.now() < graceEnds {
                    for (k, v) in tracker.active where carried[k] != nil && now[k] == nil { now[k] = v }
                }
                for change in tracker.update(now) {
                    do {
                        try index.recordAlert(change.condition, active: change.active, message: change.message, at: wallClock())
                        log.info("alert: \(change.condition) \(change.active ? "began" : "ended"): \(change.message)")
                    } catch {
                        log.error("alert: \(change.condition) not recorded in the index: \(error)")
                    }
                }
                if w.waitForWork(until: Monotonic.now().adding(milliseconds: intervalMilliseconds)) == .stop { return }
            }
        }
        if !started { log.error("alert: no thread for them (pthread_create failed): the operator gets no alerts") }
    }

    /// Stops the thread, waiting up to 2 s for it.
    public func stop() { _ = thread.finish(timeoutMilliseconds: 2000) }
}
