import BoothCore
import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Testing

@Suite("photoboothctl gallery: status, url, remove, rebuild (GalleryAdmin on a real index)")
struct GalleryAdminTests {
    /// A booth's folder with `sessions` one-shot sessions on disk, its index made by the daemon's
    /// `openForWriting`, and its admin.
    struct Booth {
        let dir: String
        let settings: Settings
        let tokens: PictureTokens
        let folders: StorageIDs
        let index: PictureIndex
        let admin: GalleryAdmin
        let log = LogRecorder()

        init(sessions: Int, urlBase: String = "http://10.42.0.1:8080/", alertURL: String = "") throws {
            var template = Array("/tmp/photobooth-admin-XXXXXX".utf8CString)
            dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
            var s = Settings.defaults
            s.storage.dir = "\(dir)/photos"
            s.storage.sessionFile = "\(dir)/session-number"
            s.gallery.enabled = true
            s.gallery.urlBase = urlBase
            s.gallery.alertURL = alertURL
            s.gallery.index = "\(dir)/gallery/index.sqlite"
            settings = s
            try FileManager.default.createDirectory(atPath: "\(dir)/photos/2026-12-01", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: "\(dir)/gallery", withIntermediateDirectories: true)
            for n in 1...sessions {
                try AtomicFile.write([0xFF, 0xD8, UInt8(n), 0xFF, 0xD9], to: "\(dir)/photos/2026-12-01/\(PhotoFileName.name(session: n, shot: 1))")
            }
            tokens = try #require(PictureTokens(secret: [UInt8](repeating: 9, count: 32)))
            folders = StorageIDs(log: log.logger())
            index = try #require(PictureIndex.openForWriting(path: s.gallery.index, photosDir: s.storage.dir, tokens: tokens,
                                                             folderID: folders.id(of: s.storage.dir), log: log.logger()))
            admin = GalleryAdmin(settings: s, index: index, tokens: tokens, folders: folders, problem: nil, log: log.logger(), now: { 1_800_000_000 })
        }

        func token(_ n: Int) -> String {
            tokens.token(for: PictureTokens.identity(folder: folders.id(of: settings.storage.dir),
                                                     path: "2026-12-01/\(PhotoFileName.name(session: n, shot: 1))", bytes: 5))
        }

        func ask(_ action: String, _ picture: String? = nil, deleteFile: Bool = false) -> Result<GalleryAnswer, GalleryFailure> {
            admin.answer(action: action, picture: picture, deleteFile: deleteFile, uid: 0)
        }
    }

    @Test("test-alert records a test row the gallery sends (never an active condition); without gallery.alert_url it is refused, saying so")
    func testAlert() throws {
        let b = try Booth(sessions: 1, alertURL: "https://ops.example.org/hook")
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let answer = try b.ask("test-alert").get()
        #expect(answer.message.hasPrefix("test alert 1 recorded: photobooth-gallery POSTs it to https://ops.example.org/hook within a few seconds"))
        let rows = try b.index.alerts(after: 0, limit: 10)
        #expect(rows.map(\.condition) == ["test"])
        #expect(rows.first?.message == "a test alert (photoboothctl gallery test-alert, uid 0)")
        #expect(rows.first?.at == 1_800_000_000)
        #expect(try b.index.activeAlerts().isEmpty, "a test is no condition the daemon carries over a restart")
        let none = try Booth(sessions: 1)
        defer { try? FileManager.default.removeItem(atPath: none.dir) }
        guard case let .failure(f) = none.ask("test-alert") else { Issue.record("test-alert without gallery.alert_url answered"); return }
        #expect(f.code == "unavailable")
        #expect(f.message.hasPrefix("gallery.alert_url is empty"))
        #expect(try none.index.lastAlertID() == 0)
    }

    @Test("status counts, the newest picture's URL; url by latest, token, URL, DATE/NAME and absolute path; clear errors")
    func statusAndURL() throws {
        let b = try Booth(sessions: 3)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let s = b.admin.status
        #expect(s.served == 3 && s.removed == 0)
        #expect(s.urlBase == "http://10.42.0.1:8080", "the trailing / dropped")
        #expect(s.newest == "http://10.42.0.1:8080/p/\(b.token(3))")
        let name = "2026-12-01/\(PhotoFileName.name(session: 2, shot: 1))"
        for picture in [b.token(2), "http://10.42.0.1:8080/p/\(b.token(2)).jpg", "http://10.42.0.1:8080/p/\(b.token(2))/download",
                        name, "\(b.dir)/photos/\(name)"] {
            let answer = try b.ask("url", picture).get()
            #expect(answer.pictures == [GalleryPicture(token: b.token(2), path: name, url: "http://10.42.0.1:8080/p/\(b.token(2))",
                                                       removed: false, savedAt: answer.pictures.first?.savedAt ?? 0)], "\(picture)")
        }
        #expect(try b.ask("url").get().pictures.first?.token == b.token(3), "latest by default")
        #expect(throws: GalleryFailure.self) { try b.ask("url", "2026-12-01/booth-000009-1.jpg").get() }
        #expect(throws: GalleryFailure("bad-request", "/etc/passwd is not under storage.dir (\(b.dir)/photos); give a token, a URL, DATE/NAME or latest")) {
            try b.ask("url", "/etc/passwd").get()
        }
        #expect(throws: GalleryFailure("bad-request", "unknown gallery action 'list'; known: status, url, remove, rebuild, test-alert")) { try b.ask("list").get() }
    }

    @Test("remove takes a picture down (the file stays), kept across a rebuild and a damaged index made anew; --delete-file deletes it")
    func removeAndRebuild() throws {
        let b = try Booth(sessions: 3)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        let file2 = "\(b.dir)/photos/2026-12-01/\(PhotoFileName.name(session: 2, shot: 1))"
        let removed = try b.ask("remove", b.token(2)).get()
        #expect(removed.message.contains("taken down"))
        #expect(try b.index.picture(token: b.token(2)) == nil, "no longer served")
        #expect(FileManager.default.fileExists(atPath: file2), "the file stays")
        #expect(try b.ask("remove", b.token(2)).get().message.contains("already taken down"))
        #expect(try RemovedPictures(indexPath: b.settings.gallery.index).load() == [b.token(2): 1_800_000_000])

        // rebuild: the same tokens, the removal kept.
        let rebuilt = try b.ask("rebuild").get()
        #expect(rebuilt.status.served == 2 && rebuilt.status.removed == 1, "\(rebuilt.message)")
        #expect(try b.index.picture(token: b.token(1)) != nil && b.index.picture(token: b.token(3)) != nil)
        #expect(try b.index.picture(token: b.token(2)) == nil)

        // A damaged index is moved aside and made anew at the next start: still taken down.
        try AtomicFile.write(Array(repeating: 0x42, count: 4096), to: b.settings.gallery.index, replace: true)
        for suffix in ["-wal", "-shm"] { unlink(b.settings.gallery.index + suffix) }
        let removals = try RemovedPictures(indexPath: b.settings.gallery.index).load()
        let again = try #require(PictureIndex.openForWriting(path: b.settings.gallery.index, photosDir: b.settings.storage.dir, tokens: b.tokens,
                                                             folderID: b.folders.id(of: b.settings.storage.dir), removals: removals,
                                                             log: b.log.logger()))
        #expect(try again.counts() == (served: 2, removed: 1))
        #expect(try again.picture(token: b.token(2)) == nil)
        #expect(try again.picture(token: b.token(3)) != nil, "the same URL for the others")

        // --delete-file: the stored file too; a rebuild then drops it.
        let deleted = try b.ask("remove", b.token(3), deleteFile: true).get()
        #expect(deleted.message.contains("deleted"))
        #expect(!FileManager.default.fileExists(atPath: "\(b.dir)/photos/2026-12-01/\(PhotoFileName.name(session: 3, shot: 1))"))
        #expect(b.log.all.contains { $0.contains("uid 0:") && $0.contains("deleted") })
    }

    @Test("remove wants a named picture; the list reads CRLF, refuses a line it cannot read (file:line); rebuild keeps the index's own marks")
    func removedListAndRebuild() throws {
        let b = try Booth(sessions: 3)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        #expect(throws: GalleryFailure.self) { try b.ask("remove", "latest").get() }
        #expect(throws: GalleryFailure.self) { try b.ask("remove").get() }
        #expect(try b.index.counts().removed == 0, "nothing taken down by a vague name")
        _ = try b.ask("remove", b.token(1)).get()
        _ = try b.ask("remove", b.token(2)).get()
        let list = RemovedPictures(indexPath: b.settings.gallery.index)
        // Edited on Windows: CRLF and a blank line read the same.
        let text = String(decoding: try AtomicFile.read(list.path), as: UTF8.self)
        try AtomicFile.write(Array((text.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n").utf8), to: list.path, replace: true)
        #expect(try list.load().count == 2)
        // A line that is not TOKEN SECONDS: an error naming the file and line, nothing written by the next remove.
        try AtomicFile.write(Array((text + "garbage here\n").utf8), to: list.path, replace: true)
        #expect { try list.load() } throws: { "\($0)".contains("\(list.path):3: 'garbage here' is not a taken-down picture") }
        #expect(throws: GalleryFailure.self) { try b.ask("remove", b.token(3)).get() }
        #expect(String(decoding: try AtomicFile.read(list.path), as: UTF8.self).hasSuffix("garbage here\n"), "left as it was")
        // The list lost: a rebuild keeps the marks the index has.
        unlink(list.path)
        let rebuilt = try b.ask("rebuild").get()
        #expect(rebuilt.status.served == 1 && rebuilt.status.removed == 2, "\(rebuilt.message)")
        #expect(try b.index.picture(token: b.token(1)) == nil && b.index.picture(token: b.token(2)) == nil)
    }

    @Test("an absolute path is resolved as the file system does (storage.dir through a symbolic link); storage.dir as in force")
    func paths() throws {
        let b = try Booth(sessions: 2)
        defer { try? FileManager.default.removeItem(atPath: b.dir) }
        try FileManager.default.createSymbolicLink(atPath: "\(b.dir)/link", withDestinationPath: "\(b.dir)/photos")
        let viaLink = GalleryAdmin(settings: b.settings, index: b.index, tokens: b.tokens, folders: b.folders, problem: nil,
                                   log: LogRecorder().logger(), photosDir: { "\(b.dir)/link" })
        let name = "2026-12-01/\(PhotoFileName.name(session: 2, shot: 1))"
        for path in ["\(b.dir)/photos/\(name)", "\(b.dir)/link/\(name)"] {
            let answer = try viaLink.answer(action: "url", picture: path, deleteFile: false, uid: 0).get()
            #expect(answer.pictures.first?.token == b.token(2), "\(path)")
        }
        #expect(throws: GalleryFailure.self) { try viaLink.answer(action: "url", picture: "\(b.dir)/elsewhere/\(name)", deleteFile: false, uid: 0).get() }
    }

    @Test("a photos folder not made yet (a fresh start) has no id and no warning; its id is made with the folder, the same after")
    func freshFolderIDWithoutWarning() throws {
        var template = Array("/tmp/photobooth-ids-XXXXXX".utf8CString)
        let dir = try #require(template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap(mkdtemp).map { String(cString: $0) } })
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = LogRecorder()
        let folders = StorageIDs(log: log.logger())
        #expect(folders.id(of: "\(dir)/photos") == "")
        #expect(folders.id(of: "\(dir)/photos") == "")
        #expect(log.all.isEmpty, "a missing folder at start is normal: \(log.all)")
        try makeDirectories("\(dir)/photos")
        let made = folders.id(of: "\(dir)/photos")
        #expect(made.count == 32)
        #expect(String(decoding: try AtomicFile.read("\(dir)/photos/\(StorageIDs.fileName)"), as: UTF8.self) == made)
        #expect(StorageIDs(log: log.logger()).id(of: "\(dir)/photos") == made)
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test("the gallery off, or not set up, answers unavailable with why")
    func unavailable() throws {
        var s = Settings.defaults
        let folders = StorageIDs(log: LogRecorder().logger())
        let off = GalleryAdmin(settings: s, index: nil, tokens: nil, folders: folders, problem: nil, log: LogRecorder().logger())
        #expect(throws: GalleryFailure("unavailable", "the gallery is off (gallery.enabled = false; set it to true and restart photoboothd)")) {
            try off.answer(action: "status", picture: nil, deleteFile: false, uid: 0).get()
        }
        #expect(off.status.enabled == false)
        s.gallery.enabled = true
        let broken = GalleryAdmin(settings: s, index: nil, tokens: nil, folders: folders, problem: "gallery.secret: damaged", log: LogRecorder().logger())
        #expect(throws: GalleryFailure("unavailable", "the daemon runs without its gallery: gallery.secret: damaged")) {
            try broken.answer(action: "url", picture: nil, deleteFile: false, uid: 0).get()
        }
        #expect(broken.status.problem == "gallery.secret: damaged")
    }
}
