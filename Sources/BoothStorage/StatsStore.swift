import BoothClock
import BoothCore
import BoothPorts
import BoothSystem
import FoundationEssentials
import Glibc
import Synchronization

// BoothStats and BoothCounters (one type for the six counts) are the storage port's: BoothPorts/Storage.swift.

/// Keeps ``BoothStats`` in a JSON file, written atomically (temp file, fsync, rename) on a thread of its
/// own so the main loop never waits for the disk. At start the totals are reconciled with the photo files:
/// sessions whose photos are on disk but not in the totals are counted (as completed, with their captures);
/// a missing or unreadable file is rebuilt from the photos.
public final class StatsStore: StatsRecording {
    /// The file: `<storage.dir>/.photobooth-stats.json` (the directory ``follow(directory:)`` moved to).
    public var path: String { file.withLock { $0 } }
    private let file: Mutex<String>
    private let log: Logger
    private let now: @Sendable () -> Int
    private struct State {
        var stats: BoothStats
        var lastCounters = BoothCounters()
        var dirty = false
    }
    private let state: Mutex<State>
    private let writer = WorkerThread(name: "stats")

    /// The stats file's name inside the photos directory.
    public static let fileName = ".photobooth-stats.json"

    /// - Parameters:
    ///   - directory: `storage.dir`.
    ///   - now: wall-clock epoch seconds (injected for tests).
    public init(directory: String, log: Logger, now: @escaping @Sendable () -> Int = { Int(time(nil)) }) {
        file = Mutex("\(directory)/\(StatsStore.fileName)")
        self.log = log
        self.now = now
        state = Mutex(State(stats: BoothStats(since: now())))
    }

    /// Reads the file, adds sessions found in the photo files after `lastSession`, writes the result and starts
    /// the writer thread. Call once, after the photos directory is prepared.
    /// - Parameter directory: the photos directory to scan (date folders of `booth-NNNNNN-S.jpg`).
    public func open(scanning directory: String) {
        var stats: BoothStats
        var note: String
        if let bytes = try? AtomicFile.read(path), let saved = StatsStore.decode(bytes) {
            stats = saved
            note = "stats: \(stats.sessions) sessions since \(StatsStore.dateText(stats.since))"
        } else {
            stats = BoothStats(since: now())
            note = access(path, F_OK) == 0 ? "stats: \(path) unreadable, rebuilt from the photos"
                                           : "stats: no \(StatsStore.fileName) yet, counted from the photos"
            stats.lastSession = 0
        }
        let photos = StatsStore.captureFiles(in: directory)
        let missed = StatsStore.uncountedCapturesOfLastSession(stats, photos: photos)
        let lastCounted = stats.lastSession
        let found = StatsStore.reconcile(&stats, photos: photos)
        if missed > 0 { note += "; \(missed) capture(s) of session \(lastCounted) saved after the totals were last written were added" }
        if found > 0 { note += "; \(found) session(s) found in the photos that the totals missed were added" }
        log.info(note)
        state.withLock { $0.stats = stats; $0.dirty = true }
        if !writer.start({ [self] w in writerLoop(w) }) {
            log.error("stats: no thread for writing the totals (pthread_create failed: the thread limit); they are not saved")
        }
    }

    /// Adds the change since the previous call (`counters` are the runtime's counts since start) and
    /// marks the totals for writing. `highestSession`: the session of the newest capture or picture saved
    /// (it moves on with a session's first save; ``BoothStats/add(_:since:highestSession:)`` relies on it).
    public func record(_ counters: BoothCounters, highestSession: Int) {
        let changed = state.withLock { s -> Bool in
            let old = s.lastCounters
            guard counters != old || highestSession > s.stats.lastSession else { return false }
            s.stats.add(counters, since: old, highestSession: highestSession)
            s.lastCounters = counters
            s.dirty = true
            return true
        }
        if changed { writer.wake() }
    }

    /// See ``StatsRecording/follow(directory:)``: the next write (soon, by the writer thread) goes to
    /// `<directory>/.photobooth-stats.json`.
    public func follow(directory: String) {
        file.withLock { $0 = "\(directory)/\(StatsStore.fileName)" }
        state.withLock { $0.dirty = true }
        writer.wake()
    }

    /// Zeroes the totals and restarts `since`; returns the totals as they were.
    @discardableResult
    public func reset() -> BoothStats {
        let old = state.withLock { s -> BoothStats in
            let old = s.stats
            var fresh = BoothStats(since: now())
            fresh.lastSession = old.lastSession
            // The current session's captures so far are not in the fresh totals: what it had counted is unknown.
            fresh.capturesBeforeLastSession = nil
            s.stats = fresh
            s.dirty = true
            return old
        }
        writer.wake()
        log.notice("stats reset (were \(old.sessions) sessions since \(StatsStore.dateText(old.since)))")
        return old
    }

