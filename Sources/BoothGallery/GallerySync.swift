import BoothClock
import BoothCore
import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import Glibc
import Synchronization

/// How long the sync waits after its `failures`-th failure in a row before it tries the remote
/// again: 2 s, doubled each time, at most 30 s (milliseconds), so a remote that is back is noticed
/// within 30 s (one short rclone run that often while it is away costs little).
public struct SyncBackoff: Sendable, Equatable {
    public var firstMilliseconds: Int64
    public var maxMilliseconds: Int64
    public init(firstMilliseconds: Int64 = 2000, maxMilliseconds: Int64 = 30_000) {
        self.firstMilliseconds = firstMilliseconds
        self.maxMilliseconds = maxMilliseconds
    }

    /// The wait after `failures` (≥ 1) failures in a row, in milliseconds.
    public func delay(afterFailures failures: Int) -> Int64 {
        var d = firstMilliseconds
        for _ in 1..<max(1, failures) where d < maxMilliseconds { d *= 2 }
        return min(d, maxMilliseconds)
    }
}

/// Where rclone puts the picture `token` at `remote` (`gallery.sync_remote`): `REMOTE:path/TOKEN.jpg`,
/// `REMOTE:TOKEN.jpg` for a remote's root, `/folder/TOKEN.jpg` for a local folder. The token is the
/// file's name so that booths sharing a remote never write over each other (each has its own secret).
public func syncDestination(remote: String, token: String) -> String {
    let base = syncFolder(remote: remote)
    return base.hasSuffix(":") || base.hasSuffix("/") ? "\(base)\(token).jpg" : "\(base)/\(token).jpg"
}

/// The remote's folder itself (`remote` without a trailing `/`; `REMOTE:` for a remote's root).
public func syncFolder(remote: String) -> String {
    var base = remote
    while base.count > 1 && base.hasSuffix("/") && !base.hasSuffix(":/") { base.removeLast() }
    return base
}

/// The sync's figures, for `/health` and the logs.
public struct SyncStats: Sendable, Equatable {
    /// Pictures copied to the remote since the start (each one rclone copyto that succeeded).
    public var copied = 0
    /// Pictures deleted at the remote since the start (taken down with `photoboothctl gallery remove`).
    public var deleted = 0
    /// rclone runs that failed since the start.
    public var failures = 0
    /// Pictures served that the remote has not got yet, after the last pass.
    public var pending = 0
    /// Why the last rclone run failed (its last line on stderr), nil once one succeeded since.
    public var lastError: String?
    /// Passes made over the index (each time it changed, or a retry came).
    public var passes = 0
    /// Pictures taken down that the remote still has, after the last look.
    public var pendingRemovals = 0
    /// When rclone last succeeded (seconds since 1970); nil: not since the start.
    public var lastSuccessAt: Int64?
    /// When rclone last failed (seconds since 1970); nil: not since the start.
    public var lastErrorAt: Int64?
    /// Since when pictures or removals have waited for an away remote (seconds since 1970); nil: caught up.
    public var behindSince: Int64?
    /// Why the sync cannot look at all now (its ledger in `gallery.state` or the index cannot be
    /// opened): nothing is copied or counted meanwhile; nil once both are open.
    public var notCopying: String?
}

