import BoothCore
import BoothPorts
import BoothSystem
import Glibc

/// Removable media under the photos directory (`storage.mount`): when the stick or card is pulled,
/// the mount point is left as an empty directory on the SD card, and writing there would fill the
/// system's own disk. The check compares device numbers (`stat` `st_dev`): the mount point must be
/// on another device than its parent directory (something is mounted), and the photos directory
/// (or its nearest existing ancestor) on the same device as the mount point.
public enum StorageGuard {
    /// What is wrong with `storage.mount`: the media (missing, not mounted) or `storage.dir` (not on it).
    public enum MountProblem: Sendable, Equatable, CustomStringConvertible {
        /// Nothing is mounted at the mount point, or it cannot be looked at.
        case media(String)
        /// The media is mounted, but the photos directory is on another file system.
        case directory(String)

        /// The operator-facing reason.
        public var description: String {
            switch self {
            case let .media(why), let .directory(why): why
            }
        }
    }

    /// nil when `mount` is empty or the media is in place; else the operator-facing reason.
    /// Wraps `stat(2)` on the mount point, its parent and `dir`.
    public static func mountProblem(mount: String, dir: String) -> String? {
        checkMount(mount: mount, dir: dir)?.description
    }

    /// ``mountProblem(mount:dir:)`` telling the media's absence from a photos directory elsewhere.
    public static func checkMount(mount: String, dir: String) -> MountProblem? {
        guard !mount.isEmpty else { return nil }
        var m = stat()
        guard stat(mount, &m) == 0 else {
            return .media("removable media: mount point \(mount) missing (\(FileError(call: "stat", errno: errno, path: mount)))")
        }
        let parent = directoryName(of: mount.count > 1 && mount.hasSuffix("/") ? String(mount.dropLast()) : mount)
        var p = stat()
        guard stat(parent, &p) == 0 else {
            return .media("removable media: \(FileError(call: "stat", errno: errno, path: parent))")
        }
        if m.st_dev == p.st_dev && m.st_ino != p.st_ino {
            return .media("removable media not mounted at \(mount) (was it removed?); photos are not written to the SD card")
        }
        var probe = dir
        var d = stat()
        while stat(probe, &d) != 0 {
            let up = directoryName(of: probe)
            if up == probe { return nil }
            probe = up
        }
        if d.st_dev != m.st_dev {
            return .directory("storage.dir \(dir) is not on the media mounted at \(mount)")
        }
        return nil
    }
}
