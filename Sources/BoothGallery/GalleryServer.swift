import BoothClock
import BoothCore
import BoothIndex
import BoothJPEG
import BoothPorts
import BoothStorage
import BoothSystem
import CHTTPShims
import CMicroHTTPD
import Glibc
import Synchronization

/// Why the gallery's server could not start.
public struct GalleryError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The `errno` of the failed call (`EADDRNOTAVAIL`: an address the machine does not have yet,
    /// `EADDRINUSE`, `EINVAL` for an address that is not IPv4); 0 when none.
    public var errno: Int32
    /// An error saying `description`, with the failed call's `errno`.
    public init(_ description: String, errno: Int32 = 0) {
        self.description = description
        self.errno = errno
    }
}

/// photobooth-gallery's HTTP server (GNU libmicrohttpd, its own thread pool on epoll): a picture's
/// page, the picture inline (`Content-Type: image/jpeg`, `ETag`, `Last-Modified`, `Range`), the
/// picture as a download with a file name, `/health`. Files are served from their descriptor
/// (`MHD_create_response_from_fd_at_offset64`), never read into memory. Requests are answered on
/// libmicrohttpd's threads; the index is read there (a few ms a look-up).
public final class GalleryServer: Sendable {
    /// Everything a request needs; read-only after start.
    public struct Config: Sendable {
        /// Where the pictures are: `storage.dir`, joined with an index row's path.
        public var photosDir: String
        /// `gallery.title`: the pages' heading and title.
        public var title: String
        /// `gallery.download_text`: the download button's words.
        public var downloadText: String
        /// `gallery.missing_text`: the 404 page's words.
        public var missingText: String
        /// `gallery.expiry` in seconds: a picture saved longer ago is answered as missing; nil: never.
        public var expirySeconds: Int64?
        /// `gallery.list`: `/` lists the pictures, `/t/TOKEN.jpg` serves thumbnails.
        public var list = false
        /// `gallery.slideshow`: `/live`, `/live.js`, `/live.json`.
        public var slideshow = false
        /// `gallery.page_size`: pictures on one page of the list.
        public var pageSize = 60
        /// `gallery.slide_time` in milliseconds.
        public var slideMilliseconds = 8000
        /// `gallery.pin`; empty: none.
        public var pin = ""
        /// `gallery.pin_text`.
        public var pinText = "Enter the event's PIN to see all photos"
        /// `gallery.list_text`.
        public var listText = "All photos"
        /// `gallery.cache`: the thumbnails' folder.
        public var cache = "/var/cache/photobooth-gallery"
        /// `gallery.state`: the gallery's own folder; the PIN cookie's key is kept there
        /// (`pin-cookie.key`). Empty (tests): a key of this run only.
        public var state = ""
        /// How long `/live.json?wait=1` is held without a new picture, in milliseconds.
        public var longPollMilliseconds: Int64 = 20_000

        /// Each field as described above (tests; the program uses ``init(_:)``).
        public init(photosDir: String, title: String, downloadText: String, missingText: String, expirySeconds: Int64? = nil) {
            self.photosDir = photosDir
            self.title = title
            self.downloadText = downloadText
            self.missingText = missingText
            self.expirySeconds = expirySeconds
        }

        /// From `[gallery]` and `storage.dir`.
        public init(_ s: Settings) {
            let g = s.gallery
            self.init(photosDir: s.storage.dir, title: g.title, downloadText: g.downloadText, missingText: g.missingText,
                      expirySeconds: g.expiryMilliseconds.map { Int64($0 / 1000) })
            list = g.list
            slideshow = g.slideshow
            pageSize = g.pageSize
            slideMilliseconds = g.slideMilliseconds
            pin = g.pin
            pinText = g.pinText
            listText = g.listText
            cache = g.cache
            state = g.state
        }
    }

