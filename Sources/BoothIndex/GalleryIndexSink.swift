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
    /// the gallery would not serve it: a symbolic link on its way below `storage.dir` (its date folder,
    /// or the file; `storage.dir` itself may be a link), or the file cannot be opened. The same look as
    /// ``pictureSaved(_:)``'s and the gallery's (``BeneathFile``). For the review's QR code on the main
    /// loop: each date folder's answer (served, or a link on the way) is remembered (at most 64 folders,
    /// forgotten whole beyond), so it does not block there; any other failure is not remembered. The
    /// daemon writes the file itself (temp + rename), never a link.
    public func serves(path: String) -> Bool {
        let folder = String(path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/"))
        if let known = servedFolders.withLock({ $0[folder] }) { return known }
        let served: Bool
        switch GalleryIndexSink.look(path) {
        case .served: served = true
        case .linked: served = false
        case .failed: return false  // not remembered: it may be there a moment later
        }
        servedFolders.withLock { known in
            if known.count >= 64 { known = [:] }
            known[folder] = served
        }
        return served
    }

    private let servedFolders = Mutex<[String: Bool]>([:])

    /// What the gallery would make of `path`, opened as it opens it (``BeneathFile`` under the path's
    /// photos folder): the one look for a symbolic link on the way.
    private enum Look {
        case served
        /// ELOOP: a symbolic link on the way; the error, said.
        case linked(String)
        /// Another failure (the file already gone, permission).
        case failed
    }

    private static func look(_ path: String) -> Look {
        do {
            close(try BeneathFile.open(GalleryIndexSink.identity(of: path), under: StorageIDs.photosDir(of: path)).fd)
            return .served
        } catch where error.errno == ELOOP {
            return .linked("\(error)")
        } catch {
            return .failed
        }
    }

    public func pictureSaved(_ picture: SavedPicture) {
        let identity = GalleryIndexSink.identity(of: picture.path)
        // A symbolic link on the way: the gallery would never serve it, said plainly. Another failure (a
        // file already gone): indexed as before.
        if case let .linked(error) = GalleryIndexSink.look(picture.path) {
            log.warning("gallery: \(identity) not indexed (guests cannot get it): its date folder or the file is a symbolic link "
                        + "(the gallery serves only what lies inside storage.dir): \(error)")
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
