import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothSystem
import Glibc
import Synchronization

/// The pictures taken down (`photoboothctl gallery remove`), kept beside the index in a file of
/// their own (`removed-pictures.txt` in the index's folder: one `TOKEN SECONDS` line each, written
/// whole and atomically), so that an index made anew from the photos (damaged, or `rebuild`) does
/// not serve them again.
public struct RemovedPictures: Sendable {
    /// The list's name, in the index's folder.
    public static let fileName = "removed-pictures.txt"
    /// The list's file.
    public let path: String

    /// The list for the index at `indexPath`.
    public init(indexPath: String) { path = "\(directoryName(of: indexPath))/\(RemovedPictures.fileName)" }

    /// Token → when it was taken down. Empty when the file is missing; blank lines, spaces and
    /// CRs (a copy edited on Windows) are allowed.
    /// - Throws: ``RemovedListError`` when the file is there but cannot be read, or a line is not
    ///   `TOKEN SECONDS` (file:line, the line): nothing is guessed, since a list read short would
    ///   serve pictures taken down.
    public func load() throws(RemovedListError) -> [String: Int64] {
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path)
        } catch where error.errno == ENOENT {
            return [:]
        } catch {
            throw RemovedListError("\(error)")
        }
        var out: [String: Int64] = [:]
        // Lines split on the bytes: a String takes "\r\n" as one character.
        for (n, line) in bytes.split(separator: 10, omittingEmptySubsequences: false).enumerated() {
            let raw = String(decoding: line, as: UTF8.self)
            let words = line.split(whereSeparator: { $0 == 32 || $0 == 9 || $0 == 13 }).map { String(decoding: $0, as: UTF8.self) }
            if words.isEmpty { continue }
            guard words.count == 2, PictureTokens.isWellFormed(words[0]), let at = Int64(words[1]) else {
                throw RemovedListError("\(path):\(n + 1): '\(raw.filter { $0 != "\r" }.prefix(80))' is not a taken-down picture: write 'TOKEN SECONDS' "
                                       + "(26 characters a-z 2-7, a space, seconds since 1970), as photoboothctl gallery remove does")
            }
            out[words[0]] = at
        }
        return out
    }

    /// Adds `token` (taken down at `at`) and writes the list again (temp file, fsync, rename, fsync
    /// of the folder). - Throws: ``RemovedListError`` from ``load()`` (nothing written) or the write.
    public func add(_ token: String, at: Int64) throws(RemovedListError) {
        var all = try load()
        all[token] = at
        let text = all.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined()
        do {
            try AtomicFile.write(Array(text.utf8), to: path, replace: true, mode: 0o640)
        } catch {
            throw RemovedListError("\(error)")
        }
    }
}

/// Why `removed-pictures.txt` could not be read or written: the file, the line, what is allowed.
public struct RemovedListError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// The daemon's ``GalleryAdministration``: `photoboothctl gallery status|url|remove|rebuild|test-alert` and the
/// gallery row of `status`, against the same ``PictureIndex`` the picture sink writes.
public final class GalleryAdmin: GalleryAdministration {
    private let settings: Settings.Gallery
    /// `storage.dir` in force (a reload moves it: the store's directory).
    private let currentPhotosDir: @Sendable () -> String
    private var photosDir: String { currentPhotosDir() }
    private let index: PictureIndex?
    private let tokens: PictureTokens?
    private let folders: StorageIDs
    private let removedList: RemovedPictures
    /// Why the daemon runs without its gallery (the index or the secret could not be had).
    private let problem: String?
    private let log: Logger
    private let now: @Sendable () -> Int64
    /// One change at a time (two `remove`s on two control connections): the list is written whole.
    private let changing = Mutex(0)
    private let removed: @Sendable (String) -> Void
    /// The last problem ``keepIndex()`` logged (logged once while it lasts).
    private let keepTold = Mutex<String?>(nil)
    private let keeper = WorkerThread(name: "pb-index")
    /// The `[gallery]` section of the config file as it reads now; nil: not known (then the settings in force).
    private let configured: @Sendable () -> Settings.Gallery?