    /// Counters since start, for the log and tests.
    public struct Stats: Sendable, Equatable {
        /// Requests answered, of any kind.
        public var requests = 0
        /// Photo responses queued (200 and 206; a 304 is not one).
        public var pictures = 0
        /// 404s: unknown tokens, paths that route nowhere, files gone or changed.
        public var notFound = 0
        /// Requests answered 429: an address past its unknown tokens, or its wrong PINs.
        public var limited = 0
        /// Wrong PINs tried.
        public var wrongPINs = 0
        /// Slideshow requests held until a picture was saved or their time was up.
        public var held = 0
        /// Connections refused: their address had `gallery.connections_per_client` open.
        public var refusedPerClient = 0
        /// Connections refused: `gallery.max_connections` open, none of them waiting for a request.
        public var refusedFull = 0
        /// Connections closed while waiting for a request, the oldest first, to let a new one in at
        /// `gallery.max_connections`.
        public var closedForNewcomer = 0
        /// Connections closed because no whole request arrived within `gallery.timeout` of their start
        /// or previous answer (idle, or trickling in).
        public var closedSlowRequests = 0
        /// The limits in force, as the server keeps them: `gallery.max_connections` and
        /// `gallery.connections_per_client` (0 until started).
        public var maxConnections = 0, connectionsPerClient = 0

        /// The limits and their counters from the server (`pb_http_counts`).
        mutating func counted(_ c: pb_http_counters) {
            maxConnections = Int(c.max_connections)
            connectionsPerClient = Int(c.per_ip_connections)
            refusedPerClient = Int(c.refused_per_client)
            refusedFull = Int(c.refused_full)
            closedForNewcomer = Int(c.closed_for_newcomer)
            closedSlowRequests = Int(c.closed_slow)
        }
    }

    let config: Config
    let index: ServedIndex
    let log: Logger
    let stats = Mutex(Stats())
    private let guesses: Mutex<GuessLimit>
    /// Wrong PINs per address: 5 within any minute.
    let pinTries: Mutex<GuessLimit>
    /// The cookie a right PIN sets and the list asks for (``PINCookie``: signed with the key in `gallery.state`,
    /// ``pinCookieKey(state:log:)``, so the same after a restart; 30 days); nil without a PIN.
    let pinCookie: PINCookie?
    let thumbnails: Thumbnails
    let live = LiveWaiters()
    let listed = ListedCache()
    let now: @Sendable () -> Int64
    let wallSeconds: @Sendable () -> Int64
    // `@unchecked`: the pointer is set once by `start` and freed once by `stop`, both under the lock.
    private struct Handle: @unchecked Sendable { var server: OpaquePointer? }
    private let handle = Mutex(Handle())
    /// ``servedHeader``'s memory: a file version's key → its privacy header (nil: served as stored).
    private struct HeaderMemo { var entries: [String: EXIFPrivacy?] = [:]; var bytes = 0 }
    private let checkedHeaders = Mutex(HeaderMemo())
    /// More for `/health` after its counts (``setHealthDetail(_:)``).
    private let healthDetail = Mutex<(@Sendable () -> String?)?>(nil)
    /// The refusals' log: per address (`""`: max_connections), when its last line was written and
    /// how many were refused since; at most 4,096 addresses (then forgotten whole).
    private let refusalsSaid = Mutex([String: (at: Int64, since: Int)]())

    /// `detail` is asked at each `/health` (on a server thread: it must return at once); what it gives,
    /// when not nil, follows the counts after `; ` (the sync's backlog: ``GallerySync/healthText()``).
    public func setHealthDetail(_ detail: @escaping @Sendable () -> String?) { healthDetail.withLock { $0 = detail } }

    /// The public initializers (ServedIndex.swift): an index open, or one photoboothd has yet to make.
    init(config: Config, served: ServedIndex, log: Logger, guessLimit: GuessLimit, pinLimit: GuessLimit,
         nowMilliseconds: @escaping @Sendable () -> Int64, wallSeconds: @escaping @Sendable () -> Int64) {
        self.config = config
        self.index = served
        self.log = log
        guesses = Mutex(guessLimit)
        pinTries = Mutex(pinLimit)
        pinCookie = config.pin.isEmpty ? nil : PINCookie(key: GalleryServer.pinCookieKey(state: config.state, log: log), pin: config.pin)
        thumbnails = Thumbnails(directory: config.cache)
        now = nowMilliseconds
        self.wallSeconds = wallSeconds
    }

