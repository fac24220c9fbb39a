import BoothCore
import BoothIndex
import BoothPorts
import BoothStorage

/// With `gallery.enabled`: the secret (made at the first start), the index (made, or moved aside and
/// rebuilt when damaged, then reconciled with the pictures on disk) and the sink that records each
/// new picture. nil when the gallery is off, or when the secret or the index cannot be had (logged:
/// the booth runs without the gallery, every session as before).
func gallerySink(_ s: Settings, log: Logger) -> GalleryIndexSink? {
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
    guard let index = PictureIndex.openForWriting(path: s.gallery.index, photosDir: s.storage.dir, tokens: tokens, log: log) else { return nil }
    let counts = (try? index.counts()) ?? (0, 0)
    log.info("gallery: index \(s.gallery.index): \(counts.0) pictures served, \(counts.1) removed")
    return GalleryIndexSink(index: index, tokens: tokens, log: log)
}
