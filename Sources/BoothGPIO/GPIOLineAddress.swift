import BoothCore
import CGPIODShims
#if canImport(Glibc)
import Glibc
#endif

/// Pull resistor setting for an input line (`button.bias`, declared in the settings schema):
/// as-is (as the board or device tree set it), disabled (an external resistor is fitted),
/// pull-up (a button wired to ground; use active-low), pull-down (a button wired to 3.3 V).
public typealias GPIOBias = LineBiasSetting

extension LineBiasSetting {
    var shimValue: Int32 {
        switch self {
        case .asIs: Int32(PB_GPIO_BIAS_AS_IS.rawValue)
        case .disabled: Int32(PB_GPIO_BIAS_DISABLED.rawValue)
        case .pullUp: Int32(PB_GPIO_BIAS_PULL_UP.rawValue)
        case .pullDown: Int32(PB_GPIO_BIAS_PULL_DOWN.rawValue)
        }
    }
}

/// A GPIO line as configured: a chip (path `/dev/gpiochip0`, name `gpiochip0`,
/// number `0` or label `pinctrl-bcm2711`) and a line (offset `17` or line name `GPIO17`).
public struct GPIOLineAddress: Sendable, Hashable, CustomStringConvertible {
    public var chip: String
    /// Offset (all digits) or line name.
    public var line: String

    public init(chip: String, line: String) {
        self.chip = chip
        self.line = line
    }

    /// `"gpiochip0:17"`.
    public var description: String { "\(chip):\(line)" }

    /// The line's offset when `line` is all digits; nil when it is a name.
    public var offset: UInt32? {
        guard !line.isEmpty, line.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt32(line)
    }

    /// Opens the chip and finds the line without requesting it, to check the wiring
    /// (`photoboothd --check`) or whether a missing chip or line has come back
    /// (fault recovery). Throws `GPIOError` (`chipNotFound`, `lineNotFound`, or
    /// `lineBusy` when another consumer holds it and `allowUsed` is false).
    /// Wraps `gpiod_chip_open` and the line lookup and line info calls.
    public func resolve(allowUsed: Bool = false) throws(GPIOError) -> GPIOResolvedLine {
        let chip = try OpenChip(self)
        defer { chip.close() }
        let offset = try chip.offset()
        let info = try chip.info(offset)
        if info.used && !allowUsed {
            throw error(.lineBusy(consumer: info.consumer), call: Shim.callName(.lineInfo), errno: EBUSY,
                        label: chip.label)
        }
        return GPIOResolvedLine(address: self, chipName: chip.name, chipLabel: chip.label, chipPath: chip.path,
                                info: info)
    }

    func error(_ kind: GPIOError.Kind, call: String, errno: Int32, label: String? = nil) -> GPIOError {
        GPIOError(kind: kind, call: call, errno: errno, chip: chip, chipLabel: label, line: line)
    }
}

/// Where a configured line was found.
public struct GPIOResolvedLine: Sendable, Hashable {
    public var address: GPIOLineAddress
    /// Kernel name, e.g. `"gpiochip0"`.
    public var chipName: String
    /// e.g. `"pinctrl-bcm2711"`.
    public var chipLabel: String
    /// e.g. `"/dev/gpiochip0"`.
    public var chipPath: String
    public var info: GPIOLineInfo

    public init(address: GPIOLineAddress, chipName: String, chipLabel: String, chipPath: String, info: GPIOLineInfo) {
        self.address = address
        self.chipName = chipName
        self.chipLabel = chipLabel
        self.chipPath = chipPath
        self.info = info
    }
}

/// An open chip during a lookup or request; closed by its user (not thread-shared).
struct OpenChip {
    let address: GPIOLineAddress
    let handle: OpaquePointer
    let name: String
    let label: String
    let path: String
    let lineCount: Int

    /// Wraps `gpiod_chip_open` (by path, name, number or label).
    init(_ address: GPIOLineAddress) throws(GPIOError) {
        self.address = address
        switch Shim.openChip(address.chip) {
        case .success(let handle):
            self.handle = handle
        case .failure(let failure):
            // ENOENT: no such chip; ENODEV/ENOTTY: the path is not a GPIO chip.
            let kind: GPIOError.Kind = [ENOENT, ENODEV, ENOTTY].contains(failure.code) ? .chipNotFound : .other
            throw address.error(kind, call: Shim.callName(.openChip), errno: failure.code)
        }
        name = Shim.chipName(handle)
        label = Shim.chipLabel(handle)
        path = Shim.chipPath(handle)
        lineCount = Shim.chipLineCount(handle)
    }

    func close() { Shim.closeChip(handle) }

    /// The configured line's offset: checked against the line count, or looked up by name.
    func offset() throws(GPIOError) -> UInt32 {
        if let offset = address.offset {
            guard Int(offset) < lineCount else {
                throw address.error(.lineNotFound, call: "offset \(offset) >= \(lineCount) lines", errno: 0,
                                    label: label)
            }
            return offset
        }
        switch Shim.findLine(handle, name: address.line) {
        case .success(let offset): return offset
        case .failure(let failure):
            throw address.error(failure.code == ENOENT ? .lineNotFound : .other, call: Shim.callName(.findLine),
                                errno: failure.code, label: label)
        }
    }

    func info(_ offset: UInt32) throws(GPIOError) -> GPIOLineInfo {
        switch Shim.lineInfo(handle, offset: offset) {
        case .success(let info): return info
        case .failure(let failure): throw address.error(.other, call: Shim.callName(.lineInfo), errno: failure.code, label: label)
        }
    }

    /// Turns a failed request's errno into an error, naming the holder on EBUSY.
    func requestError(_ err: Int32, offset: UInt32) -> GPIOError {
        if err == EBUSY {
            let consumer = (try? info(offset))?.consumer
            return address.error(.lineBusy(consumer: consumer), call: Shim.callName(.requestLines), errno: err,
                                 label: label)
        }
        return address.error(.other, call: Shim.callName(.requestLines), errno: err, label: label)
    }
}
