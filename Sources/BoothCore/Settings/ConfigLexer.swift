/// One line of an INI config file, as written, with what the lexer found in it.
///
/// `text` is the line exactly as in the file, without its `\n` (a `\r` of a CRLF file stays in it),
/// so a document can be written back byte-identical. Ranges are UTF-8 byte offsets into `text`.
public struct ConfigLine: Sendable, Hashable {
    /// What a line is.
    public enum Kind: Sendable, Hashable {
        /// Empty or only whitespace.
        case blank
        /// A full-line comment: the first non-blank character is `#` or `;`.
        case comment
        /// `[name]`; `name` is trimmed.
        case section(name: String)
        /// `key = value`; both trimmed. The value runs to the end of the line or to a comment: a `#` after a
        /// space or tab (`key = value   # note`). A value in double quotes runs to its closing quote, so
        /// `"Anna #1"` keeps its `#`; a `;` is always part of the value.
        case entry(key: String, value: String)
        /// Anything else; `reason` says what was expected.
        case malformed(reason: String)
    }

    /// 1-based line number.
    public var number: Int
    /// The raw line, without the `\n` that ended it.
    public var text: String
    /// What the line is.
    public var kind: Kind
    /// The section the line is in (for a section header, the section it opens); nil before the first header.
    public var section: String?
    /// For `.entry`: where the key is in `text`, as UTF-8 offsets.
    public var keyRange: Range<Int>?
    /// For `.entry`: where the trimmed value is in `text`, as UTF-8 offsets (empty range where the value
    /// would start for an empty value), without a comment after it. Replacing exactly these bytes edits
    /// the value in place and keeps the comment.
    public var valueRange: Range<Int>?

    /// The entry's key, when this line is an entry.
    public var key: String? {
        if case .entry(let key, _) = kind { return key }
        return nil
    }

    /// The entry's value, when this line is an entry.
    public var value: String? {
        if case .entry(_, let value) = kind { return value }
        return nil
    }
}

/// An INI config file as a list of lines, with the lexer's reading of each.
///
/// The syntax: `[section]` headers, `key = value` entries, full-line comments starting with `#` or `;`,
/// blank lines. A value runs to the end of its line, or to a comment after it (a `#` after a space or tab:
/// `line = GPIO17   # the button`), and is trimmed of spaces and tabs; a value that needs ` #` is written
/// in double quotes (`"Party #1"`: the value runs to the closing quote, which the parser removes). There
/// are no continuation lines. `text` reassembles the file byte for byte.
public struct ConfigDocument: Sendable, Hashable {
    /// Every line of the file, in order; a final `\n` does not start an extra line.
    public var lines: [ConfigLine]
    /// True when the file ended with `\n` (or was empty).
    public var endsWithNewline: Bool

    /// Splits `text` into lines on `\n` and reads each one. A UTF-8 byte order mark stays in line 1's
    /// raw text but is not part of its content.
    public init(parsing text: String) {
        let bytes = Array(text.utf8)
        var raw: [String] = []
        var lineStart = 0
        for (i, b) in bytes.enumerated() where b == 0x0A {
            raw.append(String(decoding: bytes[lineStart..<i], as: UTF8.self))
            lineStart = i + 1
        }
        endsWithNewline = lineStart == bytes.count
        if lineStart < bytes.count { raw.append(String(decoding: bytes[lineStart...], as: UTF8.self)) }
        var section: String?
        var lines: [ConfigLine] = []
        lines.reserveCapacity(raw.count)
        for (index, lineText) in raw.enumerated() {
            let skip = index == 0 && lineText.utf8.starts(with: ConfigDocument.byteOrderMark) ? 3 : 0
            lines.append(ConfigDocument.lex(lineText, number: index + 1, skipping: skip, section: &section))
        }
        self.lines = lines
    }

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The file, byte-identical to what was parsed unless lines were changed.
    public var text: String {
        var out = lines.map(\.text).joined(separator: "\n")
        if endsWithNewline, !lines.isEmpty { out += "\n" }
        return out
    }

    /// The line with this 1-based number, if there is one.
    public func line(_ number: Int) -> ConfigLine? {
        lines.indices.contains(number - 1) ? lines[number - 1] : nil
    }

    /// The entry lines for `section` and `key` (more than one when the key is duplicated), in order.
    public func entries(section: String, key: String) -> [ConfigLine] {
        lines.filter { $0.section == section && $0.key == key }
    }

    /// A copy with the value of entry line `number` replaced by `value`, every other byte unchanged
    /// (the key, the spacing around `=`, a `\r` at the end, and all other lines). Nil when line `number`
    /// is not an entry or `value` contains a line break.
    public func replacingValue(onLine number: Int, with value: String) -> ConfigDocument? {
        guard let old = line(number), let range = old.valueRange, !ConfigDocument.hasLineBreak(value) else { return nil }
        let bytes = Array(old.text.utf8)
        var new = Array(value.utf8)
        // An empty value right before a comment (`key =   # note`) is the empty range at its `#`: a blank after the
        // new value keeps the `#` a comment's, not part of the value.
        if range.isEmpty, !new.isEmpty, range.upperBound < bytes.count, bytes[range.upperBound] == UInt8(ascii: "#") { new.append(0x20) }
        let edited = Array(bytes[..<range.lowerBound]) + new + Array(bytes[range.upperBound...])
        var section = old.section
        let skip = number == 1 && bytes.starts(with: ConfigDocument.byteOrderMark) ? 3 : 0
        var copy = self
        copy.lines[number - 1] = ConfigDocument.lex(String(decoding: edited, as: UTF8.self), number: number,
                                                    skipping: skip, section: &section)
        return copy
    }

