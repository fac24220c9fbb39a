import BoothGallery
import Synchronization
import Testing

@Suite("The gallery's router and parsers")
struct GalleryRequestTests {
    private let token = "abcdefghijklmnopqrstuvwxyz"

    @Test("pages, pictures, downloads and health; every other path is not found without reaching the index")
    func routes() {
        #expect(GalleryRoute.route(method: "GET", path: "/p/\(token)") == .page(token: token))
        #expect(GalleryRoute.route(method: "HEAD", path: "/p/\(token).jpg") == .image(token: token))
        #expect(GalleryRoute.route(method: "GET", path: "/p/\(token)/download") == .download(token: token))
        #expect(GalleryRoute.route(method: "GET", path: "/health") == .health)
        #expect(GalleryRoute.route(method: "GET", path: "/favicon.ico") == .favicon)
        #expect(GalleryRoute.route(method: "POST", path: "/p/\(token)") == .methodNotAllowed)
        #expect(GalleryRoute.route(method: "GET", path: "/") == .list, "served only with gallery.list")
        for bad in ["/index.html", "/t/", "/t/\(token).png", "/live/", "/pin/", "/p/", "/p/\(token)x", "/p/../../etc/passwd", "/p/\(token.uppercased())", "/p/%2e%2e%2fabcdefghijklmnopq",
                    "/p/\(token)/../\(token)", "/p//\(token)", "/P/\(token)", "/p/\(token).png", "/p/" + String(repeating: "a", count: 300),
                    "/p/abcdefghijklmnopqrstuvwxy1", "/p/abcdefghijklmnopqrstuvwxy\u{e9}"] {
            #expect(GalleryRoute.route(method: "GET", path: bad) == .notFound, "\(bad)")
        }
    }

    @Test("one byte range of a file; several, garbage or another unit are the whole file; past the end is 416")
    func ranges() {
        #expect(ByteRange.parse(nil, size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=0-99", size: 1000) == .partial(first: 0, last: 99))
        #expect(ByteRange.parse("bytes=900-", size: 1000) == .partial(first: 900, last: 999))
        #expect(ByteRange.parse("bytes=-100", size: 1000) == .partial(first: 900, last: 999))
        #expect(ByteRange.parse("bytes=-5000", size: 1000) == .partial(first: 0, last: 999))
        #expect(ByteRange.parse("bytes=990-5000", size: 1000) == .partial(first: 990, last: 999))
        #expect(ByteRange.parse("bytes=1000-", size: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 1000) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=5-1", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 1000) == .whole)
        #expect(ByteRange.parse("items=0-1", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=a-b", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=99999999999999999999-", size: 1000) == .whole)
        #expect(ByteRange.parse("bytes=+1-2", size: 1000) == .whole)
    }

    @Test("HTTP dates, HTML escaping, download names, servable paths")
    func texts() {
        #expect(GalleryText.httpDate(1_796_126_645) == "Tue, 01 Dec 2026 12:04:05 GMT")
        #expect(GalleryText.html("<a href=\"x\">Tom & Jerry's</a>") == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;")
        #expect(GalleryText.downloadName(path: "2026-12-01/booth-000042-picture.jpg") == "photobooth-2026-12-01-42.jpg")
        #expect(GalleryText.isServablePath("2026-12-01/booth-000042-picture.jpg"))
        #expect(GalleryText.isServablePath("2026-12-01/booth-000042-1.jpg"), "a capture (a one-shot session's picture)")
        #expect(GalleryText.downloadName(path: "2026-12-01/booth-000042-3.jpg") == "photobooth-2026-12-01-42-3.jpg")
        #expect(!GalleryText.isServablePath("2026-12-01/.tmp-booth-000042-1.jpg.1-a"))
        #expect(!GalleryText.isServablePath("../2026-12-01/booth-000042-picture.jpg"))
        #expect(!GalleryText.isServablePath("/etc/booth-000042-picture.jpg"))
        #expect(!GalleryText.isServablePath("2026-12-01/x/booth-000042-picture.jpg"))
    }
}

@Suite("Guessing tokens is limited per address")
struct GuessLimitTests {
    @Test("20 unknown tokens a minute per address; then that address only waits for the window's end")
    func perAddress() {
        var g = GuessLimit(allowed: 20, windowMilliseconds: 60_000, maxAddresses: 3)
        for i in 0..<20 {
            #expect(g.mayAsk("10.42.0.7", nowMilliseconds: Int64(i)))
            g.missed("10.42.0.7", nowMilliseconds: Int64(i))
        }
        #expect(!g.mayAsk("10.42.0.7", nowMilliseconds: 1000))
        #expect(g.mayAsk("10.42.0.8", nowMilliseconds: 1000), "another guest is not locked out")
        #expect(g.mayAsk("10.42.0.7", nowMilliseconds: 60_000), "the next window")
        // Bounded memory: the oldest window goes.
        for (i, a) in ["a", "b", "c", "d"].enumerated() { g.missed(a, nowMilliseconds: 61_000 + Int64(i)) }
        #expect(g.tracked == 3)
    }

    @Test("admit checks and counts in one step: 16 threads racing for 5 tries get exactly 5; forgive gives a try back")
    func admitIsOneStep() async {
        // The server's threads each take the lock once per ask: with a check and a count under two
        // separate takings, two threads could both pass the last try (6 or more admitted here).
        final class Shared: Sendable {
            let limit = Mutex(GuessLimit(allowed: 5, windowMilliseconds: 60_000))
            let admitted = Atomic<Int>(0)
        }
        let shared = Shared()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    for _ in 0..<4 where shared.limit.withLock({ $0.admit("10.42.0.7", nowMilliseconds: 1000) }).admitted {
                        shared.admitted.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        #expect(shared.admitted.load(ordering: .relaxed) == 5)
        var g = GuessLimit(allowed: 2, windowMilliseconds: 60_000)
        #expect(g.admit("a", nowMilliseconds: 10) == (true, false))
        #expect(g.admit("a", nowMilliseconds: 20) == (true, true), "the allowance's last try says so")
        #expect(g.admit("a", nowMilliseconds: 30) == (false, false))
        g.forgive("a", nowMilliseconds: 20)   // that ask found its picture: no miss
        #expect(g.mayAsk("a", nowMilliseconds: 30))
        #expect(g.retryAfterSeconds("a", nowMilliseconds: 30) == 1)
        g.forgive("b", nowMilliseconds: 20)   // nothing counted for it: nothing changes
        #expect(g.tracked == 1)
    }

    @Test("If-None-Match: one tag, a list, weak tags, *; nothing without the header")
    func ifNoneMatch() {
        let etag = "\"abcdefgh-1f-2e\""
        #expect(GalleryText.matches(ifNoneMatch: etag, etag))
        #expect(GalleryText.matches(ifNoneMatch: "W/\(etag)", etag))
        #expect(GalleryText.matches(ifNoneMatch: "\"other\", W/\"x\" ,\(etag)", etag))
        #expect(GalleryText.matches(ifNoneMatch: "*", etag))
        #expect(!GalleryText.matches(ifNoneMatch: nil, etag))
        #expect(!GalleryText.matches(ifNoneMatch: "\"abcdefgh-1f-2e-p\"", etag))
        #expect(!GalleryText.matches(ifNoneMatch: "", etag))
    }
}
