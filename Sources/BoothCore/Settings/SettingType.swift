/// The type of a setting: how its text is read and what is allowed.
///
/// Durations are written with a unit (`40ms`, `3s`, `5min`, `1h`; decimals like `1.5s` allowed) and stored as
/// integer milliseconds; sizes as `WxH` pixels; byte counts with a decimal unit (`500MB`; B, kB, MB, GB, 1 kB = 1000 B)
/// and stored as bytes. Ranges of durations and byte counts are in milliseconds and bytes.
public enum SettingType: Sendable, Hashable {
    /// `true`/`false` (also `yes`/`no`, `on`/`off`), any letter case.
    case bool
    /// A whole number within `range`; `unit` (e.g. `"frames per second"`) is only for messages and docs.
    case int(range: ClosedRange<Int>, unit: String?)
    /// A length in whole millimetres within `range`, written `3mm` (the unit print.media names use; any
    /// letter case, a space before it allowed) or a bare `3`; stored as an int of millimetres.
    case millimetres(range: ClosedRange<Int>)
    /// A duration within `range` milliseconds; with `wholeSeconds`, a multiple of 1000 ms.
    case duration(range: ClosedRange<Int>, wholeSeconds: Bool)
    /// `off`, or a duration within `range` milliseconds.
    case durationOrOff(range: ClosedRange<Int>)
    /// `WxH` in pixels, each side at least 1 and within `limit` either way round.
    case size(limit: SizeLimit)
    /// A byte count within `range` bytes, written with a unit.
    case bytes(range: ClosedRange<Int>)
    /// One of `choices`, any letter case in the file, canonical (lowercase) as listed.
    case choice([String])
    /// One or more of `choices`, separated by commas (`gpio, input`), each once; canonical as listed, in the file's order.
    case choiceList([String])
    /// Free text of at most `maxLength` characters; with `allowsEmpty == false` it must not be empty.
    case string(allowsEmpty: Bool, maxLength: Int)
    /// A file or directory path of at most `maxLength` bytes (UTF-8); with `allowsEmpty == false` it must not be empty.
    case path(allowsEmpty: Bool, maxLength: Int)
    /// A PWG 5101.1 self-describing media name with a finite size, each side 1 to 1000 mm (``MediaSize``).
    case media
    /// An sRGB colour: `#rrggbb` or a name from `RGBColor.named`.
    case color

    /// The longest text a `.string` takes unless its key says otherwise, in characters: what a screen, a
    /// footer or a page shows is far shorter, and a value is one line of the config file.
    public static let textLength = 500
    /// The longest `.path`, in bytes: Linux's PATH_MAX, what open(2) takes.
    public static let pathLength = 4096

    /// A short name for the type, for docs: `"duration"`, `"size"`, ….
    public var name: String {
        switch self {
        case .bool: "boolean"
        case .int: "whole number"
        case .millimetres: "length"
        case .duration: "duration"
        case .durationOrOff: "duration or off"
        case .size: "size"
        case .bytes: "size in bytes"
        case .choice: "choice"
        case .choiceList: "list of choices"
        case .string: "text"
        case .path: "path"
        case .media: "media name"
        case .color: "colour"
        }
    }

    /// What is allowed, in words: `"1ms to 1s"`, `"auto, mjpeg, yuyv or rgb24"`, `"1 to 120 frames per second"`.
    public var allowed: String {
        switch self {
        case .bool:
            return "true or false (also yes/no, on/off; any letter case)"
        case .int(let range, let unit):
            return "\(range.lowerBound) to \(range.upperBound)" + (unit.map { " \($0)" } ?? "")
        case .millimetres(let range):
            return "\(range.lowerBound) to \(range.upperBound) mm (whole millimetres, like 3 or 3mm)"
        case .duration(let range, let wholeSeconds):
            return "\(Units.formatDuration(range.lowerBound)) to \(Units.formatDuration(range.upperBound))"
                + (wholeSeconds ? " in whole seconds" : "")
        case .durationOrOff(let range):
            return "off, or \(Units.formatDuration(range.lowerBound)) to \(Units.formatDuration(range.upperBound))"
        case .size(let limit):
            return "WxH in pixels, like 1280x720, up to \(limit)"
        case .bytes(let range):
            return "\(Units.formatBytes(range.lowerBound)) to \(Units.formatBytes(range.upperBound))"
        case .choice(let choices):
            return Units.list(choices)
        case .choiceList(let choices):
            return "one or more of " + choices.joined(separator: ", ") + ", separated by commas"
        case .string(let allowsEmpty, let maxLength):
            return "any text of up to \(maxLength) characters" + (allowsEmpty ? ", or empty" : ", not empty")
        case .path(let allowsEmpty, let maxLength):
            return "a path of up to \(maxLength) bytes" + (allowsEmpty ? ", or empty" : "")
        case .media:
            return MediaSize.allowed
        case .color:
            return "#rrggbb or " + Units.list(RGBColor.named.map(\.name))
        }
    }
}