/// Copies every picture the index serves to `gallery.sync_remote` with rclone (Debian's `rclone`,
/// any of its remotes, `rclone copyto`), as `TOKEN.jpg`, oldest first, and deletes there
/// (`rclone deletefile`) the ones taken down: photobooth-gallery's own thread (`pb-sync`), so a slow
/// or absent remote never holds a request, and never a session (the daemon has no network).
///
/// What was copied is kept in a ``SyncLedger`` (`gallery.state`/sync.sqlite; an older gallery's in
/// `gallery.cache` is moved there at the start, ``GalleryStateFolder``) once rclone says so:
/// a picture is copied once, across restarts; one copied just before a crash, not yet recorded, is
/// copied again to the same name, which rclone skips as unchanged (same size and time). The index
/// is looked at every second (`PRAGMA data_version`); a failure waits ``SyncBackoff`` before the
/// next try (2 s to 30 s), logged once when the remote goes away (with the whole backlog: pictures not
/// copied, removals not done) and once when it is back. The backlog, the last error and the last
/// success are in ``stats`` and ``healthText()`` (`/health`); a backlog waiting
/// `gallery.sync_alert` raises the `sync-behind` alert, and its end once caught up (a raised alert is
/// kept in `gallery.state`/sync-behind, so a restart neither raises it again nor forgets its end).
/// rclone runs with `--config gallery.sync_config`, HOME and its cache in `gallery.cache` (the
/// unit's ProtectHome), its signals unblocked, and is killed after `runTimeoutMilliseconds`.
public final class GallerySync: Sendable {
    public struct Config: Sendable {
        /// `gallery.sync_remote`: `REMOTE:path` or an absolute folder.
        public var remote: String
        /// `gallery.sync_config`: the rclone config file (`--config`).
        public var rcloneConfig: String
        /// The gallery's folder for what can be made again (`gallery.cache`): rclone's HOME and cache, its last stderr.
        public var cacheDir: String
        /// The gallery's folder for what must not be lost (`gallery.state`): the ledger.
        public var stateDir: String
        /// `storage.dir`: the index's paths are relative to it.
        public var photosDir: String
        /// The rclone program.
        public var rclone: String
        public var backoff: SyncBackoff
        /// How often the index is looked at, in milliseconds.
        public var pollMilliseconds: Int64
        /// A run of rclone longer than this is killed (SIGTERM) and counts as a failure, in milliseconds.
        public var runTimeoutMilliseconds: Int64
        /// `gallery.expiry` in seconds: a picture saved longer ago is no longer served, so not copied, and deleted at the remote.
        public var expirySeconds: Int64?
        /// `gallery.sync_alert` in milliseconds: a backlog waiting this long raises the `sync-behind` alert; nil: never.
        public var alertAfterMilliseconds: Int64?

        public init(remote: String, rcloneConfig: String, cacheDir: String, stateDir: String, photosDir: String, rclone: String = "/usr/bin/rclone",
                    backoff: SyncBackoff = SyncBackoff(), pollMilliseconds: Int64 = 1000, runTimeoutMilliseconds: Int64 = 600_000) {
            self.remote = remote
            self.rcloneConfig = rcloneConfig
            self.cacheDir = cacheDir
            self.stateDir = stateDir
            self.photosDir = photosDir
            self.rclone = rclone
            self.backoff = backoff
            self.pollMilliseconds = pollMilliseconds
            self.runTimeoutMilliseconds = runTimeoutMilliseconds
        }

        /// From `[gallery]` and `storage.dir`.
        public init(_ s: Settings) {
            self.init(remote: s.gallery.syncRemote, rcloneConfig: s.gallery.syncConfig, cacheDir: s.gallery.cache, stateDir: s.gallery.state,
                      photosDir: s.storage.dir)
            expirySeconds = s.gallery.expiryMilliseconds.map { Int64($0 / 1000) }
            alertAfterMilliseconds = s.gallery.syncAlertMilliseconds.map(Int64.init)
        }
    }

    public let config: Config
    /// The ledger's file name in `gallery.state`.
    public static let ledgerName = "sync.sqlite"
    private let indexPath: String
    private let log: Logger
    private let thread = WorkerThread(name: "pb-sync")
    private struct State {
        var stats = SyncStats()
        var child: pid_t?
        var retryNow = false
        var stopping = false
        /// Sources found missing (a cancelled series' captures deleted, a file removed by hand), said once each.
        var missingSaid: Set<String> = []
    }
    private let state = Mutex(State())

    private let alert: @Sendable (Bool, String) -> Void

    /// - Parameters:
    ///   - indexPath: `gallery.index`, opened read-only by the sync thread (a connection of its own).
    ///   - alert: told (on the sync's thread) when the backlog has waited `alertAfterMilliseconds`
    ///     (true, what waits) and when it is caught up after that (false); must return at once.
    public init(config: Config, indexPath: String, log: Logger, alert: @escaping @Sendable (_ active: Bool, _ message: String) -> Void = { _, _ in }) {
        self.config = config
        self.indexPath = indexPath
        self.log = log
        self.alert = alert
    }

