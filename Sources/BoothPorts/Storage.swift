import BoothCore
import BoothSystem
import Glibc

/// A failed file-system (or socket) call: which call, its errno, and the path: BoothSystem's
/// ``SystemCallError`` (`call`, `errno`, `path`, `isNoSpace`), under the storage port's name.
public typealias FileError = SystemCallError

/// The photos directory as the runtime uses it (BoothStorage's `PhotoStore`): date folders of
/// captures and pictures named by session number and shot, written atomically and durably, never
/// overwritten, with session numbers that never repeat. Thread-safe; the calls that write run on the
/// storage thread (``saveCapture(_:session:shot:directoryNotSynced:)``, ``delete(path:)``) or at
/// start (``prepare()``); the others are cheap (a lock, or one `statvfs`/`stat`).
public protocol PhotoStorage: AnyObject, Sendable {
    /// The photos directory in use (`storage.dir`, or the one ``switchDirectory(to:mount:)`` moved to).
    var directory: String { get }
    /// The number the next session gets.
    var nextSession: Int { get }
    /// Why a session-number record (the folder's, or the booth's own) could not be made at the last prepare
    /// (numbers then follow the photo files and the record that could), or nil.
    var sessionFileProblem: String? { get }
    /// What a power cut can do on the photos directory's file system (vfat, exFAT, tmpfs, unknown; none on
    /// ext4), and temp files the last scan kept because a cut left them sharing a photo's data: operator
    /// words, for the log at start and `status`. Empty when there is nothing to say.
    var powerCutNotes: [String] { get }
    /// A session-number file (the folder's or the booth's) that held no number, with the number used:
    /// operator words for the log, from the last prepare or directory switch. Empty when there is nothing to say.
    var sessionNumberNotes: [String] { get }
    /// Creates the directory if missing, checks it is writable, removes leftover temp files and finds
    /// the next session number. - Throws: ``FileError`` naming the call and path.
    func prepare() throws(FileError)
    /// Takes the next session number and records it in place (not yet durable: ``syncSessionNumber()``,
    /// or the next save, makes it so). Returns at once.
    func allocateSession() -> Int
    /// Makes the number ``allocateSession()`` recorded durable (fdatasync of the session-number file),
    /// so a power cut does not hand it out again; nothing when it is already. Blocks on the disk: for
    /// the storage thread.
    func syncSessionNumber()
    /// Writes `jpeg` as shot `shot` (1-based; 0: the session's picture) of `session`, atomically and
    /// durably. `directoryNotSynced` is called when the file is in place but its folder's fsync failed.
    /// - Returns: the path written.
    /// - Throws: ``FileError``; `isNoSpace` when the file system is full (no partial file is left).
    func saveCapture(_ jpeg: [UInt8], session: Int, shot: Int,
                     directoryNotSynced: (FileError) -> Void) throws(FileError) -> String
    /// Deletes a saved file durably. - Throws: ``FileError`` from `unlink`.
    func delete(path: String) throws(FileError)
    /// Bytes available to the daemon in the directory (`statvfs`: `f_bavail * f_frsize`).
    /// - Throws: ``FileError`` from `statvfs`.
    func freeBytes() throws(FileError) -> UInt64
    /// Why the directory must not be written now with removable media `mount` (`storage.mount`; empty:
    /// none) — the media gone, or the directory not on it — or nil.
    func mountProblem(mount: String) -> String?
    /// Moves to photos directory `path` (a reload with a new `storage.dir`), checked as at start: the
    /// mount check with `mount`, writable, prepared. Session numbers never repeat across the two
    /// directories: the next session is max(the old next, the new directory's next). On a refusal the
    /// old directory stays in use.
    /// - Returns: the next session number in the new directory.
    /// - Throws: ``StorageRefusal`` saying why, for the operator.
    @discardableResult
    func switchDirectory(to path: String, mount: String) throws(StorageRefusal) -> Int
}

extension PhotoStorage {
    /// None: a store that keeps no session-number file.
    public var sessionNumberNotes: [String] { [] }
}

/// Why the photos directory was not changed: the operator-facing reason.
public struct StorageRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Formats a byte count for operators: `"512 MB"`, `"1.5 GB"` (decimal units, as the settings use).
public func formatBytes(_ bytes: UInt64) -> String {
    let units: [(UInt64, String)] = [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "kB")]
    for (size, name) in units where bytes >= size {
        let tenths = (bytes * 10 + size / 2) / size
        return tenths % 10 == 0 ? "\(tenths / 10) \(name)" : "\(tenths / 10).\(tenths % 10) \(name)"
    }
    return "\(bytes) B"
}

/// The names of the photo files, `booth-000042-1.jpg` and `booth-000042-picture.jpg`: pure, shared by
/// storage (which writes them) and the runtime (which counts what was saved).
public enum PhotoFileName {
    /// The file name of shot `shot` (1-based) of `session`; shot 0 names the session's picture.
    public static func name(session: Int, shot: Int) -> String {
        let n = String(session)
        let padded = String(repeating: "0", count: max(0, 6 - n.count)) + n
        return shot == 0 ? "booth-\(padded)-picture.jpg" : "booth-\(padded)-\(shot).jpg"
    }

