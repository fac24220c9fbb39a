import BoothSystem
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
        var text = "\(path): \(SystemCallError.reason(of: err)) (\(errnoName(err)))"
        switch err {
        case EACCES, EPERM:
            text += "; the booth's user needs the input group (install.sh adds it), and the unit DeviceAllow=char-input"
        case ENOENT, ENODEV, ENXIO:
            text += "; is it plugged in? ('photoboothctl devices' lists the input devices)"
        default: break
        }
        return InputError(.openFailed, text)
    }

    /// The errno's symbolic name, `"EACCES"` (``SystemCallError/name(of:)``; `"errno N"` for a number glibc has no name for).
    static func errnoName(_ err: Int32) -> String {
        SystemCallError.name(of: err)
    }
}
