import BoothClock
import BoothPorts
import BoothSystem
import Glibc
import Synchronization

/// The photos directory: date folders (`2026-11-29/`), captures named by session number and
/// shot index (`booth-000042-1.jpg`), written atomically and never overwritten.
///
/// The files are the truth: the next session number is one past the highest found in any
/// date folder at ``prepare()``, so numbers keep increasing across days and restarts, and
/// never depend on the clock. A number handed out is also recorded in ``sessionFileName``
/// (rewritten in place, so it needs no free space): a session none of whose files could be
/// saved (a full disk) keeps its number, and the next start does not hand it out again. The
/// booth's own record (`storage.session_file`, outside the photos folders) holds the same number,
/// so a number is never handed out twice when `storage.dir` moves to another folder and back, by a
/// reload or a restart: the next session is one past the highest of the photos, the folder's record
/// and the booth's.
public final class PhotoStore: PhotoStorage {
    /// The photos directory (`storage.dir`, or the one ``switchDirectory(to:mount:)`` moved to).
    public var directory: String { dir.withLock { $0 } }
    private let dir: Mutex<String>
    private let dateFolder: @Sendable () -> String
    private let syncDirectory: @Sendable (String) throws(FileError) -> Void
    private let fileSystemOf: @Sendable (String) -> FileSystemKind?
    private let next = Mutex(1)
    /// The folder's session-number file, and the booth's (`stateFile`).
    private let folderRecord = SessionNumberFile(), boothRecord = SessionNumberFile()
    private let stateFile: String?
    private let sessionFileError = Mutex<String?>(nil)
    private let numberNotes = Mutex<[String]>([])
    private let powerCut = Mutex<[String]>([])
    /// The session-number file's name in the photos directory: the highest number handed out,
    /// 15 digits and a newline, rewritten in place (`pwrite`) at every session.
    public static let sessionFileName = ".photobooth-session"
    /// Sessions whose number moved past an existing name, and the number they got, so the session's
    /// other captures and its picture follow it (the newest 16).
    private let moved = Mutex<[(session: Int, number: Int)]>([])
    /// The number the next session gets.
    public var nextSession: Int { next.withLock { $0 } }

    /// - Parameters:
    ///   - directory: `storage.dir`.
    ///   - stateFile: `storage.session_file`, the booth's record of the highest number handed out in any
    ///     folder (its folder is made when missing); nil: the photos folder's own record only.
    ///   - dateFolder: names today's folder; injected for tests (default: local date, `YYYY-MM-DD`).
    ///   - syncDirectory: fsyncs a folder after a save's rename (default ``AtomicFile/syncDirectory(_:)``);
    ///     injected by tests to make it fail.
    ///   - fileSystemOf: the file system of a photos directory (default ``FileSystemKind/of(_:)``); injected by
    ///     tests to stand for vfat.
    public init(directory: String, stateFile: String? = nil, dateFolder: @escaping @Sendable () -> String = { localDateString() },
                syncDirectory: @escaping @Sendable (String) throws(FileError) -> Void = { dir throws(FileError) in
                    try AtomicFile.syncDirectory(dir)
                },
                fileSystemOf: @escaping @Sendable (String) -> FileSystemKind? = { FileSystemKind.of($0) }) {
        self.dir = Mutex(directory)
        self.stateFile = stateFile
        self.dateFolder = dateFolder
        self.syncDirectory = syncDirectory
        self.fileSystemOf = fileSystemOf
    }

    /// Creates the directory if missing, checks it is writable (creates and removes a probe
    /// file), removes temp files left by an interrupted write, and finds the next session number.
    /// - Throws: ``FileError`` naming the call and path when the directory cannot be created or written.
    public func prepare() throws(FileError) {
        let directory = self.directory
        let found = try PhotoStore.scan(directory, fileSystemOf: fileSystemOf)
        let booth = stateFile.map(PhotoStore.readSessionFile)
        let first = next.withLock { n in
            n = max(n, found.highestFile + 1, (found.handedOut.number ?? 0) + 1, (booth?.number ?? 0) + 1)
            return n
        }
        powerCut.withLock { $0 = found.notes }
        numberNotes.withLock { $0 = [found.handedOut, booth].compactMap { $0?.problem.map { "\($0); next session \(first)" } } }
        recordSessionFiles(in: directory, handedOut: first - 1)
    }

