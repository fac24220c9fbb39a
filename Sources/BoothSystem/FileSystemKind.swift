import CSysShims
import Glibc

/// The file system a directory is on (`statfs(2)`'s `f_type`), and what a power cut can do to files
/// the booth writes there (measured in `hardware/scenarios/powercut.sh`, figures in README).
///
/// On ext4 (and the other journaled ones) a rename is one journaled change: a cut leaves the old file
/// or the new one. vfat and exFAT have no journal. On vfat a rename is two directory writes (the new
/// entry, the old one removed) that the device may reorder, so a cut between them can leave the temp
/// file's entry and the file's on the same clusters; on exFAT a new name shorter than the temp's is
/// written in place, but replacing a file is two steps (the temp renamed, the old file's entries
/// removed), so a cut between leaves two entries of one name. A `mkdir` is likewise two writes, and a
/// volume nobody checked may hold half-written cluster chains.
public enum FileSystemKind: Sendable, Equatable {
    /// ext4, XFS, Btrfs, F2FS: a rename is atomic across a power cut.
    case journaled(String)
    /// tmpfs and ramfs: nothing survives a power cut (nor a reboot).
    case memory(String)
    /// vfat (FAT16/FAT32) or exFAT: no journal, see the type's notes.
    case fat(String)
    /// Anything else (FUSE, NFS, …): the booth cannot tell what a power cut leaves, named by its `f_type` in hex.
    case other(String)

    /// The file system of `dir` (or of its nearest existing ancestor), nil when `statfs` fails (wraps
    /// `statfs(2)` through `pb_statfs_type`).
    public static func of(_ dir: String) -> FileSystemKind? {
        var probe = dir
        var type: UInt64 = 0
        while pb_statfs_type(probe, &type) != 0 {
            let up = directoryName(of: probe)
            if up == probe { return nil }
            probe = up
        }
        return kind(fType: type)
    }

    /// The kind for a `statfs` `f_type` value (linux/magic.h).
    public static func kind(fType: UInt64) -> FileSystemKind {
        switch fType & 0xFFFF_FFFF {
        case 0xEF53: .journaled("ext4")
        case 0x5846_5342: .journaled("xfs")
        case 0x9123_683E: .journaled("btrfs")
        case 0xF2F5_2010: .journaled("f2fs")
        case 0x0102_1994: .memory("tmpfs")
        case 0x8584_58F6: .memory("ramfs")
        case 0x4D44: .fat("vfat")
        case 0x2011_BAB0: .fat("exfat")
        case 0x6573_5546: .other("fuse")
        default: .other("0x" + String(fType & 0xFFFF_FFFF, radix: 16))
        }
    }

    /// The file system's name: `ext4`, `vfat`, `exfat`, `tmpfs`, `fuse`, or `f_type` in hex.
    public var name: String {
        switch self {
        case let .journaled(n), let .memory(n), let .fat(n), let .other(n): n
        }
    }

    /// True for vfat and exFAT.
    public var isFAT: Bool { if case .fat = self { true } else { false } }

    /// What a power cut can do to `dir` on this file system, for the operator (log at start, `status`);
    /// nil on a journaled file system.
    public func powerCutNote(dir: String) -> String? {
        switch self {
        case .journaled: return nil
        case .memory:
            return "storage.dir \(dir) is on \(name), in memory: its photos are lost at a power cut or a reboot"
        case .fat:
            let check = name == "vfat" ? "fsck.vfat -a" : "fsck.exfat -a"
            return "storage.dir \(dir) is on \(name), which has no journal: a power cut can leave it needing a check "
                + "(\(check) with the booth stopped: it runs none); every photo is fsynced under its own name before "
                + "it counts as saved, and temp files a cut leaves are kept as .kept-*, not removed (on an unchecked "
                + "\(name) that could free a photo's data or make the kernel set it read-only). ext4 gives old-or-new across a cut"
        case .other:
            return "storage.dir \(dir) is on a file system the booth does not know (\(name)): what a power cut leaves "
                + "there is not known; ext4 gives old-or-new across a cut"
        }
    }
}