/// The largest `WxH` a size setting takes, from what the size is for: the longer side at most `long`
/// pixels and the shorter at most `short`, so a portrait size (a screen mounted sideways, a camera on
/// its side) is allowed as its landscape twin is.
public struct SizeLimit: Sendable, Hashable, CustomStringConvertible {
    /// The longer side's most, pixels.
    public var long: Int
    /// The shorter side's most, pixels.
    public var short: Int
    /// What makes it the limit, for messages: `"8K UHD, the largest screen"`.
    public var reason: String

    /// A screen's drawing (the preview file, the live view shown on it): 8K UHD, 7680x4320.
    public static let screen = SizeLimit(long: 7680, short: 4320, reason: "8K UHD, the largest screen")
    /// A camera's still: 12288x9216 (113 MP), above the largest cameras' ~100 MP (Fujifilm GFX100 11648x8736,
    /// Hasselblad X2D 11656x8742).
    public static let still = SizeLimit(long: 12288, short: 9216, reason: "above the largest cameras' 100 MP, 11648x8736")

    /// True when `size` fits, either way round.
    public func allows(_ size: FrameSize) -> Bool {
        max(size.width, size.height) <= long && min(size.width, size.height) <= short
    }

    /// `7680x4320 (either way round: 8K UHD, the largest screen)`.
    public var description: String { "\(long)x\(short) (either way round: \(reason))" }
}

/// A setting's value once read: the stored form of each type.
enum SettingValue: Sendable, Hashable {
    case bool(Bool)
    case int(Int)
    /// Milliseconds; nil for `off` of a duration-or-off.
    case milliseconds(Int?)
    case size(FrameSize)
    case bytes(Int)
    case choice(String)
    case choices([String])
    case text(String)
    case color(RGBColor)

    /// The value as it is written in a config file (`1500ms`, `5min`, `500MB`, `true`, `1280x720`, `off`).
    var text: String {
        switch self {
        case .bool(let b): b ? "true" : "false"
        case .int(let i): String(i)
        case .milliseconds(let ms): ms.map(Units.formatDuration) ?? "off"
        case .size(let s): s.description
        case .bytes(let n): Units.formatBytes(n)
        case .choice(let c): c
        case .choices(let list): list.joined(separator: ", ")
        case .text(let t): t
        case .color(let c): c.description
        }
    }
}