    /// Makes `directory` if missing, checks it is writable (creates and removes a probe file), removes
    /// temp files left by an interrupted write, and reads the highest session number of its photo files
    /// and of its session-number file. Changes nothing of this store.
    /// - Throws: ``FileError`` naming the call and path when the directory cannot be created or written.
    private static func scan(_ directory: String, fileSystemOf: (String) -> FileSystemKind?) throws(FileError)
        -> (highestFile: Int, handedOut: (number: Int?, problem: String?), notes: [String]) {
        try makeDirectories(directory)
        let probe = "\(directory)/\(AtomicFile.tempPrefix)probe.\(AtomicFile.processTag)"
        let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileError(call: "open", errno: errno, path: probe) }
        close(fd)
        unlink(probe)
        let fileSystem = fileSystemOf(directory)
        var notes = fileSystem?.powerCutNote(dir: directory).map { [$0] } ?? []
        func sweep(_ dir: String) {
            for name in AtomicFile.sweepLeftoverTemps(in: dir, fileSystem: fileSystem).kept {
                notes.append("\(dir)/\(name): a save a crash or power cut interrupted, kept (not removed: on "
                             + "\(fileSystem?.name ?? "this file system") its clusters may be half written or shared with "
                             + "a photo); check the file system (\(fileSystem?.name == "exfat" ? "fsck.exfat -a" : "fsck.vfat -a")) "
                             + "with the booth stopped, then delete it")
            }
        }
        sweep(directory)
        var highest = 0
        for folder in listDirectory(directory) where PhotoStore.isDateFolder(folder) {
            let path = "\(directory)/\(folder)"
            sweep(path)
            for name in listDirectory(path) {
                guard let n = PhotoStore.sessionNumber(inFileName: name) else { continue }
                highest = max(highest, n)
                // vfat, exFAT: a cut between a save's directory fsync and its file's leaves the new name
                // empty (AtomicFile.write); the save never returned, so it is no photo. An empty file owns no
                // clusters: removing it frees nothing else. Its number stays counted above.
                var st = stat()
                if fileSystem?.isFAT == true, stat("\(path)/\(name)", &st) == 0, st.st_size == 0, unlink("\(path)/\(name)") == 0 {
                    notes.append("\(path)/\(name) was empty (a power cut during its save, which never completed): removed")
                }
            }
        }
        return (highest, readSessionFile("\(directory)/\(PhotoStore.sessionFileName)"), notes)
    }

    /// The number a session-number file holds (nil when it is missing or holds none), and, when it holds
    /// something else, the operator's words for it (the file and what it holds).
    static func readSessionFile(_ path: String) -> (number: Int?, problem: String?) {
        guard let bytes = try? AtomicFile.read(path) else { return (nil, nil) }
        if let n = parseSessionFile(bytes) { return (n, nil) }
        let shown = String(decoding: bytes.prefix(40), as: UTF8.self).debugDescription + (bytes.count > 40 ? "…" : "")
        return (nil, "\(path) holds \(shown), not a session number (up to 15 digits and a newline); ignored")
    }

    /// Opens (or makes) the session-number file of `directory` and the booth's, recording `handedOut` in
    /// both; a failure is kept for ``sessionFileProblem``.
    private func recordSessionFiles(in directory: String, handedOut: Int) {
        var problems: [String] = []
        do { try folderRecord.open("\(directory)/\(PhotoStore.sessionFileName)", handedOut: handedOut) } catch { problems.append("\(error)") }
        if let stateFile {
            do throws(FileError) {
                try makeDirectories(directoryName(of: stateFile))
                try boothRecord.open(stateFile, handedOut: handedOut)
            } catch {
                problems.append("\(error)")
            }
        }
        sessionFileError.withLock { $0 = problems.isEmpty ? nil : problems.joined(separator: "; ") }
    }

    /// See ``PhotoStorage/switchDirectory(to:mount:)``: the mount check (``StorageGuard``), then the
    /// directory made, probed for writing and scanned as by ``prepare()``; only then is it used. A save
    /// under way finishes in the directory it began in.
    @discardableResult
    public func switchDirectory(to path: String, mount: String) throws(StorageRefusal) -> Int {
        let old = directory
        if let problem = StorageGuard.mountProblem(mount: mount, dir: path) {
            throw StorageRefusal("storage.dir \(path) not used: \(problem); photos stay in \(old)")
        }
        let found: (highestFile: Int, handedOut: (number: Int?, problem: String?), notes: [String])
        do {
            found = try PhotoStore.scan(path, fileSystemOf: fileSystemOf)
        } catch {
            throw StorageRefusal("storage.dir \(path) not used: photos directory not writable: \(error); photos stay in \(old)")
        }
        let first = next.withLock { n in
            // Never a number already handed out here or there.
            n = max(n, found.highestFile + 1, (found.handedOut.number ?? 0) + 1)
            return n
        }
        dir.withLock { $0 = path }
        powerCut.withLock { $0 = found.notes }
        numberNotes.withLock { $0 = found.handedOut.problem.map { ["\($0); next session \(first)"] } ?? [] }
        moved.withLock { $0 = [] }
        recordSessionFiles(in: path, handedOut: first - 1)
        return first
    }

    public func mountProblem(mount: String) -> String? {
        StorageGuard.mountProblem(mount: mount, dir: directory)
    }

    /// Why the session-number file (the folder's or the booth's) could not be opened or made at the last
    /// ``prepare()`` (numbers then follow the files and the other record only), or nil.
    public var sessionFileProblem: String? { sessionFileError.withLock { $0 } }

    /// See ``PhotoStorage/sessionNumberNotes``: a session-number file that held no number, from the last
    /// ``prepare()`` or ``switchDirectory(to:mount:)``.
    public var sessionNumberNotes: [String] { numberNotes.withLock { $0 } }

    /// See ``PhotoStorage/powerCutNotes``: the directory's ``FileSystemKind/powerCutNote(dir:)`` and the temp
    /// files the last scan kept, from the last ``prepare()`` or ``switchDirectory(to:mount:)``.
    public var powerCutNotes: [String] { powerCut.withLock { $0 } }

    /// The number in a session-number file's bytes, or nil.
    static func parseSessionFile(_ bytes: [UInt8]) -> Int? {
        let digits = bytes.prefix { $0 >= 48 && $0 <= 57 }
        let significant = digits.drop { $0 == 48 }
        // At most 9 significant digits, as in file names: counting on from it cannot overflow.
        guard !digits.isEmpty, significant.count <= 9 else { return nil }
        return significant.isEmpty ? 0 : Int(String(decoding: significant, as: UTF8.self))
    }

    /// Takes the next session number and records it in the session-number files (the folder's and the
    /// booth's), in place (no new blocks: it works on a full disk); fsynced by ``syncSessionNumber()`` or the
    /// next save (the storage thread), not here.
    public func allocateSession() -> Int {
        let n = next.withLock { n in
            defer { n += 1 }
            return n
        }
        folderRecord.record(n)
        boothRecord.record(n)
        return n
    }

    /// See ``PhotoStorage/syncSessionNumber()``: `fdatasync(2)` of the session-number files whose last
    /// `pwrite` is not yet synced; blocks on the disk (the storage thread calls it). Errors are not reported.
    public func syncSessionNumber() { syncSessionFile() }

    /// Makes the last recorded session number durable (`fdatasync`), if it is not yet.
    private func syncSessionFile() {
        folderRecord.sync()
        boothRecord.sync()
    }

    /// The file name of shot `shot` (1-based) of `session`, `booth-000042-1.jpg`; shot 0 names the
    /// session's composed picture, `booth-000042-picture.jpg`, beside its captures.
    public static func captureName(session: Int, shot: Int) -> String { PhotoFileName.name(session: session, shot: shot) }

    /// True for a composed picture's file name (`booth-000042-picture.jpg`), false for a capture's.
    public static func isPicture(fileName name: String) -> Bool { PhotoFileName.isPicture(name) }

    /// Writes a capture (JPEG bytes) as `<dir>/<date>/booth-<session>-<shot>.jpg`, or with shot 0 the
    /// session's picture as `booth-<session>-picture.jpg`, atomically and durably.
    /// A name that already exists is never overwritten: the session number moves past it, and the
    /// session's later shots and its picture take the same new number, so their names stay tied.
    /// - Parameter directoryNotSynced: called with the folder's fsync error when the file is in place but
    ///   the fsync of its folder failed (see ``AtomicFile/write(_:to:durable:replace:syncDirectory:)``):
    ///   the capture counts as saved, its directory entry's durability is not confirmed.
    /// - Returns: the path written.
    /// - Throws: ``FileError``; `isNoSpace` when the file system is full (no partial file is left).
    public func saveCapture(_ jpeg: [UInt8], session: Int, shot: Int,
                            directoryNotSynced: (FileError) -> Void = { _ in }) throws(FileError) -> String {
        syncSessionFile()
        let directory = self.directory
        let folder = "\(directory)/\(dateFolder())"
        try makeDirectories(folder)
        var number = moved.withLock { list in list.last { $0.session == session }?.number } ?? session
        while true {
            let path = "\(folder)/\(PhotoStore.captureName(session: number, shot: shot))"
            do {
                if let unsynced = try AtomicFile.write(jpeg, to: path, durable: true, replace: false,
                                                       syncDirectory: syncDirectory) {
                    directoryNotSynced(unsynced)
                }
                next.withLock { $0 = max($0, number + 1) }
                if number != session {
                    moved.withLock { list in
                        list.removeAll { $0.session == session }
                        list.append((session, number))
                        if list.count > 16 { list.removeFirst() }
                    }
                }
                return path
            } catch {
                guard error.errno == EEXIST else { throw error }
                number = next.withLock { n in
                    let taken = max(number + 1, n)
                    n = taken + 1
                    return taken
                }
            }
        }
    }

    /// Bytes available to an unprivileged writer in the directory (`statvfs`: `f_bavail * f_frsize`).
    /// - Throws: ``FileError`` from `statvfs`.
    public func freeBytes() throws(FileError) -> UInt64 {
        let directory = self.directory
        var s = statvfs()
        guard statvfs(directory, &s) == 0 else { throw FileError(call: "statvfs", errno: errno, path: directory) }
        return UInt64(s.f_bavail) * UInt64(s.f_frsize)
    }

    /// Deletes a saved capture and makes the removal durable (`unlink`, then `fsync` of its folder).
    /// - Throws: ``FileError`` from `unlink` (ENOENT included: the file was not there).
    public func delete(path: String) throws(FileError) {
        guard unlink(path) == 0 else { throw FileError(call: "unlink", errno: errno, path: path) }
        let folder = directoryName(of: path)
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { _ = fsync(fd); close(fd) }
    }

    /// The session number in a capture or picture file name (`booth-000042-1.jpg`, `booth-000042-picture.jpg` → 42).
    public static func sessionNumber(inFileName name: String) -> Int? { PhotoFileName.sessionNumber(in: name) }

    /// True for `YYYY-MM-DD`.
    public static func isDateFolder(_ name: String) -> Bool {
        let u = Array(name.utf8)
        guard u.count == 10, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-") else { return false }
        return u.enumerated().allSatisfy { i, c in i == 4 || i == 7 || (c >= 48 && c <= 57) }
    }
}