    /// - Parameters:
    ///   - index, tokens: nil when the gallery is off or could not be set up; `problem` then says why (nil: off).
    ///   - photosDir: the photos directory in force (the store's, which a reload of `storage.dir`
    ///     moves); nil: `settings.storage.dir`.
    ///   - now: seconds since 1970 for a removal's time (tests inject theirs).
    ///   - removed: told each token taken down (the daemon drops it from the idle screen's code and the review's).
    ///   - configured: the `[gallery]` section of the config file as it reads now (`status` gives its
    ///     `gallery.listen` and `gallery.port`, which photobooth-gallery reads at its start); nil when unreadable.
    public init(settings: Settings, index: PictureIndex?, tokens: PictureTokens?, folders: StorageIDs, problem: String?,
                log: Logger, photosDir: (@Sendable () -> String)? = nil, now: @escaping @Sendable () -> Int64 = { Int64(time(nil)) },
                removed: @escaping @Sendable (String) -> Void = { _ in }, configured: @escaping @Sendable () -> Settings.Gallery? = { nil }) {
        self.configured = configured
        self.settings = settings.gallery
        let dir = settings.storage.dir
        currentPhotosDir = photosDir ?? { dir }
        self.removed = removed
        self.index = index
        self.tokens = tokens
        self.folders = folders
        removedList = RemovedPictures(indexPath: settings.gallery.index)
        self.problem = problem
        self.log = log
        self.now = now
    }

    private var urlBase: String { settings.urlRoot }

    private func url(_ token: String) -> String? { urlBase.isEmpty ? nil : "\(urlBase)/p/\(token)" }

    /// The settings (`gallery.listen` and `gallery.port` as the config file says now) and the index's
    /// counts and newest picture (two `COUNT(*)` and one look-up; the problem said when the index cannot
    /// be read, or was deleted and cannot be made again).
    public var status: GalleryStatus {
        var s = GalleryStatus(enabled: settings.enabled, urlBase: urlBase, listen: settings.listen, port: settings.port,
                              index: settings.index, problem: problem)
        // photobooth-gallery reads the file at its start: after `config set gallery.port` it is the file's port that it listens on.
        if let file = configured(), file.listen != settings.listen || file.port != settings.port {
            s.atStart = "\(settings.listen):\(settings.port)"
            s.listen = file.listen
            s.port = file.port
        }
        guard let index else { return s }
        if let lost = keepIndex() {
            s.problem = lost
            return s
        }
        do {
            let n = try index.counts()
            s.served = n.served
            s.removed = n.removed
            s.newest = try index.recent(limit: 1).first.map { url($0.token) ?? $0.path }
        } catch {
            s.problem = "\(error)"
        }
        return s
    }

    /// ``GalleryAdministration/answer(action:picture:deleteFile:uid:)``, one at a time: `remove`
    /// writes ``RemovedPictures`` before it marks the index; `rebuild` is ``PictureIndex/rebuild(photosDir:tokens:folderID:removals:)``.
    public func answer(action: String, picture: String?, deleteFile: Bool, uid: UInt32) -> Result<GalleryAnswer, GalleryFailure> {
        changing.withLock { _ in answerLocked(action: action, picture: picture, deleteFile: deleteFile, uid: uid) }
    }

