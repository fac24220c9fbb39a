import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import CHTTPShims
import Glibc

/// What a request asks for, from its method and path (the path exactly as the client sent it: not
/// percent-decoded, without the query; `pb_http_handler`). A path is routed only when it is exactly
/// one of the routes, byte for byte: `/p%2fTOKEN.jpg` or `/p/TOKEN%00.jpg` is ``notFound``.
/// Pure: the router and its parsers are fuzzed (fuzz/targets/gallery.swift).
public enum GalleryRoute: Equatable, Sendable {
    /// `/p/TOKEN`: the picture's page.
    case page(token: String)
    /// `/p/TOKEN.jpg`: the picture, inline.
    case image(token: String)
    /// `/p/TOKEN/download`: the picture as an attachment with a file name.
    case download(token: String)
    /// `/health`: 200 while the gallery runs and reads its index.
    case health
    /// `/favicon.ico`, which every browser asks for: 204, cached (no 404 in the guest's console).
    case favicon
    /// `/` (`?page=N`): the list of every picture, with thumbnails (`gallery.list`).
    case list
    /// `/t/TOKEN.jpg`: a picture's thumbnail (``Thumbnails``; `gallery.list`).
    case thumbnail(token: String)
    /// `GET /pin`: the PIN's form.
    case pinForm
    /// `POST /pin`: a PIN tried (form fields `pin` and `next`).
    case pinSubmit
    /// `/live`: the slideshow's page (`gallery.slideshow`).
    case live
    /// `/live.js`: its script.
    case liveScript
    /// `/live.json` (`?after=CURSOR&wait=1`): the slideshow's pictures, held until one is saved with `wait`.
    case liveJSON
    /// Anything else that is a GET or HEAD.
    case notFound
    /// A method other than GET and HEAD (and POST to `/pin`).
    case methodNotAllowed

    /// Longest path served; anything longer is `notFound` without being looked at.
    public static let maxPathLength = 256

    /// Routes `method` and `path`. A token must have a token's shape (``PictureTokens/isWellFormed(_:)``):
    /// `..`, slashes, percent-escapes and other bytes never reach the index or the file system.
    public static func route(method: String, path: String) -> GalleryRoute {
        if method == "POST" && path == "/pin" { return .pinSubmit }
        guard method == "GET" || method == "HEAD" else { return .methodNotAllowed }
        guard path.utf8.count <= maxPathLength else { return .notFound }
        switch path {
        case "/health": return .health
        case "/favicon.ico": return .favicon
        case "/": return .list
        case "/pin": return .pinForm
        case "/live": return .live
        case "/live.js": return .liveScript
        case "/live.json": return .liveJSON
        default: break
        }
        if path.hasPrefix("/t/") && path.hasSuffix(".jpg") {
            let token = path.dropFirst(3).dropLast(4)
            return PictureTokens.isWellFormed(token) ? .thumbnail(token: String(token)) : .notFound
        }
        guard path.hasPrefix("/p/") else { return .notFound }
        let rest = path.dropFirst(3)
        if rest.hasSuffix(".jpg") {
            let token = rest.dropLast(4)
            return PictureTokens.isWellFormed(token) ? .image(token: String(token)) : .notFound
        }
        if rest.hasSuffix("/download") {
            let token = rest.dropLast(9)
            return PictureTokens.isWellFormed(token) ? .download(token: String(token)) : .notFound
        }
        return PictureTokens.isWellFormed(rest) ? .page(token: String(rest)) : .notFound
    }
}

/// A `Range` header's single byte range (RFC 9110 §14.1.2), against a file of `size` bytes.
public enum ByteRange: Equatable, Sendable {
    /// No usable range: the whole file with 200 (also for several ranges, which the gallery does not split).
    case whole
    /// Bytes `first...last` with 206.
    case partial(first: Int64, last: Int64)
    /// A range past the end: 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Parses `bytes=FIRST-LAST`, `bytes=FIRST-` or `bytes=-SUFFIX`; anything else (another unit,
    /// several ranges, garbage) is `.whole`, as the RFC allows a server to ignore the header.
    public static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header, header.utf8.count <= 100, header.hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst(6)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let a = spec[..<dash], b = spec[spec.index(after: dash)...]
        func number(_ s: Substring) -> Int64? {
            guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return Int64(s)
        }
        if a.isEmpty {
            guard let suffix = number(b) else { return .whole }
            if suffix == 0 || size == 0 { return .unsatisfiable }
            return .partial(first: max(0, size - suffix), last: size - 1)
        }
        guard let first = number(a) else { return .whole }
        let last: Int64
        if b.isEmpty {
            last = size - 1
        } else {
            guard let l = number(b), l >= first else { return .whole }
            last = min(l, size - 1)
        }
        return first < size ? .partial(first: first, last: last) : .unsatisfiable
    }
}

