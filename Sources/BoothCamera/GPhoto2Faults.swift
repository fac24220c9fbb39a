import BoothCore

/// A failed libgphoto2 call: which call, its `GP_ERROR_*` code, and the camera driver's own words
/// (the `GPContext` error text, e.g. `"Could not claim the USB device"`), on which camera.
///
/// Thrown by ``GPhoto2Camera``; ``kind`` sorts it into what the booth does about it. Example:
/// `GPhoto2Error(call: "gp_camera_init", code: -53, camera: "Nikon DSC D750 at usb:001,004")`.
public struct GPhoto2Error: Error, CustomStringConvertible, Sendable, Equatable {
    /// The C call that failed (`"gp_camera_init"`, `"gp_camera_capture_preview"`).
    public var call: String
    /// Its return value, a `GP_ERROR_*` code (negative).
    public var code: Int32
    /// The camera (`"Nikon DSC D750 at usb:001,001"`), or the `camera.device` selector before one is open.
    public var camera: String
    /// What the driver said through the context while the call ran (the last error text), if anything.
    public var driverMessage: String?

    public init(call: String, code: Int32, camera: String, driverMessage: String? = nil) {
        self.call = call
        self.code = code
        self.camera = camera
        self.driverMessage = driverMessage
    }

    /// What kind of fault the code and the driver's message make.
    public var kind: GPhoto2FaultKind { GPhoto2FaultKind(code: code, driverMessage: driverMessage) }

    /// `"gp_camera_init on Nikon DSC D750 at usb:001,004 failed: Could not claim the USB device (GP_ERROR_IO_USB_CLAIM, -53)"`.
    public var description: String {
        var s = "\(call) on \(camera) failed: \(GPhoto2Error.codeName(code)) (\(code))"
        if let driverMessage, !driverMessage.isEmpty { s += ": \(driverMessage)" }
        return s
    }

    /// The name of a `GP_ERROR_*` code as gphoto2-result.h and gphoto2-port-result.h define it.
    public static func codeName(_ code: Int32) -> String {
        switch code {
        case -1: "GP_ERROR"
        case -2: "GP_ERROR_BAD_PARAMETERS"
        case -3: "GP_ERROR_NO_MEMORY"
        case -4: "GP_ERROR_LIBRARY"
        case -5: "GP_ERROR_UNKNOWN_PORT"
        case -6: "GP_ERROR_NOT_SUPPORTED"
        case -7: "GP_ERROR_IO"
        case -8: "GP_ERROR_FIXED_LIMIT_EXCEEDED"
        case -10: "GP_ERROR_TIMEOUT"
        case -31: "GP_ERROR_IO_INIT"
        case -34: "GP_ERROR_IO_READ"
        case -35: "GP_ERROR_IO_WRITE"
        case -37: "GP_ERROR_IO_UPDATE"
        case -51: "GP_ERROR_IO_USB_CLEAR_HALT"
        case -52: "GP_ERROR_IO_USB_FIND"
        case -53: "GP_ERROR_IO_USB_CLAIM"
        case -60: "GP_ERROR_IO_LOCK"
        case -102: "GP_ERROR_CORRUPTED_DATA"
        case -105: "GP_ERROR_MODEL_NOT_FOUND"
        case -107: "GP_ERROR_DIRECTORY_NOT_FOUND"
        case -108: "GP_ERROR_FILE_NOT_FOUND"
        case -110: "GP_ERROR_CAMERA_BUSY"
        case -112: "GP_ERROR_CANCEL"
        case -113: "GP_ERROR_CAMERA_ERROR"
        case -114: "GP_ERROR_OS_FAILURE"
        case -115: "GP_ERROR_NO_SPACE"
        default: "GP_ERROR \(code)"
        }
    }
}

/// What a libgphoto2 failure means for the booth.
public enum GPhoto2FaultKind: String, Sendable, Equatable, CaseIterable {
    /// No camera answers: unplugged, switched off, or asleep (auto power off). A fault; found again by
    /// enumeration.
    case gone
    /// Another process holds the USB interface (GNOME's gvfs gphoto2 volume monitor, a second booth).
    case claimedByAnother
    /// The card is full (or the camera's buffer): no still until the operator makes room.
    case cardFull
    /// No card, or one the camera cannot write, while the capture target is the card.
    case noCard
    /// The camera could not focus: the still was not taken.
    case focusFailed
    /// The camera is busy (still writing, menu open, "Camera Not Ready"): worth a retry.
    case busy
    /// The camera did not answer in time.
    case timeout
    /// The body or its driver cannot do it (live view on a body without it).
    case unsupported
    /// The battery is empty (the booth reads its level): the camera rests until it is charged or swapped.
    case batteryEmpty
    /// Anything else the driver reports.
    case other

    /// Sorts a `GP_ERROR_*` code, with the driver's message where the code alone is the generic
    /// `GP_ERROR` (ptp2 reports a PTP response such as OutOfFocus or StoreFull that way).
    public init(code: Int32, driverMessage: String?) {
        let message = (driverMessage ?? "").lowercased()
        switch code {
        case -53: self = .claimedByAnother
        case -52, -7, -34, -35, -31, -51, -5, -105: self = .gone
        case -115: self = .cardFull
        case -110: self = .busy
        case -10: self = .timeout
        case -6: self = .unsupported
        default:
            if message.contains("claim") { self = .claimedByAnother }
            else if message.contains("focus") { self = .focusFailed }
            else if message.contains("store full") || message.contains("card full") || message.contains("ran full")
                || message.contains("no space") { self = .cardFull }
            else if message.contains("store not available") || message.contains("no card") || message.contains("card error")
                || message.contains("card protected") || message.contains("unformatted") { self = .noCard }
            else if message.contains("busy") || message.contains("not ready") { self = .busy }
            else { self = .other }
        }
    }

