import BoothClock
import BoothSystem
import Glibc

/// Which of the index's pictures lie in `storage.dir` as the gallery would open them, found by listing
/// each date folder once instead of opening every picture: the sync's look at its backlog after every
/// change of the index (at 10,000 pictures, 10,000 opens of about 17 µs each were ~170 ms a change).
///
/// A picture `DATE/NAME` is there when the folder `DATE` under `photosDir` is not a symbolic link
/// (`openat(2)` with `O_DIRECTORY | O_NOFOLLOW`) and lists `NAME` as a regular file (`readdir(3)`'s
/// `d_type` `DT_REG`; `fstatat(2)` with `AT_SYMLINK_NOFOLLOW` where the file system says `DT_UNKNOWN`):
/// what ``BeneathFile/open(_:under:way:)`` accepts (`photosDir` itself may be a link). Whether the file
/// can be read is left to the copy, which opens it with ``BeneathFile`` and skips it when it cannot.
/// Anything the listing does not show (a folder that is a link or cannot be listed, a name not in it,
/// a path not of the form `DATE/NAME`) is for the caller to open with ``BeneathFile`` for the exact
/// answer (few: a cancelled series' captures, a file removed by hand). Each folder is listed at most
/// once per value; make a new one for each look. Blocking (the sync's thread).
struct PhotoFolderListing {
    let photosDir: String
    /// `DATE/NAME` of every regular file in the date folders listed so far.
    private var files: Set<String> = []
    /// The date folders looked at so far (listed, or found a link or missing).
    private var looked: Set<Substring> = []

    init(photosDir: String) { self.photosDir = photosDir }

    /// True when `relative` (`DATE/NAME`) is listed as a regular file in a date folder that is not a link;
    /// false when the listing cannot say (open it with ``BeneathFile``). One set look-up once its folder was listed.
    mutating func lists(_ relative: String) -> Bool {
        if files.contains(relative) { return true }
        guard let slash = relative.firstIndex(of: "/") else { return false }
        let folder = relative[..<slash]
        guard looked.insert(folder).inserted, !folder.isEmpty, folder != ".", folder != ".." else { return false }
        for name in PhotoFolderListing.regularFiles(in: String(folder), under: photosDir) ?? [] { files.insert("\(folder)/\(name)") }
        return files.contains(relative)
    }

    /// The names of the regular files in `folder` under `root`; nil when `folder` is a link, not a
    /// folder, or cannot be opened.
    static func regularFiles(in folder: String, under root: String) -> [String]? {
        let rootFD = retryingEINTR { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard rootFD >= 0 else { return nil }
        defer { close(rootFD) }
        let fd = retryingEINTR { openat(rootFD, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        // fdopendir takes the descriptor over: closedir closes it.
        guard let dir = fdopendir(fd) else { close(fd); return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let (name, type) = withUnsafePointer(to: entry.pointee.d_name) { p in
                p.withMemoryRebound(to: CChar.self, capacity: 256) { (String(cString: $0), entry.pointee.d_type) }
            }
            switch Int32(type) {
            case Int32(DT_REG):
                names.append(name)
            case Int32(DT_UNKNOWN):
                var st = stat()
                if fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG { names.append(name) }
            default:
                continue
            }
        }
        return names
    }
}
