import BoothControl
import BoothCore
import BoothLayout
import BoothPorts
import BoothRuntime
import BoothStorage
import BoothSystem
import FoundationEssentials
import Glibc

/// The config file a config command works on: `--file F`, else the running daemon's (asked over the socket:
/// `hello` names the file it was started from, e.g. `./photobooth.conf` in its working directory under
/// `--simulate`), else the default path. `daemon` is the daemon that reads this file, nil when none does.
func configTarget(_ args: ParsedArguments) -> (path: String, daemon: DaemonInfo?) {
    if let file = args.value(.file) { return (file, daemonUsing(file, socket: args.socket)) }
    if let info = runningDaemon(socket: args.socket) { return (info.configPath, info) }
    return (Schema.defaultConfigPath, nil)
}

/// The daemon answering on the socket (`hello`, 3 s at most), or nil when none does.
func runningDaemon(socket: String?) -> DaemonInfo? {
    try? ask(.hello, socket: socket, as: DaemonInfo.self, timeoutSeconds: 3)
}

/// The daemon answering on the socket when it reads `file`, else nil.
func daemonUsing(_ file: String, socket: String?) -> DaemonInfo? {
    guard let info = runningDaemon(socket: socket), sameFile(info.configPath, file) else { return nil }
    return info
}

/// The warning for `key` when the daemon that reads the file sets it on its command line (which wins), else nil.
func overrideWarning(_ key: String, _ daemon: DaemonInfo?) -> String? {
    guard let daemon, daemon.overriddenKeys?.contains(key) == true else { return nil }
    return "photoboothd (pid \(daemon.pid)) sets \(key) on its command line (--set"
        + (daemon.simulated ? ", or --simulate's working-directory paths" : "")
        + "), which wins over the file: the file's value takes effect only when it is started without that"
}

func sameFile(_ a: String, _ b: String) -> Bool {
    var sa = stat(), sb = stat()
    if stat(a, &sa) == 0, stat(b, &sb) == 0 { return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino }
    return absolutePath(a) == absolutePath(b)
}

/// Reads a config file: its text, or nil when it does not exist. Prints why and returns the exit code on failure.
func readConfig(_ path: String) -> Result<String?, ExitFailure> {
    if access(path, F_OK) != 0 { return .success(nil) }
    do {
        return .success(String(decoding: try AtomicFile.read(path), as: UTF8.self))
    } catch {
        warn("cannot read \(path): \(error)")
        return .failure(ExitFailure(code: ExitCode.noInput))
    }
}

