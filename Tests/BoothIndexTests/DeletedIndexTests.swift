import BoothCore
import BoothIndex
import BoothPorts
import BoothStorage
import BoothTestSupport
import Foundation
import Glibc
import Testing

// Issue 36: an index deleted while the daemon runs. The daemon made it again only at its next
// start: it kept writing into the deleted file, `gallery` reported all fine and `rebuild` said
// "made again" with no file there.
@Suite("gallery.index deleted while the daemon runs: made again from the photos, rebuild true to its words")
struct DeletedIndexTests {
    typealias Booth = GalleryAdminTests.Booth

    @Test("status after the file was deleted: made again from the photos (logged once), the same URLs, a taken-down picture stays down")
    func statusMakesItAgain() throws {
        let b = try Booth(sessions: 3)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let path = b.settings.gallery.index
        _ = try b.ask("remove", b.token(2)).get()
        try #require(unlink(path) == 0)

        let s = b.admin.status
        #expect(access(path, F_OK) == 0, "the index is there again")
        #expect(s.problem == nil, "\(s.problem ?? "")")
        #expect(s.served == 2 && s.removed == 1)
        let reader = try PictureIndex(path: path, readOnly: true)
        #expect(try reader.picture(token: b.token(1))?.path == "2026-12-01/\(PhotoFileName.name(session: 1, shot: 1))", "the same URL")
        #expect(try reader.picture(token: b.token(2)) == nil, "taken down before the file was deleted: still down")
        let n = try reader.counts()
        #expect(n.served == 2 && n.removed == 1)
        // The daemon's next picture goes into the new file, which the gallery reads.
        try b.index.record(IndexedPicture(token: String(repeating: "a", count: 26), path: "2026-12-01/booth-000009-picture.jpg", session: 9, savedAt: 1, bytes: 5))
        #expect(try reader.counts().served == 3)
        _ = b.admin.status
        let said = b.log.all.filter { $0.contains("was deleted or replaced while photoboothd used it; made again from the photos") }
        #expect(said.count == 1, "logged once: \(b.log.all)")
    }

    @Test("rebuild after the file was deleted: the file it says was made is there and readable")
    func rebuildMakesTheFile() throws {
        let b = try Booth(sessions: 2)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let path = b.settings.gallery.index
        try #require(unlink(path) == 0)
        let answer = try b.ask("rebuild").get()
        #expect(answer.message.contains("made again"), "\(answer.message)")
        #expect(access(path, F_OK) == 0, "\(answer.message): but no file")
        let n = try PictureIndex(path: path, readOnly: true).counts()
        #expect(n.served == 2 && n.removed == 0)
    }

    @Test("an index that cannot be made again (its folder gone): status says so while it lasts, rebuild fails saying why, and both mend once it can")
    func cannotBeMade() throws {
        let b = try Booth(sessions: 2)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let path = b.settings.gallery.index
        try FileManager.default.removeItem(atPath: "\(b.dir)/gallery")

        let s = b.admin.status
        #expect(s.problem?.contains("was deleted or replaced while photoboothd used it, and could not be made again") == true, "\(s.problem ?? "nil")")
        guard case let .failure(f) = b.ask("rebuild") else { Issue.record("rebuild answered made again with no file"); return }
        #expect(f.code == "io-error")
        #expect(f.message.contains(path), "\(f.message)")
        #expect(access(path, F_OK) != 0)
        #expect(b.log.all.filter { $0.contains("could not be made again") }.count == 1, "logged once while it lasts: \(b.log.all)")

        try FileManager.default.createDirectory(atPath: "\(b.dir)/gallery", withIntermediateDirectories: true)
        let mended = try b.ask("rebuild").get()
        #expect(mended.message.contains("made again"))
        #expect(access(path, F_OK) == 0)
        #expect(b.admin.status.problem == nil)
        #expect(b.admin.status.served == 2)
    }

    @Test("an index replaced by another file (rename over it) while a gallery reads the old one: made again from the photos, the old file's -wal not read into the new")
    func replacedWhileRead() throws {
        let b = try Booth(sessions: 3)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let path = b.settings.gallery.index
        // The gallery's connection to the old file stays open (so the daemon's close does not checkpoint it).
        let gallery = try PictureIndex(path: path, readOnly: true)
        #expect(try gallery.counts().served == 3)
        // Changes still in the old file's -wal.
        for n in 10..<60 {
            try b.index.record(IndexedPicture(token: String(repeating: "b", count: 24) + "\(n)", path: "2026-12-01/booth-0000\(n)-picture.jpg",
                                              session: n, savedAt: 1, bytes: 5))
        }
        _ = try b.ask("remove", b.token(2)).get()
        #expect(try gallery.counts().served == 52)
        // Another file renamed over it: an empty index made elsewhere in the folder (its last connection closed).
        let other = "\(b.dir)/gallery/other.sqlite"
        do { _ = try PictureIndex(path: other).counts() }
        for suffix in ["-wal", "-shm"] { unlink(other + suffix) }
        try #require(rename(other, path) == 0)

        let s = b.admin.status
        #expect(s.problem == nil, "\(s.problem ?? "")")
        #expect(s.served == 2 && s.removed == 1, "made again from the 3 photos, one taken down: \(String(describing: s.served)) served, \(String(describing: s.removed)) removed")
        let reader = try PictureIndex(path: path, readOnly: true)
        let n = try reader.counts()
        #expect(n.served == 2 && n.removed == 1, "the new file as read: \(n)")
        #expect(try reader.picture(token: b.token(1)) != nil)
        #expect(try reader.picture(token: b.token(2)) == nil)
        _ = gallery
    }

    @Test("the keeper's thread makes a deleted index again without a command (every 50 ms here)")
    func keeperThread() throws {
        let b = try Booth(sessions: 1)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let path = b.settings.gallery.index
        #expect(b.admin.startKeeping(everyMilliseconds: 50))
        defer { b.admin.stopKeeping() }
        try #require(unlink(path) == 0)
        let back = waitUntil(5) { (try? PictureIndex(path: path, readOnly: true).counts().served) == 1 }
        #expect(back, "\(b.log.all)")
    }
}
