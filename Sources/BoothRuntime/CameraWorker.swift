import BoothCore
import BoothPorts

// The camera is a ``CameraSource`` (BoothPorts), made by ``DeviceFactory/camera``: the runtime asks it
// for live view and stills and hears back through these handlers. What a still is (the first good
// frame at or after the trigger, a released shutter) is the camera module's business.

/// The handlers the runtime gives its camera source: a still goes into `captures` (with the session
/// and shot the capture was assigned) and the loop hears `captureSucceeded`; a failed still, a fault
/// and a recovery become the loop's events; live frames go to every display.
public func makeCameraHandlers(captures: CaptureBox, displays: [any DisplaySink],
                    post: @escaping @Sendable (BoothEvent) -> Void) -> CameraSourceHandlers {
    CameraSourceHandlers(event: { event in
        switch event {
        case let .still(still):
            let slot = captures.slot(of: still.captureID)
            captures.put(CaptureRecord(id: still.captureID, session: slot.session, shot: slot.shot, jpeg: still.jpeg,
                                       trigger: still.trigger, frameTimestamp: still.frameTimestamp,
                                       readyAt: still.readyAt, size: still.size, format: still.format,
                                       passedThrough: still.passedThrough, turn: still.turn))
            post(.captureSucceeded(id: still.captureID))
        case let .stillFailed(id, message, at):
            post(.captureFailed(id: id, message: message, at: at))
        case let .fault(message):
            post(.deviceFault(.camera, message: message))
        case .recovered:
            post(.deviceRecovered(.camera))
        }
    }, liveFrame: { frame in for d in displays { d.frame(frame) } })
}

/// `"12.3"`: milliseconds to one decimal, for the log.
func format(_ ms: Double) -> String {
    let tenths = Int((ms * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}