    /// Starts listening (`pb_http_start` → `MHD_start_daemon`, the limits kept by its accept policy).
    /// - Parameters:
    ///   - maxConnections: connections open at once; at the limit a new one closes the connection
    ///     that has waited longest for a request, or is refused when none waits (``Stats/refusedFull``).
    ///   - connectionsPerClient: connections open at once from one address; more are refused (``Stats/refusedPerClient``).
    ///   - timeoutMilliseconds: whole seconds (at least 1) a connection may idle, and the time within which its
    ///     request must arrive whole from its start or its previous answer, however slowly it trickles in
    ///     (``Stats/closedSlowRequests``; on the `nowMilliseconds` clock, checked every 250 ms).
    /// - Returns: the port listened on (`port` 0 picks a free one: tests).
    /// - Throws: ``GalleryError`` naming the address and why (not an IPv4 address, the port taken).
    @discardableResult
    public func start(address: String, port: UInt16, maxConnections: Int, connectionsPerClient: Int,
                      timeoutMilliseconds: Int, threads: Int = 2) throws(GalleryError) -> UInt16 {
        var why = [CChar](repeating: 0, count: 256)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started: OpaquePointer? = address.withCString { addr in
            var o = pb_http_options(address: addr, port: port, threads: UInt32(threads), max_connections: UInt32(maxConnections),
                                    per_ip_connections: UInt32(connectionsPerClient),
                                    timeout_seconds: UInt32(max(1, timeoutMilliseconds / 1000)), memory_per_connection: 32 * 1024,
                                    clock: { context in
                                        guard let context else { return 0 }
                                        return Unmanaged<GalleryServer>.fromOpaque(context).takeUnretainedValue().now()
                                    },
                                    refused: { context, address, which, open, limit in
                                        guard let context else { return }
                                        Unmanaged<GalleryServer>.fromOpaque(context).takeUnretainedValue()
                                            .refused(address.map { String(cString: $0) } ?? "", perClient: which == Int32(pb_http_refused_per_client),
                                                     open: Int(open), limit: Int(limit))
                                    })
            return pb_http_start(&o, { context, connection, method, url, form in
                guard let context, let connection, let method, let url else { return 0 }
                let server = Unmanaged<GalleryServer>.fromOpaque(context).takeUnretainedValue()
                let fields = form.map { f in
                    f.pointee.fields.map { GalleryText.formFields(UnsafeBufferPointer(start: UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: f.pointee.length)) } ?? [:]
                }
                return server.answer(connection, method: String(cString: method), path: String(cString: url), form: fields,
                                     formOverflow: (form?.pointee.overflow ?? 0) != 0) ? 1 : 0
            }, context, &why, why.count)
        }
        guard let started else {
            let e = Glibc.errno
            throw GalleryError("gallery: " + String(nulTerminated: why), errno: e)
        }
        handle.withLock { $0.server = started }
        if config.slideshow { live.start(server: self) }
        if config.list {
            do { try thumbnails.prepare() } catch { log.warning("gallery: gallery.cache: \(error); the list shows no thumbnails until it can be made") }
            sweepThumbnails()
        }
        return pb_http_port(started)
    }

    /// Stops listening and joins the server's threads (requests under way are ended). Keeps `self`
    /// alive until then: the threads reach it through an unretained pointer.
    public func stop() {
        // Held slideshow requests are answered first: libmicrohttpd does not stop with connections suspended.
        live.stop()
        let server = handle.withLock { h -> OpaquePointer? in defer { h.server = nil }; return h.server }
        if let server {
            // The limits' counters outlive the server (its last words in the log).
            var c = pb_http_counters()
            pb_http_counts(server, &c)
            stats.withLock { $0.counted(c) }
        }
        pb_http_stop(server)
    }

    deinit { stop() }

    /// Thumbnails made since start (``Thumbnails``).
    public var thumbnailsMade: Int { thumbnails.madeCount }

