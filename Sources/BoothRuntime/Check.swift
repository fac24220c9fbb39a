import BoothCamera
import BoothCore
import Foundation
import Glibc

/// `photoboothd --check`: opens each device the settings name, once, and says what is wrong in
/// the same words the daemon's fault log uses. Returns 0 when all work, 69 (EX_UNAVAILABLE) otherwise.
public func checkDevices(settings: Settings, factory: DeviceFactory, log: Logger) -> Int32 {
    var problems = 0
    func report(_ ok: Bool, _ what: String) {
        if ok { log.info("check: ok: \(what)") } else { log.error("check: \(what)"); problems += 1 }
    }

    let storage = checkStorage(directory: settings.storage.dir)
    report(storage.ok, storage.report)

    let camera = factory.camera(settings)
    do {
        let request = streamRequest(from: settings)
        let info = try camera.start(request)
        let sizeWarning = captureSizeWarning(asked: settings.camera.captureSize, previewRequest: request.size,
                                             preview: info, device: camera)
        var frame: Frame?
        for _ in 0..<10 where frame == nil { frame = try camera.nextFrame(timeoutMilliseconds: 500) }
        let dropped = DroppedFrameTally.sentByTheCamera(camera.statistics.droppedByDefect)
        camera.stop()
        if frame == nil { throw CameraWorkerError.noFrames(badFrames: dropped) }
        report(true, "camera \(info)")
        for w in info.warnings + [sizeWarning].compactMap({ $0 }) { log.warning("check: camera: \(w)") }
    } catch {
        camera.stop()
        report(false, "camera not available: \(error)")
    }

    let button = factory.button(settings)
    do {
        try button.start { _ in }
        report(true, "button \(button.identity)")
    } catch {
        report(false, "button not available: \(error)")
    }
    button.stop()
    if let led = factory.led(settings) {
        led.set(.off)
        led.stop()
    }
    return problems == 0 ? ExitCode.ok : ExitCode.unavailable
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
        return .unusable("stat failed: \(String(cString: strerror(e))) (errno \(e))")
    }
    func free(_ path: String) -> String {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return "free space unknown" }
        return "\(formatBytes(UInt64(s.f_bavail) * UInt64(s.f_frsize))) free"
    }
    func writable(_ path: String) -> String? {
        access(path, W_OK | X_OK) == 0 ? nil : "access failed: \(String(cString: strerror(errno))) (errno \(errno))"
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