    /// The sync's line for `/health`: `sync to REMOTE: caught up, …`, `… behind since …`, or `… not copying: WHY`
    /// while its ledger or the index cannot be opened.
    public func healthText() -> String {
        let s = stats
        var text = "sync to \(config.remote): "
        if let why = s.notCopying {
            text += "not copying: \(GallerySync.clipped(why))"
            if let since = s.behindSince { text += "; behind since \(GallerySync.utc(since))" }
        } else if let since = s.behindSince {
            text += "behind since \(GallerySync.utc(since)): \(GallerySync.backlog(s))"
            text += "; last error: \(GallerySync.clipped(s.lastError ?? "none"))"
            text += "; last success: " + (s.lastSuccessAt.map(GallerySync.utc) ?? "none since the start")
        } else {
            text += s.pending + s.pendingRemovals == 0 ? "caught up" : "copying, \(GallerySync.backlog(s))"
            if let at = s.lastSuccessAt { text += ", last success \(GallerySync.utc(at))" }
        }
        return text
    }

    /// `2 pictures not copied, 1 removal not done`.
    static func backlog(_ s: SyncStats) -> String {
        "\(counted(s.pending, "picture")) not copied, \(counted(s.pendingRemovals, "removal")) not done"
    }

    /// `2026-12-07 12:03:04 UTC` for `seconds` since 1970 (BoothSystem's ``TimeText/utc(_:)``).
    static func utc(_ seconds: Int64) -> String { TimeText.utc(seconds) }

    /// `text` cut to 300 characters (rclone's last line can be long): `/health` and an alert stay small.
    static func clipped(_ text: String) -> String { text.count <= 300 ? text : String(text.prefix(299)) + "…" }

    /// `45 s`, `12 min` for `milliseconds`.
    static func spoken(milliseconds: Double) -> String {
        let s = Int(milliseconds / 1000)
        return s < 120 ? "\(s) s" : "\(s / 60) min"
    }

    /// The figures so far (thread-safe).
    public var stats: SyncStats { state.withLock { $0.stats } }

    /// Starts the thread (`pb-sync`). - Returns: false when it could not be made (`pthread_create`; logged).
    @discardableResult
    public func start() -> Bool {
        let started = thread.start { [self] w in run(w) }
        if !started { log.error("sync: no thread for it (pthread_create failed): pictures are not copied to \(config.remote)") }
        return started
    }

    /// Tries the remote now, without waiting out the backoff (tests; an operator's restart does the same).
    public func retryNow() {
        state.withLock { $0.retryNow = true }
        thread.wake()
    }

    /// Stops the thread: a running rclone is sent SIGTERM; waits at most `timeoutMilliseconds`.
    public func stop(timeoutMilliseconds: Int64 = 5000) {
        // Under the lock the child is recorded in: one spawned after this look sees `stopping` and is killed at once.
        state.withLock { s in
            s.stopping = true
            if let child = s.child { kill(child, SIGTERM) }
        }
        _ = thread.finish(timeoutMilliseconds: timeoutMilliseconds)
    }