/// What a GET or HEAD of a file with `etag` (strong) and `lastModified` makes of the request's
/// preconditions, evaluated in RFC 9110 §13.2.2's order: `If-Match`, else `If-Unmodified-Since`
/// (412 when false); `If-None-Match`, else `If-Modified-Since` (304 when false); then `If-Range`
/// (§13.1.5: the range only for the same strong ETag or exactly the same date, else the whole file).
/// A date that is not an HTTP-date (``GalleryText/httpDateSeconds(_:)``) is ignored, as the RFC says.
public enum Preconditions: Equatable, Sendable {
    /// Serve: 200, or 206 when `range` and the request has a usable `Range`.
    case serve(range: Bool)
    /// 304 Not Modified.
    case notModified
    /// 412 Precondition Failed.
    case failed

    /// Evaluates the request's headers (nil: absent; each at most 1 KiB looked at, a longer one is
    /// treated as not matching). `lastModified` in seconds since 1970; nil: no date conditions apply.
    public static func evaluate(ifMatch: String?, ifUnmodifiedSince: String?, ifNoneMatch: String?, ifModifiedSince: String?,
                                ifRange: String?, etag: String, lastModified: Int64?) -> Preconditions {
        if let ifMatch {
            guard GalleryText.matches(ifMatch: ifMatch, etag) else { return .failed }
        } else if let text = ifUnmodifiedSince, let date = GalleryText.httpDateSeconds(text), let lastModified, lastModified > date {
            return .failed
        }
        if ifNoneMatch != nil {
            if GalleryText.matches(ifNoneMatch: ifNoneMatch, etag) { return .notModified }
        } else if let text = ifModifiedSince, let date = GalleryText.httpDateSeconds(text), let lastModified, lastModified <= date {
            return .notModified
        }
        guard let ifRange else { return .serve(range: true) }
        let value = ifRange.trimmingSpaces()
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            return .serve(range: !etag.hasPrefix("W/") && value == etag)
        }
        guard let date = GalleryText.httpDateSeconds(value), let lastModified else { return .serve(range: false) }
        return .serve(range: date == lastModified)
    }
}

/// Unknown tokens (or wrong PINs) per client address: a guest who mistypes gets a few tries,
/// someone guessing gets `429 Too Many Requests` (no look-up at all) until the window allows again,
/// and only that address does: every other guest is served as before. The window slides: at most
/// `allowed` misses in any `windowMilliseconds`, each miss leaving it `windowMilliseconds` after it
/// was made (no fixed minute whose edge lets twice as many through). Pure bookkeeping on an injected clock;
/// memory: `maxAddresses` × `allowed` times at most.
public struct GuessLimit: Sendable {
    /// Misses allowed per address within any window.
    public let allowed: Int
    /// The window, in milliseconds.
    public let windowMilliseconds: Int64
    /// Addresses tracked at most (beyond it, those with no miss left in the window are dropped,
    /// then the one whose last miss is oldest).
    public let maxAddresses: Int
    /// Per address, the times of its last misses (at most `allowed`), oldest first.
    private var misses: [String: [Int64]] = [:]

    public init(allowed: Int = 20, windowMilliseconds: Int64 = 60_000, maxAddresses: Int = 4096) {
        self.allowed = allowed
        self.windowMilliseconds = windowMilliseconds
        self.maxAddresses = maxAddresses
    }

    /// The misses of `address` still within the window at `now`, oldest first.
    private func recent(_ address: String, _ now: Int64) -> ArraySlice<Int64> {
        guard let times = misses[address] else { return [] }
        return times.drop { now - $0 >= windowMilliseconds }
    }

    /// Whether `address` may ask for a token now (`nowMilliseconds` on a monotonic clock).
    public func mayAsk(_ address: String, nowMilliseconds: Int64) -> Bool {
        recent(address, nowMilliseconds).count < allowed
    }

