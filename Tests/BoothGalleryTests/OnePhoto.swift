import BoothIndex
import BoothPorts
import BoothStorage
import BoothTestSupport
import Foundation
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
