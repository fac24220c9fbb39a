import BoothClock
import BoothCore
import BoothIndex
import BoothPorts
import BoothSystem
import CHTTPShims
import CMicroHTTPD
import Glibc
import Synchronization

/// The list, the thumbnails, the PIN and the slideshow: what `gallery.list`, `gallery.slideshow`
/// and `gallery.pin` add to the pictures' own pages.
extension GalleryServer {
    /// The client's address as text (`pb_http_client_address`).
    func clientAddress(_ c: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        pb_http_client_address(c, &buffer, buffer.count)
        return String(nulTerminated: buffer)
    }

    /// Whether the request carries the PIN's cookie (always true without `gallery.pin`).
    func hasPIN(_ c: OpaquePointer) -> Bool {
        guard let pinCookie else { return true }
        guard let sent = MHD_lookup_connection_value(c, .COOKIE_KIND, GalleryServer.pinCookieName) else { return false }
        return pinCookie.accepts(String(cString: sent), nowSeconds: wallSeconds())
    }

    /// The PIN cookie's name.
    static let pinCookieName = "photobooth_pin"

    /// `answer` when the request has the PIN (or none is set), else the PIN's form (403) that leads back to `next`.
    func guarded(_ c: OpaquePointer, next: String, _ answer: () -> Bool) -> Bool {
        if hasPIN(c) { return answer() }
        return respond(c, 403, html: ListPages.pin(next: next, wrong: false, config: config), headers: [("Cache-Control", "no-store")])
    }

    /// The oldest `saved_at` still served under `gallery.expiry` (nil: no expiry).
    private var servedSince: Int64? { config.expirySeconds.map { wallSeconds() - $0 } }

    /// `/`, `/?before=SAVEDAT.ROWID` (``ListPosition``: the pictures after that one) and `/?page=N` (the
    /// old links: the Nth `gallery.page_size` pictures now): one page of thumbnails, newest first, with
    /// links to the pages before and after it by position, so a picture saved between two loads
    /// neither repeats nor hides one. 404 for a page past the last, 400 for a position that is not one.
    func listPage(_ c: OpaquePointer) -> Bool {
        guarded(c, next: "/") {
            var position: ListPosition?
            if let text = header(c, kind: .GET_ARGUMENT_KIND, "before") {
                guard let p = ListPosition(text) else {
                    return respond(c, 400, text: "before: a place in the list from a page's link (SAVEDAT.ROWID, two whole numbers), got '\(text.prefix(40))'\n",
                                   headers: [("Cache-Control", "no-store")])
                }
                position = p
            }
            guard let page = GalleryText.pageNumber(header(c, kind: .GET_ARGUMENT_KIND, "page")) else { return missing(c) }
            let size = config.pageSize
            let total: Int, offset: Int, pictures: [IndexedPicture], previous: String?, next: String?
            sweepThumbnails()
            do {
                let rows = try listed.rows(index.current())
                // Newest first: the pictures still served under gallery.expiry are the first ones.
                let since = servedSince
                let visible = since.map { s in rows.prefix { $0.picture.savedAt >= s } } ?? rows[...]
                func at(_ i: Int) -> ListPosition { ListPosition(savedAt: visible[i].picture.savedAt, rowid: visible[i].rowid) }
                total = visible.count
                if let position {
                    // The first row older than the position (rows are in descending order).
                    var low = visible.startIndex, high = visible.endIndex
                    while low < high {
                        let mid = low + (high - low) / 2
                        if at(mid) < position { high = mid } else { low = mid + 1 }
                    }
                    guard low < visible.endIndex else { return missing(c) }
                    offset = low - visible.startIndex
                } else {
                    offset = (page - 1) * size
                    guard page == 1 || offset < total else { return missing(c) }
                }
                let from = visible.startIndex + offset, to = min(from + size, visible.endIndex)
                pictures = visible[from..<to].map(\.picture)
                next = to < visible.endIndex ? "/?before=\(at(to - 1).text)" : nil
                previous = offset == 0 ? nil : offset <= size ? "/" : "/?before=\(at(from - size - 1).text)"
            } catch {
                log.error("gallery: the list: \(error)")
                return respond(c, 503, text: "The gallery cannot read its index just now; try again in a moment.\n",
                               headers: [("Retry-After", "5"), ("Cache-Control", "no-store")])
            }
            let number = offset / size + 1
            let pages = number - 1 + max(1, (total - offset + size - 1) / size)
            return respond(c, 200, html: ListPages.list(pictures, page: number, pages: pages, total: total, previous: previous, next: next, config: config),
                           headers: [("Cache-Control", "no-cache")])
        }
    }

