/// One problem found in a config file or in command-line overrides, located by file and line.
///
/// `description` is the compiler-style form operators and editors understand:
/// `"/etc/photobooth/photobooth.conf:12: button.active_low: 'ture' is not a boolean; use true or false (…)"`
/// (warnings read `file:line: warning: message`; a diagnostic without a line reads `file: message`, e.g.
/// `"--set session.shots=9: session.shots: '9' is out of range; allowed 1 to 4 shots"`).
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How bad a problem is: an error makes the whole file invalid, a warning does not.
    public enum Severity: String, Sendable, Hashable {
        case error
        case warning
    }

    /// The file name as given to the parser; for a command-line override, the flag: `--set key=value`.
    public var file: String
    /// 1-based line number in `file`; nil when the problem has no line (command-line overrides, keys at their default).
    public var line: Int?
    /// The full `section.key` the problem is about, when there is one.
    public var key: String?
    /// What is wrong and what is allowed, starting with the key when there is one.
    public var message: String
    /// `.error` makes the settings invalid; `.warning` is only reported.
    public var severity: Severity

    public init(file: String, line: Int?, key: String? = nil, message: String, severity: Severity = .error) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        self.severity = severity
    }

    /// `file:line: message`, with `warning: ` before the message for warnings.
    public var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        let prefix = severity == .warning ? "warning: " : ""
        return "\(location): \(prefix)\(message)"
    }
}

/// Settings that did not validate: every diagnostic found (errors and warnings), in line order.
public struct SettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// All problems found, not just the first.
    public var diagnostics: [Diagnostic]

    public init(diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }

    /// Only the `.error` diagnostics.
    public var errors: [Diagnostic] { diagnostics.filter { $0.severity == .error } }

    /// One diagnostic per line, in `file:line: message` form.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
