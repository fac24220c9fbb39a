import BoothGallery
import BoothIndex
import BoothJPEG
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// A GET (or `method`) to the gallery on loopback through URLSession (libcurl underneath): status,
/// headers (lower-cased names) and body.
private func fetch(_ url: String, method: String = "GET", headers: [String: String] = [:]) throws -> (Int, [String: String], [UInt8]) {
    var request = URLRequest(url: try #require(URL(string: url)))
    request.httpMethod = method
    for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: (Int, [String: String], [UInt8])?
    nonisolated(unsafe) var failure: Error?
    let session = URLSession(configuration: .ephemeral)
    session.dataTask(with: request) { data, response, error in
        if let error { failure = error } else if let http = response as? HTTPURLResponse {
            var h: [String: String] = [:]
            for (k, v) in http.allHeaderFields { h[String(describing: k).lowercased()] = String(describing: v) }
            result = (http.statusCode, h, [UInt8](data ?? Data()))
        }
        done.signal()
    }.resume()
    #expect(done.wait(timeout: .now() + 10) == .success)
    if let failure { throw failure }
    return try #require(result)
}

@Suite("The gallery over real HTTP (libmicrohttpd on loopback)", .serialized)
struct GalleryServerTests {
    @Test("a picture's page, the picture (ETag, 304, Range 206, 416), the download with its name, 404s, HEAD, 405, health")
    func serves() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 42)
        defer { one.remove() }
        let (photos, relative, jpeg, token, writer) = (one.photos, one.relative, one.jpeg, one.token, one.index)
        let index = try one.reader()
        let server = GalleryServer(config: .init(photosDir: photos, title: "Anna & Ben's <wedding>", downloadText: "Save", missingText: "Not here."),
                                   index: index, log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"

        let (status, headers, body) = try fetch("\(base)/p/\(token)")
        #expect(status == 200)
        #expect(headers["content-type"] == "text/html; charset=utf-8")
        let page = String(decoding: body, as: UTF8.self)
        #expect(page.contains("<h1>Anna &amp; Ben&#39;s &lt;wedding&gt;</h1>"))
        #expect(page.contains("<img src=\"/p/\(token).jpg\""))
        #expect(page.contains("href=\"/p/\(token)/download\" download=\"photobooth-2026-12-01-42.jpg\">Save</a>"))

        let (s2, h2, picture) = try fetch("\(base)/p/\(token).jpg")
        #expect(s2 == 200)
        #expect(picture == jpeg, "the file's bytes")
        #expect(h2["content-type"] == "image/jpeg")
        #expect(h2["content-length"] == "\(jpeg.count)")
        #expect(h2["accept-ranges"] == "bytes")
        let etag = try #require(h2["etag"])
        #expect(h2["last-modified"]?.hasSuffix(" GMT") == true)
        let (s3, _, b3) = try fetch("\(base)/p/\(token).jpg", headers: ["If-None-Match": etag])
        #expect(s3 == 304)
        #expect(b3.isEmpty)
        let (s4, h4, b4) = try fetch("\(base)/p/\(token).jpg", headers: ["Range": "bytes=100-199"])
        #expect(s4 == 206)
        #expect(b4 == Array(jpeg[100...199]))
        #expect(h4["content-range"] == "bytes 100-199/\(jpeg.count)")
        let (s5, h5, _) = try fetch("\(base)/p/\(token).jpg", headers: ["Range": "bytes=\(jpeg.count)-"])
        #expect(s5 == 416)
        #expect(h5["content-range"] == "bytes */\(jpeg.count)")
        let (s6, h6, b6) = try fetch("\(base)/p/\(token)/download")
        #expect(s6 == 200)
        #expect(b6 == jpeg)
        #expect(h6["content-disposition"] == "attachment; filename=\"photobooth-2026-12-01-42.jpg\"")
        let (s7, h7, b7) = try fetch("\(base)/p/\(token).jpg", method: "HEAD")
        #expect(s7 == 200)
        #expect(b7.isEmpty)
        #expect(h7["content-length"] == "\(jpeg.count)")

        for path in ["/p/\(String(repeating: "a", count: 26))", "/p/\(token)x", "/p/../../etc/passwd", "/", "/p/%2e%2e/index.sqlite"] {
            let (s, _, b) = try fetch("\(base)\(path)")
            #expect(s == 404, "\(path)")
            #expect(String(decoding: b, as: UTF8.self).contains("Not here."))
        }
        let (s8, h8, _) = try fetch("\(base)/p/\(token)", method: "POST")
        #expect(s8 == 405)
        #expect(h8["allow"] == "GET, HEAD")
        let (s9, _, b9) = try fetch("\(base)/health")
        #expect(s9 == 200)
        #expect(String(decoding: b9, as: UTF8.self) == "ok 1 pictures\n")

        // Another file under the indexed name (not yet reconciled): never served in its place.
        try AtomicFile.write(Array(jpeg.prefix(1000)), to: "\(photos)/\(relative)", replace: true)
        #expect(try fetch("\(base)/p/\(token).jpg").0 == 404)
        try AtomicFile.write(jpeg, to: "\(photos)/\(relative)", replace: true)
        #expect(try fetch("\(base)/p/\(token).jpg").0 == 200)
        // Removed (a guest's request): no longer served; the file stays.
        #expect(try writer.remove(token: token, at: 1))
        let (s10, _, _) = try fetch("\(base)/p/\(token).jpg")
        #expect(s10 == 404)
        #expect(FileManager.default.fileExists(atPath: "\(photos)/\(relative)"))
        let stats = server.currentStats
        #expect(stats.pictures == 5)
        #expect(stats.notFound == 7)
    }

    @Test("a DSLR's file is served without its GPS position and serial numbers (whole, Range across the new header, download); the stored file stays as taken")
    func privateFields() throws {
        let capture = try OnePhoto.capture()
        let one = try OnePhoto(EXIFFixture.cameraJPEG(capture, preview: capture), session: 7, shot: 1, secret: 5)
        defer { one.remove() }
        let (photos, relative, jpeg, token) = (one.photos, one.relative, one.jpeg, one.token)
        let log = LogRecorder()
        let server = GalleryServer(config: .init(photosDir: photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: log.logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(port)"
        let sos = try #require(try JPEGMarkers.segments(jpeg).last).offset
        let end = try #require(EXIFPrivacy.imageEnd(in: jpeg, from: sos))
        #expect(end < Int64(jpeg.count), "a preview after the image")
        let privacy = try #require(try EXIFPrivacy.served(jpeg, imageEnd: end, fileSize: Int64(jpeg.count)))
        let expected = privacy.header + jpeg[privacy.replacing..<Int(end)]
        #expect(EXIFFixture.privateValues.filter { v in
            let n = Array(v.utf8)
            return (0...(expected.count - n.count)).contains { expected[$0..<($0 + n.count)].elementsEqual(n) }
        } == [], "none of the private values in what is served")
        #expect(expected.count < jpeg.count)

        let (s1, h1, b1) = try fetch("\(base)/p/\(token).jpg")
        #expect(s1 == 200)
        #expect(b1 == expected, "the file without the fields: \(b1.count) bytes served, \(expected.count) expected")
        #expect(h1["content-length"] == "\(expected.count)")
        #expect(EXIFPrivacy.privateFields(in: b1).isEmpty)
        #expect(try #require(h1["etag"]).hasSuffix("-p2\""))
        // A range from inside the new header into the file's own data, and one past the header.
        let cut = privacy.header.count
        let (s2, h2, b2) = try fetch("\(base)/p/\(token).jpg", headers: ["Range": "bytes=\(cut - 10)-\(cut + 9)"])
        #expect(s2 == 206)
        #expect(b2 == Array(expected[(cut - 10)...(cut + 9)]))
        #expect(h2["content-range"] == "bytes \(cut - 10)-\(cut + 9)/\(expected.count)")
        let (s3, _, b3) = try fetch("\(base)/p/\(token).jpg", headers: ["Range": "bytes=-1000"])
        #expect(s3 == 206)
        #expect(b3 == Array(expected.suffix(1000)))
        let (s4, _, b4) = try fetch("\(base)/p/\(token)/download")
        #expect(s4 == 200)
        #expect(b4 == expected)
        #expect(try AtomicFile.read("\(photos)/\(relative)") == jpeg, "the stored original is as taken")
        #expect(log.all.filter { $0.contains("is served without its") && $0.contains("GPS position") && $0.contains("data after the image") }.count == 1,
                "checked once, remembered: \(log.all)")
    }

    @Test("gallery.expiry: a picture saved longer ago answers as missing (not counted as a guess); favicon.ico is 204")
    func expiry() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 3)
        defer { one.remove() }
        let token = one.token
        let savedAt = try #require(try one.index.picture(token: token)).savedAt
        let wall = Mutex<Int64>(savedAt + 3600)
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "Gone.", expirySeconds: 7200),
                                   index: try one.reader(), log: LogRecorder().logger(),
                                   guessLimit: GuessLimit(allowed: 2, windowMilliseconds: 60_000), wallSeconds: { wall.withLock { $0 } })
        let port = try server.startOnLoopback(maxConnections: 8)
        defer { server.stop() }
        #expect(try fetch("http://127.0.0.1:\(port)/p/\(token).jpg").0 == 200, "an hour after: served")
        wall.withLock { $0 = savedAt + 7201 }
        for _ in 0..<3 {
            let (s, _, b) = try fetch("http://127.0.0.1:\(port)/p/\(token)")
            #expect(s == 404)
            #expect(String(decoding: b, as: UTF8.self).contains("Gone."))
        }
        #expect(server.currentStats.limited == 0, "an expired token is not a guess")
        let (s, h, b) = try fetch("http://127.0.0.1:\(port)/favicon.ico")
        #expect(s == 204 && b.isEmpty && h["content-type"] == nil)
    }

    @Test("an address asking for more unknown tokens than allowed gets 429 without a look-up, until its window ends")
    func guessing() throws {
        var template = Array("/tmp/photobooth-gallery-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try PictureIndex(path: "\(dir)/index.sqlite")
        let clock = Mutex<Int64>(0)
        let log = LogRecorder()
        let server = GalleryServer(config: .init(photosDir: dir, title: "t", downloadText: "d", missingText: "m"), index: index,
                                   log: log.logger(), guessLimit: GuessLimit(allowed: 5, windowMilliseconds: 60_000),
                                   nowMilliseconds: { clock.withLock { $0 } })
        let port = try server.startOnLoopback(maxConnections: 8)
        defer { server.stop() }
        var statuses: [Int] = []
        for i in 0..<8 {
            let token = String(repeating: "a", count: 25) + String("bcdefgh".map { $0 }[i % 7])
            statuses.append(try fetch("http://127.0.0.1:\(port)/p/\(token).jpg").0)
        }
        #expect(statuses == [404, 404, 404, 404, 404, 429, 429, 429])
        #expect(log.all.contains { $0.contains("127.0.0.1 asked for 5 unknown pictures within 60 s") })
        #expect(try fetch("http://127.0.0.1:\(port)/health").0 == 200, "health is not a look-up")
        clock.withLock { $0 = 60_000 }
        #expect(try fetch("http://127.0.0.1:\(port)/p/\(String(repeating: "b", count: 26))").0 == 404, "the next window")
        #expect(server.currentStats.limited == 3)
    }

    @Test("an address that is not IPv4, or a port taken, is a clear error")
    func startErrors() throws {
        var template = Array("/tmp/photobooth-gallery-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try PictureIndex(path: "\(dir)/index.sqlite")
        let config = GalleryServer.Config(photosDir: dir, title: "t", downloadText: "d", missingText: "m")
        let a = GalleryServer(config: config, index: index, log: LogRecorder().logger())
        #expect { try a.start(address: "booth.local", port: 0, maxConnections: 4, connectionsPerClient: 2, timeoutMilliseconds: 1000) } throws: {
            "\($0)".contains("'booth.local' is not an IPv4 address")
        }
        let port = try a.startOnLoopback(maxConnections: 4, connectionsPerClient: 2, timeoutMilliseconds: 1000)
        defer { a.stop() }
        let b = GalleryServer(config: config, index: index, log: LogRecorder().logger())
        #expect { try b.start(address: "127.0.0.1", port: port, maxConnections: 4, connectionsPerClient: 2, timeoutMilliseconds: 1000) } throws: {
            "\($0)".contains("cannot listen on 127.0.0.1:\(port)")
        }
    }
}
