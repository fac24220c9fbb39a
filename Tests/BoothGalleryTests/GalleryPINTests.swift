import BoothGallery
import BoothIndex
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// A POST of the PIN's form to `/pin` from `source`.
private func postPIN(_ port: UInt16, _ pin: String, from source: String = "127.0.0.1") throws -> RawReply {
    let body = "pin=\(pin)&next=%2F"
    return try rawExchange(port, "POST /pin HTTP/1.1\r\nHost: booth\r\nConnection: close\r\n"
                           + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)", from: source)
}

@Suite("The list's PIN: a sliding window per address, a true Retry-After, a cookie that outlives a restart", .serialized)
struct GalleryPINTests {
    private func server(_ one: OnePhoto, state: String, clock: GalleryTestClock? = nil) throws -> GalleryServer {
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m")
        config.list = true
        config.pin = "2468"
        config.cache = "\(one.dir)/cache"
        config.state = state
        let index = try one.reader()
        guard let clock else { return GalleryServer(config: config, index: index, log: LogRecorder().logger()) }
        return GalleryServer(config: config, index: index, log: LogRecorder().logger(), nowMilliseconds: { clock.ms.withLock { $0 } })
    }

    @Test("5 wrong PINs in any 60 s, not per fixed minute; Retry-After says the seconds until the next try")
    func slidingWindow() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let clock = GalleryTestClock()
        let gallery = try server(one, state: "\(one.dir)/state", clock: clock)
        let port = try gallery.startOnLoopback()
        defer { gallery.stop() }
        for _ in 0..<3 { #expect(try postPIN(port, "1111").status == 403) }
        clock.ms.withLock { $0 += 50_000 }
        for _ in 0..<2 { #expect(try postPIN(port, "1111").status == 403) }
        let limited = try postPIN(port, "1111")
        #expect(limited.status == 429)
        #expect(limited.value("Retry-After") == "10", "the first 3 leave the window 10 s from now")
        // 61 s after the first three: they have left the window, the two at 50 s have not: 3 more tries, not 5.
        clock.ms.withLock { $0 += 11_000 }
        for i in 0..<3 { #expect(try postPIN(port, "1111").status == 403, "try \(i + 1) after the first three left") }
        let again = try postPIN(port, "2468")
        #expect(again.status == 429, "5 wrong within the last 60 s (2 at 50 s, 3 at 61 s): even the right PIN waits")
        #expect(again.value("Retry-After") == "49", "the misses at 50 s leave the window at 110 s, 49 s from now")
        clock.ms.withLock { $0 += 49_000 }
        #expect(try postPIN(port, "2468").status == 303)
        #expect(try postPIN(port, "1111", from: "127.0.0.2").status == 403, "another address has its own window")
    }

    @Test("the PIN's cookie is signed with pin-cookie.key in gallery.state (32 bytes, 0600, made at first start): a restart keeps it")
    func cookieSurvivesRestart() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let state = "\(one.dir)/state"
        let first = try server(one, state: state)
        let port = try first.startOnLoopback()
        let right = try postPIN(port, "2468")
        #expect(right.status == 303)
        let cookie = String(try #require(right.value("Set-Cookie")).prefix { $0 != ";" })
        #expect(try rawGet(port, "/", headers: "Cookie: \(cookie)\r\n").status == 200)
        first.stop()
        var st = stat()
        #expect(stat("\(state)/pin-cookie.key", &st) == 0)
        #expect(st.st_size == 32)
        #expect(st.st_mode & 0o777 == 0o600)

        let second = try server(one, state: state)
        let port2 = try second.startOnLoopback()
        defer { second.stop() }
        #expect(try rawGet(port2, "/", headers: "Cookie: \(cookie)\r\n").status == 200, "the cookie made before the restart")
        #expect(try rawGet(port2, "/").status == 403)

        // Another key (another gallery.state): the cookie is not accepted.
        let other = try server(one, state: "\(one.dir)/other-state")
        let port3 = try other.startOnLoopback()
        defer { other.stop() }
        #expect(try rawGet(port3, "/", headers: "Cookie: \(cookie)\r\n").status == 403)
    }

    @Test("the PIN's cookie lasts its 30 days at the gallery too: a copy kept (or replayed) after them is asked for the PIN")
    func cookieExpires() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m")
        config.list = true
        config.pin = "2468"
        config.cache = "\(one.dir)/cache"
        config.state = "\(one.dir)/state"
        let wall = Mutex<Int64>(1_800_000_000)
        let gallery = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger(), wallSeconds: { wall.withLock { $0 } })
        let port = try gallery.startOnLoopback()
        defer { gallery.stop() }
        let right = try postPIN(port, "2468")
        #expect(right.status == 303)
        let setCookie = try #require(right.value("Set-Cookie"))
        #expect(setCookie.contains("Max-Age=2592000"))
        let cookie = String(setCookie.prefix { $0 != ";" })
        #expect(try rawGet(port, "/", headers: "Cookie: \(cookie)\r\n").status == 200)
        wall.withLock { $0 += 2_592_000 - 60 }
        #expect(try rawGet(port, "/", headers: "Cookie: \(cookie)\r\n").status == 200, "a minute before its 30 days end")
        wall.withLock { $0 += 120 }
        #expect(try rawGet(port, "/", headers: "Cookie: \(cookie)\r\n").status == 403, "a minute after")
        // A cookie's time cannot be moved on by hand: its signature covers it.
        let value = String(cookie.drop { $0 != "=" }.dropFirst())
        let dot = try #require(value.firstIndex(of: "."), "EXPIRES.MAC")
        let later = "photobooth_pin=\(wall.withLock { $0 } + 1000)\(value[dot...])"
        #expect(try rawGet(port, "/", headers: "Cookie: \(later)\r\n").status == 403)
        #expect(try postPIN(port, "2468").status == 303, "the PIN again gives a new cookie")
    }
}