    /// The counters now (any thread).
    public var currentStats: Stats {
        var s = stats.withLock { $0 }
        handle.withLock { h in
            guard let server = h.server else { return }
            var c = pb_http_counters()
            pb_http_counts(server, &c)
            s.counted(c)
        }
        return s
    }

    /// A connection refused by a limit (on a server thread): logged at most once a minute per
    /// address (once a minute in all for max_connections), with the count refused since.
    private func refused(_ address: String, perClient: Bool, open: Int, limit: Int) {
        let t = now()
        let key = perClient ? address : ""
        let since: Int? = refusalsSaid.withLock { said in
            if let last = said[key], t - last.at < 60_000 {
                said[key] = (last.at, last.since + 1)
                return nil
            }
            if said.count >= 4096 { said = [:] }
            let since = said[key]?.since ?? 0
            said[key] = (t, 0)
            return since
        }
        guard let since else { return }
        let more = since == 0 ? "" : "; \(since) more refused since the last such line"
        if perClient {
            log.warning("gallery: refused a connection from \(address): it has \(open) open, gallery.connections_per_client is \(limit) "
                        + "(said once a minute per address\(more))")
        } else {
            log.warning("gallery: refused a connection from \(address): \(open) connections open, gallery.max_connections is \(limit), "
                        + "and none of them is waiting for a request to be closed in its place (said once a minute\(more))")
        }
    }

    /// `/health`'s words on the limits: "" while nothing was refused or closed by them.
    func limitsText() -> String {
        let s = currentStats
        guard s.refusedPerClient + s.refusedFull + s.closedForNewcomer + s.closedSlowRequests > 0 else { return "" }
        return "; connections refused: \(s.refusedPerClient) past gallery.connections_per_client (\(s.connectionsPerClient)), "
            + "\(s.refusedFull) past gallery.max_connections (\(s.maxConnections)); closed: \(s.closedForNewcomer) waiting "
            + "at max_connections for a newcomer, \(s.closedSlowRequests) without a whole request within gallery.timeout"
    }

    /// One request; false closes the connection.
    private func answer(_ c: OpaquePointer, method: String, path: String, form: [String: String]?, formOverflow: Bool) -> Bool {
        if let resumed = live.resumed(c) { return answerLive(c, after: resumed) }
        stats.withLock { $0.requests += 1 }
        switch GalleryRoute.route(method: method, path: path) {
        case .list: return config.list ? listPage(c) : missing(c)
        case let .thumbnail(token): return config.list ? found(token, c) { serveThumbnail(c, $0) } : missing(c)
        case .pinForm: return pinForm(c)
        case .pinSubmit: return pinSubmit(c, form: form ?? [:], overflow: formOverflow)
        case .live: return config.slideshow ? guarded(c, next: "/live") { respond(c, 200, html: ListPages.live(config: config), headers: [("Cache-Control", "no-cache")]) } : missing(c)
        case .liveScript:
            return config.slideshow
                ? respond(c, 200, bytes: Array(ListPages.liveScript.utf8), type: "text/javascript; charset=utf-8",
                          headers: [("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff")])
                : missing(c)
        case .liveJSON: return config.slideshow ? liveJSON(c) : missing(c)
        case .methodNotAllowed:
            return respond(c, 405, text: "Only GET and HEAD are served (and POST to /pin).\n", headers: [("Allow", path == "/pin" ? "GET, HEAD, POST" : "GET, HEAD")])
        case .notFound:
            return missing(c)
        case .favicon:
            return respond(c, 204, text: "", headers: [("Cache-Control", "public, max-age=86400")])
        case .health:
            do {
                let n = try index.current().counts()
                let detail = healthDetail.withLock { $0 }?()
                return respond(c, 200, text: "ok \(n.served) pictures\(limitsText())" + (detail.map { "; \($0)" } ?? "") + "\n", headers: [("Cache-Control", "no-store")])
            } catch {
                if index.isOpen { log.error("gallery: /health: \(error)") }
                return respond(c, 503, text: index.isOpen ? "index unavailable\n" : "not ready: waiting for photoboothd to make the index\n",
                               headers: [("Retry-After", "5"), ("Cache-Control", "no-store")])
            }
        case let .page(token):
            return found(token, c) { picture in
                // The page only for a picture its `.jpg` serves: the same open and checks, the file closed again.
                guard let file = openServable(picture) else { return missing(c) }
                close(file.fd)
                return respond(c, 200, html: PicturePage.html(picture, config: config), headers: [("Cache-Control", "no-cache")])
            }
        case let .image(token):
            return found(token, c) { serveFile(c, $0, attachment: false) }
        case let .download(token):
            return found(token, c) { serveFile(c, $0, attachment: true) }
        }
    }

