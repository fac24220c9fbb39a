import BoothClock
import BoothPorts
import CSysShims
import FoundationEssentials
import Glibc

// FileError (a failed call, its errno and path) is the storage port's: BoothPorts/Storage.swift.

/// Durable and atomic file writes: a temp file in the same directory, written whole, fsynced,
/// renamed into place, and the directory fsynced, so a crash or power cut leaves either the
/// old state or the new one, and a failure (ENOSPC included) leaves no partial file.
public enum AtomicFile {
    /// The encoder of the JSON files written with ``write(_:to:durable:replace:syncDirectory:)`` (the
    /// print journal, the stats): keys sorted, slashes unescaped, pretty when `pretty`.
    public static func jsonEncoder(pretty: Bool = true) -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// Prefix of temp files; leftovers are removed by ``removeLeftoverTemps(in:)``.
    public static let tempPrefix = ".tmp-"

    /// Writes `bytes` to `path` atomically.
    /// - Parameters:
    ///   - durable: fsync the file and the directory (photos); false for throwaway files (preview).
    ///   - replace: replace an existing file (wraps `rename`); false fails with EEXIST instead
    ///     (wraps `renameat2(RENAME_NOREPLACE)`; where the file system lacks it, `link` + `unlink`).
    ///   - syncDirectory: fsyncs the directory after the rename (default ``syncDirectory(_:)``); injected by tests.
    /// - Returns: nil when the write is complete (durable included). Only for a new file (`replace`
    ///   false, `durable` true) whose directory fsync failed *after* the rename made it visible: that
    ///   fsync's error. The file is in place under its final name (do not write it again), only the
    ///   durability of its directory entry is not confirmed; the caller logs it as a warning.
    /// - Throws: ``FileError`` naming the failed call (`open`, `write`, `fsync`, `renameat2`…) when the
    ///   file was not put in place (no partial file is left); when replacing, also the directory's
    ///   `open`/`fsync` failing after the rename (writing again is harmless there).
    @discardableResult
    public static func write(_ bytes: [UInt8], to path: String, durable: Bool = true, replace: Bool = false,
                             syncDirectory: (String) throws(FileError) -> Void = syncDirectory) throws(FileError) -> FileError? {
        let dir = directoryName(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? path
        let temp = "\(dir)/\(tempPrefix)\(base).\(getpid())"
        let fd = retryingEINTR { open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw FileError(call: "open", errno: errno, path: temp) }
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        do {
            defer { close(fd) }
            var offset = 0
            while offset < bytes.count {
                let n = retryingEINTR { bytes.withUnsafeBytes { buf in
                    Glibc.write(fd, buf.baseAddress! + offset, buf.count - offset)
                } }
                if n < 0 {
                    throw FileError(call: "write", errno: errno, path: temp)
                }
                offset += n
            }
            if durable, fsync(fd) != 0 { throw FileError(call: "fsync", errno: errno, path: temp) }
        }
        if replace {
            guard rename(temp, path) == 0 else { throw FileError(call: "rename", errno: errno, path: path) }
        } else if pb_rename_noreplace(temp, path) != 0 {
            let e = errno
            guard e == EINVAL || e == ENOSYS else { throw FileError(call: "renameat2", errno: e, path: path) }
            guard link(temp, path) == 0 else { throw FileError(call: "link", errno: errno, path: path) }
            unlink(temp)
        }
        ok = true
        guard durable else { return nil }
        do {
            try syncDirectory(dir)
            return nil
        } catch {
            // Replacing: writing again is harmless, so the caller hears of it as a failure. A new file
            // is visible under its final name now: it must not be written again (a duplicate under the
            // next number), so the error is returned instead. Not retried: on Linux a failed fsync's
            // error is reported once, and a second fsync's success would not prove the entry durable.
            if replace { throw error }
            return error
        }
    }

    /// fsyncs a directory so a rename in it is durable.
    /// - Throws: ``FileError`` from `open` or `fsync`.
    public static func syncDirectory(_ dir: String) throws(FileError) {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(call: "open", errno: errno, path: dir) }
        defer { close(fd) }
        if fsync(fd) != 0 && errno != EINVAL { throw FileError(call: "fsync", errno: errno, path: dir) }
    }

    /// Removes temp files left by an interrupted write in `dir` (not recursive); returns their names.
    @discardableResult
    public static func removeLeftoverTemps(in dir: String) -> [String] {
        var removed: [String] = []
        for name in listDirectory(dir) where name.hasPrefix(tempPrefix) {
            if unlink("\(dir)/\(name)") == 0 { removed.append(name) }
        }
        return removed
    }

    /// Reads a whole file. - Throws: ``FileError`` from `open` or `read`.
    public static func read(_ path: String) throws(FileError) -> [UInt8] {
        let fd = retryingEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw FileError(call: "open", errno: errno, path: path) }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = retryingEINTR { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) } }
            if n < 0 {
                throw FileError(call: "read", errno: errno, path: path)
            }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return out
    }
}

/// The directory part of `path` ("." when it has none).
public func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
}

/// Names in a directory, without "." and ".."; empty when it cannot be read.
public func listDirectory(_ dir: String) -> [String] {
    guard let d = opendir(dir) else { return [] }
    defer { closedir(d) }
    var names: [String] = []
    while let entry = readdir(d) {
        let name = withUnsafePointer(to: entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Creates `path` and its missing parents (mode 0755). - Throws: ``FileError`` from `mkdir`.
public func makeDirectories(_ path: String) throws(FileError) {
    var built = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        let parent = built.isEmpty ? "/" : built
        built += "/\(part)"
        if mkdir(built, 0o755) == 0 {
            // The new entry is durable only once its parent is synced (a new date folder after
            // midnight must survive a power cut with the photo in it).
            try? AtomicFile.syncDirectory(parent)
        } else if errno != EEXIST {
            throw FileError(call: "mkdir", errno: errno, path: built)
        }
    }
}