    /// Milliseconds until `address` may ask again: 0 when it may now; else until the miss that
    /// fills its allowance leaves the window.
    public func waitMilliseconds(_ address: String, nowMilliseconds: Int64) -> Int64 {
        let times = recent(address, nowMilliseconds)
        guard times.count >= allowed else { return 0 }
        guard allowed > 0 else { return windowMilliseconds }
        return max(0, times[times.endIndex - allowed] + windowMilliseconds - nowMilliseconds)
    }

    /// ``waitMilliseconds(_:nowMilliseconds:)`` in whole seconds, rounded up, at least 1: a `Retry-After`.
    public func retryAfterSeconds(_ address: String, nowMilliseconds: Int64) -> Int64 {
        max(1, (waitMilliseconds(address, nowMilliseconds: nowMilliseconds) + 999) / 1000)
    }

    /// `address` asked for a token that names no picture.
    public mutating func missed(_ address: String, nowMilliseconds: Int64) {
        var times = Array(recent(address, nowMilliseconds))
        if misses[address] == nil && misses.count >= maxAddresses {
            misses = misses.filter { entry in entry.value.last.map { nowMilliseconds - $0 < windowMilliseconds } ?? false }
            if misses.count >= maxAddresses, let oldest = misses.min(by: { ($0.value.last ?? 0) < ($1.value.last ?? 0) })?.key {
                misses[oldest] = nil
            }
        }
        times.append(nowMilliseconds)
        if times.count > max(1, allowed) { times.removeFirst(times.count - max(1, allowed)) }
        misses[address] = times
    }

    /// Whether `address` may ask now and, when it may, its ask counted as a miss at once: the check and
    /// the count in one step under the caller's lock, so two server threads cannot both pass the last
    /// try of an allowance (a separate ``mayAsk(_:nowMilliseconds:)`` then ``missed(_:nowMilliseconds:)``
    /// let one more through). ``forgive(_:nowMilliseconds:)`` takes the count back when the ask was no
    /// miss (a picture found, the right PIN).
    /// - Returns: `admitted` false: past the allowance (answer 429, nothing counted); `filled` true: this
    ///   ask used the allowance's last try (the log's "now limited" line, if it turns out a miss).
    public mutating func admit(_ address: String, nowMilliseconds: Int64) -> (admitted: Bool, filled: Bool) {
        guard mayAsk(address, nowMilliseconds: nowMilliseconds) else { return (false, false) }
        missed(address, nowMilliseconds: nowMilliseconds)
        return (true, !mayAsk(address, nowMilliseconds: nowMilliseconds))
    }

    /// Takes back the miss ``admit(_:nowMilliseconds:)`` counted for `address` at `nowMilliseconds` (the
    /// same instant the caller passed it): its ask was no miss.
    public mutating func forgive(_ address: String, nowMilliseconds: Int64) {
        guard var times = misses[address], let i = times.lastIndex(of: nowMilliseconds) else { return }
        times.remove(at: i)
        misses[address] = times.isEmpty ? nil : times
    }

    /// `N … within S s`, for the log line that says an address is now limited.
    public func limitText(_ what: String) -> String { "\(allowed) \(what) within \(windowMilliseconds / 1000) s" }

    /// Addresses tracked now (tests).
    public var tracked: Int { misses.count }
}

/// A place in the list (``PictureIndex/listedInOrder()``'s order: newest `savedAt` first, then the
/// higher rowid): a page's link to the next one names the last picture shown, and the next page
/// starts with the picture after it, however many pictures were saved meanwhile. As text
/// (`?before=`): `SAVEDAT.ROWID`, two whole numbers (the first may be negative).
public struct ListPosition: Equatable, Comparable, Sendable {
    /// Seconds since 1970 (the index's `saved_at`).
    public var savedAt: Int64
    /// The index's rowid.
    public var rowid: Int64

    public init(savedAt: Int64, rowid: Int64) {
        self.savedAt = savedAt
        self.rowid = rowid
    }