    /// `answer` for the picture of `token`; 404 for an unknown token, 429 while the client's address
    /// is past its unknown tokens (``GuessLimit``: no look-up then).
    func found(_ token: String, _ c: OpaquePointer, _ answer: (IndexedPicture) -> Bool) -> Bool {
        var buffer = [CChar](repeating: 0, count: 64)
        pb_http_client_address(c, &buffer, buffer.count)
        let address = String(nulTerminated: buffer)
        let t = now()
        // Counted as a miss at once (check and count in one step), taken back below when it is none.
        let admission = guesses.withLock { $0.admit(address, nowMilliseconds: t) }
        guard admission.admitted else {
            stats.withLock { $0.limited += 1 }
            let wait = guesses.withLock { $0.retryAfterSeconds(address, nowMilliseconds: t) }
            return respond(c, 429, text: "Too many unknown pictures asked for from this address; try again in \(wait) s.\n",
                           headers: [("Retry-After", "\(wait)"), ("Cache-Control", "no-store")])
        }
        switch lookUp(token) {
        case .found(let picture):
            guesses.withLock { $0.forgive(address, nowMilliseconds: t) }
            return answer(picture)
        case .expired:
            // A real token past gallery.expiry: missing, and not a guess.
            guesses.withLock { $0.forgive(address, nowMilliseconds: t) }
            return missing(c)
        case .unavailable:
            // The index could not be read: no guest is counted as guessing for it.
            guesses.withLock { $0.forgive(address, nowMilliseconds: t) }
            return respond(c, 503, text: "The gallery cannot read its index just now; try again in a moment.\n",
                           headers: [("Retry-After", "5"), ("Cache-Control", "no-store")])
        case .unknown: break
        }
        if admission.filled {
            log.warning("gallery: \(address) asked for \(guesses.withLock { $0.limitText("unknown pictures") }); answering it 429 until then")
        }
        return missing(c)
    }

    enum LookUp { case found(IndexedPicture), unknown, expired, unavailable }

    func lookUp(_ token: String) -> LookUp {
        do {
            guard let p = try index.current().picture(token: token), GalleryText.isServablePath(p.path) else { return .unknown }
            if let expiry = config.expirySeconds, wallSeconds() - p.savedAt > expiry { return .expired }
            return .found(p)
        } catch {
            // Not made yet: said once by the index (ServedIndex), not at every request.
            if index.isOpen { log.error("gallery: \(error)") }
            return .unavailable
        }
    }

    func missing(_ c: OpaquePointer) -> Bool {
        stats.withLock { $0.notFound += 1 }
        return respond(c, 404, html: PicturePage.missing(config: config), headers: [("Cache-Control", "no-store")])
    }