    private func answerLocked(action: String, picture: String?, deleteFile: Bool, uid: UInt32) -> Result<GalleryAnswer, GalleryFailure> {
        guard settings.enabled else {
            return .failure(GalleryFailure("unavailable", "the gallery is off (gallery.enabled = false; set it to true and restart photoboothd)"))
        }
        guard let index, let tokens else {
            return .failure(GalleryFailure("unavailable", "the daemon runs without its gallery: \(problem ?? "no index")"))
        }
        do {
            switch action {
            case "status":
                return .success(GalleryAnswer(message: "gallery index \(settings.index)", status: status))
            case "url":
                let (p, removed) = try find(picture, in: index)
                return .success(GalleryAnswer(message: removed ? "\(p.path) was taken down: its URL answers nothing" : p.path, status: status,
                                              pictures: [row(p, removed: removed)]))
            case "remove":
                guard let picture, picture != "latest" else {
                    throw GalleryFailure("bad-request", "name the picture to take down: its URL, its token or its path under storage.dir "
                                         + "(not latest: the newest changes with every session)")
                }
                let (p, wasRemoved) = try find(picture, in: index)
                var done: [String] = []
                if !wasRemoved {
                    let at = now()
                    try removedList.add(p.token, at: at)
                    try index.remove(token: p.token, at: at)
                    removed(p.token)
                    done.append("taken down (its URL answers nothing now)")
                }
                if deleteFile {
                    let file = "\(photosDir)/\(p.path)"
                    // Only inside storage.dir: a folder on the way that is a link (an older index) is not followed.
                    do {
                        try BeneathFile.unlink(p.path, under: photosDir)
                        done.append("its file \(file) deleted")
                    } catch where error.errno == ENOENT {
                        done.append("its file \(file) was already gone")
                    } catch {
                        let why = error.errno == ELOOP ? "a folder on its way is a symbolic link (only a file inside storage.dir is deleted)" : "\(error)"
                        throw GalleryFailure("internal", "\(p.path) \(done.isEmpty ? "was already taken down" : done.joined(separator: "; ")), "
                                             + "but its file \(file) could not be deleted: \(why)")
                    }
                }
                let message = "\(p.path): " + (done.isEmpty ? "already taken down (its file stays; --delete-file deletes it)" : done.joined(separator: "; "))
                log.notice("gallery: uid \(uid): \(message)")
                return .success(GalleryAnswer(message: message, status: status, pictures: [row(p, removed: true)]))
            case "rebuild":
                if let lost = keepIndex() { throw GalleryFailure("io-error", lost) }
                let removals = try removedList.load()
                let n = try index.rebuild(photosDir: photosDir, tokens: tokens, folderID: folders.id(of: photosDir), removals: removals, log: log)
                // True to its words: the file it says was made is there, and is the one written.
                guard access(settings.index, F_OK) == 0, !index.hasMoved() else {
                    throw GalleryFailure("io-error", "index \(settings.index) was rebuilt, but its file \(access(settings.index, F_OK) == 0 ? "was replaced" : "is gone") "
                                         + "meanwhile; photoboothd makes it again within 2 s (photoboothctl gallery says when)")
                }
                let message = "index \(settings.index) made again from the photos in \(photosDir): \(n.served) pictures served, "
                    + "\(n.removed) taken down (from \(removedList.path)); every earlier URL is the same"
                log.notice("gallery: uid \(uid): \(message)")
                return .success(GalleryAnswer(message: message, status: status))
            case "test-alert":
                guard !settings.alertURL.isEmpty else {
                    throw GalleryFailure("unavailable", "gallery.alert_url is empty: there is no webhook to send alerts to (set it, then "
                                         + "systemctl restart photobooth-gallery)")
                }
                let id = try index.recordAlert("test", active: true, message: "a test alert (photoboothctl gallery test-alert, uid \(uid))", at: now())
                let message = "test alert \(id) recorded: photobooth-gallery POSTs it to \(settings.alertURL) within a few seconds, "
                    + "not held back by gallery.alert_interval (journalctl -u photobooth-gallery says when it was sent, or why not)"
                log.notice("gallery: uid \(uid): \(message)")
                return .success(GalleryAnswer(message: message, status: status))
            default:
                return .failure(GalleryFailure("bad-request", "unknown gallery action '\(action)'; known: status, url, remove, rebuild, test-alert"))
            }
        } catch let failure as GalleryFailure {
            return .failure(failure)
        } catch {
            return .failure(GalleryFailure("internal", "\(error)"))
        }
    }