    private func run(_ w: WorkerThread) {
        let ledgerPath = "\(config.stateDir)/\(GallerySync.ledgerName)"
        var ledger: SyncLedger?
        var index: PictureIndex?
        var file: IndexFile?
        var generation = 0
        var seenVersion: Int64 = -1
        var failures = 0
        var retryAt: MonotonicInstant?
        var told: String?
        /// Since when the backlog has waited for an away remote (nil: caught up), and whether `sync-behind` was raised.
        var behindSince: MonotonicInstant?
        var alerted = false
        // A `sync-behind` raised before a restart stands: not raised again, and its end is sent once caught up.
        if let since = loadBehind() {
            behindSince = Monotonic.now()
            alerted = true
            state.withLock { $0.stats.behindSince = since }
            log.notice("sync: behind since \(GallerySync.utc(since)) before this start (\(behindPath), alert sync-behind raised); its end is sent once caught up")
        }
        log.notice("sync: each picture is copied to \(config.remote) with rclone (config \(config.rcloneConfig)); what was copied is kept in \(ledgerPath)")
        while !w.isStopping {
            let now = Monotonic.now()
            let forced = state.withLock { s in defer { s.retryNow = false }; return s.retryNow }
            let due = retryAt.map { now >= $0 } ?? true
            var changed = false
            do {
                if ledger == nil {
                    if try GalleryStateFolder.adoptLedger(from: config.cacheDir, into: config.stateDir) {
                        log.notice("sync: the ledger moved from \(config.cacheDir) to \(ledgerPath) (gallery.state: the cache is safe to empty)")
                    }
                    ledger = try SyncLedger(path: ledgerPath)
                }
                if file == nil { file = IndexFile(try PictureIndex(path: indexPath, readOnly: true), log: log, who: "sync") }
                if let file {
                    // A file the daemon made again (a damaged one moved aside) is another connection: its version starts anew.
                    let (current, g) = file.currentAndGeneration()
                    if g != generation { generation = g; seenVersion = -1 }
                    index = current
                    let v = try current.dataVersion()
                    changed = v != seenVersion
                    seenVersion = v
                }
                if state.withLock({ $0.stats.notCopying }) != nil { state.withLock { $0.stats.notCopying = nil } }
            } catch {
                if told != "\(error)" { log.error("sync: \(error); trying again every \(config.pollMilliseconds) ms"); told = "\(error)" }
                state.withLock { $0.stats.notCopying = "\(error)" }
                file = nil
                index = nil
            }
            if let ledger, let reading = index, (forced || (due && (changed || retryAt != nil))) {
                let result = pass(index: reading, ledger: ledger, stopping: { w.isStopping })
                // A copy cut short by the stop (SIGTERM to rclone) is no failure to report: tried at the next start.
                if w.isStopping { return }
                switch result {
                case .done:
                    if failures > 0 { log.notice("sync: \(config.remote) answers again after \(failures) failed tr\(failures == 1 ? "y" : "ies"); caught up") }
                    failures = 0
                    retryAt = nil
                    if behindSince != nil {
                        behindSince = nil
                        state.withLock { $0.stats.behindSince = nil }
                    }
                    if alerted {
                        alerted = false
                        forgetBehind()
                        alert(false, "sync to \(config.remote) caught up: every picture is there, every removal done")
                    }
                case let .failed(why):
                    failures += 1
                    // An index error may be a connection gone bad: opened again at the next look.
                    if why.hasPrefix("index ") { file = nil; index = nil; generation = 0 }
                    let delay = config.backoff.delay(afterFailures: failures)
                    retryAt = Monotonic.now().adding(milliseconds: delay)
                    let s = stats
                    if behindSince == nil, s.pending + s.pendingRemovals > 0 {
                        behindSince = Monotonic.now()
                        state.withLock { $0.stats.behindSince = Int64(time(nil)) }
                    }
                    if failures == 1 {
                        log.warning("sync: \(why); \(counted(s.pending, "picture")) not copied and \(counted(s.pendingRemovals, "removal")) not done yet, "
                                    + "kept here and tried again with backoff (from \(config.backoff.firstMilliseconds / 1000) s to "
                                    + "\(config.backoff.maxMilliseconds / 1000) s); the booth goes on")
                    } else {
                        log.debug("sync: still failing (\(why)); next try in \(delay) ms")
                    }
                case .stopped:
                    return
                }
            } else if changed, retryAt != nil, let ledger, let reading = index {
                // Waiting out the backoff: the backlog counted again as the index changes (no rclone run).
                _ = try? backlog(index: reading, ledger: ledger)
            }
            if let since = behindSince, !alerted, let after = config.alertAfterMilliseconds,
               Monotonic.now().milliseconds(since: since) >= Double(after) {
                alerted = true
                let s = stats
                let message = "sync to \(config.remote) behind for \(GallerySync.spoken(milliseconds: Monotonic.now().milliseconds(since: since))): "
                    + GallerySync.backlog(s) + "; last error: \(GallerySync.clipped(s.lastError ?? "none"))"
                log.warning("sync: \(message) (alert sync-behind, gallery.sync_alert)")
                saveBehind(stats.behindSince ?? Int64(time(nil)))
                alert(true, message)
            }
            let next = Monotonic.now().adding(milliseconds: config.pollMilliseconds)
            let deadline = retryAt.map { min($0, next) } ?? next
            if w.waitForWork(until: deadline, { state.withLock { $0.retryNow } }) == .stop { return }
        }
    }

    private enum PassResult { case done, failed(String), stopped }