    /// From `SAVEDAT.ROWID` (at most 40 bytes); nil for anything else.
    public init?(_ text: String) {
        guard text.utf8.count <= 40 else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        func digits(_ s: Substring) -> Bool { !s.isEmpty && s.utf8.count <= 19 && s.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
        guard parts.count == 2, digits(parts[0].hasPrefix("-") ? parts[0].dropFirst() : parts[0]), digits(parts[1]),
              let savedAt = Int64(parts[0]), let rowid = Int64(parts[1]) else { return nil }
        self.init(savedAt: savedAt, rowid: rowid)
    }

    /// `SAVEDAT.ROWID`.
    public var text: String { "\(savedAt).\(rowid)" }

    /// Older (later in the list) is smaller.
    public static func < (a: ListPosition, b: ListPosition) -> Bool { (a.savedAt, a.rowid) < (b.savedAt, b.rowid) }
}

/// Small pieces of the responses.
public enum GalleryText {
    /// The fields of a posted form as the shim hands them over (`key\0value\0` pairs, decoded by
    /// libmicrohttpd's post processor); a key given twice keeps its first value.
    public static func formFields(_ bytes: UnsafeBufferPointer<UInt8>) -> [String: String] {
        var out: [String: String] = [:]
        let parts = bytes.split(separator: 0, omittingEmptySubsequences: false)
        var i = 0
        while i + 1 < parts.count {
            let key = String(decoding: parts[i], as: UTF8.self), value = String(decoding: parts[i + 1], as: UTF8.self)
            if out[key] == nil { out[key] = value }
            i += 2
        }
        return out
    }

    /// A list page number from `?page=`: nil (no such page) unless digits from 1 up; 1 when absent.
    public static func pageNumber(_ text: String?) -> Int? {
        guard let text else { return 1 }
        guard !text.isEmpty, text.utf8.count <= 6, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(text), n >= 1 else { return nil }
        return n
    }

    /// Whether an `If-None-Match` header matches `etag` (RFC 9110 §13.1.2, weak comparison): `*`,
    /// or a comma-separated list of entity tags, `W/` prefixes ignored. nil (no header) matches nothing.
    public static func matches(ifNoneMatch header: String?, _ etag: String) -> Bool {
        guard let header, header.utf8.count <= 1024 else { return false }
        let mine = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for item in header.split(separator: ",") {
            var tag = item.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
            if tag == mine { return true }
        }
        return false
    }

    /// Whether an `If-Match` header holds for `etag` (RFC 9110 §13.1.1, strong comparison): `*`, or
    /// a comma-separated list with exactly `etag` in it (a weak tag `W/"…"` never matches).
    public static func matches(ifMatch header: String, _ etag: String) -> Bool {
        guard header.utf8.count <= 1024, !etag.hasPrefix("W/") else { return false }
        for item in header.split(separator: ",") {
            let tag = item.trimmingSpaces()
            if tag == "*" || tag == etag { return true }
        }
        return false
    }

    /// Seconds since 1970 of an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`,
    /// or the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`;
    /// parsed by `strptime` (C locale: English names) and `timegm` (`pb_http_date`). nil for anything else or over 64 bytes.
    public static func httpDateSeconds(_ text: String) -> Int64? {
        guard text.utf8.count <= 64, !text.utf8.contains(0) else { return nil }
        var seconds: Int64 = 0
        guard pb_http_date(text, &seconds) != 0 else { return nil }
        return seconds
    }

    /// An HTTP date (`Tue, 01 Dec 2026 18:04:05 GMT`, IMF-fixdate) for `seconds` since 1970.
    public static func httpDate(_ seconds: Int64) -> String { TimeText.http(seconds) }

    /// `text` safe inside HTML text and attribute values.
    public static func html(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// The name a downloaded picture is saved under: `photobooth-2026-12-01-42.jpg` for
    /// `2026-12-01/booth-000042-picture.jpg`, `photobooth-2026-12-01-42-3.jpg` for its third capture.
    public static func downloadName(path: String) -> String {
        let parts = path.split(separator: "/")
        let name = String(parts.last ?? "")
        let date = parts.count == 2 && PhotoStore.isDateFolder(String(parts[0])) ? "\(parts[0])-" : ""
        let session = PhotoFileName.sessionNumber(in: name).map(String.init) ?? "picture"
        let shot = PictureIndex.shot(in: name).map { $0 == 0 ? "" : "-\($0)" } ?? ""
        return "photobooth-\(date)\(session)\(shot).jpg"
    }

    /// True for an index path the gallery may open: `DATE/booth-N-picture.jpg` or `DATE/booth-N-K.jpg`
    /// and nothing else (an index altered by someone else cannot point the gallery outside the photos).
    public static func isServablePath(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && PhotoStore.isDateFolder(String(parts[0])) && PictureIndex.shot(in: String(parts[1])) != nil
    }
}