    /// `/t/TOKEN.jpg`: the picture's thumbnail from the cache, made first when missing (``Thumbnails``).
    func serveThumbnail(_ c: OpaquePointer, _ picture: IndexedPicture) -> Bool {
        let etag = "\"t\(picture.token.prefix(8))-\(String(picture.bytes, radix: 16))\""
        let headers = [("Content-Type", "image/jpeg"), ("ETag", etag), ("Cache-Control", "private, max-age=86400"),
                       ("X-Content-Type-Options", "nosniff")]
        let path: String
        do {
            path = try thumbnails.file(for: picture, under: config.photosDir, stillServed: {
                if case .unknown = lookUp(picture.token) { false } else { true }
            })
        } catch {
            log.warning("gallery: no thumbnail of \(picture.path): \(error)")
            return missing(c)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        var st = stat()
        guard fd >= 0 else { return missing(c) }
        guard fstat(fd, &st) == 0 else { close(fd); return missing(c) }
        switch preconditions(c, etag: etag, lastModified: nil) {
        case .failed:
            close(fd)
            return preconditionFailed(c, etag: etag, lastModified: nil)
        case .notModified:
            close(fd)
            return notModified(c, length: Int64(st.st_size), headers: headers.filter { $0.0 != "Content-Type" })
        case .serve:
            return respond(c, 200, fd: fd, offset: 0, length: Int64(st.st_size), headers: headers, picture: false)
        }
    }

    /// The thumbnails of pictures taken down (or gone from the index) deleted from `gallery.cache`
    /// when the index's count of removed pictures changed since the last look (``Thumbnails/sweep(when:served:)``):
    /// at start and at each list load.
    func sweepThumbnails() {
        guard let (current, generation) = try? index.currentAndGeneration() else { return }
        guard let removed = try? current.counts().removed else { return }
        let n = thumbnails.sweep(when: [generation, removed]) { token in
            do { return try current.any(token: token).map { !$0.removed } ?? false } catch { return nil }
        }
        if n > 0 { log.info("gallery: \(n) thumbnail\(n == 1 ? "" : "s") of pictures no longer served (taken down) deleted from \(config.cache)") }
    }

    /// `GET /pin`: the form (`?next=/live` to go back to the slideshow); without a PIN, straight on.
    func pinForm(_ c: OpaquePointer) -> Bool {
        let next = GalleryServer.safeNext(header(c, kind: .GET_ARGUMENT_KIND, "next"))
        guard pinCookie != nil, !hasPIN(c) else { return respond(c, 303, text: "", headers: [("Location", next), ("Cache-Control", "no-store")]) }
        return respond(c, 200, html: ListPages.pin(next: next, wrong: false, config: config), headers: [("Cache-Control", "no-store")])
    }

    /// `POST /pin`: the right PIN sets the cookie and goes on to `next` (303); a wrong one shows the
    /// form again (403) and counts against the address (``GuessLimit``: 429 past it, no PIN looked at).
    func pinSubmit(_ c: OpaquePointer, form: [String: String], overflow: Bool) -> Bool {
        let next = GalleryServer.safeNext(form["next"])
        guard let pinCookie else { return respond(c, 303, text: "", headers: [("Location", next), ("Cache-Control", "no-store")]) }
        let address = clientAddress(c), t = now()
        // Counted as a wrong PIN at once (check and count in one step), taken back when it is right.
        let admission = pinTries.withLock { $0.admit(address, nowMilliseconds: t) }
        guard admission.admitted else {
            stats.withLock { $0.limited += 1 }
            let wait = pinTries.withLock { $0.retryAfterSeconds(address, nowMilliseconds: t) }
            return respond(c, 429, text: "Too many wrong PINs from this address; try again in \(wait) s.\n",
                           headers: [("Retry-After", "\(wait)"), ("Cache-Control", "no-store")])
        }
        let tried = form["pin"] ?? ""
        if !overflow && tried == config.pin, let value = pinCookie.value(nowSeconds: wallSeconds()) {
            pinTries.withLock { $0.forgive(address, nowMilliseconds: t) }
            return respond(c, 303, text: "", headers: [
                ("Location", next), ("Cache-Control", "no-store"),
                ("Set-Cookie", "\(GalleryServer.pinCookieName)=\(value); Path=/; Max-Age=\(PINCookie.maxAgeSeconds); HttpOnly; SameSite=Lax"),
            ])
        }
        stats.withLock { $0.wrongPINs += 1 }
        if admission.filled {
            log.warning("gallery: \(address) tried \(pinTries.withLock { $0.limitText("wrong PINs") }); answering it 429 until then")
        }
        return respond(c, 403, html: ListPages.pin(next: next, wrong: true, config: config), headers: [("Cache-Control", "no-store")])
    }

    /// The key the PIN's cookie is signed with (HMAC-SHA256, ``PictureTokens``): `STATE/pin-cookie.key`,
    /// 32 random bytes made at the first start (mode 0600, written durably: ``PictureTokens/load(orCreate:)``),
    /// so a cookie outlives a restart; `gallery.state` made (0700) when missing. A key file of the wrong
    /// size is made again (the cookies given so far then ask for the PIN once more). Empty `state`, or a
    /// folder or key that cannot be made or read: a key of this run only, said in the log.
    static func pinCookieKey(state: String, log: Logger) -> PictureTokens? {
        guard !state.isEmpty else { return PictureTokens.ephemeral() }
        let path = "\(state)/pin-cookie.key"
        if mkdir(state, 0o700) != 0 && errno != EEXIST {
            log.warning("gallery: gallery.state \(state): \(SystemCallError.reason(of: errno)); the PIN's cookies last only until the gallery restarts")
            return PictureTokens.ephemeral()
        }
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && st.st_size != Int(PictureTokens.secretBytes) {
            log.warning("gallery: \(path) has \(st.st_size) bytes, not \(PictureTokens.secretBytes); a new key is made (PIN cookies given before ask for the PIN again)")
            unlink(path)
        }
        do {
            return try PictureTokens.load(orCreate: path)
        } catch {
            log.warning("gallery: the PIN cookie's key: \(error); the PIN's cookies last only until the gallery restarts")
            return PictureTokens.ephemeral()
        }
    }

    /// Where a PIN's form may lead: `/live` or `/` (nothing else: no redirect elsewhere).
    static func safeNext(_ text: String?) -> String { text == "/live" ? "/live" : "/" }

    /// `/live.json`: without `after` (or with a cursor past the index's last row: the index was made
    /// again), the recent pictures and `reset`; with `after`, those recorded since; with `wait=1` and
    /// none, the request is held (``LiveWaiters``) until one is or ``Config/longPollMilliseconds`` pass.
    func liveJSON(_ c: OpaquePointer) -> Bool {
        guard hasPIN(c) else {
            return respond(c, 403, bytes: Array("{\"error\":\"pin\"}\n".utf8), type: "application/json", headers: [("Cache-Control", "no-store")])
        }
        let afterText = header(c, kind: .GET_ARGUMENT_KIND, "after")
        guard let afterText else { return answerLive(c, after: nil) }
        guard let after = Int64(afterText), after >= 0 else {
            return respond(c, 400, text: "after: a cursor from /live.json (a whole number from 0), got '\(afterText.prefix(40))'\n",
                           headers: [("Cache-Control", "no-store")])
        }
        if header(c, kind: .GET_ARGUMENT_KIND, "wait") == "1" {
            let last = (try? index.current().lastRowID()) ?? 0
            if last == after {
                stats.withLock { $0.held += 1 }
                live.hold(c, after: after, until: now() + config.longPollMilliseconds)
                return true
            }
        }
        return answerLive(c, after: after)
    }

    /// The slideshow's answer: `{"cursor":N,"reset":B,"keep":K,"pictures":[{"token":…,"image":…,"page":…},…]}`,
    /// pictures oldest first (tokens are base32: nothing to escape).
    func answerLive(_ c: OpaquePointer, after: Int64?) -> Bool {
        let keep = 30
        var reset = after == nil
        var rows: [IndexedPicture] = []
        var cursor: Int64 = 0
        do {
            let i = try index.current()
            cursor = try i.lastRowID()
            if let after, after <= cursor {
                let got = try i.listed(after: after, limit: keep).filter { r in r.rowid <= cursor }
                if got.count == keep, let last = got.last { cursor = last.rowid }
                rows = got.map(\.picture)
            } else {
                reset = true
                rows = try i.listed(limit: keep, offset: 0, savedSince: servedSince).reversed()
            }
        } catch {
            log.error("gallery: the slideshow: \(error)")
            return respond(c, 503, text: "index unavailable\n", headers: [("Retry-After", "5"), ("Cache-Control", "no-store")])
        }
        let pictures = rows.map { "{\"token\":\"\($0.token)\",\"image\":\"/p/\($0.token).jpg\",\"page\":\"/p/\($0.token)\"}" }
        let body = "{\"cursor\":\(cursor),\"reset\":\(reset),\"keep\":\(keep),\"pictures\":[\(pictures.joined(separator: ","))]}\n"
        return respond(c, 200, bytes: Array(body.utf8), type: "application/json", headers: [("Cache-Control", "no-store")])
    }

    /// A request's value of `kind` (a query argument, a cookie) named `name`.
    func header(_ c: OpaquePointer, kind: MHD_ValueKind, _ name: String) -> String? {
        MHD_lookup_connection_value(c, kind, name).map { String(cString: $0) }
    }
}

/// The PIN's cookie, `EXPIRES.MAC`: EXPIRES the second (since 1970, the gallery's wall clock) its 30 days end,
/// MAC the HMAC-SHA256 of the PIN and EXPIRES under `pin-cookie.key` (``PictureTokens/token(for:)``). Accepted
/// until EXPIRES with the MAC of this PIN and key (compared in constant time), so a copy kept or replayed after
/// its 30 days asks for the PIN again, and a changed PIN or key refuses every cookie given before.
struct PINCookie: Sendable {
    /// A cookie's life, in seconds (its `Max-Age`): 30 days.
    static let maxAgeSeconds: Int64 = 2_592_000
    /// The key; nil when none could be had: no cookie is given or accepted.
    let key: PictureTokens?
    /// `gallery.pin`.
    let pin: String

