import BoothPorts
import BoothStorage
import Glibc
import Synchronization

/// The daemon's side of the gallery: a ``PictureSink`` that records every saved capture and picture
/// in the ``PictureIndex`` (a one-shot session's capture is its picture: what the review shows) on its own delivery thread, so the gallery serves it a moment
/// after the save (the gallery reads the index directly). A failed write is logged; the picture
/// is on disk all the same, and the next start's reconcile adds it. A picture saved through a
/// symbolic link (a date folder linked elsewhere) is not recorded (``serves(path:)``).
public final class GalleryIndexSink: PictureSink {
    public let sinkName = "gallery"
    private let index: PictureIndex
    private let tokens: PictureTokens
    private let log: Logger
    private let now: @Sendable () -> Int64
    private let folders: StorageIDs

    /// - Parameter now: seconds since 1970 for a row's `saved_at` (tests inject theirs).
    public init(index: PictureIndex, tokens: PictureTokens, folders: StorageIDs, log: Logger,
                now: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }) {
        self.index = index
        self.tokens = tokens
        self.folders = folders
        self.log = log
        self.now = now
    }

    /// The URL token of the photo saved at `path` with `bytes` bytes (its folder's id, date folder, name, size).
    public func token(path: String, bytes: Int64) -> String {
        tokens.token(for: PictureTokens.identity(folder: folders.id(of: StorageIDs.photosDir(of: path)),
                                                 path: GalleryIndexSink.identity(of: path), bytes: bytes))
    }

    /// The photo's path under its photos folder: date folder and name (`2026-12-01/booth-000042-picture.jpg`).
    public static func identity(of path: String) -> String {
        path.split(separator: "/").suffix(2).joined(separator: "/")
    }

    /// Whether the photo saved at `path` (absolute, `storage.dir/DATE/NAME`) gets a link: false when
    /// its date folder is a symbolic link or not a folder (`lstat`; `storage.dir` itself may be a link),
    /// as ``pictureSaved(_:)`` then does not index it and the gallery would not serve it. For the
    /// review's QR code on the main loop: each date folder is looked at once and remembered (at most
    /// 64 folders, forgotten whole beyond), so it does not block there. The daemon writes the file
    /// itself (temp + rename), never a link.
    public func serves(path: String) -> Bool {
        let folder = String(path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/"))
        if let known = plainFolders.withLock({ $0[folder] }) { return known }
        var st = stat()
        guard lstat(folder, &st) == 0 else { return false }  // not remembered: it may be there a moment later
        let plain = (st.st_mode & S_IFMT) == S_IFDIR
        plainFolders.withLock { known in
            if known.count >= 64 { known = [:] }
            known[folder] = plain
        }
        return plain
    }

    private let plainFolders = Mutex<[String: Bool]>([:])

    /// Why the gallery would never serve `path`: a symbolic link on its way (``BeneathFile``'s ELOOP),
    /// said plainly; nil otherwise (another failure, a file already gone: indexed as before).
    private func linked(_ path: String) -> String? {
        do {
            close(try BeneathFile.open(GalleryIndexSink.identity(of: path), under: StorageIDs.photosDir(of: path)).fd)
            return nil
        } catch where error.errno == ELOOP {
            return "its date folder or the file is a symbolic link (the gallery serves only what lies inside storage.dir): \(error)"
        } catch {
            return nil
        }
    }

    public func pictureSaved(_ picture: SavedPicture) {
        let identity = GalleryIndexSink.identity(of: picture.path)
        if let why = linked(picture.path) {
            log.warning("gallery: \(identity) not indexed (guests cannot get it): \(why)")
            return
        }
        let token = token(path: picture.path, bytes: Int64(picture.bytes.count))
        do {
            try index.record(IndexedPicture(token: token, path: identity, session: picture.session, shot: picture.shot,
                                            savedAt: now(), bytes: Int64(picture.bytes.count)))
            log.info("gallery: \(identity) indexed at /p/\(token)")
        } catch {
            log.error("gallery: \(identity) not indexed (guests cannot get it until the next start): \(error)")
        }
    }
}
