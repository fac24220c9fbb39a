import BoothClock
import BoothCore
import BoothPorts
import Synchronization

// GPhoto2CameraSource's `--check` and the words it shares with the camera thread (an error with the operator's
// advice, a capture target the camera does not offer). The source and its thread are in GPhoto2CameraSource.swift.
extension GPhoto2CameraSource {
    /// `--check`: opens the camera on the caller's thread, takes a live-view frame where it has live view,
    /// reads its battery and the card's free space, releases it. Fails (the daemon's words) for an empty battery
    /// (0 %: the camera would rest) and, with `camera.capture_target = card`, a card with less than 50 MB free;
    /// warns of a battery at 20 % or less.
    public func check() -> CameraCheckResult {
        guard let camera = GPhoto2Camera() else { return .fails("gp_context_new failed (out of memory)") }
        let s = settings.withLock { $0 }
        do {
            let info = try camera.open(s.device)
            defer { camera.close() }
            var warnings: [String] = []
            let details = camera.details()
            // What would rest the camera or fail every still: the daemon's fault, in its words.
            if let level = details.batteryPercent, level <= Self.batteryEmptyPercent {
                return .fails("\(info): \(Self.batteryEmptyText(level))")
            }
            if s.captureTarget == .card, let free = details.freeBytes, free < Self.minimumFreeBytes {
                return .fails("\(info): \(GPhoto2Advice.text(for: .cardFull)) (\(free / 1_000_000) MB free, camera.capture_target = card)")
            }
            if let level = details.batteryPercent, level <= CameraSourceStatus.batteryLowPercent {
                warnings.append(CameraSourceStatus.batteryLowText(level))
            }
            if let w = captureTargetWarning(s.captureTarget, details) { warnings.append(w) }
            var what = "\(info)"
            if ownLiveView {
                do {
                    let frame = try camera.preview()
                    if let defect = FrameCheck.defect(of: frame, format: .mjpeg) {
                        return .fails("\(info): its live-view frame is not a whole JPEG (\(defect))")
                    }
                    what += ", live view \(frame.count) bytes a frame"
                } catch where error.kind == .unsupported {
                    warnings.append("\(info) has no live view (\(error)): set camera.live_view_device to a webcam beside it, or none")
                }
            } else {
                try camera.ping()
            }
            if let b = details.batteryPercent { what += ", battery \(b)%" }
            return .works(description: what, warnings: warnings)
        } catch {
            return .fails(describe(error, camera: camera))
        }
    }

    func describe(_ error: any Error, camera: GPhoto2Camera?) -> String {
        guard let e = error as? GPhoto2Error else { return "\(error)" }
        let holder = e.kind == .claimedByAnother ? camera?.lastChosen.flatMap(\.usbDeviceNode).flatMap(DeviceNodeHolder.find) : nil
        return "\(GPhoto2Advice.text(for: e.kind, holder: holder)) (\(e))"
    }

    func captureTargetWarning(_ target: CaptureTargetSetting, _ d: GPhoto2CameraDetails) -> String? {
        guard !d.captureTargets.isEmpty else {
            return target == .ram ? nil : "camera.capture_target = card: this camera has no capture target setting; it stores where it is set to"
        }
        guard GPhoto2CaptureTarget.choice(for: target, among: d.captureTargets) == nil else { return nil }
        return "camera.capture_target = \(target.rawValue): the camera offers \(d.captureTargets.map { "'\($0)'" }.joined(separator: ", "))"
    }
}