    /// A copy with `key = value` (`key =` for an empty value) added to `section`: right after the
    /// section's last entry (or its header), or, when the file has no such section, in a new `[section]`
    /// at the end after a blank line. Every existing line stays byte-identical; in a file with CRLF lines the
    /// new lines end with CRLF too. Nil when `value` or
    /// `key` contains a line break.
    public func inserting(key: String, value: String, inSection sectionName: String) -> ConfigDocument? {
        guard !ConfigDocument.hasLineBreak(value), !ConfigDocument.hasLineBreak(key) else { return nil }
        var texts = lines.map(\.text)
        // In a CRLF file, new lines end with CRLF too.
        let cr = lines.contains { $0.text.utf8.last == 0x0D } ? "\r" : ""
        let entry = (value.isEmpty ? "\(key) =" : "\(key) = \(value)") + cr
        let anchor = lines.last { line in
            guard line.section == sectionName else { return false }
            switch line.kind {
            case .entry, .section: return true
            case .blank, .comment, .malformed: return false
            }
        }
        if let anchor {
            texts.insert(entry, at: anchor.number)
        } else {
            if let last = lines.last, last.kind != .blank { texts.append(cr) }
            texts.append("[\(sectionName)]" + cr)
            texts.append(entry)
        }
        let joined = texts.joined(separator: "\n")
        return ConfigDocument(parsing: endsWithNewline || lines.isEmpty ? joined + "\n" : joined)
    }

    static func hasLineBreak(_ s: String) -> Bool { s.utf8.contains { $0 == 0x0A || $0 == 0x0D } }

    static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D }

    /// Where the value starting at `lo` ends in `b[..<hi]` (the line's content, trimmed): before a comment
    /// (a `#` whose previous byte is a space or tab; `b[lo - 1]` is the `=` or a blank), trimmed; after the
    /// closing quote of a value that opens with `"` when only blanks or a comment follow that quote. A `#`
    /// that opens the value starts a comment only when a blank or the end follows it: `#ff0000` is a colour.
    static func valueEnd(_ b: [UInt8], from lo: Int, to hi: Int) -> Int {
        let quote = UInt8(ascii: "\""), hash = UInt8(ascii: "#")
        func isBlankOrEnd(_ i: Int) -> Bool { i >= hi || b[i] == 0x20 || b[i] == 0x09 }
        func isCommentStart(_ i: Int) -> Bool {
            b[i] == hash && i > 0 && (b[i - 1] == 0x20 || b[i - 1] == 0x09) && (i > lo || isBlankOrEnd(i + 1))
        }
        if lo < hi, b[lo] == quote, let close = b[(lo + 1)..<hi].firstIndex(of: quote) {
            var rest = close + 1
            while rest < hi, isBlank(b[rest]) { rest += 1 }
            if rest == hi || isCommentStart(rest) { return close + 1 }
        }
        guard let comment = (lo..<hi).first(where: isCommentStart) else { return hi }
        var end = comment
        while end > lo, isBlank(b[end - 1]) { end -= 1 }
        return end
    }

    /// True when `value` written after `key = ` would not read back as itself: it has a `#` after a space or
    /// tab, or is `#` or starts with `# ` (read as a comment), and is not a value in double quotes that reads
    /// back whole (`"Party #1"` does; `"Party" #1 "Fun"` would read back as `"Party"`).
    public static func needsQuotes(_ value: String) -> Bool {
        let b = Array(value.utf8)
        return valueEnd([0x20] + b, from: 1, to: b.count + 1) != b.count + 1
    }

    /// Reads one line. `skip` bytes at the start (a byte order mark) are not content.
    static func lex(_ text: String, number: Int, skipping skip: Int, section: inout String?) -> ConfigLine {
        let b = Array(text.utf8)
        var lo = skip, hi = b.count
        while lo < hi, isBlank(b[lo]) { lo += 1 }
        while hi > lo, isBlank(b[hi - 1]) { hi -= 1 }
        func string(_ r: Range<Int>) -> String { String(decoding: b[r], as: UTF8.self) }
        var line = ConfigLine(number: number, text: text, kind: .blank, section: section)
        if lo == hi { return line }
        switch b[lo] {
        case UInt8(ascii: "#"), UInt8(ascii: ";"):
            line.kind = .comment
        case UInt8(ascii: "["):
            guard b[hi - 1] == UInt8(ascii: "]"), hi - lo >= 2 else {
                line.kind = .malformed(reason: "a section header must end with ']', like '[camera]'")
                return line
            }
            var nlo = lo + 1, nhi = hi - 1
            while nlo < nhi, isBlank(b[nlo]) { nlo += 1 }
            while nhi > nlo, isBlank(b[nhi - 1]) { nhi -= 1 }
            if nlo == nhi {
                line.kind = .malformed(reason: "a section header needs a name, like '[camera]'")
                return line
            }
            let name = string(nlo..<nhi)
            section = name
            line.section = name
            line.kind = .section(name: name)
        default:
            guard let eq = b[lo..<hi].firstIndex(of: UInt8(ascii: "=")) else {
                line.kind = .malformed(reason: "'\(string(lo..<hi))' is not a setting; write 'key = value', '[section]' or a comment starting with '#'")
                return line
            }
            var khi = eq
            while khi > lo, isBlank(b[khi - 1]) { khi -= 1 }
            if khi == lo {
                line.kind = .malformed(reason: "a key is missing before '='; write 'key = value'")
                return line
            }
            var vlo = eq + 1
            while vlo < hi, isBlank(b[vlo]) { vlo += 1 }
            let vhi = valueEnd(b, from: vlo, to: hi)
            line.kind = .entry(key: string(lo..<khi), value: string(vlo..<vhi))
            line.keyRange = lo..<khi
            line.valueRange = vlo..<vhi
        }
        return line
    }
}
