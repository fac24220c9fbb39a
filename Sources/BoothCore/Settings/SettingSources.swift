/// Where a setting's value came from, so a diagnostic points where the operator changes it.
public enum SettingOrigin: Sendable, Hashable, CustomStringConvertible {
    /// A line of a config file.
    case file(String, line: Int)
    /// A command-line override: `--set key=value`.
    case commandLine(key: String, value: String)
    /// Not set anywhere: the schema's default (changed in `file`, the config file that was read or would be).
    case defaultValue(file: String)

    /// `/etc/photobooth/photobooth.conf:12`, `--set session.shots=4`, or `the default`.
    public var description: String {
        switch self {
        case let .file(file, line): "\(file):\(line)"
        case let .commandLine(key, value): "--set \(key)=\(value)"
        case .defaultValue: "the default"
        }
    }

    /// The diagnostic's location: the file and line, the `--set key=value` flag (no line), or the config file (no line).
    var location: (file: String, line: Int?) {
        switch self {
        case let .file(file, line): (file, line)
        case .commandLine: (description, nil)
        case let .defaultValue(file): (file, nil)
        }
    }
}

/// Where each setting of a `Settings` value came from: a line of the config file, a command-line
/// override, or the default. Built by `Settings.check(text:file:overrides:)`; diagnostics about a
/// key (or a combination of keys) are located with it.
public struct SettingSources: Sendable, Hashable {
    /// The config file read (or that would be read: its path when it does not exist).
    public var file: String
    /// Full `section.key` → where its value came from; a key not listed has its default.
    public var origins: [String: SettingOrigin]

    /// Every key at its default, to be changed in `file`.
    public init(file: String) {
        self.file = file
        origins = [:]
    }

    /// The keys set in a config file's `text` at their first line (as `Settings.keysSet(inText:)`).
    public init(file: String, text: String?) {
        self.init(file: file)
        for entry in text.map(Settings.keysSet(inText:)) ?? [:] { origins[entry.key] = .file(file, line: entry.value) }
    }

    /// Where `key`'s value came from.
    public func origin(of key: String) -> SettingOrigin { origins[key] ?? .defaultValue(file: file) }

    /// A diagnostic located where `key` was set: its file and line, the `--set key=value` flag, or the
    /// config file without a line when `key` has its default.
    public func diagnostic(key: String, message: String, severity: Diagnostic.Severity = .error) -> Diagnostic {
        let at = origin(of: key).location
        return Diagnostic(file: at.file, line: at.line, key: key, message: message, severity: severity)
    }

    /// A diagnostic about a combination of `keys`, located at the first of them that was set (in a file
    /// or on the command line), or at the first when all have their defaults.
    public func diagnostic(keys: [String], message: String, severity: Diagnostic.Severity = .error) -> Diagnostic {
        let key = keys.first { origins[$0] != nil } ?? keys.first ?? ""
        return diagnostic(key: key, message: message, severity: severity)
    }

    /// `key = value (where)` for a message naming a second key: `session.shots = 4 (booth.conf:25)`,
    /// `session.shots = 4 (--set session.shots=4)`, `session.shots = 1 (the default)`.
    public func cite(_ key: String, in settings: Settings) -> String {
        let value = settings.text(forKey: key) ?? ""
        return "\(key) = \(value.isEmpty ? "(empty)" : value) (\(origin(of: key)))"
    }
}