    /// The picture's file as it is served, opened (the caller closes `fd`): nil, logged with why,
    /// when it cannot be: gone, not a regular file, a symbolic link on its way or a path leaving
    /// `storage.dir` (``BeneathFile``), another size than indexed, or a header whose private Exif
    /// fields cannot be checked. The one decision for the page and the file: a page is answered
    /// only for a picture its `.jpg` serves.
    func openServable(_ picture: IndexedPicture) -> (fd: Int32, st: stat, privacy: EXIFPrivacy?)? {
        let path = "\(config.photosDir)/\(picture.path)"
        let fd: Int32, st: stat
        do {
            (fd, st) = try BeneathFile.open(picture.path, under: config.photosDir)
        } catch {
            log.warning("gallery: \(error) (indexed as \(picture.token), not served)")
            return nil
        }
        let size = Int64(st.st_size)
        guard size == picture.bytes else {
            // Another file under the indexed name: never served in its place.
            close(fd)
            log.warning("gallery: \(path) has \(size) bytes, indexed with \(picture.bytes) for \(picture.token); not served")
            return nil
        }
        // What is served: the file, or (a camera's JPEG with a GPS position or serial numbers) its
        // header without them and then the file's own compressed data.
        switch servedHeader(fd: fd, picture: picture, size: size, st: st) {
        case .asStored: return (fd, st, nil)
        case .without(let p): return (fd, st, p)
        case .unservable(let why):
            close(fd)
            log.warning("gallery: \(path): \(why); not served (its private Exif fields could not be checked)")
            return nil
        }
    }

    /// The picture from its descriptor: 200, 206 for a range, 304 when the client's copy is current,
    /// 416 for a range past the end; 404 when it cannot be served (``openServable(_:)``).
    private func serveFile(_ c: OpaquePointer, _ picture: IndexedPicture, attachment: Bool) -> Bool {
        guard let (fd, st, privacy) = openServable(picture) else { return missing(c) }
        let size = Int64(st.st_size), mtime = Int64(st.st_mtim.tv_sec)
        let servedSize = privacy?.servedSize(fileSize: size) ?? size
        let etag = "\"\(picture.token.prefix(8))-\(String(size, radix: 16))-\(String(mtime, radix: 16))\(privacy == nil ? "" : "-p2")\""
        var headers: [(String, String)] = [
            ("Content-Type", "image/jpeg"), ("ETag", etag), ("Last-Modified", GalleryText.httpDate(mtime)),
            ("Accept-Ranges", "bytes"), ("Cache-Control", "private, max-age=86400"), ("X-Content-Type-Options", "nosniff"),
        ]
        if attachment {
            headers.append(("Content-Disposition", "attachment; filename=\"\(GalleryText.downloadName(path: picture.path))\""))
        }
        let rangeAllowed: Bool
        switch preconditions(c, etag: etag, lastModified: mtime) {
        case .failed:
            close(fd)
            return preconditionFailed(c, etag: etag, lastModified: mtime)
        case .notModified:
            close(fd)
            return notModified(c, length: servedSize, headers: headers.filter { $0.0 != "Content-Type" })
        case .serve(let range):
            rangeAllowed = range
        }
        let first: Int64, length: Int64, status: UInt32
        switch ByteRange.parse(rangeAllowed ? header(c, "Range") : nil, size: servedSize) {
        case .unsatisfiable:
            close(fd)
            return respond(c, 416, text: "", headers: [("Content-Range", "bytes */\(servedSize)")])
        case let .partial(f, last):
            headers.append(("Content-Range", "bytes \(f)-\(last)/\(servedSize)"))
            (first, length, status) = (f, last - f + 1, 206)
        case .whole:
            (first, length, status) = (0, servedSize, 200)
        }
        guard let privacy else { return respond(c, status, fd: fd, offset: first, length: length, headers: headers, picture: true) }
        return respond(c, status, body: ServedBody(header: privacy.header, fd: fd, fileOffset: Int64(privacy.replacing),
                                                   fileEnd: privacy.end ?? size, start: first),
                       length: length, headers: headers)
    }

    private enum ServedHeader { case asStored, without(EXIFPrivacy), unservable(String) }