    /// One look at the index: every served picture the ledger lacks copied (oldest first), every
    /// one the ledger has that is no longer served deleted; stops at the first failure.
    private func pass(index: PictureIndex, ledger: SyncLedger, stopping: () -> Bool) -> PassResult {
        let remote = config.remote
        let plan: (toCopy: [IndexedPicture], toDelete: [String])
        do {
            plan = try backlog(index: index, ledger: ledger)
        } catch {
            return .failed("\(error)")
        }
        let (toCopy, toDelete) = plan
        state.withLock { $0.stats.passes += 1 }
        for (n, picture) in toCopy.enumerated() {
            if stopping() { return .stopped }
            // rclone reads the file opened here as the gallery opens it (``BeneathFile``), as its stdin
            // (`--copy-links /proc/self/fd/0`: that very file, never its path again): a folder made a
            // link since the check above sends nothing from outside storage.dir.
            let file: Int32
            do {
                file = try BeneathFile.open(picture.path, under: config.photosDir).fd
            } catch {
                log.info("sync: \(picture.path) is no longer served (\(error)); not copied")
                state.withLock { $0.stats.pending = toCopy.count - n - 1 }
                continue
            }
            let failed = rclone("copyto", ["/proc/self/fd/0", syncDestination(remote: remote, token: picture.token)], flags: ["--copy-links"], stdin: file)
            close(file)
            if let why = failed {
                return .failed("copying \(picture.path) to \(remote): \(why)")
            }
            do {
                try ledger.recordCopied(picture.token, to: remote, at: Int64(time(nil)))
            } catch {
                return .failed("\(picture.path) copied, but \(ledger.path): \(error)")
            }
            state.withLock { s in
                s.stats.copied += 1
                s.stats.pending = toCopy.count - n - 1
                s.stats.lastError = nil
            }
            log.info("sync: \(picture.path) copied to \(syncDestination(remote: remote, token: picture.token))")
        }
        for (n, token) in toDelete.enumerated() {
            if stopping() { return .stopped }
            // `delete --include /TOKEN.jpg` in the remote's folder: a file gone there already (deleted by hand,
            // a crash before the ledger heard) is no error, and a folder gone (exit 3) has it gone too.
            if let why = rclone("delete", [syncFolder(remote: remote)], flags: ["--include", "/\(token).jpg", "--max-depth", "1"], alsoFine: [3]) {
                return .failed("deleting \(token).jpg at \(remote): \(why)")
            }
            do {
                try ledger.forget(token, at: remote)
            } catch {
                return .failed("\(token).jpg deleted, but \(ledger.path): \(error)")
            }
            state.withLock { s in
                s.stats.deleted += 1
                s.stats.pendingRemovals = toDelete.count - n - 1
                s.stats.lastError = nil
            }
            log.info("sync: \(token).jpg deleted at \(remote) (taken down)")
        }
        return .done
    }

    /// `gallery.state`/sync-behind: since when (seconds since 1970, decimal) the backlog waited when
    /// `sync-behind` was raised; there until its end is raised, so a restart neither raises it again
    /// nor forgets to end it.
    private var behindPath: String { "\(config.stateDir)/\(GallerySync.behindName)" }
    /// The raised `sync-behind`'s file name in `gallery.state`.
    public static let behindName = "sync-behind"

    /// The time in ``behindPath``; nil when there is none (or it cannot be read: logged).
    private func loadBehind() -> Int64? {
        do {
            let bytes = try AtomicFile.read(behindPath)
            guard let since = Int64(String(decoding: bytes.filter { $0 != 0x0A }, as: UTF8.self)) else {
                log.warning("sync: \(behindPath) does not hold a time; taken as raised now")
                return Int64(time(nil))
            }
            return since
        } catch {
            if error.errno != ENOENT { log.warning("sync: \(error); sync-behind taken as not raised") }
            return nil
        }
    }

    /// Writes ``behindPath`` durably (temp, fsync, rename, fsync of the folder); a failure is logged.
    private func saveBehind(_ since: Int64) {
        do {
            try AtomicFile.write(Array("\(since)\n".utf8), to: behindPath, durable: true, replace: true, mode: 0o600)
        } catch {
            log.warning("sync: \(error); a restart before the sync catches up will not send sync-behind's end")
        }
    }

    /// Deletes ``behindPath`` (`unlink(2)`, then fsync of `gallery.state`); a failure is logged.
    private func forgetBehind() {
        guard unlink(behindPath) == 0 || errno == ENOENT else {
            log.warning("sync: \(FileError(call: "unlink", errno: errno, path: behindPath)); sync-behind may be taken as raised at the next start")
            return
        }
        do { try AtomicFile.syncDirectory(config.stateDir) } catch { log.warning("sync: \(error)") }
    }

