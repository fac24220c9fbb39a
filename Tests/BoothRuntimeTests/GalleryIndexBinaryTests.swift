import BoothCore
import BoothIndex
import BoothJPEG
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Testing

// Issue 36, the index's slice, against the built photoboothd, photoboothctl and photobooth-gallery
// (.build/debug): an index deleted while they run, a gallery started before its index, the README's
// gallery beside --simulate, `gallery remove`'s exit code, `status` after `config set gallery.port`.

/// A free TCP port on 127.0.0.1 (bound, then let go).
/// A port free on every address now, outside the kernel's ephemeral range (32768–60999 by default): a
/// port the kernel handed out (bind to 0) is as likely to be the next one another test's client
/// connection gets, and the gallery started on it then fails with EADDRINUSE (seen in a parallel run).
private func freeLoopbackPort() throws -> UInt16 {
    for _ in 0..<200 {
        let port = UInt16.random(in: 20_000..<32_000)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = INADDR_ANY
        let bound = withUnsafePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound == 0 { return port }
    }
    throw PortsTaken()
}

private struct PortsTaken: Error, CustomStringConvertible {
    var description: String { "no free port found in 20000–31999 after 200 tries" }
}

/// `GET path` at 127.0.0.1:`port` (HTTP/1.0, 2 s timeouts): the whole answer's text (status line,
/// headers, body), nil when nothing listens (connection refused).
private func httpGet(_ port: UInt16, _ path: String) -> String? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var tv = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = port.bigEndian
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
    let connected = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard connected == 0 else { return nil }
    let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    guard write(fd, request, request.count) == request.count else { return nil }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while out.count < 1 << 20 {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { break }
        out += buffer[0..<n]
    }
    return String(decoding: out, as: UTF8.self)
}

@Suite(.serialized) struct GalleryIndexBinaryTests {
    /// The simulated booth with its gallery on, in `dir` (its socket `dir/control`), plus `extra`.
    private func startBooth(_ dir: String, _ extra: [String] = []) throws -> pid_t {
        let pid = spawnProgram(try builtProgram("photoboothd"), ["--simulate", "--socket", "\(dir)/control", "--set", "gallery.enabled=true"] + extra,
                               in: dir, output: "\(dir)/daemon.log")
        try #require(pid > 0)
        try #require(waitForDaemon("\(dir)/control") != nil, "\(fileText("\(dir)/daemon.log"))")
        return pid
    }