public func zeroPadded(_ v: Int, _ width: Int) -> String {
    let s = String(v)
    return String(repeating: "0", count: max(0, width - s.count)) + s
}

/// The local calendar date, for naming date folders (`2026-11-29`). Only names folders:
/// uniqueness never depends on the clock (a Raspberry Pi has no RTC).
public func localDateString(epochSeconds: Int = Int(time(nil))) -> String {
    var t = time_t(epochSeconds)
    var tmv = tm()
    localtime_r(&t, &tmv)
    func pad(_ v: Int32, _ w: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, w - s.count)) + s
    }
    return "\(pad(tmv.tm_year + 1900, 4))-\(pad(tmv.tm_mon + 1, 2))-\(pad(tmv.tm_mday, 2))"
}

/// A session-number file held open: the highest number handed out, 15 digits and a newline, rewritten in
/// place (`pwrite`, no new blocks: it works on a full disk). A photos folder has one
/// (``PhotoStore/sessionFileName``), and the booth one of its own (`storage.session_file`).
final class SessionNumberFile: Sendable {
    /// The open file (-1: none) and whether its last rewrite is not yet fsynced.
    private let state = Mutex<(fd: Int32, unsynced: Bool)>((-1, false))

    static func bytes(_ n: Int) -> [UInt8] { Array((zeroPadded(n, 15) + "\n").utf8) }