    /// The session number in a capture or picture file name (`booth-000042-1.jpg` → 42); nil for
    /// other names, and for more than 9 digits (counting on from a stray name must not overflow).
    public static func sessionNumber(in name: String) -> Int? {
        guard name.hasPrefix("booth-"), name.hasSuffix(".jpg") else { return nil }
        let rest = name.dropFirst("booth-".count)
        guard let dash = rest.firstIndex(of: "-") else { return nil }
        let digits = rest[..<dash]
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// True for a composed picture's file name, false for a capture's (and for other names).
    public static func isPicture(_ name: String) -> Bool {
        sessionNumber(in: name) != nil && name.hasSuffix("-picture.jpg")
    }
}

/// The booth's six counts: since this start (the runtime's, `status`) or across restarts (inside
/// ``BoothStats``). One type for both.
public struct BoothCounters: Codable, Sendable, Equatable {
    /// Sessions begun (a press that left idle).
    public var sessions = 0
    /// Sessions that ended with a photo reviewed.
    public var completed = 0
    /// Sessions cancelled by a long press or a preview timeout.
    public var cancelled = 0
    /// Sessions whose capture failed twice or that a fault interrupted.
    public var failed = 0
    /// Captures saved (a cancelled series' deleted captures not counted).
    public var captures = 0
    /// Times the booth entered (or changed) its fault screen.
    public var faults = 0

    public init() {}

    /// Each count of `self` minus the same of `other`.
    public func subtracting(_ other: BoothCounters) -> BoothCounters {
        var d = BoothCounters()
        for k in BoothCounters.all { d[keyPath: k] = self[keyPath: k] - other[keyPath: k] }
        return d
    }

    /// Each count of `self` plus the same of `other`.
    public func adding(_ other: BoothCounters) -> BoothCounters {
        var d = BoothCounters()
        for k in BoothCounters.all { d[keyPath: k] = self[keyPath: k] + other[keyPath: k] }
        return d
    }

    /// The six counts.
    public static let all: [WritableKeyPath<BoothCounters, Int> & Sendable] =
        [\.sessions, \.completed, \.cancelled, \.failed, \.captures, \.faults]
}

/// The booth's running totals, kept across restarts (`photoboothctl stats`): the counters, when
/// counting started, the highest session counted and the captures counted before it. JSON: the counters'
/// fields beside `since`, `lastSession` and `capturesBeforeLastSession`, flat (as in earlier files).
@dynamicMemberLookup
public struct BoothStats: Codable, Sendable, Equatable {
    /// The counts (`stats.sessions` reads `stats.counters.sessions`).
    public var counters = BoothCounters()
    /// When counting started (epoch seconds): the first start, or the last `stats --reset`.
    public var since = 0
    /// The highest session number these totals account for; photo files of later sessions found at start
    /// were taken while the totals were not written (a crash) and are added then.
    public var lastSession = 0
    /// The captures these totals had counted when session `lastSession` began (JSON `capturesBeforeLastSession`),
    /// nil when not known (files before it existed, or a `stats --reset` during that session). The captures
    /// of `lastSession` on disk beyond `captures` minus this were saved while the totals were not written
    /// (a power cut between a save and the write) and are added at start.
    public var capturesBeforeLastSession: Int?

    public init(since: Int) { self.since = since }

    public subscript(dynamicMember key: WritableKeyPath<BoothCounters, Int>) -> Int {
        get { counters[keyPath: key] }
        set { counters[keyPath: key] = newValue }
    }

    /// Adds what `counters` (the runtime's counts since start) gained since `old`, and moves `lastSession`
    /// up to `highestSession` (the session of the newest saved capture or picture), noting the captures
    /// counted before this change as ``capturesBeforeLastSession`` when it moves.
    public mutating func add(_ now: BoothCounters, since old: BoothCounters, highestSession: Int) {
        let before = counters.captures
        counters = counters.adding(now.subtracting(old))
        if highestSession > lastSession {
            lastSession = highestSession
            // `highestSession` is the session of the newest saved file: it moves on with that session's first
            // save, so a capture counted in this same change is the new session's.
            capturesBeforeLastSession = before
        }
    }

    private enum Keys: String, CodingKey { case since, lastSession, capturesBeforeLastSession }

    public init(from decoder: any Decoder) throws {
        counters = try BoothCounters(from: decoder)
        let c = try decoder.container(keyedBy: Keys.self)
        since = try c.decodeIfPresent(Int.self, forKey: .since) ?? 0
        lastSession = try c.decodeIfPresent(Int.self, forKey: .lastSession) ?? 0
        capturesBeforeLastSession = try c.decodeIfPresent(Int.self, forKey: .capturesBeforeLastSession)
    }

    public func encode(to encoder: any Encoder) throws {
        try counters.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(since, forKey: .since)
        try c.encode(lastSession, forKey: .lastSession)
        try c.encodeIfPresent(capturesBeforeLastSession, forKey: .capturesBeforeLastSession)
    }
}

/// The totals across restarts, kept in a file in the photos directory (BoothStorage's `StatsStore`),
/// written on a thread of its own so the loop never waits for the disk.
public protocol StatsRecording: AnyObject, Sendable {
    /// The totals now.
    var current: BoothStats { get }
    /// Reads the file, adds sessions found in the photo files of `directory` after its `lastSession`,
    /// and starts the writer. Called once, after the photos directory is prepared.
    func open(scanning directory: String)
    /// The runtime's counts since start and the highest session with a photo on disk; written soon.
    func record(_ counters: BoothCounters, highestSession: Int)
    /// The photos directory moved to `directory` (a reload's `storage.dir`,
    /// ``PhotoStorage/switchDirectory(to:mount:)``): the totals are written to that directory's file
    /// from now on (replacing one already there), so the next start, which reads them from
    /// `storage.dir`, goes on from them; the old directory's file keeps them as they were at the move.
    func follow(directory: String)
    /// `stats --reset`: zero totals from now. - Returns: the new totals.
    @discardableResult
    func reset() -> BoothStats
    /// Writes what is pending and stops the writer, waiting at most `timeoutSeconds` (seconds).
    func finish(timeoutSeconds: Double)
}
