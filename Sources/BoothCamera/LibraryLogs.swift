import BoothCore
import BoothPorts
import Synchronization

/// The camera libraries' own messages in the booth's log: libv4l2 writes its errors to stderr
/// (`libv4l2: error setting pixformat: …`) and libcamera its log lines (`[0:00:01.23] [812] ERROR V4L2
/// …`), neither with the syslog priority the journal reads. Routed, each line goes through the booth's
/// ``Logger`` at its priority (an error `<3>`, a warning `<4>`, the rest `<7>`), prefixed `camera: `.
public enum CameraLibraryLogs {
    /// Routes libv4l2's and libcamera's messages to `log` from now on (a later call replaces `log`).
    /// Returns what could not be routed (libv4l2's stream not made: `fopencookie` failed), for the log.
    @discardableResult
    public static func route(to log: Logger) -> [String] {
        routedLog.withLock { $0 = log }
        var failed: [String] = []
        if !Sys.routeLibv4l2Log(writeLine) { failed.append("libv4l2's messages stay on stderr (fopencookie failed)") }
        routeLibcameraLog(writeLine)
        return failed
    }

    /// Sends the libraries' messages to stderr again (as they come, without priority).
    public static func unroute() {
        _ = Sys.routeLibv4l2Log(nil)
        routeLibcameraLog(nil)
        routedLog.withLock { $0 = nil }
    }
}

/// The logger the libraries' lines go to (set by ``CameraLibraryLogs/route(to:)``).
private let routedLog = Mutex<Logger?>(nil)

/// One line from a library (C callback: its syslog priority and the line), to ``routedLog``.
private let writeLine: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { priority, line in
    guard let line, let log = routedLog.withLock({ $0 }) else { return }
    log.log(LogPriority(rawValue: Int(priority)) ?? .debug, "camera: \(String(cString: line))")
}