    /// True when the camera must be opened again (the fault path, then enumeration), not just retried.
    public var needsReopen: Bool { self == .gone || self == .claimedByAnother }
}

/// The operator's words for a gphoto2 fault: what happened and what to do, for the log and `status`.
public enum GPhoto2Advice {
    /// `kind`'s advice; `holder` names the process that holds the USB device (``DeviceNodeHolder``).
    public static func text(for kind: GPhoto2FaultKind, holder: String? = nil) -> String {
        switch kind {
        case .gone:
            return "no camera answers: check that it is switched on and its USB cable is in; a body that sleeps (auto power off) "
                + "must be woken (half-press the shutter button) and is best set to never power off, on a mains adapter"
        case .claimedByAnother:
            let who = holder.map { "\($0) holds it" } ?? "another process holds it"
            let gvfs = (holder ?? "").contains("gvfs")
                ? "; it is GNOME's gvfs gphoto2 volume monitor: stop it with 'systemctl --user mask --now gvfs-gphoto2-volume-monitor' for the desktop user, or remove the gvfs-backends package"
                : "; stop that process (GNOME's gvfs gphoto2 volume monitor is the usual one: 'systemctl --user mask --now gvfs-gphoto2-volume-monitor')"
            return "could not claim the camera's USB device: \(who)\(gvfs)"
        case .cardFull:
            return "the camera's card is full: make room on it (or set camera.capture_target = ram)"
        case .noCard:
            return "the camera has no card it can write (camera.capture_target = card): insert one, or set camera.capture_target = ram"
        case .focusFailed:
            return "the camera could not focus (too dark, or nothing in the focus area)"
        case .busy:
            return "the camera is busy (a menu open, still writing to its card)"
        case .timeout:
            return "the camera did not answer in time"
        case .batteryEmpty:
            return "the camera's battery is empty: charge or swap it"
        case .unsupported:
            return "the camera or its libgphoto2 driver cannot do this"
        case .other:
            return "the camera reported an error"
        }
    }
}

/// The file a capture made, as libgphoto2 names it on the camera (`folder` `"/store_00010001/DCIM/100NIKON"`,
/// `name` `"DSC_0001.JPG"`).
public struct GPhoto2FilePath: Sendable, Hashable, CustomStringConvertible {
    public var folder: String
    public var name: String

    public init(folder: String, name: String) {
        self.folder = folder
        self.name = name
    }

    /// True for a JPEG by its name (`.jpg`, `.jpeg`, any case), the only kind the booth keeps.
    public var isJPEG: Bool {
        let n = name.lowercased()
        return n.hasSuffix(".jpg") || n.hasSuffix(".jpeg")
    }

    public var description: String { folder.hasSuffix("/") ? folder + name : folder + "/" + name }
}

/// One event of `gp_camera_wait_for_event`, as data.
public enum GPhoto2Event: Sendable, Equatable {
    /// `GP_EVENT_TIMEOUT`: nothing within the wait.
    case timeout
    /// `GP_EVENT_FILE_ADDED`: a file is on the camera (a capture's JPEG, or its RAW of a RAW+JPEG pair).
    case fileAdded(GPhoto2FilePath)
    /// `GP_EVENT_FOLDER_ADDED`.
    case folderAdded(GPhoto2FilePath)
    /// `GP_EVENT_CAPTURE_COMPLETE`.
    case captureComplete
    /// `GP_EVENT_FILE_CHANGED` and `GP_EVENT_UNKNOWN` (its text, e.g. a property change).
    case other(String)
}

/// The files one capture made, gathered from `gp_camera_capture`'s answer and the events drained after
/// it, and the one the booth downloads.
public struct StillFiles: Sendable, Equatable {
    public private(set) var files: [GPhoto2FilePath] = []
    /// True once `GP_EVENT_CAPTURE_COMPLETE` came.
    public private(set) var complete = false

    public init(first: GPhoto2FilePath? = nil) {
        if let first { files.append(first) }
    }

    /// Takes one drained event; false when the drain can stop: a timeout, or a JPEG in hand (its download
    /// need not wait for capture complete, which some drivers report hundreds of ms later; a RAW that comes
    /// after its JPEG is an earlier capture's file to the next still's drain).
    public mutating func take(_ event: GPhoto2Event) -> Bool {
        switch event {
        case .timeout: return false
        case let .fileAdded(path):
            if !files.contains(path) { files.append(path) }
        case .captureComplete:
            complete = true
        case .folderAdded, .other: break
        }
        return jpeg == nil
    }

    /// The JPEG to download: with RAW+JPEG the JPEG of the pair; nil when none was made.
    public var jpeg: GPhoto2FilePath? { files.last(where: \.isJPEG) }
    /// True when files came but none is a JPEG: the body shoots RAW only.
    public var rawOnly: Bool { !files.isEmpty && jpeg == nil }
}
