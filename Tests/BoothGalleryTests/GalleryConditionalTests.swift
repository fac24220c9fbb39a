import BoothGallery
import BoothIndex
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Testing

@Suite("The gallery's request edges: conditional requests, the exact router (raw HTTP on loopback)", .serialized)
struct GalleryConditionalTests {
    @Test("If-Modified-Since, If-Range, If-Match, If-Unmodified-Since in RFC 9110's order; a 304's Content-Length is the 200's, not 0")
    func conditional() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 7)
        defer { one.remove() }
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let path = "/p/\(one.token).jpg"
        let whole = try rawGet(port, path)
        #expect(whole.status == 200)
        #expect(whole.body.count == one.jpeg.count && whole.body == one.jpeg, "the file's bytes")
        let etag = try #require(whole.value("ETag"))
        let modified = try #require(whole.value("Last-Modified"))
        var st = stat()
        #expect(stat("\(one.photos)/\(one.relative)", &st) == 0)
        let mtime = Int64(st.st_mtim.tv_sec)
        #expect(modified == GalleryText.httpDate(mtime))
        let later = GalleryText.httpDate(mtime + 3600), earlier = GalleryText.httpDate(mtime - 3600)

        // If-Modified-Since not older than the file: 304, without a body or a Content-Length.
        for date in [modified, later, "Sunday, 06-Nov-44 08:49:37 GMT", "Sun Nov  6 08:49:37 2044"] {
            let r = try rawGet(port, path, headers: "If-Modified-Since: \(date)\r\n")
            #expect(r.status == 304, "If-Modified-Since: \(date)")
            #expect(r.body.isEmpty)
            #expect(r.values("Content-Length") == ["\(one.jpeg.count)"], "a 304's one Content-Length is the 200's (never 0): \(r.headers)")
            #expect(r.value("ETag") == etag)
        }
        #expect(try rawGet(port, path, headers: "If-Modified-Since: \(earlier)\r\n").status == 200, "changed since")
        #expect(try rawGet(port, path, headers: "If-Modified-Since: yesterday\r\n").status == 200, "not a date: ignored")
        // If-None-Match wins over If-Modified-Since (§13.2.2 step 3 before 4).
        #expect(try rawGet(port, path, headers: "If-None-Match: \"other\"\r\nIf-Modified-Since: \(later)\r\n").status == 200)
        let inm = try rawGet(port, path, headers: "If-None-Match: \(etag)\r\n")
        #expect(inm.status == 304)
        #expect(inm.values("Content-Length") == ["\(one.jpeg.count)"], "\(inm.headers)")

        // If-Range: only the same strong ETag or exactly the same date gives the range.
        let range = "Range: bytes=10-19\r\n"
        #expect(try rawGet(port, path, headers: range + "If-Range: \(etag)\r\n").status == 206)
        #expect(try rawGet(port, path, headers: range + "If-Range: \(modified)\r\n").status == 206)
        for other in ["\"other\"", "W/\(etag)", earlier, later, "garbage"] {
            let r = try rawGet(port, path, headers: range + "If-Range: \(other)\r\n")
            #expect(r.status == 200, "If-Range: \(other)")
            #expect(r.body.count == one.jpeg.count && r.body == one.jpeg, "the whole file for If-Range: \(other)")
        }

        // If-Match and If-Unmodified-Since that fail: 412; that hold: served.
        #expect(try rawGet(port, path, headers: "If-Match: \"other\"\r\n").status == 412)
        #expect(try rawGet(port, path, headers: "If-Match: W/\(etag)\r\n").status == 412, "If-Match compares strongly")
        #expect(try rawGet(port, path, headers: "If-Match: \"x\", \(etag)\r\n").status == 200)
        #expect(try rawGet(port, path, headers: "If-Match: *\r\n").status == 200)
        #expect(try rawGet(port, path, headers: "If-Unmodified-Since: \(earlier)\r\n").status == 412)
        #expect(try rawGet(port, path, headers: "If-Unmodified-Since: \(modified)\r\n").status == 200)
        // If-Match present: If-Unmodified-Since is not looked at (step 2 only without If-Match).
        #expect(try rawGet(port, path, headers: "If-Match: \(etag)\r\nIf-Unmodified-Since: \(earlier)\r\n").status == 200)
        // A failing If-Match comes before a matching If-None-Match (step 1 before 3).
        #expect(try rawGet(port, path, headers: "If-Match: \"other\"\r\nIf-None-Match: \(etag)\r\n").status == 412)
        // The download answers the same.
        #expect(try rawGet(port, "/p/\(one.token)/download", headers: "If-Modified-Since: \(modified)\r\n").status == 304)
        #expect(try rawGet(port, path, method: "HEAD", headers: "If-Modified-Since: \(modified)\r\n").status == 304)
    }

    @Test("the router matches exactly: a NUL, an encoded slash or letter is a 404; a query is not part of the path")
    func exactRouter() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 8)
        defer { one.remove() }
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let t = one.token
        for ok in ["/p/\(t).jpg", "/p/\(t)", "/p/\(t)/download", "/p/\(t).jpg?x=1", "/health", "/health?", "/favicon.ico"] {
            #expect(try rawGet(port, ok).status / 100 == 2, "\(ok)")
        }
        for bad in ["/p/\(t)%00.jpg", "/p%2f\(t).jpg", "/p%2F\(t).jpg", "/p/\(t)%2ejpg", "/%70/\(t)", "/p/\(t)%00", "/p/\(t)/download%00",
                    "/p/\(t)%2fdownload", "/health%00", "/hea%6Cth", "/p/\(t).jpg%3fx", "/p/\(t)#x"] {
            let r = try rawGet(port, bad)
            #expect(r.status == 404, "\(bad)")
        }
        #expect(server.currentStats.pictures == 3, "the picture, its download and the picture with a query; none of the others")
    }

    @Test("a NUL byte sent as itself in the target (not %00), in its path or query, routes nowhere: /p/TOKEN<NUL>.jpg is a 404, not TOKEN's page")
    func literalNUL() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 9)
        defer { one.remove() }
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let t = one.token
        for bad in ["/p/\(t)\u{0}.jpg", "/p/\(t)\u{0}", "/p/\(t)\u{0}x", "/p/\(t).jpg\u{0}/download", "/health\u{0}x", "/p/\(t)\u{0}?x=1",
                    "/\u{0}p/\(t)", "/p/\(t).jpg?x=\u{0}"] {
            #expect(try rawGet(port, bad).status == 404, "\(bad.debugDescription)")
        }
        for ok in ["/p/\(t)", "/p/\(t).jpg?x=1", "/health", "/p/\(t)/download"] {
            #expect(try rawGet(port, ok).status / 100 == 2, "\(ok.debugDescription)")
        }
        let pipelined = try rawExchange(port, "GET /p/\(t)\u{0}.jpg HTTP/1.1\r\nHost: b\r\n\r\nGET /p/\(t).jpg HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
        #expect(pipelined.status == 404, "the first of two pipelined requests")
    }
    @Test("an absolute-form target (RFC 9112 §3.2.2: a server must accept it) is routed on its path: http://booth/p/TOKEN.jpg is the picture")
    func absoluteForm() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 10)
        defer { one.remove() }
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let t = one.token
        for ok in ["http://booth/p/\(t).jpg", "HTTP://booth:8080/p/\(t)", "http://booth/p/\(t)/download?x=1", "https://booth/health",
                   "http://booth/health?"] {
            #expect(try rawGet(port, ok).status / 100 == 2, "\(ok)")
        }
        for bad in ["http://booth/p/\(t)%00.jpg", "http://booth//p/\(t).jpg", "http:/p/\(t).jpg", "ftp://booth/p/\(t).jpg",
                    "http://booth/p%2f\(t).jpg", "//booth/p/\(t).jpg", "http://booth\u{0}/p/\(t).jpg"] {
            #expect(try rawGet(port, bad).status == 404, "\(bad.debugDescription)")
        }
    }
}
