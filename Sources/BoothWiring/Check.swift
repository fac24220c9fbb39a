import BoothClock
import BoothCore
import BoothPorts
import BoothPrint
import BoothRuntime
import BoothStorage
import BoothSystem
import FoundationEssentials
import Glibc

/// `photoboothd --check`: opens each device the settings name, once, and says what is wrong in
/// the same words the daemon's fault log uses; then the settings that need the system to be judged:
/// with `print.mode` auto or press, the CUPS queue (`print.destination`, or the default) must exist;
/// with `storage.mount`, media must be mounted there and `storage.dir` be on it. Those name both keys
/// with where they were set (`sources`) and the fix. A system clock not synchronised is a warning
/// (``ClockSync/warning(synchronized:)``): the booth runs, its dates may be wrong.
/// - Parameters:
///   - sources: where each setting came from, to name it in a problem; nil: not known (values only).
///   - printQueue: looks a destination up (``lookUpPrintQueue(_:)``, libcups; a seam for tests).
///   - clockSynchronized: whether the system clock is synchronised (``ClockSync/isSynchronized()``,
///     `adjtimex`; a seam for tests).
/// - Returns: 0 when all work; 78 (EX_CONFIG) when the settings cannot work with this system (a print
///   queue CUPS does not have, `storage.dir` not on the `storage.mount` media); else 69 (EX_UNAVAILABLE)
///   when a device or service is not available (camera, button, photos directory, CUPS, removable media).
public func checkDevices(settings: Settings, sources: SettingSources? = nil, factory: DeviceFactory, log: Logger,
                         printQueue: (String) -> PrintQueueLookup = lookUpPrintQueue,
                         clockSynchronized: () -> Bool? = ClockSync.isSynchronized) -> Int32 {
    var problems = 0, configProblems = 0
    func report(_ ok: Bool, _ what: String) {
        if ok { log.info("check: ok: \(what)") } else { log.error("check: \(what)"); problems += 1 }
    }
    func cite(_ key: String) -> String {
        if let sources { return sources.cite(key, in: settings) }
        let value = settings.text(forKey: key) ?? ""
        return "\(key) = \(value.isEmpty ? "(empty)" : value)"
    }

    // Not a problem (the booth runs), but the dates it writes may be wrong.
    if let clock = ClockSync.warning(synchronized: clockSynchronized()) { log.warning("check: clock: \(clock)") }
    let storage = checkStorage(directory: settings.storage.dir)
    report(storage.ok, storage.report)
    // Not a problem (the booth runs), but the operator should know before the event: vfat, exFAT, tmpfs.
    if let note = FileSystemKind.of(settings.storage.dir)?.powerCutNote(dir: settings.storage.dir) {
        log.warning("check: \(note)")
    }
    switch StorageGuard.checkMount(mount: settings.storage.mount, dir: settings.storage.dir) {
    case nil:
        if !settings.storage.mount.isEmpty { report(true, "removable media mounted at \(settings.storage.mount)") }
    case let .media(why):
        report(false, "storage: \(cite("storage.mount")) for \(cite("storage.dir")): \(why); the booth would be in "
                      + "fault(storage) from the start: mount the media there, or correct storage.mount (empty: no check)")
    case let .directory(why):
        configProblems += 1
        report(false, "storage: \(cite("storage.dir")) with \(cite("storage.mount")): \(why); the booth would be in "
                      + "fault(storage) from the start: put storage.dir on the media (e.g. \(settings.storage.mount)/photos), "
                      + "or correct storage.mount (empty: no check)")
    }

    if settings.print.mode != .off {
        let destination = settings.print.destination
        switch printQueue(destination) {
        case let .found(queue):
            report(true, "print queue \(queue) (print.mode = \(settings.print.mode.rawValue))")
        case let .noCUPS(why):
            report(false, "print: \(cite("print.mode")) needs CUPS, which does not answer the look-up: \(why); start it "
                          + "(systemctl start cups), or set print.mode = off")
        case let .noSuchQueue(why, queues):
            configProblems += 1
            let wanted = destination.isEmpty ? "the CUPS default destination" : "the CUPS queue \(destination)"
            let offered = queues.isEmpty ? "CUPS has no queues: add one (lpadmin -p QUEUE -E -v URI -m everywhere)"
                : "CUPS has \(queues.joined(separator: ", ")): set print.destination to one of them, or add the queue (lpadmin)"
            report(false, "print: \(cite("print.mode")) prints to \(wanted) (\(cite("print.destination"))), "
                          + "which does not exist: \(why); \(offered); or set print.mode = off")
        }
    }

    switch factory.camera(settings, SystemClock(), log).check() {
    case let .works(description, warnings):
        report(true, "camera \(description)")
        for w in warnings { log.warning("check: camera: \(w)") }
    case let .fails(why):
        report(false, "camera not available: \(why)")
    }

    let button = factory.button(settings)
    do {
        try button.start { _ in }
        if let degraded = button.degraded {
            report(false, "button source not available: \(degraded) (the booth would run on the others)")
        } else {
            report(true, "button \(button.identity)")
        }
    } catch {
        report(false, "button not available: \(error)")
    }
    button.stop()
    if let led = factory.led(settings) {
        led.set(.off)
        led.stop()
    }
    if configProblems > 0 { return ExitCode.config }
    return problems == 0 ? ExitCode.ok : ExitCode.unavailable
}

