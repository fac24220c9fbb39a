import BoothCore

/// The gallery's side of the daemon as the control socket sees it (`photoboothctl gallery`,
/// `status`): its settings and index counts, a picture's URL, taking one down, rebuilding the
/// index. Implemented by BoothIndex's `GalleryAdmin`; every call may block on SQLite (ms) and runs
/// on the control socket's connection thread.
public protocol GalleryAdministration: Sendable {
    /// What `status` shows.
    var status: GalleryStatus { get }
    /// `action`: `status`, `url`, `remove` (with `deleteFile`, the stored file too) or `rebuild`;
    /// `picture`: a token, a picture's URL, a path under `storage.dir` (absolute or `DATE/NAME`)
    /// or `latest`. `uid` is the asking peer's, for the log.
    func answer(action: String, picture: String?, deleteFile: Bool, uid: UInt32) -> Result<GalleryAnswer, GalleryFailure>
}

/// The gallery's settings as the daemon uses them, and its index.
public struct GalleryStatus: Codable, Sendable, Equatable {
    /// `gallery.enabled`.
    public var enabled: Bool
    /// `gallery.url_base`, without a trailing `/`; empty: no QR codes.
    public var urlBase: String
    /// `gallery.listen` and `gallery.port`: where photobooth-gallery listens.
    public var listen: String
    public var port: Int
    /// `gallery.index`.
    public var index: String
    /// Pictures served and taken down; nil when the index could not be read (`problem` says why).
    public var served: Int?
    public var removed: Int?
    /// The newest picture's URL (or path, without `url_base`); nil with none.
    public var newest: String?
    /// Why the daemon runs without its gallery, or why the index could not be read.
    public var problem: String?
    /// `gallery.listen:gallery.port` at photoboothd's start, set only when the config file now says
    /// otherwise (`config set gallery.port`): `listen` and `port` are then the file's, where
    /// photobooth-gallery listens once restarted (it reads them at its start).
    public var atStart: String?
    /// What photobooth-gallery's `/health` answered (its counts, the sync's backlog), in photoboothctl's
    /// words: photoboothctl asks it itself (the daemon has no network) and fills this in for `--json`;
    /// nil from the daemon, and with the gallery off.
    public var health: String? = nil

    /// Each field as described above.
    public init(enabled: Bool, urlBase: String, listen: String, port: Int, index: String, served: Int? = nil, removed: Int? = nil,
                newest: String? = nil, problem: String? = nil) {
        self.enabled = enabled
        self.urlBase = urlBase
        self.listen = listen
        self.port = port
        self.index = index
        self.served = served
        self.removed = removed
        self.newest = newest
        self.problem = problem
    }
}

/// One indexed picture, for `photoboothctl gallery url|remove`.
public struct GalleryPicture: Codable, Sendable, Equatable {
    /// 26 characters of base32 (the URL's `/p/TOKEN`).
    public var token: String
    /// Under `storage.dir`: `DATE/booth-N-picture.jpg` or `DATE/booth-N-K.jpg`.
    public var path: String
    /// `url_base/p/TOKEN`; nil while `gallery.url_base` is empty.
    public var url: String?
    /// Taken down: no longer served.
    public var removed: Bool
    /// When it was saved, seconds since 1970.
    public var savedAt: Int64

    /// Each field as described above.
    public init(token: String, path: String, url: String?, removed: Bool, savedAt: Int64) {
        self.token = token
        self.path = path
        self.url = url
        self.removed = removed
        self.savedAt = savedAt
    }
}

/// A `gallery` command's answer.
public struct GalleryAnswer: Codable, Sendable, Equatable {
    /// One line for a person: "2026-12-01/booth-000042-picture.jpg taken down", "index rebuilt: …".
    public var message: String
    /// The gallery after the command (its counts include what it did).
    public var status: GalleryStatus
    /// The pictures the command was about.
    public var pictures: [GalleryPicture]

    /// Each field as described above.
    public init(message: String, status: GalleryStatus, pictures: [GalleryPicture] = []) {
        self.message = message
        self.status = status
        self.pictures = pictures
    }
}

/// Why a `gallery` command could not be done: `code` as the control socket's errors
/// (`not-found`, `bad-request`, `unavailable`, `internal`), `message` for a person.
public struct GalleryFailure: Error, Sendable, Equatable {
    /// `not-found`, `bad-request`, `unavailable` or `internal`.
    public var code: String
    /// What was wrong, naming the picture, file or setting, and what is allowed.
    public var message: String

    /// A failure with `code` and `message` as above.
    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}
