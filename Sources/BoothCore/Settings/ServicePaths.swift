/// Where the installed service (`etc/systemd/photoboothd.service`, `ProtectSystem=strict`) may write:
/// its `StateDirectory=` and the `ReadWritePaths=` for removable media. Everything else is read-only
/// to it, so a `storage.dir` elsewhere fails with EROFS at start.
public enum ServicePaths {
    /// The unit's writable paths, in the order the unit lists them.
    public static let writable = ["/var/lib/photobooth", "/media", "/mnt", "/run/media"]

    /// True when `dir` is one of ``writable`` or below one.
    public static func isWritable(_ dir: String) -> Bool {
        let d = dir.count > 1 && dir.hasSuffix("/") ? String(dir.dropLast()) : dir
        return writable.contains { d == $0 || d.hasPrefix($0 + "/") }
    }

    /// How to fix a `storage.dir` the service cannot write.
    public static func fix(for dir: String) -> String {
        "the service may write only under \(writable.joined(separator: ", ")): move storage.dir there, "
            + "or allow it with 'systemctl edit photoboothd' adding [Service] ReadWritePaths=\(dir)"
    }

    /// A diagnostic when `settings.storage.dir` is outside ``writable``: an error for the service's own
    /// config file (`asService`), else a warning.
    public static func diagnostics(for settings: Settings, file: String, asService: Bool) -> [Diagnostic] {
        let dir = settings.storage.dir
        guard !isWritable(dir) else { return [] }
        return [Diagnostic(file: file, line: nil, key: "storage.dir",
                           message: "storage.dir \(dir) is outside the paths the photoboothd service may write; \(fix(for: dir))",
                           severity: asService ? .error : .warning)]
    }
}
