import BoothControl
import BoothCore
import BoothLayout
import BoothPorts

/// Where the daemon's settings come from, read the one way every reader uses: the config file
/// (`--config`, required when given), the overrides (`--set`, and `--simulate`'s own before them),
/// then the soak hook that goes below the schema's floors (`--test-review`). The start, `status`'s
/// comparison with the file, a reload (SIGHUP, `photoboothctl reload`) and the gallery's `configured`
/// all call ``load()``.
public struct DaemonConfig: Sendable {
    /// The config file (`--config`, or the default path).
    public let path: String
    /// True when the file was named (`--config`): then a missing file is an error, not the defaults.
    public let required: Bool
    /// `section.key` = value, in the order applied (a later one wins).
    public let overrides: [(key: String, value: String)]
    /// The soak hook `--test-review`: the review lasts this many ms, below `session.review`'s 1 s floor; nil: the setting's.
    public let reviewMilliseconds: Int?

    /// Each field as described above.
    public init(path: String, required: Bool, overrides: [(key: String, value: String)], reviewMilliseconds: Int? = nil) {
        self.path = path
        self.required = required
        self.overrides = overrides
        self.reviewMilliseconds = reviewMilliseconds
    }

    /// Reads and validates the settings (``loadSettings(path:required:overrides:)``) and applies the test hooks.
    /// - Returns: the settings, the notes and warnings for the log, where each setting came from.
    /// - Throws: ``ConfigLoadError``: the file unreadable, or every problem in it and in the overrides.
    public func load() throws(ConfigLoadError) -> (settings: Settings, notes: [String], warnings: [Diagnostic], sources: SettingSources) {
        let loaded = try loadSettings(path: path, required: required, overrides: overrides)
        var s = loaded.settings
        if let ms = reviewMilliseconds { s.session.reviewMilliseconds = ms }
        return (s, loaded.notes, loaded.warnings, loaded.sources)
    }

    /// The settings as the file reads now, nothing logged: `status` compares them with those in force
    /// (``RuntimeOptions/configReader``). An unreadable file is one diagnostic naming it.
    public func read() -> Result<Settings, SettingsError> {
        do {
            return .success(try load().settings)
        } catch {
            return .failure(settingsError(error))
        }
    }

    /// The settings for a reload: as ``read()``, and the `[picture]` layout's files checked too
    /// (``pictureDiagnostics(_:sources:)``, located where each key was set); an error there refuses
    /// the reload, the warnings are logged.
    public func reload(log: Logger) -> Result<Settings, SettingsError> {
        do {
            let reloaded = try load()
            // Located where each key was set (a --set flag, not the file), before the runtime makes the composer.
            let picture = pictureDiagnostics(reloaded.settings, sources: reloaded.sources)
            if picture.contains(where: { $0.severity == .error }) { return .failure(SettingsError(diagnostics: picture)) }
            for w in reloaded.warnings + picture { log.warning(w.description) }
            return .success(reloaded.settings)
        } catch {
            return .failure(settingsError(error))
        }
    }

    private func settingsError(_ error: ConfigLoadError) -> SettingsError {
        if case let .invalid(e) = error { return e }
        return SettingsError(diagnostics: [Diagnostic(file: path, line: nil, key: nil, message: "\(error)", severity: Diagnostic.Severity.error)])
    }
}