/// Where an edit of the config file `path` writes: `path` itself, or, when it is a symbolic link, the file it
/// points to (`realpath`), so the link stays and the real file gets the change (written atomically there).
/// Prints why and returns 73 for a link whose target does not exist.
func configWritePath(_ path: String) -> Result<String, ExitFailure> {
    var st = stat()
    guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return .success(path) }
    if let real = realpath(path, nil) {
        defer { free(real) }
        return .success(String(cString: real))
    }
    var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink(path, &buf, buf.count - 1)
    let raw = n > 0 ? String(decoding: buf[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    let target = raw.hasPrefix("/") ? raw : "\(directoryName(of: path))/\(raw)"
    warn("cannot write \(path): it is a symbolic link to \(target), which does not exist "
         + "(create \(target), or point the link at the config file: ln -sfn FILE \(path))")
    return .failure(ExitFailure(code: ExitCode.cantCreate))
}

/// Holds the edit lock of the config file `path` (``FolderLock`` on its folder, up to 10 s): edits by several
/// `config set` at once take turns, each reading the file under the lock. Nil, with nothing held, when the
/// folder does not exist (the write then fails, saying so); prints why and returns 73 when it cannot be had.
func lockConfigForEdit(_ path: String) -> Result<FolderLock?, ExitFailure> {
    let folder = directoryName(of: path)
    do throws(FileError) {
        return .success(try FolderLock(folder, waitingUpTo: 10))
    } catch where error.errno == ENOENT {
        return .success(nil)
    } catch where error.errno == EWOULDBLOCK {
        warn("cannot write \(path): another edit of it (photoboothctl config set) held the lock on \(folder) for 10 s; try again")
    } catch {
        warn("cannot write \(path): cannot lock it for editing: \(error)")
    }
    return .failure(ExitFailure(code: ExitCode.cantCreate))
}

struct ExitFailure: Error { var code: Int32 }

/// The settings a file gives, or the exit code (78) after printing every diagnostic.
func checkedSettings(_ path: String) -> Result<(settings: Settings, text: String?, diagnostics: [Diagnostic]), ExitFailure> {
    switch readConfig(path) {
    case let .failure(f): return .failure(f)
    case .success(nil): return .success((Settings.defaults, nil, []))
    case let .success(text?):
        let check = Settings.check(text: text, file: path)
        guard let settings = check.settings else {
            for d in check.diagnostics { FileHandleOutput.stderr(d.description) }
            warn("\(path) is not valid (\(counted(check.diagnostics.filter { $0.severity == .error }.count, "error")))")
            return .failure(ExitFailure(code: ExitCode.config))
        }
        return .success((settings, text, check.diagnostics))
    }
}

/// `config show`: every setting with the value the file gives it.
struct ConfigShow: Subcommand {
    static let words = ["config", "show"]
    static let synopsis = "config show [--json] [--file F] [--socket PATH]"
    static let summary = "Show every setting with its value from the config file, and where it comes from."
    static let details = """
        The file is the running daemon's (asked over the socket), else \(Schema.defaultConfigPath); --file names another.
        Exit codes: 0; 66 file unreadable; 78 file invalid (every problem is listed).
        """
    static let options: [Option] = [.json, .file, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    struct Output: Codable {
        var file: String
        var exists: Bool
        var settings: [String: String]
        /// Keys set in the file, with their line.
        var lines: [String: Int]
    }

    func run() -> Int32 {
        let (path, daemon) = configTarget(args)
        switch checkedSettings(path) {
        case let .failure(f): return f.code
        case let .success((settings, text, diagnostics)):
            let lines = text.map(Settings.keysSet(inText:)) ?? [:]
            var values: [String: String] = [:]
            for spec in Schema.settings { values[spec.key] = spec.text(in: settings) }
            if args.json {
                printJSON(Output(file: path, exists: text != nil, settings: values, lines: lines))
                return ExitCode.ok
            }
            print("# \(path)" + (text == nil ? " (does not exist: every setting at its default)" : "")
                  + (daemon.map { " (read by photoboothd, pid \($0.pid))" } ?? ""))
            for d in diagnostics { print("# \(d)") }
            var section = ""
            for spec in Schema.settings {
                if spec.section != section {
                    section = spec.section
                    print("\n[\(section)]")
                }
                let entry = "\(spec.name) = \(values[spec.key] ?? "")"
                var origin = lines[spec.key].map { "line \($0)" } ?? "default"
                if overrideWarning(spec.key, daemon) != nil { origin += "; photoboothd's command line sets it (wins)" }
                print(entry.padding(toLength: max(40, entry.count + 2), withPad: " ", startingAt: 0) + "# " + origin)
            }
            return ExitCode.ok
        }
    }
}

/// `config get KEY`.
struct ConfigGet: Subcommand {
    static let words = ["config", "get"]
    static let synopsis = "config get KEY [--json] [--file F] [--socket PATH]"
    static let summary = "Print one setting's value (section.key, e.g. session.countdown) from the config file."
    static let details = """
        The file is the running daemon's (asked over the socket), else \(Schema.defaultConfigPath); --file names another.
        The value goes to stdout; which file and line it came from to stderr.
        Exit codes: 0; 64 unknown key; 66 file unreadable; 78 file invalid.
        """
    static let options: [Option] = [.json, .file, .socket]
    static let positionals = 1...1
    let args: ParsedArguments

    struct Output: Codable {
        var key: String
        var value: String
        var defaultValue: String
        var file: String
        var line: Int?
    }

    func run() -> Int32 {
        let key = args.positional[0]
        guard let spec = Schema.spec(for: key) else {
            warn(ConfigEditError.unknownKey(key, suggestion: Schema.closestKey(to: key)).description)
            return ExitCode.usage
        }
        let (path, daemon) = configTarget(args)
        switch checkedSettings(path) {
        case let .failure(f): return f.code
        case let .success((settings, text, _)):
            let value = spec.text(in: settings)
            let line = text.flatMap { Settings.keysSet(inText: $0)[key] }
            if args.json {
                printJSON(Output(key: key, value: value, defaultValue: spec.defaultText, file: path, line: line))
            } else {
                // Written at once (not buffered to exit), so the value comes before the note on stderr.
                try? FileHandleOutput.stdout(Array("\(value)\n".utf8))
                warn(text == nil ? "\(key): the default (\(path) does not exist)"
                                 : line.map { "\(key): \(path) line \($0)" } ?? "\(key): the default (not set in \(path))")
            }
            if let w = overrideWarning(key, daemon) { warn(w) }
            return ExitCode.ok
        }
    }
}

/// `config set KEY VALUE`.
struct ConfigSet: Subcommand {
    static let words = ["config", "set"]
    static let synopsis = "config set KEY VALUE [--json] [--file F] [--socket PATH]"
    static let summary = "Change one setting in the config file, in place, then ask the daemon to reload."
    static let details = """
        The value is checked first, then the whole file: nothing is written when the result would be invalid.
        Only the key's line changes (comments, order and every other line stay byte for byte); a key not yet in
        the file is added at the end of its section. The file is replaced atomically, keeping its mode and owner;
        a symbolic link stays and its target is written. Edits at the same time take turns (flock on the file's
        folder, up to 10 s), each reading the file anew, so none is lost.
        A file that does not exist is created from the commented default ('config init'). The file is the running
        daemon's (asked over the socket: the one it was started from; ./photobooth.conf in its working directory
        under photoboothd --simulate without --config), else \(Schema.defaultConfigPath); --file names another.
        When the daemon reads this file it reloads (at once in idle or fault, else when the session ends) and
        says which keys changed and how each took effect, as 'photoboothctl reload' does; a key only a daemon
        restart applies says "takes effect after `systemctl restart photoboothd`".
        --json: {key, value, file, line, previous, reload} with the daemon's reload reply (null when none reads the file).
        Exit codes: 0; 64 unknown key; 65 invalid value; 66 file unreadable; 73 file not writable;
        75 written, but the daemon refused the new value (a storage.dir not writable or not mounted: it says why);
        78 file invalid (or the daemon refused the reload).
        """
    static let options: [Option] = [.json, .file, .socket]
    static let positionals = 2...2
    let args: ParsedArguments

    /// `--json`: what was written, and the daemon's reload reply.
    struct Output: Codable {
        var key: String
        var value: String
        var file: String
        var line: Int
        /// The value the line had before; nil when the key was added.
        var previous: String?
        /// True when the file was left as it was (the key had this value).
        var unchanged: Bool
        /// The daemon's answer to the reload; nil when no running daemon reads the file.
        var reload: ReloadReply?
    }

    func run() -> Int32 {
        let key = args.positional[0], value = args.positional[1]
        let (path, daemon) = configTarget(args)
        let json = args.json
        /// Prints a line of text, or nothing under --json (the JSON goes out at the end).
        func say(_ line: String) { if !json { print(line) } }
        func output(_ edit: ConfigEdit, unchanged: Bool, reload: ReloadReply?) {
            if json {
                printJSON(Output(key: key, value: edit.value, file: path, line: edit.line, previous: edit.previous,
                                 unchanged: unchanged, reload: reload))
            }
        }
        // A link is written through to its target; `shown` names both.
        let target: String
        switch configWritePath(path) {
        case let .failure(f): return f.code
        case let .success(t): target = t
        }
        let shown = target == path ? path : "\(path) -> \(target)"
        // Held until the file is written: a second config set at the same time reads the file after this one's write.
        let lock: FolderLock?
        switch lockConfigForEdit(target) {
        case let .failure(f): return f.code
        case let .success(l): lock = l
        }
        defer { lock?.release() }
        let existing: String?
        switch readConfig(target) {
        case let .failure(f): return f.code
        case let .success(t): existing = t
        }
        let edit: ConfigEdit
        switch Settings.edit(text: existing ?? Schema.defaultConfigText(), file: path, key: key, value: value) {
        case let .success(e): edit = e
        case let .failure(error):
            warn(error.description)
            switch error {
            case .unknownKey: return ExitCode.usage
            case .invalidValue: return ExitCode.dataError
            case .invalidFile: return ExitCode.config
            }
        }
        // Refused before writing, as photoboothd would refuse the file: a [picture] file that cannot be read.
        if case let .success(settings) = Settings.parse(text: edit.text, file: path) {
            let picture = pictureDiagnostics(settings, file: path, text: edit.text)
            for d in picture { warn(d.description) }
            if picture.contains(where: { $0.severity == .error }) {
                warn("\(path) not changed: photoboothd would refuse it")
                return ExitCode.dataError
            }
        }
        if edit.text == existing {
            say("\(key) = \(edit.value) (unchanged, \(shown) line \(edit.line))")
            output(edit, unchanged: true, reload: nil)
            return ExitCode.ok
        }
        var st = stat()
        let hadFile = stat(target, &st) == 0
        do {
            try AtomicFile.write(Array(edit.text.utf8), to: target, durable: true, replace: true)
        } catch {
            let dir = directoryName(of: target)
            var dst = stat()
            if !dir.isEmpty, stat(dir, &dst) != 0 {
                // The usual case with no daemon and no installed booth: /etc/photobooth is not there.
                warn("cannot write \(path): the folder \(dir) does not exist (create it: sudo install -d \(dir); "
                     + "or edit another file with --file FILE; with a running photoboothd, its own file is used)")
            } else {
                warn("cannot write \(path): \(error)")
            }
            return ExitCode.cantCreate
        }
        if hadFile {
            _ = chmod(target, st.st_mode & 0o7777)
            _ = chown(target, st.st_uid, st.st_gid)
        }
        lock?.release()
        for w in edit.warnings { FileHandleOutput.stderr(w.description) }
        let was = edit.previous.map { "was \($0)" } ?? "added"
        say("\(key) = \(edit.value) (\(shown) line \(edit.line), \(was)\(existing == nil ? "; file created from the commented default" : ""))")
        let overridden = overrideWarning(key, daemon)
        if let w = overridden { warn(w) }
        guard daemon != nil else {
            say("not reloading: no running photoboothd reads \(path)")
            output(edit, unchanged: false, reload: nil)
            return ExitCode.ok
        }
        do {
            let reply = try ask(.reload, socket: args.socket, as: ReloadReply.self)
            // The key just set is not among the changes when the daemon's command line wins: said so.
            if overridden != nil { say("photoboothd reloaded \(path), but \(key) stays as its command line sets it (see above)") }
            say("photoboothd " + Reload.text(reply))
            output(edit, unchanged: false, reload: reply)
            return Reload.exitCode(reply)
        } catch {
            return report(error)
        }
    }
}

/// `config validate [FILE]`.
struct ConfigValidate: Subcommand {
    static let words = ["config", "validate"]
    static let synopsis = "config validate [FILE] [--json] [--socket PATH]"
    static let summary = "Check a config file and list every problem as file:line: message."
    static let details = """
        Without FILE: the running daemon's file, else \(Schema.defaultConfigPath).
        Keys that do not work together are reported with both keys' lines and the fix: an error where the
        combination cannot work (picture.layout holding fewer captures than session.shots), a warning where it
        works differently (empty slots, a layout not used, camera.capture_size smaller than preview_size).
        The print queue and storage.mount need the system: photoboothd --check judges those.
        A storage.dir outside the service's writable paths (\(ServicePaths.writable.joined(separator: ", ")))
        is an error in \(Schema.defaultConfigPath) and a warning in any other file.
        Exit codes: 0 valid (warnings may be printed); 66 unreadable or missing; 78 invalid.
        """
    static let options: [Option] = [.json, .file, .socket]
    static let positionals = 0...1
    let args: ParsedArguments

    struct Output: Codable {
        struct Problem: Codable {
            var line: Int?
            var key: String?
            var severity: String
            var message: String
        }
        var file: String
        var valid: Bool
        var problems: [Problem]
    }

    func run() -> Int32 {
        let path = args.positional.first ?? configTarget(args).path
        let text: String
        switch readConfig(path) {
        case let .failure(f): return f.code
        case .success(nil):
            warn("\(path) does not exist (the daemon would use the defaults; create it with 'photoboothctl config init \(path)')")
            return ExitCode.noInput
        case let .success(t?): text = t
        }
        var check = Settings.check(text: text, file: path)
        if let settings = check.settings {
            // The service (ProtectSystem=strict) writes only in its own paths; an error for its own config file.
            let service = ServicePaths.diagnostics(for: settings, file: path,
                                                   asService: absolutePath(path) == Schema.defaultConfigPath)
            check.diagnostics += service
            // The picture's font, overlay and background image must load, as photoboothd checks at start.
            let picture = pictureDiagnostics(settings, file: path, text: text)
            check.diagnostics += picture
            if (service + picture).contains(where: { $0.severity == .error }) { check.settings = nil }
        }
        if args.json {
            printJSON(Output(file: path, valid: check.isValid,
                             problems: check.diagnostics.map { .init(line: $0.line, key: $0.key, severity: $0.severity.rawValue, message: $0.message) }))
        } else {
            for d in check.diagnostics { print(d.description) }
            let errors = check.diagnostics.filter { $0.severity == .error }.count
            let warnings = check.diagnostics.count - errors
            print(check.isValid ? "\(path): valid" + (warnings > 0 ? " (\(counted(warnings, "warning")))" : "")
                                : "\(path): \(counted(errors, "error"))" + (warnings > 0 ? ", \(counted(warnings, "warning"))" : ""))
        }
        return check.isValid ? ExitCode.ok : ExitCode.config
    }
}

/// `config describe [KEY]`.
struct ConfigDescribe: Subcommand {
    static let words = ["config", "describe"]
    static let synopsis = "config describe [KEY|SECTION] [--json | --markdown]"
    static let summary = "Describe the settings: type, default, what is allowed, what each does, how a reload applies it."
    static let details = """
        KEY is section.key (session.countdown); SECTION lists a section's keys. --markdown prints docs/settings.md's
        settings table (the text between <!-- settings-table:begin --> and <!-- settings-table:end -->).
        Exit codes: 0; 64 unknown key.
        """
    static let options: [Option] = [.json, .markdown]
    static let positionals = 0...1
    let args: ParsedArguments

    struct Output: Codable {
        var key: String
        var section: String
        var type: String
        var defaultValue: String
        var allowed: String
        var description: String
        /// ``ReloadRule/word``: how a reload applies a change of the key.
        var reload: String
    }

    func run() -> Int32 {
        if args.has(.markdown) {
            print(Schema.markdownTable(), terminator: "")
            return ExitCode.ok
        }
        var specs = Schema.settings
        if let key = args.positional.first {
            if let spec = Schema.spec(for: key) {
                specs = [spec]
            } else if Schema.sections.contains(where: { $0.name == key }) {
                specs = Schema.settings(inSection: key)
            } else {
                warn(ConfigEditError.unknownKey(key, suggestion: Schema.closestKey(to: key)).description)
                return ExitCode.usage
            }
        }
        if args.json {
            printJSON(specs.map { Output(key: $0.key, section: $0.section, type: $0.type.name, defaultValue: $0.defaultText,
                                         allowed: $0.allowed, description: $0.description, reload: $0.reload.word) })
        } else {
            print(specs.map(Schema.describe).joined(separator: "\n\n"))
        }
        return ExitCode.ok
    }
}

/// `config init [FILE]`.
struct ConfigInit: Subcommand {
    static let words = ["config", "init"]
    static let synopsis = "config init [FILE] [--force]"
    static let summary = "Write the commented default config (every key at its default), to stdout without FILE."
    static let details = """
        An existing FILE is kept unless --force. The file is written atomically.
        Exit codes: 0; 73 FILE exists (without --force) or cannot be written.
        """
    static let options: [Option] = [.force]
    static let positionals = 0...1
    let args: ParsedArguments

    func run() -> Int32 {
        let text = Schema.defaultConfigText()
        guard let path = args.positional.first, path != "-" else {
            print(text, terminator: "")
            return ExitCode.ok
        }
        if access(path, F_OK) == 0, !args.has(.force) {
            warn("\(path) exists; not replacing it (use --force, or 'photoboothctl config set' to change one key)")
            return ExitCode.cantCreate
        }
        let target: String
        switch configWritePath(path) {
        case let .failure(f): return f.code
        case let .success(t): target = t
        }
        do {
            let lock = try FolderLock(directoryName(of: target), waitingUpTo: 10)
            defer { lock.release() }
            try AtomicFile.write(Array(text.utf8), to: target, durable: true, replace: true)
        } catch {
            warn("cannot write \(path): \(error)")
            return ExitCode.cantCreate
        }
        print("wrote \(path) (\(Schema.settings.count) settings at their defaults)")
        return ExitCode.ok
    }
}