    /// Opens `path` (made at its full size, durably, if new or short), again at every prepare: after the media
    /// was mounted again the old descriptor names a file no longer there. A file that does not hold
    /// `handedOut` (a lower number, or no number) is rewritten in place with it, durably.
    /// - Throws: ``FileError`` from `open` or the write of a new file.
    func open(_ path: String, handedOut: Int) throws(FileError) {
        sync()
        var st = stat()
        if stat(path, &st) != 0 || st.st_size < 16 {
            try AtomicFile.write(SessionNumberFile.bytes(handedOut), to: path, durable: true, replace: true)
        }
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(call: "open", errno: errno, path: path) }
        let old = state.withLock { f in defer { f = (fd, false) }; return f.fd }
        if old >= 0 { close(old) }
        if (try? AtomicFile.read(path)).flatMap(PhotoStore.parseSessionFile) != handedOut {
            record(handedOut)
            sync()
        }
    }

    /// Writes `n` in place; not yet durable (``sync()``).
    func record(_ n: Int) {
        state.withLock { f in
            guard f.fd >= 0 else { return }
            let bytes = SessionNumberFile.bytes(n)
            if bytes.withUnsafeBytes({ pwrite(f.fd, $0.baseAddress, $0.count, 0) }) == bytes.count { f.unsynced = true }
        }
    }

    /// `fdatasync(2)` when the last ``record(_:)`` is not yet synced.
    func sync() {
        let fd = state.withLock { f -> Int32 in
            defer { f.unsynced = false }
            return f.unsynced ? f.fd : -1
        }
        if fd >= 0 { _ = fdatasync(fd) }
    }

    deinit {
        let fd = state.withLock { $0.fd }
        if fd >= 0 { close(fd) }
    }
}
