import BoothCore
import BoothGallery
import BoothIndex
import BoothJPEG
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// One request over its own TCP connection from `source` (another loopback address is another
/// guest to the server), read to the end (`Connection: close`): status, headers (lower-cased
/// names; a repeated one keeps its last value) and body.
private func http(_ port: UInt16, _ method: String, _ path: String, headers: [String] = [], body: String = "",
                  from source: String = "127.0.0.1", waitMilliseconds: Int32 = 10_000) throws -> (status: Int, headers: [String: String], body: [UInt8]) {
    var text = "\(method) \(path) HTTP/1.1\r\nHost: booth\r\nConnection: close\r\n"
    for h in headers { text += h + "\r\n" }
    if !body.isEmpty { text += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n" }
    text += "\r\n" + body
    let reply = RawReply(parsing: try rawReplyBytes(port, Array(text.utf8), from: source, waitMilliseconds: waitMilliseconds))
    var h: [String: String] = [:]
    for (name, value) in reply.headers { h[name.lowercased()] = value }
    return (reply.status, h, reply.body)
}

/// OnePhoto's folder with more sessions: 2 (two captures and its picture), 3 (one capture, no
/// picture: a one-shot session's), 4 (two captures, no picture yet), 5 (a picture taken down).
private func fiveSessions(_ one: OnePhoto) throws -> [Int: String] {
    let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
    var tokenOf: [Int: String] = [1: one.token]
    for (session, shot, savedAt) in [(2, 1, 190), (2, 2, 195), (2, 0, 200), (3, 1, 300), (4, 1, 400), (4, 2, 410), (5, 0, 500)] {
        let relative = "2026-12-01/\(PhotoFileName.name(session: session, shot: shot))"
        try AtomicFile.write(one.jpeg, to: "\(one.photos)/\(relative)")
        let token = tokens.token(for: PictureTokens.identity(folder: "f00d", path: relative, bytes: Int64(one.jpeg.count)))
        try one.index.record(IndexedPicture(token: token, path: relative, session: session, shot: shot, savedAt: Int64(savedAt), bytes: Int64(one.jpeg.count)))
        if shot == 0 || session == 3 { tokenOf[session] = token }
        if session == 5 { #expect(try one.index.remove(token: token, at: 600)) }
    }
    return tokenOf
}

@Suite("The gallery's list, thumbnails, PIN and slideshow over real HTTP (libmicrohttpd on loopback)", .serialized)
struct GalleryListTests {
    @Test("the list: one picture per session, newest first, paged; thumbnails made once by a scaled decode, upright, 304; off by default")
    func list() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let token = try fiveSessions(one)
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "Not here.")
        let off = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger())
        let offPort = try off.startOnLoopback()
        #expect(try http(offPort, "GET", "/").status == 404, "gallery.list is off by default")
        #expect(try http(offPort, "GET", "/t/\(one.token).jpg").status == 404)
        #expect(try http(offPort, "GET", "/live").status == 404, "gallery.slideshow is off by default")
        #expect(try http(offPort, "GET", "/live.json").status == 404)
        off.stop()

        config.list = true
        config.pageSize = 2
        config.listText = "Alle Fotos"
        config.cache = "\(one.dir)/cache"
        let server = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let first = try http(port, "GET", "/")
        #expect(first.status == 200)
        let page = String(decoding: first.body, as: UTF8.self)
        #expect(page.contains("<h1>Alle Fotos</h1>"))
        #expect(page.contains("data-total=\"3\""), "sessions 1, 2, 3: 4 has no picture yet, 5 was taken down")
        let linked = page.components(separatedBy: "<a href=\"/p/").dropFirst().map { String($0.prefix(26)) }
        #expect(linked == [try #require(token[1]), try #require(token[3])], "newest first: 1 (saved now), then 3 (at 300)")
        #expect(page.contains("<img src=\"/t/\(one.token).jpg\" loading=\"lazy\""))
        #expect(page.contains("rel=\"next\" href=\"/?before=300."), "the next page: after session 3's picture (saved at 300)")
        #expect(!page.contains("rel=\"prev\""))
        let after = try #require(page.components(separatedBy: "rel=\"next\" href=\"").dropFirst().first?.prefix { $0 != "\"" })
        for target in [String(after), "/?page=2"] {
            let second = String(decoding: try http(port, "GET", target).body, as: UTF8.self)
            #expect(second.components(separatedBy: "<a href=\"/p/").dropFirst().map { String($0.prefix(26)) } == [try #require(token[2])], "\(target)")
            #expect(second.contains("rel=\"prev\" href=\"/\""))
            #expect(second.contains("<span>2 / 2</span>"))
        }
        for bad in ["/?page=3", "/?page=0", "/?page=x", "/?page=-1", "/?page=99999999"] {
            #expect(try http(port, "GET", bad).status == 404, "\(bad)")
        }

        let thumb = try http(port, "GET", "/t/\(one.token).jpg")
        #expect(thumb.status == 200)
        #expect(thumb.headers["content-type"] == "image/jpeg")
        let decoder = try JPEGDecoder()
        let big = try decoder.header(one.jpeg).size, small = try decoder.header(thumb.body).size
        #expect(max(small.width, small.height) >= Thumbnails.minimumLongSide)
        #expect(small == Thumbnails.scale(for: big).scaled(big) || small == Thumbnails.scale(for: big).scaled(FrameSize(width: big.height, height: big.width)))
        #expect(small.width < big.width, "a scaled decode: \(big) → \(small)")
        #expect(thumb.body.count < one.jpeg.count / 4)
        #expect(EXIFPrivacy.privateFields(in: thumb.body).isEmpty)
        #expect(server.thumbnailsMade == 1)
        let again = try http(port, "GET", "/t/\(one.token).jpg")
        #expect(again.body == thumb.body)
        #expect(server.thumbnailsMade == 1, "made once, then from the cache")
        let etag = try #require(thumb.headers["etag"])
        #expect(try http(port, "GET", "/t/\(one.token).jpg", headers: ["If-None-Match: \(etag)"]).status == 304)
        #expect(try http(port, "GET", "/t/\(String(repeating: "a", count: 26)).jpg").status == 404)
        #expect(try http(port, "GET", "/t/../index.jpg").status == 404)
    }

    @Test("a picture TurboJPEG cannot decode: no thumbnail, the reason named; not read again at the next request")
    func undecodableThumbnail() throws {
        var template = Array("/tmp/photobooth-thumbs-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let garbage: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 60)
        try AtomicFile.write(garbage, to: "\(dir)/bad.jpg")
        let thumbs = Thumbnails(directory: "\(dir)/cache")
        try thumbs.prepare()
        let picture = IndexedPicture(token: String(repeating: "c", count: 26), path: "bad.jpg", session: 1, savedAt: 1, bytes: Int64(garbage.count))
        var first = ""
        #expect { _ = try thumbs.file(for: picture, under: dir) } throws: { error in
            first = "\(error)"
            return first.hasPrefix("\(dir)/bad.jpg: ")
        }
        // Gone now: a second request is answered from what was learnt, not by reading the file again.
        unlink("\(dir)/bad.jpg")
        #expect { _ = try thumbs.file(for: picture, under: dir) } throws: { "\($0)" == first }
        #expect(thumbs.madeCount == 0)
    }

    @Test("the thumbnail's scale: the smallest TurboJPEG scale whose long side stays at 320 or more")
    func scales() {
        #expect(Thumbnails.scale(for: FrameSize(width: 4000, height: 3000)) == .eighth)
        #expect(Thumbnails.scale(for: FrameSize(width: 1920, height: 1080)) == .quarter)
        #expect(Thumbnails.scale(for: FrameSize(width: 1280, height: 720)) == .quarter)
        #expect(Thumbnails.scale(for: FrameSize(width: 640, height: 480)) == .half)
        #expect(Thumbnails.scale(for: FrameSize(width: 300, height: 200)) == .full)
        #expect(Thumbnails.scale(for: FrameSize(width: 1800, height: 2400)) == .quarter)
    }

    @Test("the PIN: the list asks for it, a wrong one is refused, 5 a minute then 429 for that address only; the right one sets a cookie; a picture's own URL never asks")
    func pin() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m")
        config.list = true
        config.slideshow = true
        config.pin = "2468"
        config.pinText = "PIN, bitte"
        config.cache = "\(one.dir)/cache"
        let clock = GalleryTestClock()
        let server = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger(),
                                   nowMilliseconds: { clock.ms.withLock { $0 } })
        let port = try server.startOnLoopback()
        defer { server.stop() }

        let asked = try http(port, "GET", "/")
        #expect(asked.status == 403)
        let form = String(decoding: asked.body, as: UTF8.self)
        #expect(form.contains("PIN, bitte"))
        #expect(form.contains("<form method=\"post\" action=\"/pin\">"))
        #expect(!form.contains(one.token), "nothing of the pictures before the PIN")
        #expect(try http(port, "GET", "/live").status == 403)
        #expect(try http(port, "GET", "/live.json").status == 403)
        #expect(try http(port, "GET", "/p/\(one.token)").status == 200, "a picture's own URL never asks for the PIN")
        #expect(try http(port, "GET", "/p/\(one.token).jpg").status == 200)

        for i in 1...5 {
            let wrong = try http(port, "POST", "/pin", body: "pin=\(1000 + i)&next=%2F")
            #expect(wrong.status == 403, "wrong PIN \(i)")
            #expect(wrong.headers["set-cookie"] == nil)
        }
        let limited = try http(port, "POST", "/pin", body: "pin=2468&next=%2F")
        #expect(limited.status == 429, "the 6th try within a minute, even the right PIN: no PIN looked at")
        #expect(limited.headers["retry-after"] == "60")
        // Another guest (another address) is not locked out.
        let other = try http(port, "POST", "/pin", body: "pin=2468&next=%2Flive", from: "127.0.0.2")
        #expect(other.status == 303)
        #expect(other.headers["location"] == "/live")
        let cookie = try #require(other.headers["set-cookie"])
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("SameSite=Lax"))
        let value = String(cookie.prefix { $0 != ";" })
        // EXPIRES.MAC (seconds since 1970, then the HMAC): not the PIN. (Its digits may hold the PIN's
        // by chance: 1799246876 does hold 2468, so a look for the PIN's digits is no test.)
        let parts = value.dropFirst("photobooth_pin=".count).split(separator: ".")
        #expect(value.hasPrefix("photobooth_pin="), "\(cookie)")
        #expect(parts.count == 2 && parts[0].allSatisfy(\.isNumber) && parts[1].count >= 26, "the cookie is EXPIRES.MAC, not the PIN: \(cookie)")
        let list = try http(port, "GET", "/", headers: ["Cookie: \(value)"], from: "127.0.0.2")
        #expect(list.status == 200)
        #expect(String(decoding: list.body, as: UTF8.self).contains("/t/\(one.token).jpg"))
        #expect(try http(port, "GET", "/live.json", headers: ["Cookie: \(value)"]).status == 200)
        #expect(try http(port, "GET", "/", headers: ["Cookie: photobooth_pin=\(String(repeating: "a", count: 26))"]).status == 403)
        // A minute later the first address may try again.
        clock.advance(61_000)
        let right = try http(port, "POST", "/pin", body: "pin=2468&next=https%3A%2F%2Felsewhere.example")
        #expect(right.status == 303)
        #expect(right.headers["location"] == "/", "next is / or /live, never another site")
        // A body past the form's limit is no PIN.
        let huge = try http(port, "POST", "/pin", body: "pin=2468&x=" + String(repeating: "y", count: 5000), from: "127.0.0.3")
        #expect(huge.status == 403)
        #expect(try http(port, "POST", "/p/\(one.token)").status == 405)
        #expect(server.currentStats.wrongPINs == 6)
        #expect(server.currentStats.limited == 1)
    }

    @Test("the slideshow: recent pictures, then a long poll held until a picture is saved, answered with it at once; held ones answered at stop")
    func slideshow() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m")
        config.slideshow = true
        config.slideMilliseconds = 5000
        config.longPollMilliseconds = 3000
        let server = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let page = String(decoding: try http(port, "GET", "/live").body, as: UTF8.self)
        #expect(page.contains("<script src=\"/live.js\"></script>"))
        #expect(page.contains("data-slide-ms=\"5000\""))
        let script = try http(port, "GET", "/live.js")
        #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(String(decoding: script.body, as: UTF8.self).contains("/live.json?wait=1&after="))

        struct Live: Decodable { var cursor: Int64; var reset: Bool; var keep: Int; var pictures: [P]; struct P: Decodable { var token: String; var image: String; var page: String } }
        let start = try JSONDecoder().decode(Live.self, from: Data(try http(port, "GET", "/live.json").body))
        #expect(start.reset)
        #expect(start.pictures.map(\.token) == [one.token])
        #expect(start.pictures.first?.image == "/p/\(one.token).jpg")

        // Nothing new: held for its whole time.
        let t0 = Date()
        let empty = try JSONDecoder().decode(Live.self, from: Data(try http(port, "GET", "/live.json?wait=1&after=\(start.cursor)").body))
        let held = Date().timeIntervalSince(t0)
        #expect(held >= 2.5 && held < 6, "held \(held) s of 3")
        #expect(empty.pictures.isEmpty)
        #expect(empty.cursor == start.cursor)

        // A picture saved while a request is held: answered with it within a poll of the index.
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        let relative = "2026-12-01/\(PhotoFileName.name(session: 2, shot: 0))"
        try AtomicFile.write(one.jpeg, to: "\(one.photos)/\(relative)")
        let token = tokens.token(for: PictureTokens.identity(folder: "f00d", path: relative, bytes: Int64(one.jpeg.count)))
        let saver = Thread {
            usleep(700_000)
            _ = try? one.index.record(IndexedPicture(token: token, path: relative, session: 2, shot: 0, savedAt: Int64(time(nil)), bytes: Int64(one.jpeg.count)))
        }
        let t1 = Date()
        saver.start()
        let fresh = try JSONDecoder().decode(Live.self, from: Data(try http(port, "GET", "/live.json?wait=1&after=\(start.cursor)").body))
        let took = Date().timeIntervalSince(t1)
        #expect(fresh.pictures.map(\.token) == [token])
        #expect(fresh.cursor > start.cursor)
        #expect(took >= 0.6 && took < 2, "answered \(took) s after the request, the picture saved at 0.7 s")
        // A cursor past the index's last row (the index made again): the recent ones, reset.
        let past = try JSONDecoder().decode(Live.self, from: Data(try http(port, "GET", "/live.json?wait=1&after=999999").body))
        #expect(past.reset)
        #expect(past.pictures.map(\.token) == [one.token, token], "oldest first")
        #expect(try http(port, "GET", "/live.json?after=x").status == 400)
        #expect(server.currentStats.held == 2)
    }

    @Test("a held slideshow request is answered when the gallery stops")
    func stopWhileHeld() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m")
        config.slideshow = true
        config.longPollMilliseconds = 15_000
        let server = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        let cursor = try one.reader().lastRowID()
        let stopper = Thread { usleep(500_000); server.stop() }
        stopper.start()
        let t0 = Date()
        let r = try http(port, "GET", "/live.json?wait=1&after=\(cursor)")
        #expect(Date().timeIntervalSince(t0) < 5, "not held its 15 s")
        #expect(r.status == 200 || r.status == 0, "answered or closed, never left hanging")
    }

    @Test("the form's fields as the shim passes them; page numbers")
    func formFields() {
        let bytes: [UInt8] = Array("pin\u{0}2468\u{0}next\u{0}/live\u{0}pin\u{0}9\u{0}".utf8)
        let fields = bytes.withUnsafeBufferPointer { GalleryText.formFields($0) }
        #expect(fields == ["pin": "2468", "next": "/live"])
        #expect([UInt8]().withUnsafeBufferPointer { GalleryText.formFields($0) }.isEmpty)
        #expect(GalleryText.pageNumber(nil) == 1)
        #expect(GalleryText.pageNumber("12") == 12)
        for bad in ["", "0", "-1", "1e3", "１", "9999999", "2 "] { #expect(GalleryText.pageNumber(bad) == nil, "\(bad)") }
        #expect(GalleryRoute.route(method: "POST", path: "/pin") == .pinSubmit)
        #expect(GalleryRoute.route(method: "POST", path: "/") == .methodNotAllowed)
        #expect(GalleryRoute.route(method: "GET", path: "/t/\(String(repeating: "b", count: 26)).jpg") == .thumbnail(token: String(repeating: "b", count: 26)))
        #expect(GalleryRoute.route(method: "GET", path: "/t/x.jpg") == .notFound)
        #expect(GalleryRoute.route(method: "GET", path: "/live.json") == .liveJSON)
    }
}