extension SettingType {
    /// Reads `text` (already trimmed and unquoted). On failure, the message fragment after `key: `,
    /// e.g. `"'ture' is not a boolean; use true or false (also yes/no, on/off; any letter case)"`.
    func parse(_ text: String) -> Result<SettingValue, ValueProblem> {
        let q = "'\(text)'"
        switch self {
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "on": return .success(.bool(true))
            case "false", "no", "off": return .success(.bool(false))
            default: return .failure(ValueProblem("\(q) is not a boolean; use \(allowed)"))
            }
        case .int(let range, _):
            let digits = text.hasPrefix("+") || text.hasPrefix("-") ? text.dropFirst() : Substring(text)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(ValueProblem("\(q) is not a whole number; use \(allowed)"))
            }
            guard let n = Int(text), range.contains(n) else {
                return .failure(ValueProblem("\(q) is out of range; allowed \(allowed)"))
            }
            return .success(.int(n))
        case .millimetres(let range):
            var number = Substring(text)
            if number.lowercased().hasSuffix("mm") {
                number = number.dropLast(2)
                while number.last == " " || number.last == "\t" { number.removeLast() }
            }
            if number.hasPrefix("+") { number = number.dropFirst() }  // as .int takes it
            guard !number.isEmpty, number.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(ValueProblem("\(q) is not a length in whole millimetres; use \(allowed)"))
            }
            guard number.count <= 18, let n = Int(number), range.contains(n) else {
                return .failure(ValueProblem("\(q) is out of range; allowed \(allowed)"))
            }
            return .success(.int(n))
        case .duration(let range, let wholeSeconds):
            switch Units.parseQuantity(text, units: Units.durationUnits, what: "duration", example: "3s or 40ms") {
            case .failure(let p): return .failure(ValueProblem("\(p.message); allowed \(allowed)"))
            case .success(let q0):
                guard let ms = q0, range.contains(ms) else {
                    return .failure(ValueProblem("\(q) is out of range; allowed \(allowed)"))
                }
                if wholeSeconds, ms % 1000 != 0 {
                    return .failure(ValueProblem("\(q) is not a whole number of seconds; allowed \(allowed)"))
                }
                return .success(.milliseconds(ms))
            }
        case .durationOrOff(let range):
            if text.lowercased() == "off" { return .success(.milliseconds(nil)) }
            switch Units.parseQuantity(text, units: Units.durationUnits, what: "duration", example: "3s or off") {
            case .failure(let p): return .failure(ValueProblem("\(p.message); allowed \(allowed)"))
            case .success(let q0):
                guard let ms = q0, range.contains(ms) else {
                    return .failure(ValueProblem("\(q) is out of range; allowed \(allowed)"))
                }
                return .success(.milliseconds(ms))
            }
        case .size(let limit):
            guard let size = FrameSize(parsing: text.lowercased()) else {
                return .failure(ValueProblem("\(q) is not a size; use WxH in pixels, like 1280x720"))
            }
            guard limit.allows(size) else { return .failure(ValueProblem("\(q) is too large; allowed \(allowed)")) }
            return .success(.size(size))
        case .bytes(let range):
            let lower = text.lowercased()
            if lower.hasSuffix("kib") || lower.hasSuffix("mib") || lower.hasSuffix("gib") {
                return .failure(ValueProblem("\(q) uses a binary unit; use B, kB, MB or GB (1 kB = 1000 B); allowed \(allowed)"))
            }
            switch Units.parseQuantity(text, units: Units.byteUnits, what: "size in bytes", example: "500MB") {
            case .failure(let p): return .failure(ValueProblem("\(p.message); allowed \(allowed)"))
            case .success(let n0):
                guard let n = n0, range.contains(n) else {
                    return .failure(ValueProblem("\(q) is out of range; allowed \(allowed)"))
                }
                return .success(.bytes(n))
            }
        case .choice(let choices):
            let lower = text.lowercased()
            if let found = choices.first(where: { $0.lowercased() == lower }) { return .success(.choice(found)) }
            var message = "\(q) is not one of \(allowed)"
            if let close = Spelling.closest(to: text, among: choices) { message += "; did you mean '\(close)'?" }
            return .failure(ValueProblem(message))
        case .choiceList(let choices):
            var picked: [String] = []
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                let word = String(item).trimmingSpaces()
                guard let found = choices.first(where: { $0.lowercased() == word.lowercased() }) else {
                    var message = word.isEmpty ? "\(q) has an empty item; use \(allowed)" : "'\(word)' in \(q) is not one of \(Units.list(choices))"
                    if !word.isEmpty, let close = Spelling.closest(to: word, among: choices) { message += "; did you mean '\(close)'?" }
                    return .failure(ValueProblem(message))
                }
                guard !picked.contains(found) else { return .failure(ValueProblem("\(q) names \(found) twice; use \(allowed)")) }
                picked.append(found)
            }
            return .success(.choices(picked))
        case .string(let allowsEmpty, let most), .path(let allowsEmpty, let most):
            if text.isEmpty, !allowsEmpty {
                return .failure(ValueProblem("an empty value is not allowed; use \(allowed)"))
            }
            let isPath = if case .path = self { true } else { false }
            let length = isPath ? text.utf8.count : text.count
            guard length <= most else {
                return .failure(ValueProblem("a value of \(length) \(isPath ? "bytes" : "characters") is too long; use \(allowed)"))
            }
            return .success(.text(text))
        case .media:
            switch MediaSize.parse(text) {
            case .success: return .success(.text(text))
            case .failure(let p): return .failure(ValueProblem("\(p.message); use \(allowed)"))
            }
        case .color:
            guard let color = RGBColor(parsing: text) else {
                var message = "\(q) is not a colour; use \(allowed)"
                if let close = Spelling.closest(to: text, among: RGBColor.named.map(\.name)) {
                    message += "; did you mean '\(close)'?"
                }
                return .failure(ValueProblem(message))
            }
            return .success(.color(color))
        }
    }
}