    /// Makes the index again when its file was deleted or replaced while the daemon runs
    /// (``PictureIndex/hasMoved()``, ``PictureIndex/remake(photosDir:tokens:folderID:removals:now:)``: from the
    /// photos in force and ``RemovedPictures``, as at the start; photobooth-gallery then reads the new file),
    /// logged once. Called by the keeper's thread (``startKeeping(everyMilliseconds:)``), `status` and `rebuild`.
    /// Blocks on the file system and SQLite.
    /// - Returns: nil when the index is there (or was just made again), else why it could not be made (logged once while it lasts).
    @discardableResult
    public func keepIndex() -> String? {
        guard settings.enabled, let index, let tokens else { return nil }
        guard index.hasMoved() else {
            keepTold.withLock { $0 = nil }
            return nil
        }
        let dir = photosDir
        do {
            let removals: [String: Int64]
            do { removals = try removedList.load() } catch { throw GalleryFailure("bad-file", "\(error)") }
            if let n = try index.remake(photosDir: dir, tokens: tokens, folderID: folders.id(of: dir), removals: removals, now: now()) {
                log.warning("gallery: index \(settings.index) was deleted or replaced while photoboothd used it; made again from the photos in \(dir): "
                            + "\(n.served) pictures served, \(n.removed) taken down, every URL the same")
            }
            keepTold.withLock { $0 = nil }
            return nil
        } catch {
            // Its folder is not made here: it carries removed-pictures.txt and the group the gallery reads through.
            let folder = directoryName(of: settings.index)
            let gone = access(folder, F_OK) != 0
                ? " (its folder \(folder) is not there: install.sh makes it, with the group photobooth-photos; the index is made again once it is)" : ""
            let why = "index \(settings.index) was deleted or replaced while photoboothd used it, and could not be made again: \(error)\(gone)"
            if keepTold.withLock({ told in defer { told = why }; return told != why }) { log.error("gallery: \(why)") }
            return why
        }
    }

    /// Starts the keeper's thread (`pb-index`): ``keepIndex()`` every `everyMilliseconds` (on
    /// CLOCK_MONOTONIC), so a deleted index is made again whether or not a session or a command comes.
    /// - Returns: false when no thread could be made (logged; `status` and `rebuild` still mend it).
    @discardableResult
    public func startKeeping(everyMilliseconds: Int64 = 2000) -> Bool {
        guard settings.enabled, index != nil else { return true }
        let started = keeper.start { [self] w in
            while w.waitForWork(until: Monotonic.now().adding(milliseconds: everyMilliseconds)) != .stop {
                keepIndex()
            }
        }
        if !started { log.error("gallery: no thread to watch the index (pthread_create failed): a deleted index is made again at the next status or rebuild") }
        return started
    }

    /// Stops the keeper's thread (waits up to 2 s for a remake under way).
    public func stopKeeping() { _ = keeper.finish(timeoutMilliseconds: 2000) }

    private func row(_ p: IndexedPicture, removed: Bool) -> GalleryPicture {
        GalleryPicture(token: p.token, path: p.path, url: url(p.token), removed: removed, savedAt: p.savedAt)
    }

    /// The picture `name` means: `latest` (or none), a token, a URL with `/p/TOKEN`, or a path
    /// under `storage.dir` (absolute, or `DATE/NAME`).
    private func find(_ name: String?, in index: PictureIndex) throws -> (IndexedPicture, removed: Bool) {
        let name = name ?? "latest"
        if name == "latest" {
            guard let p = try index.recent(limit: 1).first else { throw GalleryFailure("not-found", "no picture is served yet") }
            return (p, false)
        }
        var token = name
        if let r = name.firstRange(of: "/p/") {
            token = String(name[r.upperBound...].prefix { $0 != "/" && $0 != "." && $0 != "?" })
        }
        if PictureTokens.isWellFormed(token) {
            guard let found = try index.any(token: token) else {
                throw GalleryFailure("not-found", "no picture has the token \(token) (made with this booth's secret?)")
            }
            return found
        }
        var path = name
        if path.hasPrefix("/") {
            // Both as the file system resolves them: storage.dir may be relative (--simulate) or a link.
            let dir = photosDir
            let real = GalleryAdmin.realPath(dir) ?? dir
            let folder = GalleryAdmin.realPath(directoryName(of: path)).map { $0 + "/" + (path.split(separator: "/").last.map(String.init) ?? "") }
            guard let full = folder, full.hasPrefix(real + "/") else {
                throw GalleryFailure("bad-request", "\(name) is not under storage.dir (\(dir)); give a token, a URL, DATE/NAME or latest")
            }
            path = String(full.dropFirst(real.count + 1))
        }
        guard let found = try index.picture(path: path) else {
            throw GalleryFailure("not-found", "\(path) is not in the index (a capture or picture under \(photosDir): DATE/booth-N-picture.jpg); "
                                 + "give a token, a URL, DATE/NAME or latest")
        }
        return found
    }
}

extension GalleryAdmin {
    /// `realpath(3)` of `path`; nil when it does not resolve.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension GalleryFailure: CustomStringConvertible {
    public var description: String { message }
}
