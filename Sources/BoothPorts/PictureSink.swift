import BoothCore

/// A capture or a picture that storage has just saved durably (file written, fsynced, renamed,
/// its folder fsynced): what every ``PictureSink`` gets.
public struct SavedPicture: Sendable, Equatable {
    /// What the file holds.
    public enum Kind: String, Sendable, Equatable {
        /// A raw shot from the camera (`booth-000042-1.jpg`).
        case capture
        /// A session's composed result (`booth-000042-picture.jpg`).
        case picture
    }

    /// The file's absolute path, e.g. `/var/lib/photobooth/photos/2026-11-29/booth-000042-1.jpg`.
    public var path: String
    /// The session number (the one in the file name; it may have moved past a name already taken).
    public var session: Int
    /// The shot, 1-based, for a capture; 0 for a picture.
    public var shot: Int
    public var kind: Kind
    /// The machine's id of the capture or picture (the id the review, `print` and `skipPrint` use).
    public var captureID: UInt64
    /// The file's bytes (JPEG), exactly as written.
    public var bytes: [UInt8]

    public init(path: String, session: Int, shot: Int, kind: Kind, captureID: UInt64, bytes: [UInt8]) {
        self.path = path
        self.session = session
        self.shot = shot
        self.kind = kind
        self.captureID = captureID
        self.bytes = bytes
    }
}

/// Something that wants every saved capture or picture: the printer now; later a gallery, a QR
/// code, a sync. The runtime calls ``pictureSaved(_:)`` once per file, after storage's durable save
/// and before the loop hears of the save, on a thread that is never the main loop's: the printer's
/// call comes from the storage thread and must return at once (it only notes the path); every other
/// sink gets its pictures in order on a delivery thread of its own, so a slow or stuck sink delays
/// neither the session nor the other sinks (a sink more than 32 pictures behind loses the oldest,
/// logged).
///
/// A sink carries the picture, not the policy: whether and when a picture is printed stays the
/// machine's decision (`print.mode`: at review, or on a press), asked of the ``Printer`` as commands.
public protocol PictureSink: AnyObject, Sendable {
    /// For logs: `printer`, `gallery`.
    var sinkName: String { get }
    /// `picture` was saved. Errors are the sink's own to log; nothing is returned to the runtime.
    func pictureSaved(_ picture: SavedPicture)
}
