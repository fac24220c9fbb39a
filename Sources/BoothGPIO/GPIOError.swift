import BoothButtons
import BoothSystem

/// A GPIO failure: the libgpiod (or system) call that failed, its errno, and
/// the chip and line it concerned, worded for an operator ("chip 'gpiochip9'
/// not found", "line 17 on gpiochip0 is busy (used by 'other-app')").
/// The runtime turns it into a fault reason and retries.
public struct GPIOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in the terms an operator checks wiring and config with.
    public enum Kind: Sendable, Hashable {
        /// No chip has this path, name, number or label (ENOENT from `gpiod_chip_open`).
        case chipNotFound
        /// The chip has no line with this offset or name.
        case lineNotFound
        /// Another consumer holds the line (EBUSY); its consumer label when known.
        case lineBusy(consumer: String?)
        /// The line stopped working while in use (read, poll or set failed).
        case lineFailed
        /// Any other failure of `call`.
        case other
    }

    public var kind: Kind
    /// The failed call, its errno and the chip (and line) it concerned, e.g. `gpiod_chip_open` with
    /// ENOENT on `gpiochip9`. errno is 0 when the failure is not an errno (an offset past the last line).
    public var failure: SystemCallError
    /// The chip as configured (path, name, number or label), e.g. `"gpiochip0"`.
    public var chip: String
    /// The chip's label once it was opened, e.g. `"pinctrl-bcm2711"`; nil before.
    public var chipLabel: String?
    /// The line as configured (offset or name), e.g. `"17"` or `"GPIO17"`; nil for chip-only operations.
    public var line: String?

    /// A failure of `call` with `errno` (0: none) on `chip` (and `line`).
    public init(kind: Kind, call: String, errno: Int32, chip: String, chipLabel: String? = nil, line: String? = nil) {
        self.kind = kind
        self.failure = SystemCallError(call: call, errno: errno, subject: line.map { "\(chip) line \($0)" } ?? chip)
        self.chip = chip
        self.chipLabel = chipLabel
        self.line = line
    }

    /// The C call that failed, e.g. `"gpiod_chip_open"`, `"gpiod_line_request"`, `"poll"`.
    public var call: String { failure.call }
    /// errno from that call (0 when the failure is not an errno).
    public var errno: Int32 { failure.errno }

    /// The button's fault for this error: ``message`` and the failed call.
    public var buttonFault: ButtonFault { ButtonFault(message: message, cause: failure) }

    /// The operator message, without the call and errno.
    public var message: String {
        let chipName = chipLabel.map { "\(chip) (\($0))" } ?? chip
        let lineWord = line.map { Int($0) != nil ? "line \($0)" : "line '\($0)'" }
        switch kind {
        case .chipNotFound:
            return "chip '\(chip)' not found" + (lineWord.map { " (wanted for \($0))" } ?? "")
        case .lineNotFound:
            return "\(lineWord ?? "line") not found on chip \(chipName)"
        case .lineBusy(let consumer):
            let by = consumer.map { $0.isEmpty ? "" : " (used by '\($0)')" } ?? ""
            return "\(lineWord ?? "line") on \(chip) is busy\(by)"
        case .lineFailed:
            return "\(lineWord ?? "line") on chip \(chipName) failed"
        case .other:
            return "\(lineWord.map { "\($0) on " } ?? "")chip \(chipName): \(call) failed"
        }
    }

    /// `message`, then the call and errno: `chip 'gpiochip9' not found (wanted for line 17) [gpiod_chip_open:
    /// No such file or directory (errno 2, ENOENT)]` (as ``buttonFault``'s).
    public var description: String { buttonFault.description }
}
