import BoothGallery
import Foundation
import Glibc
import Synchronization

// What the gallery's server tests share: the one raw HTTP client, the hand-moved clock, the start on loopback.
// The raw HTTP client: a request sent as given on a loopback connection of its own, the
// reply read as the server sends it. The suites' `get`, `http`, `raw` and `fetch` are views of it.

/// Sends `request` on a fresh loopback TCP connection from `source` (another loopback address is another
/// guest to the server) to `port`, and reads the reply until the server closes, `waitMilliseconds` pass
/// with nothing to read (`poll`), or, with `statusLineOnly`, the status line's CR has come.
/// - Returns: the reply's bytes as read (the connection is closed).
func rawReplyBytes(_ port: UInt16, _ request: [UInt8], from source: String = "127.0.0.1", waitMilliseconds: Int32 = 5000,
                   statusLineOnly: Bool = false) throws -> [UInt8] {
    let fd = try loopbackConnection(from: source, to: port)
    defer { close(fd) }
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var reply: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while !(statusLineOnly && reply.contains(13)) {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, waitMilliseconds) == 1 else { break }
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        reply += buffer[0..<n]
    }
    return reply
}

/// A whole HTTP/1.1 exchange over a raw TCP connection (`Connection: close`, read to the end): the
/// status code, the header lines as sent (name and value, in order) and the body.
struct RawReply {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The values of header `name` (any case), in order.
    func values(_ name: String) -> [String] { headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value) }
    func value(_ name: String) -> String? { values(name).first }
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The reply in `bytes`: status 0, no headers and every byte as the body when there is no blank line.
    init(parsing bytes: [UInt8]) {
        let crlf2: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == crlf2 }) else {
            self.init(status: 0, headers: [], body: bytes)
            return
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        self.init(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }

    init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// `request` sent as given to the gallery on loopback; the reply read until the server closes (5 s at most).
func rawExchange(_ port: UInt16, _ request: String, from source: String = "127.0.0.1") throws -> RawReply {
    RawReply(parsing: try rawReplyBytes(port, Array(request.utf8), from: source))
}

/// A GET (or `method`) for `target`, exactly as given, with `headers` (`Name: value\r\n` lines).
func rawGet(_ port: UInt16, _ target: String, method: String = "GET", headers: String = "") throws -> RawReply {
    try rawExchange(port, "\(method) \(target) HTTP/1.1\r\nHost: booth\r\n\(headers)Connection: close\r\n\r\n")
}

/// The test's own clock for the gallery's limits, deadlines and the PIN's window (ms), moved by hand.
final class GalleryTestClock: Sendable {
    let ms = Mutex<Int64>(1_000_000)
    func advance(_ by: Int64) { ms.withLock { $0 += by } }
    /// The clock as the server takes it.
    var now: @Sendable () -> Int64 { { [self] in ms.withLock { $0 } } }
}

extension GalleryServer {
    /// Starts the server on 127.0.0.1 at a free port (``start(address:port:maxConnections:connectionsPerClient:timeoutMilliseconds:threads:)``),
    /// with the tests' usual limits unless given. - Returns: the port. - Throws: ``GalleryError``.
    @discardableResult
    func startOnLoopback(maxConnections: Int = 16, connectionsPerClient: Int = 8, timeoutMilliseconds: Int = 5000) throws(GalleryError) -> UInt16 {
        try start(address: "127.0.0.1", port: 0, maxConnections: maxConnections, connectionsPerClient: connectionsPerClient,
                  timeoutMilliseconds: timeoutMilliseconds)
    }
}