    /// What the remote lacks, counted into ``stats`` (`pending`, `pendingRemovals`): every picture the
    /// gallery serves (its file still there, not past `gallery.expiry`) the ledger has not recorded,
    /// oldest first, and every token the ledger has that is no longer served. The files are looked at
    /// through ``PhotoFolderListing`` (a listing of each date folder), not opened one by one.
    /// - Throws: ``IndexError`` reading the index or the ledger.
    private func backlog(index: PictureIndex, ledger: SyncLedger) throws(IndexError) -> (toCopy: [IndexedPicture], toDelete: [String]) {
        let remote = config.remote
        let served = try index.served()
        let copied = try ledger.copied(to: remote)
        // What the gallery serves: a file still there (a cancelled series' captures are deleted, rows
        // stay), not past gallery.expiry. The rest is not copied, and deleted where it was.
        let expiredBefore = config.expirySeconds.map { Int64(time(nil)) - $0 }
        var present: [IndexedPicture] = []
        // Each date folder listed once (no open per picture); what the listing does not show is opened below.
        var listing = PhotoFolderListing(photosDir: config.photosDir)
        for p in served where expiredBefore.map({ p.savedAt >= $0 }) ?? true {
            if listing.lists(p.path) {
                present.append(p)
                continue
            }
            // Opened as the gallery opens it (``BeneathFile``): nothing outside storage.dir or through a link is copied.
            do {
                close(try BeneathFile.open(p.path, under: config.photosDir).fd)
                present.append(p)
            } catch {
                if state.withLock({ $0.missingSaid.insert(p.token).inserted }) {
                    log.info("sync: \(p.path) is indexed but " + (error.errno == ENOENT ? "its file is gone" : "the gallery does not serve it (\(error))")
                             + "; not copied (and deleted at \(remote) if it was)")
                }
            }
        }
        let servedTokens = Set(present.map(\.token))
        let toCopy = present.filter { !copied.contains($0.token) }
        let toDelete = copied.subtracting(servedTokens).sorted()
        state.withLock { $0.stats.pending = toCopy.count; $0.stats.pendingRemovals = toDelete.count }
        return (toCopy, toDelete)
    }

    /// Runs `rclone COMMAND FLAGS… COMMON-FLAGS -- PATHS…`, its stdin `stdin` (a descriptor the
    /// caller keeps and closes) or /dev/null. - Returns: nil when it exited 0 or with one of
    /// `alsoFine`, else why not (its last line on stderr, or how it ended).
    private func rclone(_ command: String, _ paths: [String], flags: [String] = [], alsoFine: Set<Int32> = [], stdin: Int32? = nil) -> String? {
        let errors = "\(config.cacheDir)/rclone-last.log"
        // The subcommand and its flags, then `--`: a path is never read as a flag.
        let argv = [config.rclone, command] + flags + ["--config", config.rcloneConfig, "--retries", "1", "--low-level-retries", "2",
                                                       "--contimeout", "10s", "--timeout", "60s", "--stats", "0", "-q", "--"] + paths
        let environment = ["HOME=\(config.cacheDir)", "RCLONE_CACHE_DIR=\(config.cacheDir)/rclone", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"]
        let outcome = ChildProcess.run(argv, environment: environment, output: errors, stdin: stdin, timeoutMilliseconds: config.runTimeoutMilliseconds,
                                       started: { pid in state.withLock { s in
                                           s.child = pid
                                           if s.stopping { kill(pid, SIGTERM) }
                                       } },
                                       reaped: { state.withLock { $0.child = nil } })
        guard case let .exited(code) = outcome, code == 0 || alsoFine.contains(code) else {
            state.withLock { $0.stats.failures += 1 }
            let said = lastLine(of: errors)
            let why: String
            switch outcome {
            case .exited(let code): why = "rclone exited \(code)" + (said.map { ": \($0)" } ?? "")
            case .signalled(let signal): why = "rclone ended by signal \(signal)"
            case .timedOut: why = "rclone did not finish within \(config.runTimeoutMilliseconds / 1000) s (killed)"
            case .notStarted(let e): why = "\(config.rclone) could not be started (\(SystemCallError.reason(of: e))): apt-get install rclone"
            }
            state.withLock { s in
                s.stats.lastError = why
                s.stats.lastErrorAt = Int64(time(nil))
            }
            return why
        }
        state.withLock { $0.stats.lastSuccessAt = Int64(time(nil)) }
        return nil
    }

    /// The last line with something on it of rclone's stderr file (``AtomicFile/read(_:)``), nil without one.
    private func lastLine(of path: String) -> String? {
        guard let bytes = try? AtomicFile.read(path) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
        return lines.last { $0.contains { !$0.isWhitespace } }.map { String($0.drop { $0.isWhitespace }) }
    }
}

/// A program run to its end from the calling thread (`posix_spawn`, then a blocking `waitid` and `waitpid`;
/// a thread of its own, `pb-child-timer`, waits for the timeout on a condition and sends SIGTERM): stdin from
/// /dev/null (or a descriptor given), stdout and stderr to `output` (truncated), the signal mask cleared and SIGTERM, SIGINT
/// and SIGPIPE at their defaults (the gallery's threads block SIGTERM and SIGINT for `sigwait`).
enum ChildProcess {
    enum Outcome: Equatable {
        case exited(Int32)
        case signalled(Int32)
        case timedOut
        /// `posix_spawn` failed with this errno (ENOENT: not installed).
        case notStarted(Int32)
    }

