import BoothGallery
import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Testing

@Suite("The list pages by position, not by offset (raw HTTP on loopback)", .serialized)
struct GalleryPagingTests {
    /// The tokens a list page links to, in order, and its link to the next page (nil: the last).
    private func page(_ port: UInt16, _ target: String) throws -> (tokens: [String], next: String?, status: Int) {
        let r = try rawGet(port, target)
        let html = String(decoding: r.body, as: UTF8.self)
        let tokens = html.components(separatedBy: "<a href=\"/p/").dropFirst().map { String($0.prefix(26)) }
        let next = html.components(separatedBy: "rel=\"next\" href=\"").dropFirst().first.map { String($0.prefix { $0 != "\"" }) }
        return (tokens, next.map { $0.replacingOccurrences(of: "&amp;", with: "&") }, r.status)
    }

    @Test("page 1, a new picture, page 2: no picture repeated, none skipped; ?page=N still answers; a bad position is a 400; a thumbnail's 304 and 412")
    func newPictureBetweenPages() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        func add(session: Int, savedAt: Int64) throws -> String {
            let relative = "2026-12-01/\(PhotoFileName.name(session: session, shot: 0))"
            try AtomicFile.write(one.jpeg, to: "\(one.photos)/\(relative)")
            let token = tokens.token(for: PictureTokens.identity(folder: "f00d", path: relative, bytes: Int64(one.jpeg.count)))
            try one.index.record(IndexedPicture(token: token, path: relative, session: session, savedAt: savedAt, bytes: Int64(one.jpeg.count)))
            return token
        }
        // Sessions 2…7 saved at 200…700 (two at the same second, 400: the one recorded later first), before session 1 (saved now).
        var all = [one.token]
        var recorded: [String] = []
        for (session, at) in [(7, 700), (6, 600), (4, 400), (5, 400), (3, 300), (2, 200)] { recorded.append(try add(session: session, savedAt: Int64(at))) }
        all += [recorded[0], recorded[1], recorded[3], recorded[2], recorded[4], recorded[5]]
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m")
        config.list = true
        config.pageSize = 3
        config.cache = "\(one.dir)/cache"
        let server = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }

        let first = try page(port, "/")
        #expect(first.status == 200)
        #expect(first.tokens.count == 3)
        let newest = try add(session: 8, savedAt: Int64(time(nil)) + 10)
        var seen = first.tokens
        var next = first.next
        var pages = 1
        while let link = next, pages < 10 {
            let p = try page(port, link)
            #expect(p.status == 200, "\(link)")
            seen += p.tokens
            next = p.next
            pages += 1
        }
        #expect(seen == all, "every picture of the first load once, in order; the new one (\(newest)) on page 1 at the next load")
        #expect(Set(seen).count == seen.count, "no picture repeated")
        #expect(try page(port, "/").tokens.first == newest)

        // Old links: ?page=N still answers (page 2 of now: 3 pictures after the first 3).
        let old = try page(port, "/?page=2")
        #expect(old.status == 200)
        #expect(old.tokens == Array(([newest] + all)[3..<6]))
        #expect(try rawGet(port, "/?page=9").status == 404, "a page past the last")
        for bad in ["/?before=x", "/?before=12", "/?before=1.x", "/?before=" + String(repeating: "9", count: 40)] {
            #expect(try rawGet(port, bad).status == 400, "\(bad)")
        }
        #expect(try rawGet(port, "/?before=100.1").status == 404, "a position older than every picture: past the last page")

        // A thumbnail's 304 says the 200's length (not 0); a failing If-Match is a 412.
        let thumb = try rawGet(port, "/t/\(one.token).jpg")
        #expect(thumb.status == 200)
        let tag = try #require(thumb.value("ETag"))
        let same = try rawGet(port, "/t/\(one.token).jpg", headers: "If-None-Match: \(tag)\r\n")
        #expect(same.status == 304)
        #expect(same.values("Content-Length") == ["\(thumb.body.count)"])
        #expect(try rawGet(port, "/t/\(one.token).jpg", headers: "If-Match: \"other\"\r\n").status == 412)
    }
}
