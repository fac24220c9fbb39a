import BoothGallery
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// A flag one thread sets and another reads.
private final class StopFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Whether the server closed `fd` (end of file or a reset) within `waitMilliseconds`; an answer's
/// bytes are not a close.
private func closedByServer(_ fd: Int32, waitMilliseconds: Int32) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&p, 1, waitMilliseconds) == 1 else { return false }
    var byte: UInt8 = 0
    let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    return n == 0 || (n < 0 && errno != EAGAIN)
}

/// `GET path` over a connection of its own from `source`: the status line, the body, and how long
/// the answer took in ms (`""` when the server closed without one).
private func fetch(_ port: UInt16, _ path: String, from source: String,
                   waitMilliseconds: Int32 = 5000) throws -> (status: String, body: String, milliseconds: Int) {
    let start = Date()
    let reply = try rawReplyBytes(port, Array("GET \(path) HTTP/1.1\r\nHost: booth\r\nConnection: close\r\n\r\n".utf8), from: source,
                                  waitMilliseconds: waitMilliseconds)
    let text = String(decoding: reply, as: UTF8.self)
    let status = text.components(separatedBy: "\r\n").first ?? ""
    let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
    return (status, body, Int(Date().timeIntervalSince(start) * 1000))
}

/// `count` connections from each of `addresses`, each sending a request line and then one header
/// line every `everyMilliseconds`, never finishing its headers; a connection the server closes is
/// opened again at the next line (as an attacker would). Runs until `stop`; returns how many
/// connections were opened in all.
private func trickle(_ port: UInt16, addresses: [String], count: Int, everyMilliseconds: Int32, until stop: StopFlag) -> Int {
    var open: [(address: String, fd: Int32)] = []
    var opened = 0
    func connect(_ address: String) -> Int32 {
        guard let fd = try? loopbackConnection(from: address, to: port) else { return -1 }
        opened += 1
        _ = Array("GET /p/abcdefghijklmnopqrstuvwxyz HTTP/1.1\r\n".utf8).withUnsafeBytes {
            send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        return fd
    }
    for address in addresses { for _ in 0..<count { open.append((address, connect(address))) } }
    var line = 0
    while !stop.isSet {
        usleep(useconds_t(everyMilliseconds) * 1000)
        line += 1
        let header = Array("X-Slow-\(line): y\r\n".utf8)
        for i in open.indices {
            if open[i].fd >= 0 && closedByServer(open[i].fd, waitMilliseconds: 0) {
                close(open[i].fd)
                open[i].fd = -1
            }
            if open[i].fd < 0 {
                open[i].fd = connect(open[i].address)
                continue
            }
            _ = header.withUnsafeBytes { send(open[i].fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
    }
    for c in open where c.fd >= 0 { close(c.fd) }
    return opened
}

@Suite("The gallery's connections: the limits, their log, slow requests (raw TCP from loopback addresses)", .serialized)
struct GalleryConnectionTests {
    @Test("connections past gallery.connections_per_client: refused, one log line per address a minute naming that limit with the count since, counted in /health")
    func perClientRefusals() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let clock = GalleryTestClock()
        let log = LogRecorder()
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: log.logger(), nowMilliseconds: clock.now)
        let port = try server.startOnLoopback(maxConnections: 32, connectionsPerClient: 4, timeoutMilliseconds: 600_000)
        defer { server.stop() }

        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<24 { held.append(try loopbackConnection(from: "127.0.0.7", to: port)) }
        var closed = Set<Int32>()
        let deadline = Date().addingTimeInterval(5)
        while closed.count < 20 && Date() < deadline {
            for fd in held where !closed.contains(fd) && closedByServer(fd, waitMilliseconds: 10) { closed.insert(fd) }
        }
        #expect(closed.count == 20, "4 kept, 20 refused: \(closed.count) closed")
        usleep(200_000)
        #expect(held.filter { !closed.contains($0) && closedByServer($0, waitMilliseconds: 0) }.isEmpty, "the 4 within the limit stay open")

        let named = log.all.filter { $0.contains("connections_per_client") }
        #expect(named.count == 1, "one line for 20 refusals: \(log.all)")
        #expect(named.first?.contains("127.0.0.7") == true, "\(named)")
        #expect(named.first?.contains("4") == true, "the limit's number: \(named)")
        #expect(!log.all.contains { $0.contains("max_connections") }, "not the server's limit: \(log.all)")
        #expect(server.currentStats.refusedPerClient == 20)
        #expect(server.currentStats.refusedFull == 0)

        let health = try fetch(port, "/health", from: "127.0.0.8")
        #expect(health.status == "HTTP/1.1 200 OK")
        #expect(health.body.hasPrefix("ok 1 pictures"), "\(health.body)")
        #expect(health.body.contains("20 past gallery.connections_per_client (4)"), "\(health.body)")

        // A minute later (the test's clock) the next refusal is logged again, with the count since.
        clock.advance(61_000)
        let more = try loopbackConnection(from: "127.0.0.7", to: port)
        held.append(more)
        #expect(closedByServer(more, waitMilliseconds: 3000))
        let again = log.all.filter { $0.contains("connections_per_client") }
        #expect(again.count == 2, "\(again)")
        #expect(again.last?.contains("19 more") == true, "the refusals not logged since the last line: \(again)")
    }

    @Test("a request whose header lines trickle in is closed gallery.timeout after its start, though it never idles that long")
    func slowHeaders() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let clock = GalleryTestClock()
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: LogRecorder().logger(), nowMilliseconds: clock.now)
        let port = try server.startOnLoopback(maxConnections: 32, connectionsPerClient: 8, timeoutMilliseconds: 2000)
        defer { server.stop() }

        let fd = try loopbackConnection(from: "127.0.0.9", to: port)
        defer { close(fd) }
        func line(_ s: String) { _ = Array(s.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        line("GET /p/\(one.token) HTTP/1.1\r\nHost: booth\r\n")
        var closedAfter: Int?
        for i in 0..<20 {
            // Real time: a line every 300 ms, never 2 s idle. The test's clock passes the 2 s after the 2nd.
            if i == 2 { clock.advance(2_100) }
            line("X-Slow-\(i): y\r\n")
            if closedByServer(fd, waitMilliseconds: 300) { closedAfter = i; break }
        }
        let after = try #require(closedAfter, "still open after 20 lines in 6 s")
        #expect(after >= 2, "not before its time")
        #expect(after <= 10, "closed within a few of the reaper's 250 ms rounds of its deadline: after line \(after)")
        #expect(server.currentStats.closedSlowRequests == 1)
        #expect(try fetch(port, "/p/\(one.token)", from: "127.0.0.9").status == "HTTP/1.1 200 OK", "the address is not barred")
    }

    @Test("320 connections from 40 addresses trickling their headers (max_connections 256): another address gets its picture's page within 1 s")
    func tricklingCrowd() throws {
        // Both ends are in this process: about 900 descriptors at once, past a soft limit of 1024 with other suites running.
        var files = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0 && files.rlim_cur < 8192 {
            files.rlim_cur = min(files.rlim_max, 8192)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback(maxConnections: 256, connectionsPerClient: 8, timeoutMilliseconds: 10_000)
        defer { server.stop() }

        let stop = StopFlag()
        let addresses = (2...41).map { "127.0.0.\($0)" }
        let crowd = Thread.detachNewThreadWithResult { trickle(port, addresses: addresses, count: 8, everyMilliseconds: 500, until: stop) }
        usleep(1_500_000)
        var answers: [(status: String, milliseconds: Int)] = []
        for _ in 0..<5 {
            let page = try fetch(port, "/p/\(one.token)", from: "127.0.0.50", waitMilliseconds: 3000)
            answers.append((page.status, page.milliseconds))
            usleep(300_000)
        }
        stop.set()
        let opened = crowd.wait() ?? 0
        #expect(opened >= 320, "the crowd connected: \(opened)")
        #expect(answers.allSatisfy { $0.status == "HTTP/1.1 200 OK" }, "\(answers)")
        #expect(answers.allSatisfy { $0.milliseconds < 1000 }, "each within 1 s: \(answers.map(\.milliseconds)) ms")
        #expect(server.currentStats.closedForNewcomer >= 64, "the oldest waiting requests closed for the newcomers: \(server.currentStats)")
    }
}
