import Glibc

/// Why an input button could not be opened or stopped working, in words for the log, `status` and
/// `--check`: what happened, which device, and what to do.
public struct InputError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// `button.input_key` is no key name.
        case unknownKey
        /// No device matches `button.input_device` (or none reports the key).
        case noDevice
        /// open(2) of the device node failed (permission, gone).
        case openFailed
        /// `EVIOCGRAB` failed: another program holds the device grabbed.
        case grabFailed
        /// The device does not report the key, or a tap was asked of a device that is no touch screen.
        case keyNotReported
        /// The device went away while in use (unplugged: `ENODEV`), or a read failed.
        case failed
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// `"/dev/input/event3: permission denied (EACCES)"`, with advice for the usual errnos.
    static func opening(_ path: String, errno err: Int32) -> InputError {
        var text = "\(path): \(String(cString: strerror(err))) (\(errnoName(err)))"
        switch err {
        case EACCES, EPERM:
            text += "; the booth's user needs the input group (install.sh adds it), and the unit DeviceAllow=char-input"
        case ENOENT, ENODEV, ENXIO:
            text += "; is it plugged in? ('photoboothctl devices' lists the input devices)"
        default: break
        }
        return InputError(.openFailed, text)
    }

    /// The errno's symbolic name for the usual ones, else its number.
    static func errnoName(_ err: Int32) -> String {
        switch err {
        case EACCES: "EACCES"
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case ENODEV: "ENODEV"
        case ENXIO: "ENXIO"
        case EBUSY: "EBUSY"
        case EINVAL: "EINVAL"
        case EIO: "EIO"
        case EMFILE: "EMFILE"
        default: "errno \(err)"
        }
    }
}
