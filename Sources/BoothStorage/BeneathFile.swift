import BoothClock
import BoothPorts
import BoothSystem
import CSysShims
import Glibc
import Synchronization

/// A regular file opened for reading only when it lies under a folder (`storage.dir`) and no part of
/// its path there is a symbolic link: what the gallery serves, makes thumbnails of, copies to its
/// sync remote, and what `gallery remove --delete-file` deletes (``unlink(_:under:way:)``). A date folder
/// made a link to `/elsewhere`, or a picture made a link to `/etc/shadow`, is refused; the folder
/// itself may be a link (`storage.dir` through a symbolic link is the operator's choice).
///
/// `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (``pb_openat2_beneath``) from a
/// descriptor of the folder; where the kernel lacks it (ENOSYS, or EPERM from a seccomp filter:
/// remembered for the rest of the run), `openat(2)` with `O_NOFOLLOW` per component from that
/// descriptor. Blocking (a few system calls): callers' threads, never the cooperative pool.
public enum BeneathFile {
    /// How the path is resolved (tests choose; ``open(_:under:way:)`` takes openat2 while the kernel has it).
    public enum Way: Sendable { case openat2, componentwise }

    private static let noOpenat2 = Atomic(false)

    /// Opens `relative` under `root` for reading (`O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK`:
    /// a FIFO put there never blocks) and checks it is a regular file (`fstat`). `root` and the
    /// folders on the way are opened `O_PATH`: like open(2), it needs search permission on them, not read.
    /// - Parameters:
    ///   - relative: plain names joined by `/` (`2026-12-01/booth-000042-picture.jpg`): not absolute,
    ///     no empty, `.` or `..` component.
    ///   - root: the folder; followed when it is itself a link.
    ///   - way: nil: openat2, or per component where the kernel has no openat2; else the way given (tests).
    /// - Returns: the descriptor (the caller closes it) and its `stat`.
    /// - Throws: ``FileError`` with the path `root/relative` and the failed call: `openat2` or
    ///   `openat` with ELOOP (a symbolic link on the way), EXDEV (a path leaving `root`), ENOENT,
    ///   EACCES; `open` with EINVAL for a `relative` not of plain names; `fstat` with EINVAL for
    ///   something other than a regular file (a folder, a FIFO, a device).
    public static func open(_ relative: String, under root: String, way: Way? = nil) throws(FileError) -> (fd: Int32, stat: stat) {
        let full = "\(root)/\(relative)"
        let names = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !relative.isEmpty, names.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw FileError(call: "open", errno: EINVAL, path: full)
        }
        // O_PATH: a folder the caller may only pass through (x, not r) is reached as open(2) reaches it.
        let dir = retryingEINTR { Glibc.open(root, pb_o_path() | O_DIRECTORY | O_CLOEXEC) }
        guard dir >= 0 else { throw FileError(call: "open", errno: errno, path: root) }
        defer { close(dir) }
        let flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        var fd: Int32
        if way ?? (noOpenat2.load(ordering: .relaxed) ? .componentwise : .openat2) == .openat2 {
            fd = pb_openat2_beneath(dir, relative, flags)
            if fd < 0 {
                guard way == nil, errno == ENOSYS || errno == EPERM else { throw FileError(call: "openat2", errno: errno, path: full) }
                noOpenat2.store(true, ordering: .relaxed)
                fd = try componentwise(names, from: dir, flags: flags, full: full)
            }
        } else {
            fd = try componentwise(names, from: dir, flags: flags, full: full)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw FileError(call: "fstat", errno: e, path: full)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw FileError(call: "fstat", errno: EINVAL, path: full)
        }
        return (fd, st)
    }

    /// The whole of `relative` under `root` (``open(_:under:way:)``), at most `limit` bytes.
    /// - Throws: ``FileError`` from the open or `read`; `read` with EFBIG when the file has more than `limit` bytes.
    public static func read(_ relative: String, under root: String, limit: Int) throws(FileError) -> [UInt8] {
        let (fd, st) = try open(relative, under: root)
        defer { close(fd) }
        let full = "\(root)/\(relative)"
        guard st.st_size <= limit else { throw FileError(call: "read", errno: EFBIG, path: full) }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        var have = 0
        while have < out.count {
            let n = out.withUnsafeMutableBytes { b in
                guard let base = b.baseAddress else { return 0 }
                return retryingEINTR { pread(fd, base + have, b.count - have, off_t(have)) }
            }
            if n < 0 { throw FileError(call: "read", errno: errno, path: full) }
            if n == 0 { break }
            have += n
        }
        return Array(out[..<have])
    }

    /// Deletes `relative` under `root`: `unlinkat` from a descriptor of its folder, reached as
    /// ``open(_:under:way:)`` reaches it (inside `root`, through no symbolic link), then `fsync` of
    /// that folder (its failure ignored: the file is deleted). A symbolic link there is deleted
    /// itself, never what it points to.
    /// - Throws: ``FileError`` with the path `root/relative`: `open` EINVAL for a `relative` not of
    ///   plain names; `openat2`/`openat` ELOOP for a folder on the way that is a link; `unlinkat`
    ///   ENOENT when it is gone, EISDIR for a folder.
    public static func unlink(_ relative: String, under root: String, way: Way? = nil) throws(FileError) {
        let full = "\(root)/\(relative)"
        let names = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !relative.isEmpty, names.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw FileError(call: "open", errno: EINVAL, path: full)
        }
        let dir = retryingEINTR { Glibc.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard dir >= 0 else { throw FileError(call: "open", errno: errno, path: root) }
        defer { close(dir) }
        var folder = dir
        defer { if folder != dir { close(folder) } }
        if names.count > 1 {
            let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC
            let parent = names.dropLast().joined(separator: "/")
            if way ?? (noOpenat2.load(ordering: .relaxed) ? .componentwise : .openat2) == .openat2 {
                folder = pb_openat2_beneath(dir, parent, flags)
                if folder < 0 {
                    guard way == nil, errno == ENOSYS || errno == EPERM else { throw FileError(call: "openat2", errno: errno, path: full) }
                    noOpenat2.store(true, ordering: .relaxed)
                    folder = dir
                }
            }
            if folder == dir { folder = try componentwise(Array(names.dropLast()), from: dir, flags: flags | O_NOFOLLOW, full: full) }
        }
        guard unlinkat(folder, String(names.last ?? ""), 0) == 0 else {
            throw FileError(call: "unlinkat", errno: errno, path: full)
        }
        _ = fsync(folder)
    }

    /// `openat` of each folder (`O_PATH | O_DIRECTORY | O_NOFOLLOW`: passed through, needing no read
    /// permission), then of the last name with `flags`, each from the one before.
    private static func componentwise(_ names: [Substring], from root: Int32, flags: Int32, full: String) throws(FileError) -> Int32 {
        var dir = root
        defer { if dir != root { close(dir) } }
        /// The error of a failed `openat` of `name`: O_DIRECTORY answers ENOTDIR for a link, said ELOOP as openat2 says it.
        func failed(_ name: Substring) -> FileError {
            var e = errno
            var st = stat()
            if e == ENOTDIR, fstatat(dir, String(name), &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFLNK { e = ELOOP }
            return FileError(call: "openat", errno: e, path: full)
        }
        for name in names.dropLast() {
            let next = retryingEINTR { openat(dir, String(name), pb_o_path() | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            guard next >= 0 else { throw failed(name) }
            if dir != root { close(dir) }
            dir = next
        }
        let last = names.last ?? ""
        let fd = retryingEINTR { openat(dir, String(last), flags) }
        guard fd >= 0 else { throw failed(last) }
        return fd
    }
}