    /// The totals now.
    public var current: BoothStats { state.withLock { $0.stats } }

    /// Writes what is pending and stops the writer; waits up to `timeoutSeconds`.
    public func finish(timeoutSeconds: Double = 2) {
        writer.finish(timeoutMilliseconds: Int64(max(0, timeoutSeconds) * 1000))
    }

    /// The writer thread: writes the totals each time they are marked, until ``finish(timeoutSeconds:)``
    /// is asked and nothing is left to write.
    private func writerLoop(_ w: WorkerThread) {
        while w.waitForWork({ state.withLock { $0.dirty } }) != .stop {
            let snapshot = state.withLock { s -> BoothStats? in
                defer { s.dirty = false }
                return s.dirty ? s.stats : nil
            }
            if let snapshot {
                do {
                    let data = try AtomicFile.jsonEncoder(pretty: true).encode(snapshot)
                    try AtomicFile.write(Array(data) + [0x0A], to: path, durable: true, replace: true)
                } catch {
                    log.warning("stats not saved: \(error)")
                }
            }
        }
    }

    // MARK: Reconciling with the files

    /// The totals in a stats file's bytes, or nil when they are not JSON of ``BoothStats`` or hold values
    /// no booth reaches (a negative count, a count over ``maxCount``, a session number over 999,999,999, a
    /// negative `since`): counting on from those could overflow, so such a file is rebuilt from the photos.
    static func decode(_ bytes: [UInt8]) -> BoothStats? {
        guard let stats = try? JSONDecoder().decode(BoothStats.self, from: Data(bytes)) else { return nil }
        let counts = BoothCounters.all.map { stats.counters[keyPath: $0] }
        guard counts.allSatisfy({ (0...maxCount).contains($0) }), (0...999_999_999).contains(stats.lastSession),
              stats.since >= 0 else { return nil }
        return stats
    }

    /// The highest count a stats file may hold: a trillion, so adding a night's sessions never overflows.
    static let maxCount = 1_000_000_000_000

    /// Session number and name of every capture file in the date folders of `directory` (composed
    /// pictures are not captures and are left out).
    static func captureFiles(in directory: String) -> [(session: Int, name: String)] {
        var out: [(Int, String)] = []
        for folder in listDirectory(directory) where PhotoStore.isDateFolder(folder) {
            for name in listDirectory("\(directory)/\(folder)") where !PhotoFileName.isPicture(name) {
                if let n = PhotoFileName.sessionNumber(in: name) { out.append((n, name)) }
            }
        }
        return out
    }

    /// Adds to `stats` the sessions of `photos` numbered above `stats.lastSession` (each a completed session,
    /// each file a capture) and moves `lastSession` to the highest number found. Returns the sessions added.
    ///
    /// The captures of session `lastSession` itself on disk beyond what the totals counted for it (`captures`
    /// minus ``BoothStats/capturesBeforeLastSession``) are added too: a power cut can keep a capture's save
    /// (fsynced first) and lose the totals' write that counted it. Never subtracts (a cancelled series'
    /// deleted captures were counted and are gone).
    static func reconcile(_ stats: inout BoothStats, photos: [(session: Int, name: String)]) -> Int {
        stats.captures += uncountedCapturesOfLastSession(stats, photos: photos)
        let newer = photos.filter { $0.session > stats.lastSession }
        let sessions = Set(newer.map(\.session))
        stats.sessions += sessions.count
        stats.completed += sessions.count
        stats.captures += newer.count
        let highest = photos.map(\.session).max() ?? 0
        if highest > stats.lastSession {
            stats.lastSession = highest
            stats.capturesBeforeLastSession = stats.captures - newer.filter { $0.session == highest }.count
        }
        return sessions.count
    }

    /// Captures of session `stats.lastSession` in `photos` beyond those the totals counted for it (0 when
    /// ``BoothStats/capturesBeforeLastSession`` is not known, or when fewer are on disk than were counted).
    static func uncountedCapturesOfLastSession(_ stats: BoothStats, photos: [(session: Int, name: String)]) -> Int {
        guard let before = stats.capturesBeforeLastSession else { return 0 }
        let onDisk = photos.filter { $0.session == stats.lastSession }.count
        return max(0, before + onDisk - stats.captures)
    }

    /// Epoch seconds as local `YYYY-MM-DD HH:MM:SS` (BoothSystem's ``TimeText/local(_:)``).
    public static func dateText(_ epoch: Int) -> String {
        TimeText.local(Int64(epoch))
    }
}