/// What CUPS says of a print destination, for `--check`.
public enum PrintQueueLookup: Sendable, Equatable {
    /// It exists; `queue` is its name (the default destination's, for an empty destination).
    case found(queue: String)
    /// The CUPS server does not answer (not installed, not running) or fails the look-up: the failed call.
    case noCUPS(String)
    /// CUPS answers `client-error-not-found`: no such queue (or no default destination); the failed call and the queues it has.
    case noSuchQueue(String, queues: [String])
}

/// Looks `destination` up in CUPS (empty: the default destination). Blocking, up to about 5 s:
/// call it from a thread of the caller's own (photoboothd's main thread under `--check`).
/// Wraps `httpConnect2` and `cupsGetNamedDest` (``CUPSConnection``), and `cupsGetDests2` for the
/// queues to name when it is missing.
public func lookUpPrintQueue(_ destination: String) -> PrintQueueLookup {
    do {
        return .found(queue: try CUPSConnection(destination: destination, timeoutMilliseconds: 3000).queueName)
    } catch {
        // Only IPP's not-found is "no such queue"; any other failure is CUPS not answering the look-up.
        if error.call == "httpConnect2" || error.status != "client-error-not-found" { return .noCUPS(error.description) }
        let queues = (try? CUPSConnection.destinations(timeoutMilliseconds: 2000))?.map(\.name) ?? []
        return .noSuchQueue(error.description, queues: queues)
    }
}

/// The storage part of `--check`: whether `storage.dir` exists and is writable, or, when it does not
/// exist yet, whether it can be created (its nearest existing parent is a writable directory) and
/// which folders the daemon would create. Changes nothing: no folder, probe file or temp-file cleanup
/// (the daemon does those at start). Wraps `stat`, `access(W_OK | X_OK)` (as the calling user; it
/// catches read-only file systems, EROFS, for root too) and `statvfs`.
/// - Returns: `ok` and the line to log (`"storage /srv/photos (12 GB free)"`, or what is wrong).
public func checkStorage(directory given: String) -> (ok: Bool, report: String) {
    enum Entry: Equatable { case directory, notDirectory, missing, unusable(String) }
    /// What is at `path`: only ENOENT (or ENOTDIR: a component up the path is a file, found as the
    /// walk goes up) with no dangling symbolic link is "missing" (to be created).
    func entry(_ path: String) -> Entry {
        var st = stat()
        if stat(path, &st) == 0 { return (st.st_mode & S_IFMT) == S_IFDIR ? .directory : .notDirectory }
        let e = errno
        if e == ENOENT || e == ENOTDIR {
            var link = stat()
            return lstat(path, &link) == 0 ? .unusable("it is a symbolic link to a missing target") : .missing
        }
        return .unusable("stat failed: \(SystemCallError.text(of: e))")
    }
    func free(_ path: String) -> String {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return "free space unknown" }
        return "\(formatBytes(UInt64(s.f_bavail) * UInt64(s.f_frsize))) free"
    }
    func writable(_ path: String) -> String? {
        access(path, W_OK | X_OK) == 0 ? nil : "access failed: \(SystemCallError.text(of: errno))"
    }
    var directory = given
    while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
    switch entry(directory) {
    case .directory:
        if let problem = writable(directory) {
            return (false, "storage: photos directory \(directory) not writable: \(problem)")
        }
        return (true, "storage \(directory) (\(free(directory)))")
    case .notDirectory:
        return (false, "storage: photos directory \(directory) is not a directory")
    case let .unusable(why):
        return (false, "storage: photos directory \(directory) cannot be used: \(why)")
    case .missing:
        break
    }
    var missing = [directory]
    var parent = directoryName(of: directory)
    while entry(parent) == .missing, parent != "/", parent != "." {
        missing.insert(parent, at: 0)
        parent = directoryName(of: parent)
    }
    let created = missing.joined(separator: ", ")
    switch entry(parent) {
    case .directory: break
    case .notDirectory, .missing:
        return (false, "storage: photos directory \(directory) cannot be created: \(parent) is not a directory")
    case let .unusable(why):
        return (false, "storage: photos directory \(directory) cannot be created: \(parent): \(why)")
    }
    if let problem = writable(parent) {
        return (false, "storage: photos directory \(directory) cannot be created in \(parent): \(problem)")
    }
    return (true, "storage \(directory) does not exist yet; the daemon will create \(created) "
                  + "(\(parent) is writable, \(free(parent)))")
}
