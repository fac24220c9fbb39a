extension Schema {
    /// The commented default config file, generated from `settings`: a header explaining the syntax and
    /// units, then each section with each key's description, what is allowed and `key = default`.
    /// It parses back to `Settings.defaults` with no diagnostics. Lines are at most 80 columns where the
    /// words allow, end with `\n`, and carry no trailing blanks.
    public static func defaultConfigText() -> String {
        var out: [String] = []
        out += comment("""
            Photobooth configuration (\(defaultConfigPath)). Generated from the settings schema \
            ('photoboothctl config init'); every key is listed at its default.
            """)
        out.append("#")
        out += comment("""
            Syntax: [section] headers, 'key = value' lines, and comments: lines starting with # or ;, or \
            a # after a space at the end of a value (line = GPIO17   # the button). A value that needs ' #' \
            goes in double quotes ("Party #1"); a ; after a value is part of it. A key left out keeps its default.
            """)
        out += comment("""
            Durations carry their unit: 40ms, 3s, 5min, 1h (decimals like 1.5s are fine). Sizes are WxH in \
            pixels, like 1280x720. Space is written with a decimal unit: 500MB (B, kB, MB, GB; 1 kB = 1000 B).
            """)
        for section in sections {
            out.append("")
            out.append("[\(section.name)]")
            out += comment(section.description)
            for spec in settings(inSection: section.name) {
                out.append("")
                out += comment(spec.description)
                out += comment("Allowed: \(spec.allowed).")
                out.append(spec.defaultText.isEmpty ? "\(spec.name) =" : "\(spec.name) = \(spec.defaultText)")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// `text` as `# `-comment lines, word-wrapped at 80 columns.
    static func comment(_ text: String, width: Int = 80) -> [String] {
        var lines: [String] = []
        var current = "#"
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if current.count > 1, current.count + 1 + word.count > width {
                lines.append(current)
                current = "#"
            }
            current += " " + word
        }
        lines.append(current)
        return lines
    }
}