    /// Whether the file must be served without some of its metadata (``EXIFPrivacy``): its header
    /// read (64 KiB, more when its segments go on) and its image's end looked for (the whole file
    /// read once), then remembered per file version (up to 4,096 files and 16 MiB of headers; the
    /// memory is dropped whole when full).
    private func servedHeader(fd: Int32, picture: IndexedPicture, size: Int64, st: stat) -> ServedHeader {
        let key = "\(picture.token)-\(size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)-\(st.st_ino)"
        if let known = checkedHeaders.withLock({ $0.entries[key] }) { return known.map { .without($0) } ?? .asStored }
        func read(_ offset: Int64, _ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { b in retryingEINTR { pread(fd, b.baseAddress, count, off_t(offset)) } }
            return got == count ? bytes : nil
        }
        var have = 0
        for want in [64 << 10, 1 << 20, 8 << 20] {
            let n = Int(min(Int64(want), size))
            guard n > have else { break }
            guard let prefix = read(0, n) else { return .unservable("\(SystemCallError.reason(of: errno)), or shorter than it was a moment ago") }
            have = n
            do {
                let sos = try JPEGMarkers.segments(prefix).last?.offset ?? 0
                let end = EXIFPrivacy.imageEnd(read: read, from: Int64(sos), fileSize: size)
                let privacy = try EXIFPrivacy.served(prefix, imageEnd: end, fileSize: size)
                checkedHeaders.withLock { memo in
                    if memo.entries.count >= 4096 || memo.bytes > 16 << 20 { memo = HeaderMemo() }
                    memo.entries[key] = .some(privacy)
                    memo.bytes += privacy?.header.count ?? 0
                }
                if let privacy {
                    log.info("gallery: \(picture.path) is served without its \(privacy.removed.map(\.description).joined(separator: ", "))")
                }
                return privacy.map { .without($0) } ?? .asStored
            } catch .truncated, .missingStartOfScan {
                continue
            } catch {
                return .unservable("\(error)")
            }
        }
        return .unservable("no start of scan within its first \(have) bytes")
    }

    /// The request's `If-…` headers against the file's `etag` and `lastModified` (``Preconditions``).
    func preconditions(_ c: OpaquePointer, etag: String, lastModified: Int64?) -> Preconditions {
        Preconditions.evaluate(ifMatch: header(c, "If-Match"), ifUnmodifiedSince: header(c, "If-Unmodified-Since"),
                               ifNoneMatch: header(c, "If-None-Match"), ifModifiedSince: header(c, "If-Modified-Since"),
                               ifRange: header(c, "If-Range"), etag: etag, lastModified: lastModified)
    }

    /// 412: the client's `If-Match` or `If-Unmodified-Since` does not hold for this version of the file.
    func preconditionFailed(_ c: OpaquePointer, etag: String, lastModified: Int64?) -> Bool {
        respond(c, 412, text: "This file is not the version your If-Match or If-Unmodified-Since names; it is \(etag).\n",
                headers: [("ETag", etag), ("Cache-Control", "no-store")] + (lastModified.map { [("Last-Modified", GalleryText.httpDate($0))] } ?? []))
    }

    /// 304 with `headers` and no body. libmicrohttpd 0.9.75 writes a `Content-Length` on every 304
    /// (the response's size; 0 for an empty one, which would be false): the response is made
    /// `length` bytes long (`MHD_create_response_from_callback`, never read for a 304), so it says
    /// what a 200 would send, as RFC 9110 §8.6 allows.
    func notModified(_ c: OpaquePointer, length: Int64, headers: [(String, String)]) -> Bool {
        let r = MHD_create_response_from_callback(UInt64(max(0, length)), 1024, { _, _, _, _ in
            -2  // MHD_CONTENT_READER_END_WITH_ERROR: a 304 has no body to read
        }, nil, nil)
        guard let r else { return false }
        return queue(c, 304, r, headers)
    }

    func header(_ c: OpaquePointer, _ name: String) -> String? {
        MHD_lookup_connection_value(c, .HEADER_KIND, name).map { String(cString: $0) }
    }

    func respond(_ c: OpaquePointer, _ status: UInt32, fd: Int32, offset: Int64, length: Int64,
                         headers: [(String, String)], picture: Bool) -> Bool {
        // libmicrohttpd owns the descriptor from here and closes it when the response is done.
        guard let r = MHD_create_response_from_fd_at_offset64(UInt64(length), fd, UInt64(offset)) else {
            close(fd)
            return false
        }
        if picture { stats.withLock { $0.pictures += 1 } }
        return queue(c, status, r, headers)
    }