/// Why a value did not parse: the message after `key: `.
struct ValueProblem: Error, Sendable, Hashable {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Reading and writing numbers with units.
enum Units {
    /// Duration units and their size in milliseconds; matched in any letter case.
    static let durationUnits: [(name: String, scale: Int)] = [("ms", 1), ("s", 1000), ("min", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
    /// Byte units and their size in bytes (decimal); matched in any letter case.
    static let byteUnits: [(name: String, scale: Int)] = [("B", 1), ("kB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000)]

    /// `"a, b or c"`.
    static func list(_ items: [String]) -> String {
        guard let last = items.last else { return "" }
        if items.count == 1 { return last }
        return items.dropLast().joined(separator: ", ") + " or " + last
    }

    /// Milliseconds in the largest unit that divides them exactly: `1500ms`, `3s`, `5min`, `1h`, `0s`;
    /// days from two on (`24h` stays `24h`, `30d`).
    static func formatDuration(_ ms: Int) -> String {
        if ms == 0 { return "0s" }
        for unit in durationUnits.reversed() where ms % unit.scale == 0 && (unit.name != "d" || ms >= 2 * unit.scale) {
            return "\(ms / unit.scale)\(unit.name)"
        }
        return "\(ms)ms"
    }

    /// Bytes in the largest decimal unit that divides them exactly: `500MB`, `1500kB`, `0B`.
    static func formatBytes(_ n: Int) -> String {
        if n == 0 { return "0B" }
        for unit in byteUnits.reversed() where n % unit.scale == 0 { return "\(n / unit.scale)\(unit.name)" }
        return "\(n)B"
    }

    /// Reads `<digits>[.<digits>][spaces]<unit>` into an integer count of the base unit.
    /// `.success(nil)` means the number is too large for an `Int` (report as out of range).
    static func parseQuantity(_ text: String, units: [(name: String, scale: Int)], what: String,
                              example: String) -> Result<Int?, ValueProblem> {
        let q = "'\(text)'"
        let unitNames = list(units.map(\.name))
        let scalars = Array(text.unicodeScalars)
        func isDigit(_ s: Unicode.Scalar) -> Bool { s >= "0" && s <= "9" }
        if scalars.first == "-" { return .failure(ValueProblem("\(q) is negative")) }
        var i = 0
        var whole: [Unicode.Scalar] = [], fraction: [Unicode.Scalar] = []
        while i < scalars.count, isDigit(scalars[i]) { whole.append(scalars[i]); i += 1 }
        guard !whole.isEmpty else {
            return .failure(ValueProblem("\(q) is not a \(what); use a number with a unit, like \(example)"))
        }
        if i < scalars.count, scalars[i] == "." {
            i += 1
            while i < scalars.count, isDigit(scalars[i]) { fraction.append(scalars[i]); i += 1 }
            if fraction.isEmpty {
                return .failure(ValueProblem("\(q) is not a \(what); use a number with a unit, like \(example)"))
            }
        }
        while i < scalars.count, scalars[i] == " " || scalars[i] == "\t" { i += 1 }
        let unitText = String(String.UnicodeScalarView(scalars[i...]))
        if unitText.isEmpty {
            return .failure(ValueProblem("\(q) has no unit; use one of \(unitNames), like \(example)"))
        }
        guard let unit = units.first(where: { $0.name.lowercased() == unitText.lowercased() }) else {
            if unitText.unicodeScalars.contains(where: { isDigit($0) || $0 == "." }) {
                return .failure(ValueProblem("\(q) is not a \(what); use a number with a unit, like \(example)"))
            }
            return .failure(ValueProblem("\(q) has an unknown unit '\(unitText)'; use \(unitNames)"))
        }
        // Exact integer arithmetic: whole * scale + fraction * scale / 10^digits.
        guard whole.count <= 18, let w = Int(String(String.UnicodeScalarView(whole))) else { return .success(nil) }
        let (scaledWhole, overflow) = w.multipliedReportingOverflow(by: unit.scale)
        if overflow { return .success(nil) }
        var fractionCount = 0
        if !fraction.isEmpty {
            // Trailing zeros carry no precision: 1.500s is 1.5s.
            while fraction.last == "0" { fraction.removeLast() }
            if fraction.count > 9 {
                return .failure(ValueProblem("\(q) has more decimals than a \(units[0].name == "ms" ? "millisecond" : "byte") can hold"))
            }
            if !fraction.isEmpty, let f = Int(String(String.UnicodeScalarView(fraction))) {
                var denominator = 1
                for _ in fraction { denominator *= 10 }
                let numerator = f * unit.scale
                if numerator % denominator != 0 {
                    let base = units[0].name == "ms" ? "a millisecond" : "a byte"
                    return .failure(ValueProblem("\(q) is finer than \(base); the smallest step is 1\(units[0].name)"))
                }
                fractionCount = numerator / denominator
            }
        }
        let (total, overflow2) = scaledWhole.addingReportingOverflow(fractionCount)
        return .success(overflow2 ? nil : total)
    }
}