    @Test("the index deleted while the daemon runs: photoboothd makes it again within seconds, unasked, and says so; rebuild's file is there")
    func deletedWhileTheDaemonRuns() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let booth = try startBooth(dir)
        defer { terminate(booth) }
        let index = "\(dir)/gallery/index.sqlite"
        try #require(access(index, F_OK) == 0)
        try #require(unlink(index) == 0)
        // Said once it is made (the file appears a moment before).
        #expect(waitUntil(10) { fileText("\(dir)/daemon.log").contains("was deleted or replaced while photoboothd used it; made again from the photos") },
                "made again, unasked: \(fileText("\(dir)/daemon.log"))")
        #expect(access(index, F_OK) == 0)
        try #require(unlink(index) == 0)
        let rebuild = runProgram(ctl, ["gallery", "rebuild", "--socket", "\(dir)/control"], in: dir)
        #expect(rebuild.status == 0, "\(rebuild.output)")
        #expect(rebuild.output.contains("made again"), "\(rebuild.output)")
        #expect(access(index, F_OK) == 0, "rebuild said \"made again\": \(rebuild.output)")
        #expect((try? PictureIndex(path: index, readOnly: true)) != nil)
    }

    @Test("an index that cannot be made again (its folder gone): gallery says so while it lasts, rebuild exits 74 saying why, never \"made again\"")
    func cannotBeMadeAgain() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let booth = try startBooth(dir)
        defer { terminate(booth) }
        let index = "\(dir)/gallery/index.sqlite"
        removeTree("\(dir)/gallery")
        let rebuild = runProgram(ctl, ["gallery", "rebuild", "--socket", "\(dir)/control"], in: dir)
        #expect(rebuild.status == 74, "\(rebuild.output)")
        #expect(!rebuild.output.contains("made again from the photos"), "\(rebuild.output)")
        #expect(rebuild.output.contains("could not be made again"), "\(rebuild.output)")
        let status = runProgram(ctl, ["gallery", "--socket", "\(dir)/control"], in: dir)
        #expect(status.output.contains("./gallery/index.sqlite was deleted or replaced while photoboothd used it, and could not be made again"),
                "\(status.output)")
        #expect(status.output.contains("its folder ./gallery is not there"), "\(status.output)")
        #expect(!status.output.contains("pictures served"), "no counts from a file that is gone: \(status.output)")
        // Once its folder is back, the daemon makes it within seconds, unasked.
        try FileManager.default.createDirectory(atPath: "\(dir)/gallery", withIntermediateDirectories: true)
        #expect(waitUntil(10) { access(index, F_OK) == 0 }, "\(fileText("\(dir)/daemon.log"))")
        let said = fileText("\(dir)/daemon.log").components(separatedBy: "could not be made again").count - 1
        #expect(said == 1, "logged once while it lasted: \(fileText("\(dir)/daemon.log"))")
    }

    @Test("galleries through a deleted index: the running one keeps serving and then reads the daemon's new file; one restarted meanwhile serves at once")
    func galleriesThroughADeletedIndex() throws {
        let ctl = try builtProgram("photoboothctl"), gallery = try builtProgram("photobooth-gallery")
        let dir = makeTempDir(); defer { removeTree(dir) }
        // Two photos on disk before the start: the daemon's index has them.
        try FileManager.default.createDirectory(atPath: "\(dir)/photos/2026-12-01", withIntermediateDirectories: true)
        for n in 1...2 {
            // Real JPEGs (the gallery serves only a file whose header it can read), each its own grey.
            let frame = Frame(format: .yuyv, size: FrameSize(width: 16, height: 16), bytesPerLine: 32,
                              bytes: (0..<512).map { $0 % 2 == 0 ? UInt8(40 * n) : 128 },
                              timestamp: MonotonicInstant(nanoseconds: 0), timestampIsMonotonic: true, sequence: 0)
            try Data(try JPEGEncoder().encode(frame, quality: 80)).write(to: URL(fileURLWithPath: "\(dir)/photos/2026-12-01/booth-00000\(n)-picture.jpg"))
        }
        let running = try freeLoopbackPort(), restarted = try freeLoopbackPort()
        let booth = try startBooth(dir, ["--set", "gallery.url_base=http://127.0.0.1:\(running)"])
        defer { terminate(booth) }
        let first = spawnProgram(gallery, ["--simulate", "--set", "gallery.enabled=true", "--port", "\(running)"], in: dir, output: "\(dir)/first.log")
        try #require(first > 0)
        defer { terminate(first) }
        #expect(waitUntil(10) { httpGet(running, "/health")?.contains("ok 2 pictures") == true }, "\(fileText("\(dir)/first.log"))")
        let url = runProgram(ctl, ["gallery", "url", "2026-12-01/booth-000001-picture.jpg", "--socket", "\(dir)/control"], in: dir)
        let token = try #require(url.output.split(separator: "/p/").dropFirst().first?.prefix(26).description, "\(url.output)")

        try #require(unlink("\(dir)/gallery/index.sqlite") == 0)
        #expect(httpGet(running, "/p/\(token)")?.contains(" 200 ") == true, "the running gallery serves what it has meanwhile")
        #expect(waitUntil(10) { fileText("\(dir)/daemon.log").contains("made again from the photos") }, "\(fileText("\(dir)/daemon.log"))")
        // A gallery started now serves at once.
        let second = spawnProgram(gallery, ["--simulate", "--set", "gallery.enabled=true", "--port", "\(restarted)"], in: dir, output: "\(dir)/second.log")
        try #require(second > 0)
        defer { terminate(second) }
        #expect(waitUntil(10) { httpGet(restarted, "/p/\(token)")?.contains(" 200 ") == true }, "\(fileText("\(dir)/second.log"))")
        // The running one reads the new file: a picture taken down in it is gone from both.
        let remove = runProgram(ctl, ["gallery", "remove", token, "--socket", "\(dir)/control"], in: dir)
        #expect(remove.status == 0, "\(remove.output)")
        #expect(waitUntil(10) { httpGet(running, "/p/\(token)")?.contains(" 404 ") == true }, "\(fileText("\(dir)/first.log"))")
        #expect(waitUntil(10) { httpGet(restarted, "/p/\(token)")?.contains(" 404 ") == true })
        #expect(fileText("\(dir)/first.log").contains("was made again by photoboothd; reading the new one"), "\(fileText("\(dir)/first.log"))")
    }

    @Test("a gallery started before its index listens at once: 503 with Retry-After, then serves the index once it is made, without a restart")
    func galleryBeforeItsIndex() throws {
        let gallery = try builtProgram("photobooth-gallery")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let port = try freeLoopbackPort()
        try FileManager.default.createDirectory(atPath: "\(dir)/gallery", withIntermediateDirectories: true)
        let index = "\(dir)/gallery/index.sqlite"
        try "[gallery]\nenabled = true\n".write(toFile: "\(dir)/photobooth.conf", atomically: true, encoding: .utf8)
        let pid = spawnProgram(gallery, ["--config", "\(dir)/photobooth.conf", "--set", "gallery.enabled=true", "--set", "gallery.listen=127.0.0.1",
                                         "--set", "gallery.index=\(index)", "--set", "storage.dir=\(dir)/photos", "--set", "gallery.cache=\(dir)/cache",
                                         "--set", "gallery.state=\(dir)/state", "--port", "\(port)"],
                               in: dir, output: "\(dir)/gallery.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        var health: String?
        #expect(waitUntil(10) { health = httpGet(port, "/health"); return health != nil }, "never listened: \(fileText("\(dir)/gallery.log"))")
        #expect(health?.hasPrefix("HTTP/1.0 503") == true || health?.hasPrefix("HTTP/1.1 503") == true, "\(health ?? "no answer")")
        #expect(health?.contains("Retry-After: 5") == true, "\(health ?? "no answer")")
        let page = httpGet(port, "/p/\(String(repeating: "a", count: 26))")
        #expect(page?.contains(" 503 ") == true, "\(page ?? "no answer")")

        // photoboothd makes it (here the library does, as the daemon would): served without a restart.
        let writer = try PictureIndex(path: index)
        try writer.record(IndexedPicture(token: String(repeating: "b", count: 26), path: "2026-12-01/booth-000001-picture.jpg", session: 1,
                                         savedAt: Int64(time(nil)), bytes: 5))
        #expect(waitUntil(10) { httpGet(port, "/health")?.contains("ok 1 pictures") == true }, "\(fileText("\(dir)/gallery.log"))")
        let log = fileText("\(dir)/gallery.log")
        #expect(log.components(separatedBy: "waiting for photoboothd to make it").count == 2, "said once: \(log)")
    }

    @Test("README: photobooth-gallery --simulate beside photoboothd --simulate serves the simulated booth's index and photos")
    func galleryBesideTheSimulatedBooth() throws {
        let gallery = try builtProgram("photobooth-gallery")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let port = try freeLoopbackPort()
        // The README's two commands, with a free port for this test.
        let booth = try startBooth(dir, ["--set", "gallery.url_base=http://127.0.0.1:\(port)", "--set", "gallery.port=\(port)",
                                         "--auto-press", "--sessions", "1", "--set", "session.countdown=0s", "--set", "session.review=1s",
                                         "--set", "storage.min_free=0B"])
        let pid = spawnProgram(gallery, ["--simulate", "--set", "gallery.enabled=true", "--set", "gallery.port=\(port)"], in: dir,
                               output: "\(dir)/gallery.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        #expect(exitStatus(of: booth, within: 60) == 0, "\(fileText("\(dir)/daemon.log"))")
        let indexed = fileText("\(dir)/daemon.log").split(separator: "\n").first { $0.contains("indexed at /p/") }
        let token = try #require(indexed.flatMap { $0.split(separator: "/p/").last.map(String.init) }, "\(fileText("\(dir)/daemon.log"))")
        var answer: String?
        #expect(waitUntil(10) { answer = httpGet(port, "/p/\(token).jpg"); return answer?.hasPrefix("HTTP/1.0 200") == true || answer?.hasPrefix("HTTP/1.1 200") == true },
                "\(answer?.prefix(200) ?? "no answer"): \(fileText("\(dir)/gallery.log"))")
        let log = fileText("\(dir)/gallery.log")
        #expect(log.contains("listening on 0.0.0.0:\(port)"), "\(log)")
        #expect(!log.contains("/var/"), "nothing of the system booth's: \(log)")
    }

    @Test("gallery remove of an unknown token is the operator's error: exit 65 (EX_DATAERR), saying which token")
    func removeUnknownToken() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let booth = try startBooth(dir)
        defer { terminate(booth) }
        let token = String(repeating: "q", count: 26)
        let r = runProgram(ctl, ["gallery", "remove", token, "--socket", "\(dir)/control"], in: dir)
        #expect(r.status == Int32(65), "\(r.output)")
        #expect(r.output.contains("no picture has the token \(token)"), "\(r.output)")
        let url = runProgram(ctl, ["gallery", "url", "2026-01-01/booth-000001-picture.jpg", "--socket", "\(dir)/control"], in: dir)
        #expect(url.status == Int32(65), "\(url.output)")
    }

    @Test("status after config set gallery.port probes the port in the file (where photobooth-gallery listens after its restart), and says it changed")
    func statusAfterThePortChanged() throws {
        let ctl = try builtProgram("photoboothctl"), gallery = try builtProgram("photobooth-gallery")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let old = try freeLoopbackPort(), new = try freeLoopbackPort()
        try "[gallery]\nenabled = true\nlisten = 127.0.0.1\nport = \(old)\n".write(toFile: "\(dir)/photobooth.conf", atomically: true, encoding: .utf8)
        let booth = try startBooth(dir)
        defer { terminate(booth) }
        let set = runProgram(ctl, ["config", "set", "gallery.port", "\(new)", "--socket", "\(dir)/control"], in: dir)
        try #require(set.status == 0, "\(set.output)")
        // The operator restarts photobooth-gallery: it reads the file and listens on the new port.
        let pid = spawnProgram(gallery, ["--config", "\(dir)/photobooth.conf", "--set", "gallery.index=\(dir)/gallery/index.sqlite",
                                         "--set", "storage.dir=\(dir)/photos", "--set", "gallery.cache=\(dir)/gallery/cache",
                                         "--set", "gallery.state=\(dir)/gallery/state"], in: dir, output: "\(dir)/gallery.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        #expect(waitUntil(10) { httpGet(new, "/health") != nil }, "\(fileText("\(dir)/gallery.log"))")
        let status = runProgram(ctl, ["status", "--socket", "\(dir)/control"], in: dir)
        #expect(status.status == 0, "\(status.output)")
        let line = status.output.split(separator: "\n").first { $0.hasPrefix("gallery:") }.map(String.init) ?? ""
        #expect(line.contains("photobooth-gallery answers (ok"), "\(status.output)")
        #expect(line.contains("\(new)"), "\(line)")
        #expect(!line.contains("does not answer"), "\(line)")
        #expect(line.contains("gallery.port \(new)") && line.contains("\(old) at photoboothd's start"), "\(line)")
    }
}
