/// The outcome of reading a config file: the settings when it is valid, every diagnostic, and the
/// lexed document (for tools that edit lines in place).
public struct ConfigCheck: Sendable {
    /// The settings (defaults overridden by the file) when there is no `.error` diagnostic; else nil.
    public var settings: Settings?
    /// Every problem found, errors and warnings, in line order (those without a line, from `--set` or about
    /// keys at their defaults, last).
    public var diagnostics: [Diagnostic]
    /// The file as lexed.
    public var document: ConfigDocument
    /// Where each setting came from (a line of the file, a `--set`, or the default), to locate later diagnostics.
    public var sources: SettingSources

    /// True when there is no `.error` diagnostic.
    public var isValid: Bool { settings != nil }
}

extension Settings {
    /// Reads a config file's text: `Settings.defaults` with every key in the file applied.
    /// Fails with every error and warning found (not just the first), each as `file:line: message`;
    /// on success, warnings are dropped (use `check(text:file:)` to see them).
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - file: the name diagnostics give the file (e.g. `/etc/photobooth/photobooth.conf`).
    public static func parse(text: String, file: String) -> Result<Settings, SettingsError> {
        let result = check(text: text, file: file)
        if let settings = result.settings { return .success(settings) }
        return .failure(SettingsError(diagnostics: result.diagnostics))
    }

    /// Validates a config file's text and reports everything: unknown sections and keys (with the closest
    /// known name), values of the wrong type or out of range, duplicate keys, keys outside any section,
    /// malformed lines, and combinations of keys that do not work together (``combinationDiagnostics(sources:)``).
    /// A value is read to the end of its line or to a comment after it (` # …`); one wrapped in double quotes
    /// (`"…"`, which may hold ` #`) is unquoted.
    public static func check(text: String, file: String) -> ConfigCheck {
        check(text: text, file: file, overrides: [])
    }

    /// Validates the settings the daemon would run with: the file's `text` (nil when there is no file:
    /// the defaults), then command-line `overrides` in order (`section.key`, value; a later one for the
    /// same key wins), then the combinations of the result. Diagnostics of an override are located as
    /// `--set key=value` (no line); those of a combination where its first key was set.
    public static func check(text: String?, file: String, overrides: [(key: String, value: String)]) -> ConfigCheck {
        let document = ConfigDocument(parsing: text ?? "")
        var settings = Settings.defaults
        var sources = SettingSources(file: file)
        var diagnostics: [Diagnostic] = []
        var firstLineOfKey: [String: Int] = [:]
        var firstLineOfSection: [String: Int] = [:]
        let knownSections = Schema.sections.map(\.name)

        for line in document.lines {
            func report(_ key: String?, _ message: String, _ severity: Diagnostic.Severity = .error) {
                diagnostics.append(Diagnostic(file: file, line: line.number, key: key, message: message, severity: severity))
            }
            switch line.kind {
            case .blank, .comment:
                continue
            case .malformed(let reason):
                report(nil, reason)
            case .section(let name):
                if !knownSections.contains(name) {
                    var message = "unknown section '[\(name)]'"
                    if let close = Spelling.closest(to: name, among: knownSections) {
                        message += "; did you mean '[\(close)]'?"
                    } else {
                        message += "; sections are " + Units.list(knownSections.map { "[\($0)]" })
                    }
                    report(nil, message)
                } else if let first = firstLineOfSection[name] {
                    report(nil, "section '[\(name)]' appears again (first at line \(first)); its keys are merged", .warning)
                } else {
                    firstLineOfSection[name] = line.number
                }
            case .entry(let key, let rawValue):
                guard let section = line.section else {
                    report(nil, outsideSectionMessage(key))
                    continue
                }
                // Keys of an unknown section were already covered by that section's diagnostic.
                guard knownSections.contains(section) else { continue }
                let fullKey = "\(section).\(key)"
                guard let spec = Schema.spec(for: fullKey) else {
                    report(fullKey, unknownKeyMessage(key, inSection: section))
                    continue
                }
                if let first = firstLineOfKey[fullKey] {
                    report(fullKey, "duplicate key '\(fullKey)'; first set at line \(first)")
                    continue
                }
                firstLineOfKey[fullKey] = line.number
                sources.origins[fullKey] = .file(file, line: line.number)
                switch apply(spec, value: unquoted(rawValue), to: &settings) {
                case .failure(let problem):
                    report(fullKey, problem.message)
                case .success(let warning?):
                    report(fullKey, warning, .warning)
                case .success(nil):
                    break
                }
            }
        }
        diagnostics += settings.apply(overrides: overrides, sources: &sources)
        if !diagnostics.contains(where: { $0.severity == .error }) {
            diagnostics += settings.combinationDiagnostics(sources: sources)
            // In line order, as the file's own; those without a line (a --set, a default) after them.
            diagnostics = diagnostics.enumerated().sorted { a, b in
                let la = a.element.line ?? Int.max, lb = b.element.line ?? Int.max
                return la != lb ? la < lb : a.offset < b.offset
            }.map(\.element)
        }
        let valid = !diagnostics.contains { $0.severity == .error }
        return ConfigCheck(settings: valid ? settings : nil, diagnostics: diagnostics, document: document, sources: sources)
    }

