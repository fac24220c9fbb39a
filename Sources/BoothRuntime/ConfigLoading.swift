import BoothCore
import BoothPorts
import Glibc

/// The default config file of the installed booth (`/etc/photobooth/photobooth.conf`).
public let defaultConfigPath = Schema.defaultConfigPath

/// The config file of `photoboothd --simulate` without `--config`: `./photobooth.conf` in the working
/// directory (missing = built-in defaults; `photoboothctl config set` creates it), never the system booth's file.
public let simulatedConfigPath = "./photobooth.conf"

/// What `photoboothd --simulate` puts in the working directory instead of the system booth's paths: every file
/// the booth writes or reads back (photos and their totals and index in `storage.dir`, the session-number record, the file preview, the
/// print journal and the print spool, the gallery's index and secret, and its cache and state for a photobooth-gallery run beside it). Applied as overrides before the `--set` ones, so `--set` still wins
/// and a `--config` file's values for these keys do not.
public let simulatedOverrides: [(key: String, value: String)] = [
    ("storage.dir", "./photos"), ("storage.session_file", "./session-number"), ("preview.file", "./preview.jpg"),
    ("print.journal", "./print-journal.json"), ("print.spool", "./prints"),
    ("gallery.index", "./gallery/index.sqlite"), ("gallery.secret", "./gallery.secret"), ("gallery.cache", "./gallery/cache"),
    ("gallery.state", "./gallery/state"),
]

// Reading and validating the config file (`loadSettings`, `ConfigLoadError`) is BoothControl's
// (BoothControl/ConfigFile.swift): it reads the file through BoothStorage's `AtomicFile`.

/// `path` made absolute against the working directory (`getcwd`); unchanged when already absolute.
public func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buf, buf.count) != nil else { return path }
    let cwd = String(nulTerminated: buf)
    let rest = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
    return cwd == "/" ? "/\(rest)" : "\(cwd)/\(rest)"
}
