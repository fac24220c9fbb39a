// BoothIndex: the pictures guests take home, as data both the daemon and the gallery read.
//
// Owns the URL tokens (PictureTokens: HMAC-SHA-256 under the booth's secret, libsodium), the SQLite
// index (PictureIndex: WAL, user_version, rebuilt from the photos with the same tokens) and the
// daemon's side of it (GalleryIndexSink, a PictureSink that records each saved photo).
//
// May import: BoothCore, BoothPorts, BoothClock, BoothStorage (atomic files, the photos' names),
// CSQLite, CSodium and the system.