    /// The timeout's view of a child: whether it has ended (then it is never signalled) and whether it was killed.
    private struct Watch { var ended = false, killed = false }

    /// - Parameters:
    ///   - stdin: the child's stdin (`dup2` to 0; the caller keeps and closes its own); nil: /dev/null.
    ///   - started: told the child's pid once it runs; `reaped`: told once it has ended, before `waitpid` collects it
    ///     (so nobody signals its pid once it may be reused).
    ///   - startTimer: starts the timeout's thread (`pthread_create`, ``WorkerThread/start(_:)``); false when it
    ///     could not be made, and the calling thread then keeps the timeout itself (a test's fails on purpose).
    static func run(_ argv: [String], environment: [String], output: String, stdin: Int32? = nil, timeoutMilliseconds: Int64,
                    started: (pid_t) -> Void, reaped: () -> Void,
                    startTimer: (WorkerThread, @escaping @Sendable (WorkerThread) -> Void) -> Bool = { $0.start($1) }) -> Outcome {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGPIPE] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup($0) } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, cEnv)
        guard rc == 0 else { return .notStarted(rc) }
        started(pid)
        // The timeout: a thread waits for the deadline on its condition (woken at once when the child ends
        // first) and sends SIGTERM, unless the child has ended: `ended` is set, under the same lock, before
        // the child is collected, so its pid is never signalled once it may be reused.
        let watch = Mutex(Watch()), child = pid
        let timer = WorkerThread(name: "pb-child-timer")
        let deadline = Monotonic.now().adding(milliseconds: timeoutMilliseconds)
        let timing = startTimer(timer) { w in
            guard w.waitForWork(until: deadline) == .timeout else { return }
            watch.withLock { s in
                guard !s.ended else { return }
                kill(child, SIGTERM)
                s.killed = true
            }
        }
        // No thread for the timeout (the thread limit): the child still runs to its end, its timeout kept from
        // here by looking every 20 ms (not killed at once, which would fail every sync as a timeout).
        if !timing { return collect(pid, deadline: deadline, reaped: reaped) }
        // Blocks until the child has ended, leaving it to be collected (WNOWAIT).
        var info = siginfo_t()
        let waited = retryingEINTR { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
        let killed = watch.withLock { s in s.ended = true; return s.killed }
        timer.finish(timeoutMilliseconds: nil)
        reaped()
        var status: Int32 = 0
        let r = retryingEINTR { waitpid(pid, &status, 0) }
        guard waited == 0, r == pid else { return .exited(-1) }
        if killed { return .timedOut }
        return outcome(status)
    }

    /// The child `pid` waited for from the calling thread without a timer thread: looked at every 20 ms,
    /// sent SIGTERM once `deadline` passes; `reaped` told once it is collected.
    private static func collect(_ pid: pid_t, deadline: MonotonicInstant, reaped: () -> Void) -> Outcome {
        var status: Int32 = 0
        var killed = false
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { reaped(); break }
            if r < 0 && errno != EINTR { reaped(); return .exited(-1) }
            if !killed && Monotonic.now() >= deadline {
                kill(pid, SIGTERM)
                killed = true
            }
            usleep(20_000)
        }
        return killed ? .timedOut : outcome(status)
    }

    /// A collected child's wait status as an outcome.
    private static func outcome(_ status: Int32) -> Outcome {
        // WIFEXITED / WEXITSTATUS / WTERMSIG, written out (macros Swift does not import).
        if status & 0x7f == 0 { return .exited((status >> 8) & 0xff) }
        return .signalled(status & 0x7f)
    }
}
