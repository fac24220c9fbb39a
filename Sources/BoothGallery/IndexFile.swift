import BoothClock
import BoothIndex
import BoothPorts
import Glibc
import Synchronization

/// The index the gallery reads, opened again when the daemon replaced its file (a damaged one moved
/// aside and rebuilt: the old descriptor would keep reading the old file). The file's device and
/// inode are compared at most every 2 s.
final class IndexFile: Sendable {
    private struct State: @unchecked Sendable {
        var index: PictureIndex
        var identity: Identity?
        var checkedAt: Int64
        var generation = 0
    }
    private let state: Mutex<State>
    private let log: Logger
    private let who: String
    private let now: @Sendable () -> Int64

    /// - Parameter who: the log's prefix (`gallery`, `sync`, `alerts`): each reader keeps a connection of its own.
    init(_ index: PictureIndex, log: Logger, who: String = "gallery",
         nowMilliseconds: @escaping @Sendable () -> Int64 = { Int64(Monotonic.now().nanoseconds / 1_000_000) }) {
        self.log = log
        self.who = who
        now = nowMilliseconds
        state = Mutex(State(index: index, identity: IndexFile.identity(index.path), checkedAt: nowMilliseconds()))
    }

    /// The file at the path and its `-wal` (device and inode, `stat(2)`; the `-wal` nil when there is none).
    /// The `-wal` too: a file renamed over the index while the old file's `-wal` and `-shm` are still
    /// beside it would be read through them (the old file's rows, or a damaged mix), and that connection
    /// kept once photoboothd has made the file again with its own; so it is opened only once its `-wal`
    /// is not the old file's.
    private struct Identity: Equatable {
        var dev: UInt64, ino: UInt64
        var wal: [UInt64]?
    }

    private static func identity(_ path: String) -> Identity? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        var w = stat()
        return Identity(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino),
                        wal: stat(path + "-wal", &w) == 0 ? [UInt64(w.st_dev), UInt64(w.st_ino)] : nil)
    }

    /// The index to read now.
    func current() -> PictureIndex { currentAndGeneration().index }

    /// The index to read now, and how many times it was opened again since the first (a reader
    /// that keeps a cursor into it starts again when this grows). Looks at the file's and its `-wal`'s
    /// device and inode at most every 2 s (``Identity``).
    func currentAndGeneration() -> (index: PictureIndex, generation: Int) {
        let t = now()
        return state.withLock { s in
            guard t - s.checkedAt >= 2000 else { return (s.index, s.generation) }
            s.checkedAt = t
            let id = IndexFile.identity(s.index.path)
            // No identity known (the file was gone at the first look, between its open and its stat): any file there now is another.
            guard let id else { return (s.index, s.generation) }
            if let old = s.identity, id == old { return (s.index, s.generation) }
            // Another file beside the old file's -wal: not opened until photoboothd has made it again (its -wal then its own).
            if let old = s.identity, let wal = id.wal, wal == old.wal, id.dev != old.dev || id.ino != old.ino { return (s.index, s.generation) }
            do {
                s.index = try PictureIndex(path: s.index.path, readOnly: true)
                s.identity = id
                s.generation += 1
                log.notice("\(who): \(s.index.path) was made again by photoboothd; reading the new one")
            } catch {
                log.warning("\(who): \(s.index.path) changed but cannot be opened: \(error); reading the old one")
            }
            return (s.index, s.generation)
        }
    }
}