    private func mac(_ expires: Int64) -> String? { key?.token(for: "gallery pin\0\(pin)\0\(expires)") }

    /// The value for a right PIN at `nowSeconds`; nil without a key.
    func value(nowSeconds: Int64) -> String? {
        let expires = nowSeconds + PINCookie.maxAgeSeconds
        return mac(expires).map { "\(expires).\($0)" }
    }

    /// Whether `sent` (at most 64 bytes looked at) is a cookie of this PIN and key whose 30 days have not ended at `nowSeconds`.
    func accepts(_ sent: String, nowSeconds: Int64) -> Bool {
        guard sent.utf8.count <= 64, let dot = sent.firstIndex(of: ".") else { return false }
        let digits = sent[..<dot]
        guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
              let expires = Int64(digits), expires > nowSeconds, let expected = mac(expires) else { return false }
        let given = Array(sent[sent.index(after: dot)...].utf8), wanted = Array(expected.utf8)
        guard given.count == wanted.count else { return false }
        return zip(given, wanted).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// The slideshow's held requests (`/live.json?wait=1`): each connection suspended
/// (`MHD_suspend_connection`) with its cursor and deadline; a thread of its own (`pb-live`) looks at
/// the index's last row every 250 ms and resumes (`MHD_resume_connection`) those with a picture
/// newer than their cursor, or past their deadline. libmicrohttpd then calls the handler again,
/// which answers them (``resumed(_:)``).
final class LiveWaiters: Sendable {
    private struct Held: @unchecked Sendable {
        // `@unchecked`: connection pointers, used only under the lock and by libmicrohttpd.
        var waiting: [UInt: (connection: OpaquePointer, after: Int64, deadline: Int64)] = [:]
        var resumed: [UInt: Int64] = [:]
        var stopping = false
    }
    private let held = Mutex(Held())
    private let worker = WorkerThread(name: "pb-live")
    /// Broadcast when libmicrohttpd takes a resumed request back (``resumed(_:)``), for ``stop()``'s wait.
    private let takenBack = MonotonicCondition()

    /// Starts the thread that resumes held requests.
    func start(server: GalleryServer) {
        worker.start { [weak server] w in
            while true {
                let wake = w.waitForWork(until: Monotonic.now().adding(milliseconds: 250))
                guard let server, wake != .stop else { return }
                let last = (try? server.index.current().lastRowID()) ?? -1
                let t = server.now()
                self.resume { $0.after != last || t >= $0.deadline }
            }
        }
    }

    /// Holds `c` until a row after `after` is recorded or `until` (ms, the server's clock); on a server stopping, answers at once.
    func hold(_ c: OpaquePointer, after: Int64, until: Int64) {
        held.withLock { h in
            if h.stopping {
                h.resumed[UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(c)))] = after
            } else {
                h.waiting[UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(c)))] = (c, after, until)
            }
            // Under the lock: resume cannot come before the suspension.
            MHD_suspend_connection(c)
            if h.stopping { MHD_resume_connection(c) }
        }
    }

    /// The cursor of `c` when it is a held request libmicrohttpd gives back (it is then answered), else nil.
    func resumed(_ c: OpaquePointer) -> Int64?? {
        let after: Int64? = held.withLock { h in h.resumed.removeValue(forKey: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(c)))) }
        guard let after else { return nil }
        takenBack.lock(); takenBack.broadcast(); takenBack.unlock()
        return .some(after)
    }

    /// Requests held now (tests).
    var count: Int { held.withLock { $0.waiting.count } }

    private func resume(where due: ((connection: OpaquePointer, after: Int64, deadline: Int64)) -> Bool) {
        held.withLock { h in
            for (key, w) in h.waiting where due(w) {
                h.waiting[key] = nil
                h.resumed[key] = w.after
                MHD_resume_connection(w.connection)
            }
        }
    }

    /// Answers every held request and stops the thread; waits (up to 1 s) for libmicrohttpd to take them back.
    func stop() {
        held.withLock { $0.stopping = true }
        resume { _ in true }
        worker.finish(timeoutMilliseconds: 1000)
        // Looked at with `takenBack` locked, which ``resumed(_:)`` takes to broadcast: no taking back is missed.
        let deadline = Monotonic.now().adding(milliseconds: 1000)
        takenBack.lock()
        defer { takenBack.unlock() }
        while held.withLock({ !$0.resumed.isEmpty }) && takenBack.wait(until: deadline) {}
    }
}

/// The list's rows (``PictureIndex/listedInOrder()``, all of them, with their rowids), newest first,
/// read again only when the index changed (its `PRAGMA data_version`, or another connection after
/// the daemon made the file again): a page is then a slice of them, not a count and a scan with
/// OFFSET per request (at 10,000 pictures, about 9 ms of CPU a page before).
final class ListedCache: Sendable {
    private struct Entry: @unchecked Sendable {
        /// The connection itself, kept: a new connection starts its `data_version` again (at 1), so
        /// only the same object's version says the same rows.
        var index: PictureIndex
        var version: Int64
        var rows: [(rowid: Int64, picture: IndexedPicture)]
    }
    private let entry = Mutex<Entry?>(nil)

    /// ``PictureIndex/listedInOrder()``, read again only when the index changed.
    func rows(_ index: PictureIndex) throws(IndexError) -> [(rowid: Int64, picture: IndexedPicture)] {
        let version = try index.dataVersion()
        if let e = entry.withLock({ $0 }), e.index === index, e.version == version { return e.rows }
        let rows = try index.listedInOrder()
        entry.withLock { $0 = Entry(index: index, version: version, rows: rows) }
        return rows
    }
}
