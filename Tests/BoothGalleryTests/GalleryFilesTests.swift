import BoothCore
import BoothGallery
import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing

/// A GET over raw TCP with `Connection: close` (10 s at most between reads): the status and the body.
private func get(_ port: UInt16, _ path: String) throws -> (status: Int, body: String) {
    let reply = RawReply(parsing: try rawReplyBytes(port, Array("GET \(path) HTTP/1.1\r\nHost: booth\r\nConnection: close\r\n\r\n".utf8),
                                                    waitMilliseconds: 10_000))
    return (reply.status, reply.text)
}

@Suite("What the gallery serves is what is on disk, inside storage.dir; pictures taken down leave no thumbnail", .serialized)
struct GalleryFilesTests {
    @Test("a picture whose file is gone, has another size or is a symbolic link: its page is the not-here page (404), as its .jpg")
    func pageAgreesWithFile() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 42)
        defer { one.remove() }
        let log = LogRecorder()
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "Our day", downloadText: "Save", missingText: "Not here."),
                                   index: try one.reader(), log: log.logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let file = "\(one.photos)/\(one.relative)", aside = "\(one.dir)/aside.jpg"

        func both() throws -> (page: Int, jpg: Int, missingText: Bool) {
            let page = try get(port, "/p/\(one.token)"), jpg = try get(port, "/p/\(one.token).jpg")
            return (page.status, jpg.status, page.body.contains("Not here."))
        }
        let served = try both()
        #expect(served.page == 200 && served.jpg == 200)

        // Gone.
        try #require(rename(file, aside) == 0)
        let gone = try both()
        #expect(gone.page == 404, "the page of a file that is gone")
        #expect(gone.jpg == 404)
        #expect(gone.missingText, "gallery.missing_text")

        // A symbolic link to a file of the same bytes.
        try #require(symlink(aside, file) == 0)
        let linked = try both()
        #expect(linked.page == 404, "the page of a file that is a symbolic link")
        #expect(linked.jpg == 404)
        #expect(log.all.contains { $0.contains("\(file): openat2 failed") || $0.contains("\(file): openat failed") }, "\(log.all)")

        // Another size under the indexed name.
        unlink(file)
        try AtomicFile.write(one.jpeg + [0, 0, 0], to: file, replace: true)
        let bigger = try both()
        #expect(bigger.page == 404, "the page of a file with another size")
        #expect(bigger.jpg == 404)

        // Back as it was: both again.
        try AtomicFile.write(one.jpeg, to: file, replace: true)
        let back = try both()
        #expect(back.page == 200 && back.jpg == 200)
    }

    @Test("a date folder or picture that is a symbolic link: not indexed by a rebuild (said in the log), and not served when an index has it")
    func symlinkedFolder() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        // /elsewhere with a picture, linked in as a date folder; and a picture linked into a real date folder.
        let elsewhere = "\(one.dir)/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        // A real photo, so that nothing but where it lies keeps it from being served.
        let secret = one.jpeg
        try AtomicFile.write(secret, to: "\(elsewhere)/booth-000007-picture.jpg")
        try #require(symlink(elsewhere, "\(one.photos)/2026-12-05") == 0)
        try #require(symlink("\(elsewhere)/booth-000007-picture.jpg", "\(one.photos)/2026-12-01/booth-000008-picture.jpg") == 0)

        let log = LogRecorder()
        let n = try one.index.rebuild(photosDir: one.photos, tokens: tokens, folderID: "f00d", removals: [:], log: log.logger())
        #expect(n.served == 1, "only the photo inside storage.dir")
        #expect(try one.index.picture(path: "2026-12-05/booth-000007-picture.jpg") == nil)
        #expect(try one.index.picture(path: "2026-12-01/booth-000008-picture.jpg") == nil)
        let said = log.all.joined(separator: "\n")
        #expect(said.contains("2026-12-05") && said.contains("2026-12-01/booth-000008-picture.jpg") && said.contains("not indexed"), "\(said)")
        // The daemon's start (openForWriting's reconcile) skips them too.
        #expect(try one.index.reconcile(photosDir: one.photos, tokens: tokens, folderID: "f00d") == 0)

        // An index that has them anyway (made by an older version): 404, nothing of the file sent.
        let outside = IndexedPicture(token: tokens.token(for: PictureTokens.identity(folder: "f00d", path: "2026-12-05/booth-000007-picture.jpg",
                                                                                     bytes: Int64(secret.count))),
                                     path: "2026-12-05/booth-000007-picture.jpg", session: 7, savedAt: Int64(time(nil)), bytes: Int64(secret.count))
        #expect(try one.index.record(outside))
        let server = GalleryServer(config: .init(photosDir: one.photos, title: "t", downloadText: "d", missingText: "Not here."),
                                   index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        for path in ["/p/\(outside.token)", "/p/\(outside.token).jpg", "/p/\(outside.token)/download"] {
            let r = try get(port, path)
            #expect(r.status == 404, "\(path)")
            #expect(r.body.contains("Not here."), "\(path)")
        }
        #expect(try get(port, "/p/\(one.token).jpg").status == 200, "the photo inside is served")

        // gallery remove --delete-file of it: taken down, and the file outside is not deleted.
        var settings = Settings.defaults
        settings.storage.dir = one.photos
        settings.gallery.enabled = true
        settings.gallery.index = "\(one.dir)/index.sqlite"
        let admin = GalleryAdmin(settings: settings, index: one.index, tokens: tokens, folders: StorageIDs(log: LogRecorder().logger()),
                                 problem: nil, log: LogRecorder().logger())
        switch admin.answer(action: "remove", picture: outside.token, deleteFile: true, uid: 0) {
        case .failure(let failure):
            #expect(failure.message.contains("taken down") && failure.message.contains("a folder on its way is a symbolic link"), "\(failure.message)")
        case .success(let answer):
            Issue.record("remove --delete-file through a linked folder: \(answer.message)")
        }
        #expect(access("\(elsewhere)/booth-000007-picture.jpg", F_OK) == 0, "the file outside storage.dir stays")

        // Thumbnails read through the same open.
        let thumbs = Thumbnails(directory: "\(one.dir)/cache")
        try thumbs.prepare()
        #expect(throws: ThumbnailError.self) { try thumbs.file(for: outside, under: one.photos) }
    }

    @Test("a picture the daemon saves through a symbolic link (a date folder linked elsewhere) is not indexed and gets no link; one inside is")
    func sinkSkipsLinks() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        let elsewhere = "\(one.dir)/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try #require(symlink(elsewhere, "\(one.photos)/2026-12-05") == 0)
        // Saved through the link, as PhotoStore saves into a date folder that exists.
        let outside = "2026-12-05/\(PhotoFileName.name(session: 7, shot: 0))", inside = "2026-12-01/\(PhotoFileName.name(session: 8, shot: 0))"
        try AtomicFile.write(one.jpeg, to: "\(one.photos)/\(outside)")
        try AtomicFile.write(one.jpeg, to: "\(one.photos)/\(inside)")
        let log = LogRecorder()
        let sink = GalleryIndexSink(index: one.index, tokens: tokens, folders: StorageIDs(log: LogRecorder().logger()), log: log.logger())

        #expect(!sink.serves(path: "\(one.photos)/\(outside)"), "no QR code for a picture the gallery does not serve")
        sink.pictureSaved(SavedPicture(path: "\(one.photos)/\(outside)", session: 7, shot: 0, kind: .picture, captureID: 1, bytes: one.jpeg))
        #expect(try one.index.picture(path: outside) == nil, "the index never records a file outside storage.dir")
        #expect(log.all.contains { $0.contains(outside) && $0.contains("not indexed") && $0.contains("symbolic link") }, "\(log.all)")

        #expect(sink.serves(path: "\(one.photos)/\(inside)"))
        sink.pictureSaved(SavedPicture(path: "\(one.photos)/\(inside)", session: 8, shot: 0, kind: .picture, captureID: 2, bytes: one.jpeg))
        #expect(try one.index.picture(path: inside) != nil, "a picture inside is indexed as before")
        // storage.dir itself through a link: the operator's choice, indexed and linked.
        try #require(symlink(one.photos, "\(one.dir)/photos-link") == 0)
        #expect(sink.serves(path: "\(one.dir)/photos-link/\(inside)"))
        // A picture that is itself a link, in a plain date folder: the gallery would not serve it, so no link
        // either (the same look as the index's, BeneathFile, not a look at the folder alone).
        try FileManager.default.createDirectory(atPath: "\(one.photos)/2026-12-02", withIntermediateDirectories: true)
        let linkedFile = "2026-12-02/\(PhotoFileName.name(session: 9, shot: 0))"
        try #require(symlink("\(one.photos)/\(inside)", "\(one.photos)/\(linkedFile)") == 0)
        #expect(!sink.serves(path: "\(one.photos)/\(linkedFile)"), "no QR code for a picture that is a link")
        sink.pictureSaved(SavedPicture(path: "\(one.photos)/\(linkedFile)", session: 9, shot: 0, kind: .picture, captureID: 3, bytes: one.jpeg))
        #expect(try one.index.picture(path: linkedFile) == nil)
    }

    @Test("BeneathFile: openat2 and the per-component fallback both refuse a symbolic link on the way and a path leaving the folder; storage.dir itself may be a link",
          arguments: [BeneathFile.Way.openat2, .componentwise])
    func beneath(way: BeneathFile.Way) throws {
        var template = Array("/tmp/photobooth-beneath-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/photos/2026-12-01", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(dir)/elsewhere", withIntermediateDirectories: true)
        try AtomicFile.write([1, 2, 3], to: "\(dir)/photos/2026-12-01/a.jpg")
        try AtomicFile.write([4, 5], to: "\(dir)/elsewhere/b.jpg")
        try #require(symlink("\(dir)/elsewhere", "\(dir)/photos/2026-12-05") == 0)
        try #require(symlink("../../elsewhere/b.jpg", "\(dir)/photos/2026-12-01/b.jpg") == 0)
        try #require(symlink("\(dir)/photos", "\(dir)/photos-link") == 0)
        try #require(mkfifo("\(dir)/photos/2026-12-01/fifo.jpg", 0o600) == 0)

        let (fd, st) = try BeneathFile.open("2026-12-01/a.jpg", under: "\(dir)/photos", way: way)
        close(fd)
        #expect(st.st_size == 3)
        let (fd2, _) = try BeneathFile.open("2026-12-01/a.jpg", under: "\(dir)/photos-link", way: way)
        close(fd2)
        #expect(try BeneathFile.read("2026-12-01/a.jpg", under: "\(dir)/photos", limit: 3) == [1, 2, 3])
        #expect { try BeneathFile.read("2026-12-01/a.jpg", under: "\(dir)/photos", limit: 2) } throws: { ($0 as? FileError)?.errno == EFBIG }

        func refused(_ relative: String) -> Int32? {
            do {
                let (fd, _) = try BeneathFile.open(relative, under: "\(dir)/photos", way: way)
                close(fd)
                return nil
            } catch {
                return error.errno
            }
        }
        #expect(refused("2026-12-05/b.jpg") == ELOOP, "a date folder that is a link")
        #expect(refused("2026-12-01/b.jpg") == ELOOP, "a picture that is a link")
        #expect(refused("../elsewhere/b.jpg") == EINVAL, "a path leaving the folder")
        #expect(refused("/etc/passwd") == EINVAL)
        #expect(refused("2026-12-01/./a.jpg") == EINVAL)
        #expect(refused("2026-12-01/missing.jpg") == ENOENT)
        #expect(refused("2026-12-01") == EINVAL, "a folder is not a file to serve")
        #expect(refused("2026-12-01/fifo.jpg") == EINVAL, "a FIFO: refused, and the open does not block")

        // Deleting: never through a linked folder; a link is deleted itself, not what it points to.
        #expect { try BeneathFile.unlink("2026-12-05/b.jpg", under: "\(dir)/photos", way: way) } throws: { ($0 as? FileError)?.errno == ELOOP }
        #expect { try BeneathFile.unlink("../elsewhere/b.jpg", under: "\(dir)/photos", way: way) } throws: { ($0 as? FileError)?.errno == EINVAL }
        try BeneathFile.unlink("2026-12-01/b.jpg", under: "\(dir)/photos", way: way)
        #expect(access("\(dir)/elsewhere/b.jpg", F_OK) == 0, "the file a deleted link pointed to stays")
        try BeneathFile.unlink("2026-12-01/a.jpg", under: "\(dir)/photos-link", way: way)
        #expect(access("\(dir)/photos/2026-12-01/a.jpg", F_OK) != 0)
        #expect { try BeneathFile.unlink("2026-12-01/a.jpg", under: "\(dir)/photos", way: way) } throws: { ($0 as? FileError)?.errno == ENOENT }
    }

    @Test("storage.dir through a symbolic link (photos on a USB disk): rebuilt, indexed on save, served with page, picture and thumbnail, deleted by remove --delete-file")
    func linkedStorageDir() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        let linked = "\(one.dir)/usb-photos"
        try #require(symlink(one.photos, linked) == 0)
        let log = LogRecorder()
        #expect(try one.index.rebuild(photosDir: linked, tokens: tokens, folderID: "f00d", removals: [:], log: log.logger()).served == 1, "\(log.all)")
        #expect(!log.all.contains { $0.contains("not indexed") }, "\(log.all)")
        let saved = "2026-12-01/\(PhotoFileName.name(session: 2, shot: 0))"
        try AtomicFile.write(one.jpeg, to: "\(linked)/\(saved)")
        let sink = GalleryIndexSink(index: one.index, tokens: tokens, folders: StorageIDs(log: LogRecorder().logger()), log: log.logger())
        #expect(sink.serves(path: "\(linked)/\(saved)"))
        sink.pictureSaved(SavedPicture(path: "\(linked)/\(saved)", session: 2, shot: 0, kind: .picture, captureID: 2, bytes: one.jpeg))
        let second = try #require(try one.index.picture(path: saved)).0

        var config = GalleryServer.Config(photosDir: linked, title: "t", downloadText: "d", missingText: "Not here.")
        config.list = true
        config.cache = "\(one.dir)/cache"
        let server = GalleryServer(config: config, index: try one.reader(), log: log.logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        for token in [one.token, second.token] {
            for path in ["/p/\(token)", "/p/\(token).jpg", "/p/\(token)/download", "/t/\(token).jpg"] {
                #expect(try get(port, path).status == 200, "\(path) \(log.all)")
            }
        }
        var settings = Settings.defaults
        settings.storage.dir = linked
        settings.gallery.enabled = true
        settings.gallery.index = "\(one.dir)/index.sqlite"
        let admin = GalleryAdmin(settings: settings, index: one.index, tokens: tokens, folders: StorageIDs(log: LogRecorder().logger()),
                                 problem: nil, log: LogRecorder().logger())
        guard case .success = admin.answer(action: "remove", picture: second.token, deleteFile: true, uid: 0) else {
            Issue.record("remove --delete-file under a linked storage.dir failed")
            return
        }
        #expect(access("\(one.photos)/\(saved)", F_OK) != 0, "its file deleted")
        #expect(try get(port, "/p/\(one.token).jpg").status == 200)
    }

    @Test("a storage.dir and date folder the gallery may only pass through (mode 0711, no read): a picture there is opened as a plain open(2) opens it",
          arguments: [BeneathFile.Way.openat2, .componentwise])
    func searchOnlyFolders(way: BeneathFile.Way) throws {
        var template = Array("/tmp/photobooth-beneath-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/photos/2026-12-01", withIntermediateDirectories: true)
        try AtomicFile.write([1, 2, 3], to: "\(dir)/photos/2026-12-01/a.jpg")
        for folder in [dir, "\(dir)/photos", "\(dir)/photos/2026-12-01"] { try #require(chmod(folder, 0o711) == 0) }
        try #require(chmod("\(dir)/photos/2026-12-01/a.jpg", 0o644) == 0)
        // This thread only, as another user (setfsuid(2) 65534: root's file capabilities dropped with it;
        // glibc's wrapper, looked up: <sys/fsuid.h> is not in Swift's Glibc module).
        typealias SetFSUID = @convention(c) (uid_t) -> Int32
        let setfsuid = unsafeBitCast(try #require(dlsym(nil, "setfsuid")), to: SetFSUID.self)
        _ = setfsuid(65534)
        defer { _ = setfsuid(0) }
        let listable = Glibc.open("\(dir)/photos", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if listable >= 0 { close(listable) }
        try #require(listable < 0 && errno == EACCES, "the folder is not readable to this thread")
        let plain = Glibc.open("\(dir)/photos/2026-12-01/a.jpg", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        try #require(plain >= 0, "a plain open passes through")
        close(plain)
        do {
            let (fd, st) = try BeneathFile.open("2026-12-01/a.jpg", under: "\(dir)/photos", way: way)
            close(fd)
            #expect(st.st_size == 3)
        } catch {
            Issue.record("BeneathFile.open of a picture in search-only folders: \(error)")
        }
        #expect(throws: Never.self) { try BeneathFile.read("2026-12-01/a.jpg", under: "\(dir)/photos", limit: 3) }
    }

    @Test("a picture taken down loses its thumbnail: at the next list load, at start, and after remove --delete-file")
    func thumbnailsOfRemovedPictures() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let second = "2026-12-01/\(PhotoFileName.name(session: 2, shot: 0))"
        try AtomicFile.write(one.jpeg, to: "\(one.photos)/\(second)")
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        #expect(try one.index.reconcile(photosDir: one.photos, tokens: tokens, folderID: "f00d") == 1)
        let secondToken = tokens.token(for: PictureTokens.identity(folder: "f00d", path: second, bytes: Int64(one.jpeg.count)))
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "Not here.")
        config.list = true
        config.cache = "\(one.dir)/cache"
        func cached(_ token: String) -> Bool { ((try? FileManager.default.contentsOfDirectory(atPath: config.cache)) ?? []).contains { $0.hasPrefix(token + "-") } }

        let log = LogRecorder()
        var server = GalleryServer(config: config, index: try one.reader(), log: log.logger())
        var port = try server.startOnLoopback()
        #expect(try get(port, "/t/\(one.token).jpg").status == 200)
        #expect(try get(port, "/t/\(secondToken).jpg").status == 200)
        #expect(cached(one.token) && cached(secondToken))

        // Taken down while the gallery runs: gone at the next list load; the other stays.
        #expect(try one.index.remove(token: one.token, at: 100))
        #expect(try get(port, "/").status == 200)
        #expect(!cached(one.token), "the thumbnail of a picture taken down")
        #expect(cached(secondToken), "a served picture's thumbnail stays")
        #expect(log.all.contains { $0.contains("1 thumbnail of pictures no longer served (taken down) deleted") }, "\(log.all)")

        // Taken down while the gallery is stopped (remove --delete-file): gone at its start.
        server.stop()
        var settings = Settings.defaults
        settings.storage.dir = one.photos
        settings.gallery.enabled = true
        settings.gallery.index = "\(one.dir)/index.sqlite"
        let admin = GalleryAdmin(settings: settings, index: one.index, tokens: tokens, folders: StorageIDs(log: LogRecorder().logger()),
                                 problem: nil, log: LogRecorder().logger())
        guard case .success = admin.answer(action: "remove", picture: secondToken, deleteFile: true, uid: 0) else {
            Issue.record("remove --delete-file failed")
            return
        }
        #expect(access("\(one.photos)/\(second)", F_OK) != 0, "its file deleted")
        #expect(cached(secondToken), "still there while the gallery is stopped")
        server = GalleryServer(config: config, index: try one.reader(), log: log.logger())
        port = try server.startOnLoopback()
        defer { server.stop() }
        #expect(!cached(secondToken), "deleted at start")
        #expect(try get(port, "/t/\(secondToken).jpg").status == 404)
    }

    @Test("a picture whose file is gone (deleted by hand) or became a symbolic link: its cached thumbnail is not served (404, as its page) and is deleted")
    func thumbnailAgreesWithFile() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        var config = GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "Not here.")
        config.list = true
        config.cache = "\(one.dir)/cache"
        func cached() -> Bool { ((try? FileManager.default.contentsOfDirectory(atPath: config.cache)) ?? []).contains { $0.hasPrefix(one.token + "-") } }
        let server = GalleryServer(config: config, index: try one.reader(), log: LogRecorder().logger())
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let file = "\(one.photos)/\(one.relative)", aside = "\(one.dir)/aside.jpg"
        #expect(try get(port, "/t/\(one.token).jpg").status == 200)
        #expect(cached())

        // A symbolic link to the same bytes: not the picture the gallery serves.
        try #require(rename(file, aside) == 0)
        try #require(symlink(aside, file) == 0)
        #expect(try get(port, "/p/\(one.token)").status == 404)
        #expect(try get(port, "/t/\(one.token).jpg").status == 404, "the thumbnail of a picture whose file is a link")

        // Back, then deleted by hand (rm, no gallery remove): the thumbnail goes with it.
        unlink(file)
        try #require(rename(aside, file) == 0)
        #expect(try get(port, "/t/\(one.token).jpg").status == 200)
        unlink(file)
        #expect(try get(port, "/t/\(one.token).jpg").status == 404, "the thumbnail of a picture deleted by hand")
        #expect(!cached(), "and deleted from gallery.cache")
    }

    @Test("a picture taken down while its thumbnail is being made (after the list's sweep found nothing to delete): the new thumbnail is not kept")
    func thumbnailMadeWhileTakenDown() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let thumbs = Thumbnails(directory: "\(one.dir)/cache")
        try thumbs.prepare()
        let picture = try #require(try one.index.picture(token: one.token))
        func cached() -> Bool { ((try? FileManager.default.contentsOfDirectory(atPath: "\(one.dir)/cache")) ?? []).contains { $0.hasPrefix(one.token + "-") } }
        var asked = 0
        #expect(throws: ThumbnailError.self) {
            try thumbs.file(for: picture, under: one.photos, stillServed: { asked += 1; return false })
        }
        #expect(asked == 1, "asked once the thumbnail is written")
        #expect(!cached(), "the thumbnail of a picture taken down meanwhile is deleted at once")
        let path = try thumbs.file(for: picture, under: one.photos, stillServed: { true })
        #expect(access(path, R_OK) == 0, "a picture still served keeps its thumbnail")
    }

    @Test("a sweep that could not read the index for a thumbnail looks again at the next list load, though nothing else changed")
    func sweepAfterUnreadableIndex() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let thumbs = Thumbnails(directory: "\(one.dir)/cache")
        try thumbs.prepare()
        let picture = try #require(try one.index.picture(token: one.token))
        let path = try thumbs.file(for: picture, under: one.photos)
        #expect(thumbs.sweep(when: [1, 1]) { _ in nil } == 0, "the index unreadable: kept")
        #expect(access(path, F_OK) == 0)
        #expect(thumbs.sweep(when: [1, 1]) { _ in false } == 1, "the same count of removals: looked at again, as the last look was not sure")
        #expect(access(path, F_OK) != 0)
        #expect(thumbs.sweep(when: [1, 1]) { _ in Issue.record("a sure sweep is not repeated for the same count"); return false } == 0)
    }

    @Test("sync copies only what the gallery serves: a picture indexed through a symbolic link (an older index) is not copied to the remote")
    func syncCopiesNothingOutside() throws {
        guard access("/usr/bin/rclone", X_OK) == 0 else {
            Issue.record("rclone is missing: apt-get install rclone (install.sh --test installs it)")
            return
        }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        let elsewhere = "\(one.dir)/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try AtomicFile.write(one.jpeg + [1], to: "\(elsewhere)/booth-000007-picture.jpg")
        try #require(symlink(elsewhere, "\(one.photos)/2026-12-05") == 0)
        let path = "2026-12-05/booth-000007-picture.jpg"
        let outside = IndexedPicture(token: tokens.token(for: PictureTokens.identity(folder: "f00d", path: path, bytes: Int64(one.jpeg.count + 1))),
                                     path: path, session: 7, savedAt: Int64(time(nil)), bytes: Int64(one.jpeg.count + 1))
        #expect(try one.index.record(outside))
        let cache = "\(one.dir)/cache", remote = "\(one.dir)/remote"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let log = LogRecorder()
        let sync = GallerySync(config: GallerySync.Config(remote: remote, rcloneConfig: "/dev/null", cacheDir: cache, stateDir: cache, photosDir: one.photos,
                                                          backoff: SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400), pollMilliseconds: 100),
                               indexPath: "\(one.dir)/index.sqlite", log: log.logger())
        #expect(sync.start())
        defer { sync.stop() }
        // One pass looks at both pictures: the one outside is said and left, the other copied.
        #expect(waitUntil { sync.stats.copied == 1 && sync.stats.pending == 0 }, "\(sync.stats) \(log.all)")
        let copied = ((try? FileManager.default.contentsOfDirectory(atPath: remote)) ?? []).sorted()
        #expect(copied == ["\(one.token).jpg"], "only the picture inside storage.dir")
        #expect(log.all.contains { $0.contains(path) && $0.contains("not copied") }, "\(log.all)")
    }

    @Test("sync copies the file it checked: a date folder swapped for a link after the check (as rclone starts) does not send the file outside")
    func syncCopiesWhatItOpened() throws {
        guard access("/usr/bin/rclone", X_OK) == 0 else {
            Issue.record("rclone is missing: apt-get install rclone (install.sh --test installs it)")
            return
        }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let tokens = try #require(PictureTokens(secret: [UInt8](repeating: 3, count: 32)))
        let elsewhere = "\(one.dir)/elsewhere", name = PhotoFileName.name(session: 7, shot: 0), path = "2026-12-06/\(name)"
        try FileManager.default.createDirectory(atPath: "\(one.photos)/2026-12-06", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        // Inside: the photo; elsewhere, under the same name and size, other bytes.
        try AtomicFile.write(one.jpeg, to: "\(one.photos)/\(path)")
        var secret = one.jpeg
        secret[secret.count - 3] ^= 0xff
        try AtomicFile.write(secret, to: "\(elsewhere)/\(name)")
        #expect(try one.index.reconcile(photosDir: one.photos, tokens: tokens, folderID: "f00d") == 1)
        let token = tokens.token(for: PictureTokens.identity(folder: "f00d", path: path, bytes: Int64(one.jpeg.count)))
        // rclone, started for that picture, first finds its date folder made a link to elsewhere (the check is done by then).
        let wrapper = "\(one.dir)/rclone"
        let script = """
            #!/bin/sh
            case "$*" in *\(token)*) [ -L '\(one.photos)/2026-12-06' ] || { mv '\(one.photos)/2026-12-06' '\(one.dir)/aside' && ln -s '\(elsewhere)' '\(one.photos)/2026-12-06'; } ;; esac
            exec /usr/bin/rclone "$@"

            """
        try AtomicFile.write(Array(script.utf8), to: wrapper, mode: 0o755)
        let cache = "\(one.dir)/cache", remote = "\(one.dir)/remote"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let log = LogRecorder()
        let sync = GallerySync(config: GallerySync.Config(remote: remote, rcloneConfig: "/dev/null", cacheDir: cache, stateDir: cache, photosDir: one.photos, rclone: wrapper,
                                                          backoff: SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400), pollMilliseconds: 100),
                               indexPath: "\(one.dir)/index.sqlite", log: log.logger())
        #expect(sync.start())
        defer { sync.stop() }
        #expect(waitUntil { sync.stats.copied == 2 && sync.stats.pending == 0 }, "\(sync.stats) \(log.all)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(one.photos)/2026-12-06")) == elsewhere, "the folder was swapped")
        let sent = (try? AtomicFile.read("\(remote)/\(token).jpg")) ?? []
        let sentInside = sent == one.jpeg, sentOutside = sent == secret
        #expect(sentInside, "the photo checked inside storage.dir (\(sentOutside ? "the file outside was sent" : "\(sent.count) bytes"))")
    }
}
