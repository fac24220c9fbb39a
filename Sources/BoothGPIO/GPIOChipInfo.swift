/// What the kernel reports about one line of a GPIO chip (`gpiod_line_info` / `gpiod_line_update`).
public struct GPIOLineInfo: Sendable, Hashable {
    public var offset: UInt32
    /// Line name from the device tree, e.g. `"GPIO17"`; `""` when unnamed.
    public var name: String
    /// Who requested it, e.g. `"photobooth"`; `""` when free or unnamed.
    public var consumer: String
    /// Requested by a process or a kernel driver.
    public var used: Bool
    public var isOutput: Bool
    public var activeLow: Bool

    public init(offset: UInt32, name: String, consumer: String, used: Bool, isOutput: Bool, activeLow: Bool) {
        self.offset = offset
        self.name = name
        self.consumer = consumer
        self.used = used
        self.isOutput = isOutput
        self.activeLow = activeLow
    }
}

/// One GPIO chip and its lines, for `photoboothctl devices`.
public struct GPIOChipInfo: Sendable, Hashable, CustomStringConvertible {
    /// Device path, e.g. `"/dev/gpiochip0"`.
    public var path: String
    /// Kernel name, e.g. `"gpiochip0"` (from the path when the chip could not be opened).
    public var name: String
    /// e.g. `"pinctrl-bcm2711"`; `""` when none or not opened.
    public var label: String
    /// One entry per line, by offset; empty when the chip could not be opened.
    public var lines: [GPIOLineInfo]
    /// Why the chip could not be opened or read (e.g. EACCES), nil when it was.
    public var error: GPIOError?

    public init(path: String, name: String, label: String, lines: [GPIOLineInfo], error: GPIOError? = nil) {
        self.path = path
        self.name = name
        self.label = label
        self.lines = lines
        self.error = error
    }

    /// A `gpioinfo`-like listing, one line per GPIO line:
    /// `gpiochip0 [pinctrl-bcm2711] /dev/gpiochip0, 58 lines` then
    /// `  17 "GPIO17" input used by "photobooth" active-low`.
    public var description: String {
        if let error { return "\(name) \(path): \(error)" }
        var text = "\(name) [\(label)] \(path), \(lines.count) lines"
        for line in lines {
            var row = "  \(line.offset) " + (line.name.isEmpty ? "unnamed" : "\"\(line.name)\"")
            row += line.isOutput ? " output" : " input"
            if line.used { row += line.consumer.isEmpty ? " used" : " used by \"\(line.consumer)\"" }
            if line.activeLow { row += " active-low" }
            text += "\n" + row
        }
        return text
    }

    /// The libgpiod API the C shim was compiled against: 1 (Debian 12, 1.6.x) or 2 (Debian 13, 2.x).
    public static var libgpiodAPIVersion: Int { Shim.apiVersion }

    /// All GPIO chips (`/dev/gpiochip*`) in chip-number order with their lines.
    /// Empty, without error, on a machine with no GPIO chip. A chip that cannot be
    /// opened is listed with `error` set. Throws only when /dev cannot be read.
    /// Wraps `gpiod_chip_open` and the per-line info calls of libgpiod.
    public static func list() throws(GPIOError) -> [GPIOChipInfo] {
        let paths: [String]
        switch Shim.chipPaths() {
        case .success(let p): paths = p
        case .failure(let failure):
            throw GPIOError(kind: .other, call: Shim.callName(.listChips), errno: failure.code, chip: "/dev")
        }
        return paths.map { path in
            let fallbackName = path.split(separator: "/").last.map(String.init) ?? path
            do throws(GPIOError) {
                let chip = try OpenChip(GPIOLineAddress(chip: path, line: ""))
                defer { chip.close() }
                var lines: [GPIOLineInfo] = []
                lines.reserveCapacity(chip.lineCount)
                for offset in 0..<UInt32(chip.lineCount) { lines.append(try chip.info(offset)) }
                return GPIOChipInfo(path: path, name: chip.name, label: chip.label, lines: lines, error: nil)
            } catch {
                return GPIOChipInfo(path: path, name: fallbackName, label: "", lines: [], error: error)
            }
        }
    }
}