    /// A response read by libmicrohttpd's callback (`MHD_create_response_from_callback`): for a
    /// picture served without some metadata, its new header and then its file from `fileOffset`.
    func respond(_ c: OpaquePointer, _ status: UInt32, body: ServedBody, length: Int64, headers: [(String, String)]) -> Bool {
        let context = Unmanaged.passRetained(body).toOpaque()
        let r = MHD_create_response_from_callback(UInt64(length), 64 * 1024, { context, pos, buffer, max in
            guard let context, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
            return Unmanaged<ServedBody>.fromOpaque(context).takeUnretainedValue().read(at: Int64(pos), into: buffer, max: max)
        }, context, { context in
            if let context { Unmanaged<ServedBody>.fromOpaque(context).release() }
        })
        guard let r else {
            Unmanaged<ServedBody>.fromOpaque(context).release()
            return false
        }
        stats.withLock { $0.pictures += 1 }
        return queue(c, status, r, headers)
    }

    func respond(_ c: OpaquePointer, _ status: UInt32, text: String, headers: [(String, String)]) -> Bool {
        respond(c, status, bytes: Array(text.utf8), type: "text/plain; charset=utf-8", headers: headers)
    }

    func respond(_ c: OpaquePointer, _ status: UInt32, html: String, headers: [(String, String)]) -> Bool {
        respond(c, status, bytes: Array(html.utf8), type: "text/html; charset=utf-8",
                headers: headers + [("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'"), ("X-Content-Type-Options", "nosniff")])
    }

    func respond(_ c: OpaquePointer, _ status: UInt32, bytes: [UInt8], type: String, headers: [(String, String)]) -> Bool {
        let response = bytes.withUnsafeBytes { b in
            MHD_create_response_from_buffer(b.count, UnsafeMutableRawPointer(mutating: b.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let response else { return false }
        return queue(c, status, response, (bytes.isEmpty && (status == 304 || status == 204) ? [] : [("Content-Type", type)]) + headers)
    }

    func queue(_ c: OpaquePointer, _ status: UInt32, _ response: OpaquePointer, _ headers: [(String, String)]) -> Bool {
        for (name, value) in headers { _ = MHD_add_response_header(response, name, value) }
        let queued = MHD_queue_response(c, status, response)
        MHD_destroy_response(response)
        return queued == .YES
    }
}

/// A picture's bytes as served without some of its metadata: `header`, then the file from
/// `fileOffset` up to `fileEnd` (never past it: what follows the image's end is not served); a
/// response starts at `start` of that (a `Range`). Owns `fd` and closes it.
final class ServedBody: @unchecked Sendable {
    // `@unchecked`: read by one libmicrohttpd thread at a time (one response's callbacks), never changed.
    private let header: [UInt8]
    private let fd: Int32
    private let fileOffset: Int64
    private let fileEnd: Int64
    private let start: Int64

    init(header: [UInt8], fd: Int32, fileOffset: Int64, fileEnd: Int64, start: Int64) {
        self.header = header
        self.fd = fd
        self.fileOffset = fileOffset
        self.fileEnd = fileEnd
        self.start = start
    }

    deinit { close(fd) }

    /// Up to `max` bytes at the response's offset `pos`: from the header, else `pread` from the
    /// file. -2 (`MHD_CONTENT_READER_END_WITH_ERROR`) when the file ends early or cannot be read.
    func read(at pos: Int64, into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        let at = start + pos
        if at < Int64(header.count) {
            let n = min(max, header.count - Int(at))
            header.withUnsafeBytes { b in
                guard let base = b.baseAddress else { return }
                UnsafeMutableRawPointer(buffer).copyMemory(from: base + Int(at), byteCount: n)
            }
            return n
        }
        let offset = fileOffset + at - Int64(header.count)
        let n = Int(min(Int64(max), fileEnd - offset))
        guard n > 0 else { return -2 }
        let got = retryingEINTR { pread(fd, buffer, n, off_t(offset)) }
        return got > 0 ? got : -2
    }
}
