extension Schema {
    /// The settings as one Markdown table for docs/settings.md: key, type, default, what is allowed, how a
    /// reload applies it (``ReloadRule/tableText``), description, in file order. `|` in a cell is
    /// escaped; an empty default reads *(empty)*. Ends with `\n`.
    /// Regenerate it there (and the default config) with `tools/regen-generated`.
    public static func markdownTable() -> String {
        func cell(_ s: String) -> String { s.replacingAll("|", with: "\\|") }
        var out = "| Key | Type | Default | Allowed | On reload | Description |\n|---|---|---|---|---|---|\n"
        for spec in settings {
            let def = spec.defaultText.isEmpty ? "*(empty)*" : "`\(cell(spec.defaultText))`"
            out += "| `\(spec.key)` | \(spec.type.name) | \(def) | \(cell(spec.allowed)) | \(spec.reload.tableText) | \(cell(spec.description)) |\n"
        }
        return out
    }

    /// One setting described for an operator, several lines:
    /// `button.debounce = 30ms` (the default), the description, `type: duration; allowed: 1ms to 1s`.
    public static func describe(_ spec: SettingSpec) -> String {
        let def = spec.defaultText.isEmpty ? "(empty)" : spec.defaultText
        return """
            \(spec.key) (default: \(def))
                \(spec.description)
                Type: \(spec.type.name). Allowed: \(spec.allowed).
                On reload: \(spec.reload.onReload).
            """
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement` (no Foundation in the core).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
