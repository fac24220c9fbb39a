/// The result of setting one key in a config file's text: the new text and what changed.
public struct ConfigEdit: Sendable, Hashable {
    /// The whole file after the edit; every line but the edited (or added) one is byte-identical.
    public var text: String
    /// The full `section.key` that was set.
    public var key: String
    /// The value as written.
    public var value: String
    /// 1-based line of the entry in `text`.
    public var line: Int
    /// The value the line had before, nil when the key was added.
    public var previous: String?
    /// Warnings about the edited file (errors make the edit fail instead).
    public var warnings: [Diagnostic]
}

/// Why a key could not be set. `description` is the message for the operator.
public enum ConfigEditError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No such key in the schema; `suggestion` is the closest known key.
    case unknownKey(String, suggestion: String?)
    /// The value does not fit the key's type or range; the message names the key and what is allowed.
    case invalidValue(String)
    /// After the edit the file still has errors (elsewhere, or a duplicate of the key); every one is listed.
    case invalidFile(SettingsError)

    public var description: String {
        switch self {
        case let .unknownKey(key, suggestion):
            return "unknown key '\(key)'" + (suggestion.map { "; did you mean '\($0)'?" }
                                              ?? "; keys are written section.key, like button.debounce (see 'photoboothctl config describe')")
        case let .invalidValue(message):
            return message
        case let .invalidFile(error):
            return "the file would not be valid, nothing written:\n\(error)"
        }
    }
}

extension Settings {
    /// Sets `key` to `value` in a config file's text, like an editor would: the value of the key's line is
    /// replaced in place (comments, spacing, order and every other line stay byte-identical); a key not yet in
    /// the file is added at the end of its section (a new section at the end when the file has none).
    /// The value is checked first, then the whole edited file: the edit fails rather than produce an invalid file.
    /// - Parameters:
    ///   - text: the file's contents (`Schema.defaultConfigText()` for a file that does not exist yet).
    ///   - file: the name diagnostics use.
    ///   - key: full `section.key`.
    ///   - value: as it would be written after `=`; leading and trailing blanks are dropped. A value that has a
    ///     `#` after a space (or starts with `#`) is written in double quotes, so it does not read as a comment.
    /// - Returns: the edit, or why not: ``ConfigEditError``.
    public static func edit(text: String, file: String, key: String, value rawValue: String) -> Result<ConfigEdit, ConfigEditError> {
        guard let spec = Schema.spec(for: key) else {
            return .failure(.unknownKey(key, suggestion: Schema.closestKey(to: key)))
        }
        if ConfigDocument.hasLineBreak(rawValue) {
            return .failure(.invalidValue("\(key): a value must fit on one line"))
        }
        var value = trimmed(rawValue)
        if ConfigDocument.needsQuotes(value) {
            // Written bare, ` #…` would read back as a comment.
            guard !value.utf8.contains(UInt8(ascii: "\"")) else {
                return .failure(.invalidValue("\(key): a value with '#' after a space is written in double quotes, "
                                              + "and then cannot itself contain '\"'"))
            }
            value = "\"\(value)\""
        }
        var scratch = Settings.defaults
        if case let .failure(problem) = apply(spec, value: unquoted(value), to: &scratch) {
            return .failure(.invalidValue(problem.message))
        }
        let document = ConfigDocument(parsing: text)
        let existing = document.entries(section: spec.section, key: spec.name)
        let edited: ConfigDocument?
        if let first = existing.first {
            edited = document.replacingValue(onLine: first.number, with: value)
        } else {
            edited = document.inserting(key: spec.name, value: value, inSection: spec.section)
        }
        guard let edited else { return .failure(.invalidValue("\(key): a value must fit on one line")) }
        let check = Settings.check(text: edited.text, file: file)
        guard check.isValid else { return .failure(.invalidFile(SettingsError(diagnostics: check.diagnostics.filter { $0.severity == .error }))) }
        let line = edited.entries(section: spec.section, key: spec.name).first?.number ?? 0
        return .success(ConfigEdit(text: edited.text, key: key, value: value, line: line,
                                   previous: existing.first?.value,
                                   warnings: check.diagnostics.filter { $0.severity == .warning }))
    }

    /// Which keys `text` sets, with their lines: full `section.key` → first line number. Keys outside known
    /// sections or unknown to the schema are left out.
    public static func keysSet(inText text: String) -> [String: Int] {
        var out: [String: Int] = [:]
        for line in ConfigDocument(parsing: text).lines {
            guard let section = line.section, let key = line.key else { continue }
            let full = "\(section).\(key)"
            if Schema.spec(for: full) != nil, out[full] == nil { out[full] = line.number }
        }
        return out
    }
}
