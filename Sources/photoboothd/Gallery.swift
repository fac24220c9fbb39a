import BoothCore
import BoothIndex
import BoothPorts
import BoothStorage

/// With `gallery.enabled`: the secret (made at the first start), the index (made, or moved aside and
/// rebuilt when damaged, then reconciled with the pictures on disk), the sink that records each
/// new picture, and the review's link (`gallery.url_base` + `/p/TOKEN`; nil while `gallery.url_base`
/// is empty: the daemon has no network to learn the booth's address, said once). nil when the
/// gallery is off, or when the secret or the index cannot be had (logged: the booth runs without
/// the gallery, every session as before).
func gallery(_ s: Settings, log: Logger) -> (sink: GalleryIndexSink, link: (@Sendable (String, Int) -> String?)?)? {
    guard s.gallery.enabled else { return nil }
    let tokens: PictureTokens
    do {
        try makeDirectories(directoryName(of: s.gallery.secret))
        try makeDirectories(directoryName(of: s.gallery.index))
        tokens = try PictureTokens.load(orCreate: s.gallery.secret)
    } catch {
        log.error("gallery: \(error); running without the gallery (guests cannot get their photos)")
        return nil
    }
    let folders = StorageIDs(log: log)
    guard let index = PictureIndex.openForWriting(path: s.gallery.index, photosDir: s.storage.dir, tokens: tokens,
                                                  folderID: folders.id(of: s.storage.dir), log: log) else { return nil }
    let counts = (try? index.counts()) ?? (0, 0)
    log.info("gallery: index \(s.gallery.index): \(counts.0) pictures served, \(counts.1) removed")
    let sink = GalleryIndexSink(index: index, tokens: tokens, folders: folders, log: log)
    var base = s.gallery.urlBase
    while base.hasSuffix("/") { base.removeLast() }
    guard !base.isEmpty else {
        log.warning("gallery: gallery.url_base is empty: no QR code on the review screen (photoboothd has no network "
                    + "to learn the address guests' phones reach; set it, e.g. http://10.42.0.1:8080)")
        return (sink, nil)
    }
    log.info("gallery: the review shows each photo's URL as a QR code: \(base)/p/TOKEN")
    return (sink, { [base] path, bytes in "\(base)/p/\(sink.token(path: path, bytes: Int64(bytes)))" })
}
