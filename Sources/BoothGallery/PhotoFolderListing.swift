import BoothClock
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
    /// Regular files by date folder; nil for a folder that could not be listed (a link, missing).
    private var folders: [String: Set<String>?] = [:]

    init(photosDir: String) { self.photosDir = photosDir }

    /// True when `relative` (`DATE/NAME`) is listed as a regular file in a date folder that is not a link;
    /// false when the listing cannot say (open it with ``BeneathFile``).
    mutating func lists(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { return false }
        let folder = String(parts[0])
        if folders[folder] == nil { folders[folder] = .some(PhotoFolderListing.regularFiles(in: folder, under: photosDir)) }
        return folders[folder]??.contains(String(parts[1])) ?? false
    }

    /// The names of the regular files in `folder` under `root`; nil when `folder` is a link, not a
    /// folder, or cannot be opened.
    static func regularFiles(in folder: String, under root: String) -> Set<String>? {
        let rootFD = retryingEINTR { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard rootFD >= 0 else { return nil }
        defer { close(rootFD) }
        let fd = retryingEINTR { openat(rootFD, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        // fdopendir takes the descriptor over: closedir closes it.
        guard let dir = fdopendir(fd) else { close(fd); return nil }
        defer { closedir(dir) }
        var names: Set<String> = []
        while let entry = readdir(dir) {
            let (name, type) = withUnsafePointer(to: entry.pointee.d_name) { p in
                p.withMemoryRebound(to: CChar.self, capacity: 256) { (String(cString: $0), entry.pointee.d_type) }
            }
            switch Int32(type) {
            case Int32(DT_REG):
                names.insert(name)
            case Int32(DT_UNKNOWN):
                var st = stat()
                if fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG { names.insert(name) }
            default:
                continue
            }
        }
        return names
    }
}
