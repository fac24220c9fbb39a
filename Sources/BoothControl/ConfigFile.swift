import BoothCore
import BoothPorts
import BoothRuntime
import BoothStorage
import BoothSystem
import Glibc

/// Why settings could not be loaded.
public enum ConfigLoadError: Error, CustomStringConvertible {
    /// The file named with `--config` does not exist or cannot be read.
    case unreadable(FileError)
    /// The file (or an override) has errors; every one is listed as `file:line: message`.
    case invalid(SettingsError)

    public var description: String {
        switch self {
        case let .unreadable(e): "cannot read the config file: \(e)"
        case let .invalid(e): e.description
        }
    }

    /// The sysexits code to exit with: EX_NOINPUT or EX_CONFIG.
    public var exitCode: Int32 {
        switch self {
        case .unreadable: ExitCode.noInput
        case .invalid: ExitCode.config
        }
    }
}

/// Reads and validates the settings: defaults, then the file (when it exists, or always when
/// `required`), then `overrides` (`section.key`, value) from the command line, then the combinations
/// of the result (``Settings/combinationDiagnostics(sources:)``: an error refuses the settings, a
/// warning is returned). A problem an override causes is located as `--set key=value`, not in the file.
/// - Returns: the settings, notes for the log (e.g. "no config file, using defaults"), the warnings
///   (file, overrides and combinations) and where each setting came from (to locate later diagnostics).
/// - Throws: ``ConfigLoadError``: the file unreadable, or every problem in it and in the overrides.
public func loadSettings(path: String, required: Bool, overrides: [(key: String, value: String)]) throws(ConfigLoadError)
    -> (settings: Settings, notes: [String], warnings: [Diagnostic], sources: SettingSources) {
    var notes: [String] = []
    var text: String?
    if required || access(path, F_OK) == 0 {
        let bytes: [UInt8]
        do { bytes = try AtomicFile.read(path) } catch { throw .unreadable(error) }
        text = String(decoding: bytes, as: UTF8.self)
        notes.append("settings from \(path)")
    } else {
        notes.append("no config file at \(path); using the built-in defaults")
    }
    let check = Settings.check(text: text, file: path, overrides: overrides)
    guard let settings = check.settings else { throw .invalid(SettingsError(diagnostics: check.diagnostics)) }
    return (settings, notes, check.diagnostics.filter { $0.severity == .warning }, check.sources)
}
