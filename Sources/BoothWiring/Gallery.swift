import BoothCore
import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem

/// What the daemon has of the gallery: with `gallery.enabled`, the secret (made at the first
/// start), the index (made, or moved aside and rebuilt when damaged, then reconciled with the
/// pictures on disk and the pictures taken down marked again), the sink that records each new
/// picture, and the review's and the print's link (``Settings/Gallery/pictureURL(token:)``: `gallery.public_url`,
/// else `gallery.url_base` + `/p/TOKEN`; nil while both are empty: the daemon has no network to learn the booth's address, said once). ``DaemonGallery/admin(photosDir:removed:)``
/// answers `photoboothctl gallery` in every case; without a sink (the gallery off, or the secret or the
/// index not to be had: logged) the booth runs every session as before.
public struct DaemonGallery {
    public var sink: GalleryIndexSink?
    public var link: (@Sendable (String, Int) -> String?)?
    public var settings: Settings
    public var index: PictureIndex?
    public var tokens: PictureTokens?
    public var folders: StorageIDs
    public var problem: String?
    public var log: Logger

    /// `photoboothctl gallery`'s side, once the runtime is there: `photosDir` the store's directory
    /// in force, `removed` told each picture taken down.
    /// `configured`: the config file's `[gallery]` as it reads now (status probes its port).
    public func admin(photosDir: @escaping @Sendable () -> String, removed: @escaping @Sendable (String) -> Void,
               configured: @escaping @Sendable () -> Settings.Gallery? = { nil }) -> GalleryAdmin {
        GalleryAdmin(settings: settings, index: index, tokens: tokens, folders: folders, problem: problem, log: log,
                     photosDir: photosDir, removed: removed, configured: configured)
    }
}

/// The daemon's gallery for `settings` (``DaemonGallery``): with `gallery.enabled`, the secret and the index
/// made or opened now (``PictureIndex/openForWriting(path:photosDir:tokens:folderID:removals:log:)``); a
/// problem is logged and the booth runs without the gallery.
public func gallery(_ s: Settings, log: Logger) -> DaemonGallery {
    let folders = StorageIDs(log: log)
    func without(_ problem: String?) -> DaemonGallery {
        DaemonGallery(sink: nil, link: nil, settings: s, index: nil, tokens: nil, folders: folders, problem: problem, log: log)
    }
    guard s.gallery.enabled else { return without(nil) }
    let tokens: PictureTokens
    let removals: [String: Int64]
    do {
        try makeDirectories(directoryName(of: s.gallery.secret))
        try makeDirectories(directoryName(of: s.gallery.index))
        tokens = try PictureTokens.load(orCreate: s.gallery.secret)
        removals = try RemovedPictures(indexPath: s.gallery.index).load()
    } catch {
        log.error("gallery: \(error); running without the gallery (guests cannot get their photos)")
        return without("\(error)")
    }
    guard let index = PictureIndex.openForWriting(path: s.gallery.index, photosDir: s.storage.dir, tokens: tokens,
                                                  folderID: folders.id(of: s.storage.dir), removals: removals, log: log) else {
        return without("the index \(s.gallery.index) could not be opened or made (see the log at the daemon's start)")
    }
    let counts = (try? index.counts()) ?? (0, 0)
    log.info("gallery: index \(s.gallery.index): \(counts.0) pictures served, \(counts.1) removed")
    let sink = GalleryIndexSink(index: index, tokens: tokens, folders: folders, log: log)
    let made = DaemonGallery(sink: sink, link: nil, settings: s, index: index, tokens: tokens, folders: folders, problem: nil, log: log)
    guard let pattern = s.gallery.pictureURL(token: "TOKEN") else {
        log.warning("gallery: gallery.url_base is empty: no QR code on the review screen (photoboothd has no network "
                    + "to learn the address guests' phones reach; set it, e.g. http://10.42.0.1:8080)")
        return made
    }
    let printed = s.picture.qr == .off ? "" : " and on the print's \(s.picture.qr.rawValue) corner"
    log.info("gallery: the review\(printed) shows each photo's URL as a QR code: \(pattern)")
    var linked = made
    let urls = s.gallery
    // No code for a picture the gallery would not serve (saved through a symbolic link: not indexed).
    linked.link = { path, bytes in sink.serves(path: path) ? urls.pictureURL(token: sink.token(path: path, bytes: Int64(bytes))) : nil }
    return linked
}
