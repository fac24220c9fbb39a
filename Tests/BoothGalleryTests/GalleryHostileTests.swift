import BoothGallery
import BoothIndex
import BoothPorts
import BoothStorage
import BoothTestSupport
import Foundation
import Glibc
import Testing

/// One request over a raw TCP connection from `source` (another loopback address is another guest
/// to the server): the bytes as given, the reply's status line (`""` when the server closed
/// without one), and how long the answer took in ms.
private func raw(_ port: UInt16, _ request: [UInt8], from source: String = "127.0.0.1", close: Bool = true,
                 waitMilliseconds: Int32 = 5000) throws -> (status: String, milliseconds: Int) {
    let start = Date()
    let reply = try rawReplyBytes(port, request, from: source, waitMilliseconds: waitMilliseconds, statusLineOnly: true)
    return (String(decoding: reply.prefix { $0 != 13 }, as: UTF8.self), Int(Date().timeIntervalSince(start) * 1000))
}

private func get(_ path: String, headers: String = "") -> [UInt8] {
    Array("GET \(path) HTTP/1.1\r\nHost: booth\r\n\(headers)Connection: close\r\n\r\n".utf8)
}

@Suite("The gallery against hostile clients (raw TCP to libmicrohttpd on loopback)", .serialized)
struct GalleryHostileTests {
    @Test("overlong URLs and headers, a slow client, traversal; 1,000 bad tokens from one address: limited, nothing learned, other guests served")
    func hostile() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let token = one.token
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback(maxConnections: 32, connectionsPerClient: 8, timeoutMilliseconds: 1000)
        defer { server.stop() }

        #expect(try raw(port, get("/p/\(token).jpg")).status == "HTTP/1.1 200 OK")
        #expect(try raw(port, get("/p/" + String(repeating: "a", count: 10_000))).status == "HTTP/1.1 404 Not Found", "an overlong URL")
        #expect(try raw(port, get("/health", headers: "X-Long: \(String(repeating: "b", count: 64_000))\r\n")).status
                == "HTTP/1.1 431 Request Header Fields Too Large", "an overlong header (gallery: 32 KiB a connection)")
        #expect(try raw(port, get("/health", headers: (0..<5000).map { "X-\($0): y\r\n" }.joined())).status
                == "HTTP/1.1 431 Request Header Fields Too Large", "5,000 headers")
        for path in ["/p/../index.sqlite", "/p/%2e%2e%2fphotos", "/p/\(token)/../../../etc/passwd", "/p/\(token).jpg/..", "//etc/passwd"] {
            #expect(try raw(port, get(path)).status == "HTTP/1.1 404 Not Found", "\(path)")
        }

        // A client that sends half a request line and stalls is closed after gallery.timeout (1 s
        // here); another guest is served at once meanwhile.
        let slow = Thread.detachNewThreadWithResult { try? raw(port, Array("GET /p/".utf8), from: "127.0.0.3", waitMilliseconds: 5000) }
        usleep(200_000)
        let meanwhile = try raw(port, get("/p/\(token)"), from: "127.0.0.4")
        #expect(meanwhile.status == "HTTP/1.1 200 OK")
        #expect(meanwhile.milliseconds < 1000, "served while the slow client waits: \(meanwhile.milliseconds) ms")
        let stalled = try #require(slow.wait() ?? nil, "the slow client could not connect")
        #expect(stalled.status == "", "closed without an answer")
        #expect((900...3000).contains(stalled.milliseconds), "closed after about 1 s: \(stalled.milliseconds) ms")

        // 1,000 bad tokens from one address: 20 answered 404, then 429 without a look-up; its real
        // token then answers 429 too (the answer says nothing about which tokens exist), while
        // another address gets the picture.
        var statuses: [String: Int] = [:]
        for i in 0..<1000 {
            let bad = String(String(i, radix: 2).map { $0 == "0" ? "a" : "b" }).padding(toLength: 26, withPad: "c", startingAt: 0)
            statuses[try raw(port, get("/p/\(bad).jpg"), from: "127.0.0.2").status, default: 0] += 1
        }
        #expect(statuses == ["HTTP/1.1 404 Not Found": 20, "HTTP/1.1 429 Too Many Requests": 980], "\(statuses)")
        #expect(try raw(port, get("/p/\(token).jpg"), from: "127.0.0.2").status == "HTTP/1.1 429 Too Many Requests", "nothing learned")
        #expect(try raw(port, get("/p/\(token).jpg"), from: "127.0.0.5").status == "HTTP/1.1 200 OK", "another guest")
        #expect(server.currentStats.limited == 981)
    }
}

extension Thread {
    /// Runs `body` on a thread of its own; `wait()` returns its result.
    static func detachNewThreadWithResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ResultBox<T> {
        let box = ResultBox<T>()
        Thread.detachNewThread { box.set(body()) }
        return box
    }
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var value: T?
    func set(_ v: T) { value = v; done.signal() }
    func wait() -> T? { done.wait(); return value }
}
