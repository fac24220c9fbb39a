import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing

/// A temp folder with a photos folder holding one photo (`DATE/booth-N-K.jpg`), indexed by the
/// daemon's `openForWriting` (its token from a test secret and folder id `f00d`): the set-up the
/// server tests share. `remove()` deletes the folder.
struct OnePhoto {
    let dir: String
    let photos: String
    /// Under `photos`: `2026-12-01/booth-…`.
    let relative: String
    let jpeg: [UInt8]
    let token: String
    /// The daemon's (writing) connection.
    let index: PictureIndex

    init(_ jpeg: [UInt8], session: Int, shot: Int = 0, secret: UInt8 = 3) throws {
        var template = Array("/tmp/photobooth-gallery-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        photos = "\(dir)/photos"
        try FileManager.default.createDirectory(atPath: "\(photos)/2026-12-01", withIntermediateDirectories: true)
        relative = "2026-12-01/\(PhotoFileName.name(session: session, shot: shot))"
        self.jpeg = jpeg
        try AtomicFile.write(jpeg, to: "\(photos)/\(relative)")
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: secret, count: 32)))
        index = try #require(PictureIndex.openForWriting(path: "\(dir)/index.sqlite", photosDir: photos, tokens: tokens, folderID: "f00d",
                                                         log: LogRecorder().logger()))
        token = tokens.token(for: PictureTokens.identity(folder: "f00d", path: relative, bytes: Int64(jpeg.count)))
        #expect(try index.picture(token: token) != nil, "indexed")
    }

    /// One of the shared camera captures (`PHOTOBOOTH_SHARED_IMAGES`).
    static func capture() throws -> [UInt8] {
        try SharedImages.bytes(try #require(SharedImages.captures().first, "\(SharedImages.missingMessage())"))
    }

    /// A read-only connection, as the gallery opens it.
    func reader() throws -> PictureIndex { try PictureIndex(path: "\(dir)/index.sqlite", readOnly: true) }

    func remove() { try? FileManager.default.removeItem(atPath: dir) }
}

/// A TCP socket bound to `source` (another loopback address is another guest to the server) and
/// connected to 127.0.0.1:`port`; the caller closes it.
func loopbackConnection(from source: String, to port: UInt16) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(fd >= 0)
    func address(_ ip: String, _ port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        inet_pton(AF_INET, ip, &a.sin_addr)
        return a
    }
    var local = address(source, 0), remote = address("127.0.0.1", port)
    let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard bound == 0 else {
        let why = String(cString: strerror(errno))
        close(fd)
        throw LoopbackError(what: "bind \(source): \(why)")
    }
    let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard connected == 0 else {
        let why = String(cString: strerror(errno))
        close(fd)
        throw LoopbackError(what: "connect: \(why)")
    }
    return fd
}

struct LoopbackError: Error, CustomStringConvertible {
    var what: String
    var description: String { what }
}

/// A free TCP port on 127.0.0.1 (bound, then let go).
func freePort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &a) { p in
        try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { s in
            try #require(bind(fd, s, len) == 0)
            try #require(getsockname(fd, s, &len) == 0)
        }
    }
    return UInt16(bigEndian: a.sin_port)
}

/// Whether something listens on 127.0.0.1:`port` (a connect succeeds).
func canConnect(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = port.bigEndian
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
    return withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
}