    /// These settings with `overrides` applied in order (a later one for the same key wins), each value
    /// validated as in a config file; diagnostics are located as `--set key=value` and have no line.
    /// Combinations are not checked here (this base may not be a whole configuration): use
    /// `check(text:file:overrides:)` for the settings a daemon runs with.
    /// - Parameter overrides: full `section.key` and value, e.g. `("storage.dir", "./photos")`.
    public func with(overrides: [(key: String, value: String)]) -> Result<Settings, SettingsError> {
        var settings = self
        var sources = SettingSources(file: "")
        let diagnostics = settings.apply(overrides: overrides, sources: &sources)
        if diagnostics.contains(where: { $0.severity == .error }) {
            return .failure(SettingsError(diagnostics: diagnostics))
        }
        return .success(settings)
    }

    /// Applies `overrides` in order, recording each key's origin as `--set key=value`; returns their diagnostics.
    mutating func apply(overrides: [(key: String, value: String)], sources: inout SettingSources) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for (key, value) in overrides {
            let origin = SettingOrigin.commandLine(key: key, value: value)
            func report(_ message: String, _ severity: Diagnostic.Severity = .error) {
                diagnostics.append(Diagnostic(file: origin.description, line: nil, key: key, message: message, severity: severity))
            }
            guard let spec = Schema.spec(for: key) else {
                var message = "unknown key '\(key)'"
                if let close = Schema.closestKey(to: key) {
                    message += "; did you mean '\(close)'?"
                } else {
                    message += "; keys are written section.key, like button.debounce"
                }
                report(message)
                continue
            }
            switch Settings.apply(spec, value: Settings.trimmed(value), to: &self) {
            case .failure(let problem): report(problem.message)
            case .success(let warning?): report(warning, .warning); sources.origins[key] = origin
            case .success(nil): sources.origins[key] = origin
            }
        }
        return diagnostics
    }

    /// Parses `value` for `spec` and stores it. Success carries an optional warning message; failure the
    /// full message (starting with the key), with the inline-comment hint when it applies.
    static func apply(_ spec: SettingSpec, value: String, to settings: inout Settings) -> Result<String?, ValueProblem> {
        switch spec.parse(value) {
        case .success(let parsed):
            spec.write(&settings, parsed)
            if hasInlineComment(value) {
                return .success("\(spec.key): '\(value)' contains a ';' after a space, which is kept as part of the value; a comment after a value starts with ' #'")
            }
            return .success(nil)
        case .failure(let problem):
            var message = "\(spec.key): \(problem.message)"
            if hasInlineComment(value) {
                message += " (a ';' after a value is part of the value; a comment after a value starts with ' #')"
            }
            return .failure(ValueProblem(message))
        }
    }

    /// True when `value` has ` ;` (or a tab before it): what an inline comment in another INI dialect looks
    /// like. (` #` starts a comment: the lexer has cut it off already, unless the value is quoted.)
    static func hasInlineComment(_ value: String) -> Bool {
        var previousBlank = false
        for b in value.utf8 {
            if previousBlank, b == UInt8(ascii: ";") { return true }
            previousBlank = b == 0x20 || b == 0x09
        }
        return false
    }

    /// `"…"` without its quotes; any other text unchanged.
    static func unquoted(_ value: String) -> String {
        let u = value.utf8
        if u.count >= 2, u.first == UInt8(ascii: "\""), u.last == UInt8(ascii: "\"") {
            return String(decoding: u.dropFirst().dropLast(), as: UTF8.self)
        }
        return value
    }

    /// `value` without leading and trailing spaces and tabs.
    static func trimmed(_ value: String) -> String {
        let u = Array(value.utf8)
        var lo = 0, hi = u.count
        while lo < hi, ConfigDocument.isBlank(u[lo]) { lo += 1 }
        while hi > lo, ConfigDocument.isBlank(u[hi - 1]) { hi -= 1 }
        return String(decoding: u[lo..<hi], as: UTF8.self)
    }

    static func outsideSectionMessage(_ key: String) -> String {
        if let spec = Schema.spec(for: key) {
            return "'\(key)' is outside any section; write '\(spec.name) = …' under [\(spec.section)]"
        }
        let homes = Schema.settings.filter { $0.name == key }
        if homes.count == 1, let home = homes.first {
            return "'\(key)' is outside any section; put it under [\(home.section)] ('\(home.key)')"
        }
        return "'\(key)' is outside any section; start a section first, like [\(Schema.sections.first?.name ?? "camera")]"
    }

    static func unknownKeyMessage(_ key: String, inSection section: String) -> String {
        let fullKey = "\(section).\(key)"
        var message = "unknown key '\(fullKey)'"
        // The same name in another section: the line is under the wrong header.
        let elsewhere = Schema.settings.filter { $0.name == key }
        if let spec = Schema.spec(for: key) {
            return message + "; '\(key)' belongs under [\(spec.section)] as '\(spec.name) = …'"
        }
        if let home = elsewhere.first {
            return message + "; did you mean '\(home.key)' (under [\(home.section)])?"
        }
        let local = Schema.settings(inSection: section)
        if let close = Spelling.closest(to: key, among: local.map(\.name)) {
            return message + "; did you mean '\(section).\(close)'?"
        }
        if let close = Schema.closestKey(to: fullKey) {
            return message + "; did you mean '\(close)'?"
        }
        message += "; [\(section)] has " + Units.list(local.map(\.name))
        return message
    }
}
