import BoothCore
import BoothGallery
import BoothIndex
import BoothPorts
import BoothTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import Testing
@testable import BoothRuntime
@testable import BoothWiring

/// GET `url` through URLSession (libcurl): status and body.
private func get(_ url: String) throws -> (Int, [UInt8]) {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var out: (Int, [UInt8]) = (0, [])
    URLSession(configuration: .ephemeral).dataTask(with: try #require(URL(string: url))) { data, response, _ in
        out = ((response as? HTTPURLResponse)?.statusCode ?? 0, [UInt8](data ?? Data()))
        done.signal()
    }.resume()
    _ = done.wait(timeout: .now() + 10)
    return out
}

@Suite(.serialized) struct GallerySessionTests {
    @Test("with gallery.enabled a session's picture is indexed by the daemon's sink and served by the gallery at its token's URL; a restart keeps the URL")
    func aSessionsPictureIsServed() async throws {
        let dir = makeTempDir("gallery-session"); defer { removeTree(dir) }
        var settings = seriesSettings(dir: dir, shots: 2)
        settings.print.mode = .off
        settings.gallery.enabled = true
        settings.gallery.index = "\(dir)/state/gallery/index.sqlite"
        settings.gallery.secret = "\(dir)/state/gallery.secret"
        let log = LogRecorder()
        settings.gallery.urlBase = "http://10.42.0.1:8080/"
        settings.gallery.wifiSSID = "Booth Wi-Fi"
        settings.gallery.wifiPassword = "smile;please"
        let made = gallery(settings, log: log.logger())
        let shownLinks = made.link
        var options = RuntimeOptions()
        options.composer = StackComposer()
        options.pictureSinks = [try #require(made.sink, "\(log.all)")]
        options.pictureLink = shownLinks
        settings.preview.file = "\(dir)/preview.jpg"
        settings.preview.size = FrameSize(width: 1280, height: 800)
        settings.session.reviewMilliseconds = 4000
        // The booth's timers on a manual clock: the review stays on screen while the test reads it.
        let booth = TestBooth(settings, filePreview: true, options: options, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming }, "\(booth.logText)")
        let reader = try PictureIndex(path: settings.gallery.index, readOnly: true)
        let server = GalleryServer(config: .init(settings), index: reader, log: log.logger())
        let port = try server.start(address: "127.0.0.1", port: 0, maxConnections: 8, connectionsPerClient: 8, timeoutMilliseconds: 5000)
        defer { server.stop() }
        booth.button.press()
        // In review (the clock stands still): the two captures and the picture indexed, and the review on the
        // file preview carries the picture's URL as a QR code, read back from its pixels.
        var read: [String] = [], reviewURL = ""
        let reviewed = await booth.finishSeries(shots: 2) {
            guard (try? reader.counts().served) == 3,
                  let picture = try? reader.recent(limit: 3).first(where: { $0.shot == 0 }) else { return false }
            reviewURL = "http://10.42.0.1:8080/p/\(picture.token)"
            read = (try? zbarRead(settings.preview.file)) ?? []
            return read.contains(reviewURL)
        }
        if access("/usr/bin/zbarimg", X_OK) != 0 { Issue.record("\(ZbarMissing())") }
        try #require(reviewed, "the session completes, its picture's code read in review (last read \(read)):\n\(log.all) \(booth.logText)")
        let picture = try #require(try reader.recent(limit: 3).first { $0.shot == 0 })
        #expect(try reader.recent(limit: 3).map(\.shot).sorted() == [0, 1, 2], "the two captures and the picture")
        #expect(picture.session == 1)
        #expect(picture.path.hasSuffix("/booth-000001-picture.jpg"))
        let line = try #require(log.all.first { $0.contains("picture.jpg indexed at /p/") }, "\(log.all)")
        #expect(line.contains("/p/\(picture.token)"))
        let (status, body) = try get("http://127.0.0.1:\(port)/p/\(picture.token).jpg")
        #expect(status == 200)
        #expect(body == (try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(settings.storage.dir)/\(picture.path)")))))
        #expect(Array(body.prefix(2)) == [0xff, 0xd8])
        let url = "http://10.42.0.1:8080/p/\(picture.token)"
        #expect(reviewURL == url)
        #expect(read == [url], "zbarimg on the review's \(settings.preview.file): its picture's code alone")
        // Back in idle: the last picture's code stays (gallery.idle_code) until the next session,
        // beside the code that joins the booth's Wi-Fi.
        let wifi = #"WIFI:T:WPA;S:Booth Wi-Fi;P:smile\;please;;"#
        var idle: [String] = []
        _ = await eventually(timeoutSeconds: 10) {
            idle = (try? zbarRead(settings.preview.file)) ?? []
            return Set(idle) == [url, wifi]
        }
        #expect(Set(idle) == [url, wifi], "zbarimg on the idle screen's \(settings.preview.file)")
        // The daemon's next start: the same secret, the same index, the same URL.
        let again = gallery(settings, log: log.logger())
        #expect(again.sink != nil)
        #expect(again.link?("\(settings.storage.dir)/\(picture.path)", Int(picture.bytes)) == "http://10.42.0.1:8080/p/\(picture.token)",
                "the review's link is the token's URL, the same after a restart")
        #expect(try PictureIndex(path: settings.gallery.index, readOnly: true).picture(token: picture.token) == picture)
    }
}
