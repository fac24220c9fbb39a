import BoothPorts
import Glibc

/// The daemon's side of the gallery: a ``PictureSink`` that records every saved capture and picture
/// in the ``PictureIndex`` (a one-shot session's capture is its picture: what the review shows) on its own delivery thread, so the gallery serves it a moment
/// after the save (the gallery reads the index directly). A failed write is logged; the picture
/// is on disk all the same, and the next start's reconcile adds it.
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

    public func pictureSaved(_ picture: SavedPicture) {
        let identity = GalleryIndexSink.identity(of: picture.path)
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
