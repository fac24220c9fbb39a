import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import CSQLite
import Foundation
import Testing

private func tempDir() -> String {
    var template = Array("/tmp/photobooth-index-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

private let secret = [UInt8](repeating: 7, count: 32)

@Suite("Picture tokens")
struct PictureTokenTests {
    @Test("26 base32 characters (128 bits), the same for the same picture and secret, another for another picture or secret")
    func derived() throws {
        let tokens = try #require(PictureTokens(secret: secret))
        let a = tokens.token(for: "2026-12-01/booth-000042-picture.jpg")
        #expect(a.count == 26)
        #expect(PictureTokens.isWellFormed(a))
        #expect(a == tokens.token(for: "2026-12-01/booth-000042-picture.jpg"))
        #expect(a != tokens.token(for: "2026-12-01/booth-000043-picture.jpg"))
        let other = try #require(PictureTokens(secret: [UInt8](repeating: 8, count: 32)))
        #expect(a != other.token(for: "2026-12-01/booth-000042-picture.jpg"))
        #expect(PictureTokens(secret: [1, 2, 3]) == nil)
    }

    @Test("only 26 characters of a-z and 2-7 are a token's shape")
    func shape() {
        #expect(PictureTokens.isWellFormed(String(repeating: "a", count: 26)))
        #expect(!PictureTokens.isWellFormed(String(repeating: "a", count: 25)))
        #expect(!PictureTokens.isWellFormed(String(repeating: "A", count: 26)))
        #expect(!PictureTokens.isWellFormed(String(repeating: "1", count: 26)))
        #expect(!PictureTokens.isWellFormed("../../etc/passwd/aaaaaaaaaa"))
    }

    @Test("the secret is made once (mode 0600) and read back: the tokens survive a restart; a damaged one is refused, not replaced")
    func secretFile() throws {
        let dir = tempDir(); defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/gallery.secret"
        let first = try PictureTokens.load(orCreate: path)
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(st.st_size == 32)
        let again = try PictureTokens.load(orCreate: path)
        #expect(first.token(for: "x") == again.token(for: "x"))
        try AtomicFile.write([1, 2, 3], to: path, replace: true)
        #expect(throws: IndexError.self) { try PictureTokens.load(orCreate: path) }
        #expect(try AtomicFile.read(path) == [1, 2, 3], "left as it is")
    }
}

@Suite("The picture index (SQLite)")
struct PictureIndexTests {
    /// A photos directory with `sessions` picture files (and a capture, which is not indexed).
    private func photos(_ dir: String, sessions: ClosedRange<Int>) throws -> String {
        let photos = "\(dir)/photos/2026-12-01"
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        for n in sessions {
            try AtomicFile.write([0xff, 0xd8, UInt8(n), 0xff, 0xd9], to: "\(photos)/\(PhotoFileName.name(session: n, shot: 0))")
            try AtomicFile.write([0xff, 0xd8, 0xff, 0xd9], to: "\(photos)/\(PhotoFileName.name(session: n, shot: 1))")
        }
        return "\(dir)/photos"
    }

    @Test("records, looks up by token, lists newest first, removes without touching the file; WAL; user_version 1")
    func recordAndRead() throws {
        let dir = tempDir(); defer { try? FileManager.default.removeItem(atPath: dir) }
        let tokens = try #require(PictureTokens(secret: secret))
        let index = try PictureIndex(path: "\(dir)/index.sqlite")
        for n in 1...3 {
            let path = "2026-12-01/\(PhotoFileName.name(session: n, shot: 0))"
            #expect(try index.record(IndexedPicture(token: tokens.token(for: path), path: path, session: n, savedAt: 1_000 + Int64(n), bytes: 10)))
        }
        let path2 = "2026-12-01/booth-000002-picture.jpg"
        let t2 = tokens.token(for: path2)
        #expect(try index.record(IndexedPicture(token: t2, path: path2, session: 2, savedAt: 5, bytes: 1)) == false, "a path indexed keeps its row")
        #expect(try index.picture(token: t2) == IndexedPicture(token: t2, path: path2, session: 2, savedAt: 1002, bytes: 10))
        #expect(try index.picture(token: String(repeating: "a", count: 26)) == nil)
        #expect(try index.picture(token: "' OR 1=1 --") == nil)
        #expect(try index.recent(limit: 2).map(\.session) == [3, 2])
        #expect(try index.recent(limit: 2, offset: 2).map(\.session) == [1])
        #expect(try index.remove(token: t2, at: 2000))
        #expect(try index.remove(token: t2, at: 2001) == false)
        #expect(try index.picture(token: t2) == nil)
        #expect(try index.counts() == (served: 2, removed: 1))
        #expect(FileManager.default.fileExists(atPath: "\(dir)/index.sqlite-wal"), "WAL mode")
        // A reader sees the writer's rows and notices new ones through data_version.
        let reader = try PictureIndex(path: "\(dir)/index.sqlite", readOnly: true)
        let before = try reader.dataVersion()
        #expect(try reader.recent(limit: 10).count == 2)
        let path4 = "2026-12-01/booth-000004-picture.jpg"
        try index.record(IndexedPicture(token: tokens.token(for: path4), path: path4, session: 4, savedAt: 1004, bytes: 10))
        #expect(try reader.dataVersion() != before)
        #expect(try reader.picture(token: tokens.token(for: path4))?.session == 4)
        #expect(throws: IndexError.self) { try reader.record(IndexedPicture(token: "x", path: "y", session: 0, savedAt: 0, bytes: 0)) }
    }

    @Test("a missing index is made from the files; a corrupt one is moved aside and rebuilt with the same tokens; a removal survives a reconcile")
    func rebuild() throws {
        let dir = tempDir(); defer { try? FileManager.default.removeItem(atPath: dir) }
        let photosDir = try photos(dir, sessions: 1...4)
        let tokens = try #require(PictureTokens(secret: secret))
        let log = LogRecorder()
        let path = "\(dir)/index.sqlite"
        let index = try #require(PictureIndex.openForWriting(path: path, photosDir: photosDir, tokens: tokens, folderID: "f00d", log: log.logger()))
        #expect(try index.counts() == (served: 8, removed: 0), "the pictures and the captures")
        #expect(try index.recent(limit: 2).map(\.shot).sorted() == [0, 1])
        #expect(PictureIndex.shot(in: "booth-000001-picture.jpg") == 0)
        #expect(PictureIndex.shot(in: "booth-000001-3.jpg") == 3)
        for other in [".tmp-booth-000001-1.jpg.12-ab", "booth-000001-0.jpg", "booth-000001-x.jpg", "booth-000001-100.jpg", "notes.txt", "booth-1.jpg"] {
            #expect(PictureIndex.shot(in: other) == nil, "\(other)")
        }
        let t1 = tokens.token(for: PictureTokens.identity(folder: "f00d", path: "2026-12-01/booth-000001-picture.jpg", bytes: 5))
        #expect(try index.picture(token: t1)?.bytes == 5)
        #expect(try index.remove(token: t1, at: 1))
        #expect(try index.reconcile(photosDir: photosDir, tokens: tokens, folderID: "f00d") == 0)
        #expect(try index.picture(token: t1) == nil, "removed stays removed")
        // Damaged: garbage in place of the database.
        try AtomicFile.write(Array(repeating: 0x41, count: 8192), to: path, replace: true)
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        let rebuilt = try #require(PictureIndex.openForWriting(path: path, photosDir: photosDir, tokens: tokens, folderID: "f00d", now: 77, log: log.logger()))
        #expect(try rebuilt.counts() == (served: 8, removed: 0))
        #expect(try rebuilt.picture(token: t1)?.path == "2026-12-01/booth-000001-picture.jpg", "the same token as before")
        #expect(FileManager.default.fileExists(atPath: "\(path).corrupt-77"))
        #expect(log.all.contains { $0.contains("moved aside as \(path).corrupt-77") })
        #expect(log.all.contains { $0.contains("8 photos on disk added") })
        // The folder emptied and its numbers started again: another photo under the same name gets
        // another token, and the earlier guest's token answers nothing (never the new photo).
        try AtomicFile.write([0xff, 0xd8, 1, 2, 3, 4, 0xff, 0xd9], to: "\(photosDir)/2026-12-01/booth-000001-picture.jpg", replace: true)
        #expect(try rebuilt.reconcile(photosDir: photosDir, tokens: tokens, folderID: "f00d") == 1)
        #expect(try rebuilt.picture(token: t1) == nil)
        let t1new = tokens.token(for: PictureTokens.identity(folder: "f00d", path: "2026-12-01/booth-000001-picture.jpg", bytes: 8))
        #expect(try rebuilt.picture(token: t1new)?.bytes == 8)
        #expect(try rebuilt.counts() == (served: 8, removed: 0))
        // Another folder id (a stick swapped): other tokens for the same names.
        #expect(t1new != tokens.token(for: PictureTokens.identity(folder: "beef", path: "2026-12-01/booth-000001-picture.jpg", bytes: 8)))
    }

    @Test("a reader before the daemon made the index, and an index from a newer booth, are clear errors")
    func errors() throws {
        let dir = tempDir(); defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect { try PictureIndex(path: "\(dir)/none.sqlite", readOnly: true) } throws: { ($0 as? IndexError)?.kind == .open }
        let db = "\(dir)/newer.sqlite"
        _ = try PictureIndex(path: db)
        // A newer booth's schema: user_version raised by another connection.
        var handle: OpaquePointer?
        #expect(sqlite3_open(db, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "PRAGMA user_version = 9", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        #expect { try PictureIndex(path: db) } throws: { error in
            guard let e = error as? IndexError else { return false }
            return e.kind == .newerSchema && e.message.contains("schema version 9 is newer than this program's 1")
        }
    }
}
