import BoothCore
import BoothGallery
import BoothHTTPProbe
import BoothIndex
import BoothPorts
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

// gallery.sync_remote with the real rclone (Debian's): a local folder, and a WebDAV server on
// loopback (`rclone serve webdav`) that goes away and comes back; two booths on one remote.

private let rclone = "/usr/bin/rclone"

private struct RcloneMissing: Error, CustomStringConvertible {
    var description: String { "rclone is missing: apt-get install rclone (install.sh --test installs it)" }
}

/// A picture more in `one`'s photos and index: session `session`, shot `shot`, the same JPEG with
/// `session` bytes appended (another file, another size, another token). - Returns: its token and path.
@discardableResult
private func addPicture(_ one: OnePhoto, session: Int, shot: Int = 0, secret: UInt8 = 3) throws -> (token: String, path: String) {
    let tokens = try #require(PictureTokens(secret: [UInt8](repeating: secret, count: 32)))
    let relative = "2026-12-01/\(PhotoFileName.name(session: session, shot: shot))"
    let bytes = one.jpeg + [UInt8](repeating: 0, count: session)
    try AtomicFile.write(bytes, to: "\(one.photos)/\(relative)")
    let token = tokens.token(for: PictureTokens.identity(folder: "f00d", path: relative, bytes: Int64(bytes.count)))
    try one.index.record(IndexedPicture(token: token, path: relative, session: session, shot: shot, savedAt: Int64(100 * session), bytes: Int64(bytes.count)))
    return (token, "\(one.photos)/\(relative)")
}

/// The `*.jpg` names in `folder`, sorted.
private func names(_ folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".jpg") }.sorted()
}

private func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }

/// A sync of `one`'s index to `remote`, fast for tests: the index looked at every 100 ms, a backoff of 100 to 400 ms.
private func makeSync(_ one: OnePhoto, remote: String, config: String = "/dev/null", log: LogRecorder) throws -> GallerySync {
    let cache = "\(one.dir)/cache"
    try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
    return GallerySync(config: GallerySync.Config(remote: remote, rcloneConfig: config, cacheDir: cache, stateDir: "\(one.dir)/state", photosDir: one.photos,
                                                  backoff: SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400), pollMilliseconds: 100),
                       indexPath: "\(one.dir)/index.sqlite", log: log.logger())
}

/// A booth with two pictures (sessions 1 and 2), its sync to a local folder started.
private func twoPicturesToAFolder() throws -> (one: OnePhoto, second: (token: String, path: String), remote: String, log: LogRecorder, sync: GallerySync) {
    guard access(rclone, X_OK) == 0 else { throw RcloneMissing() }
    let one = try OnePhoto(try OnePhoto.capture(), session: 1)
    let second = try addPicture(one, session: 2)
    let remote = "\(one.dir)/remote"
    let log = LogRecorder()
    let sync = try makeSync(one, remote: remote, log: log)
    #expect(sync.start())
    return (one, second, remote, log, sync)
}

/// `rclone serve webdav FOLDER` on 127.0.0.1:`port`, until `stop()`.
private final class WebDAVServer {
    let process = Process()
    init(folder: String, port: UInt16) throws {
        process.executableURL = URL(fileURLWithPath: rclone)
        process.arguments = ["serve", "webdav", folder, "--addr", "127.0.0.1:\(port)", "--config", "/dev/null", "-q"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try #require(waitUntil(10) { canConnect(port: port) }, "rclone serve webdav listening on \(port)")
    }
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

@Suite("gallery.sync_remote: each picture copied once with the real rclone, deletions followed, an away remote caught up", .serialized)
struct GallerySyncTests {
    @Test("the backoff: 2 s, doubled after each failure, at most 30 s (a remote back is noticed within 30 s); a remote's destination names")
    func backoffAndNames() {
        let b = SyncBackoff()
        #expect((1...7).map { b.delay(afterFailures: $0) } == [2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000])
        #expect(syncDestination(remote: "s3:photos/wedding", token: "abc") == "s3:photos/wedding/abc.jpg")
        #expect(syncDestination(remote: "s3:photos/wedding/", token: "abc") == "s3:photos/wedding/abc.jpg")
        #expect(syncDestination(remote: "drive:", token: "abc") == "drive:abc.jpg")
        #expect(syncDestination(remote: "/media/usb/", token: "abc") == "/media/usb/abc.jpg")
    }

    @Test("a local folder: every picture served arrives once as TOKEN.jpg with its bytes, a new one as it is indexed, one taken down is deleted there; a restart copies nothing again")
    func localFolder() throws {
        let (one, second, remote, log, sync) = try twoPicturesToAFolder()
        defer { one.remove() }
        #expect(waitUntil { names(remote).count == 2 && sync.stats.pending == 0 }, "\(log.all)")
        #expect(names(remote) == [one.token + ".jpg", second.token + ".jpg"].sorted())
        #expect(contents("\(remote)/\(one.token).jpg") == one.jpeg)
        #expect(contents("\(remote)/\(second.token).jpg") == contents(second.path))
        let third = try addPicture(one, session: 3)
        #expect(waitUntil { names(remote).contains(third.token + ".jpg") }, "\(log.all)")
        #expect(try one.index.remove(token: second.token, at: 900))
        #expect(waitUntil { !names(remote).contains(second.token + ".jpg") }, "\(log.all)")
        #expect(waitUntil { sync.stats.deleted == 1 })
        #expect(sync.stats.copied == 3, "each picture copied once")
        #expect(sync.stats.failures == 0)
        #expect(log.all.filter { $0.contains(" copied to \(remote)/") }.count == 3)
        #expect(log.all.contains { $0.contains("\(second.token).jpg deleted at \(remote) (taken down)") })
        sync.stop()

        // The next start: the ledger in gallery.state says what the remote has; nothing is copied again.
        let again = try makeSync(one, remote: remote, log: log)
        #expect(again.start())
        #expect(waitUntil { again.stats.passes >= 1 })
        #expect(again.stats.copied == 0 && again.stats.deleted == 0 && again.stats.pending == 0)
        again.stop()
        #expect(names(remote) == [one.token + ".jpg", third.token + ".jpg"].sorted())
    }

    @Test("the ledger lives in gallery.state: an older gallery's ledger in gallery.cache is moved there; the cache emptied while the gallery is stopped, a picture taken down meanwhile is still deleted at the remote")
    func ledgerInState() throws {
        guard access(rclone, X_OK) == 0 else { throw RcloneMissing() }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let second = try addPicture(one, session: 2)
        let remote = "\(one.dir)/remote"
        let log = LogRecorder()
        var settings = Settings.defaults
        settings.gallery.syncRemote = remote
        settings.gallery.syncConfig = "/dev/null"
        settings.gallery.cache = "\(one.dir)/cache"
        settings.gallery.state = "\(one.dir)/state"
        settings.storage.dir = one.photos
        func started() throws -> GallerySync {
            for dir in [settings.gallery.cache, settings.gallery.state] {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            }
            var config = GallerySync.Config(settings)
            config.backoff = SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400)
            config.pollMilliseconds = 100
            let sync = GallerySync(config: config, indexPath: "\(one.dir)/index.sqlite", log: log.logger())
            #expect(sync.start())
            return sync
        }
        // An older gallery copied both pictures and kept its ledger in the cache: the upgrade moves it, copies nothing again.
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: settings.gallery.cache, withIntermediateDirectories: true)
        try AtomicFile.write(one.jpeg, to: "\(remote)/\(one.token).jpg")
        try AtomicFile.write(try #require(contents(second.path)), to: "\(remote)/\(second.token).jpg")
        do {
            let old = try SyncLedger(path: "\(settings.gallery.cache)/sync.sqlite")
            try old.recordCopied(one.token, to: remote, at: 100)
            try old.recordCopied(second.token, to: remote, at: 100)
        }
        var sync = try started()
        #expect(waitUntil { sync.stats.passes >= 1 }, "\(log.all)")
        #expect(sync.stats.copied == 0 && sync.stats.pending == 0, "nothing copied again: \(sync.stats)")
        sync.stop()
        #expect(access("\(settings.gallery.state)/sync.sqlite", F_OK) == 0, "the ledger is in gallery.state: \(log.all)")
        #expect(access("\(settings.gallery.cache)/sync.sqlite", F_OK) != 0, "and no longer in the cache")

        // Stopped: the second picture taken down, the cache emptied. The next start deletes it at the remote.
        #expect(try one.index.remove(token: second.token, at: 900))
        try FileManager.default.removeItem(atPath: settings.gallery.cache)
        sync = try started()
        defer { sync.stop() }
        #expect(waitUntil { !names(remote).contains(second.token + ".jpg") }, "the taken-down picture stays at the remote: \(log.all)")
        #expect(names(remote) == [one.token + ".jpg"])
        #expect(sync.stats.copied == 0, "\(sync.stats)")
    }

    @Test("a remote that goes away: the true backlog (pictures not copied, removals not done), the last error and the last success in /health as photoboothctl asks it; an alert once it waits past gallery.sync_alert, another once it clears")
    func visibleBacklog() throws {
        guard access(rclone, X_OK) == 0 else { throw RcloneMissing() }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let second = try addPicture(one, session: 2)
        let remote = "\(one.dir)/remote"
        let log = LogRecorder()
        let alerts = Mutex<[(active: Bool, message: String)]>([])
        try FileManager.default.createDirectory(atPath: "\(one.dir)/cache", withIntermediateDirectories: true)
        var config = GallerySync.Config(remote: remote, rcloneConfig: "/dev/null", cacheDir: "\(one.dir)/cache", stateDir: "\(one.dir)/state",
                                        photosDir: one.photos, backoff: SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400), pollMilliseconds: 100)
        config.alertAfterMilliseconds = 3000
        func started() -> GallerySync {
            let sync = GallerySync(config: config, indexPath: "\(one.dir)/index.sqlite", log: log.logger(),
                                   alert: { active, message in alerts.withLock { $0.append((active, message)) } })
            #expect(sync.start())
            return sync
        }
        let server = GalleryServer(config: GalleryServer.Config(photosDir: one.photos, title: "t", downloadText: "d", missingText: "m"),
                                   index: try one.reader(), log: log.logger())
        let current = Mutex<GallerySync?>(nil)
        server.setHealthDetail { current.withLock { $0 }?.healthText() }
        let port = try server.startOnLoopback()
        defer { server.stop() }
        let health = GalleryProbe.healthURL(listen: "127.0.0.1", port: Int(port))
        func healthBody() -> String {
            if case let .answers(body) = GalleryProbe.ask(health) { return body }
            Issue.record("/health did not answer 200")
            return ""
        }

        var sync = started()
        current.withLock { $0 = sync }
        #expect(waitUntil { names(remote).count == 2 && sync.stats.pending == 0 }, "\(log.all)")
        let calm = healthBody()
        #expect(calm.hasPrefix("ok 2 pictures; sync to \(remote): caught up, last success "), "\(calm)")
        sync.stop()

        // While the gallery is stopped, the remote goes away (a file where its folder was), two pictures come
        // and one is taken down: the first failure counts all three.
        try FileManager.default.removeItem(atPath: remote)
        try AtomicFile.write([0], to: remote)
        try addPicture(one, session: 3)
        try addPicture(one, session: 4)
        #expect(try one.index.remove(token: second.token, at: 900))
        sync = started()
        current.withLock { $0 = sync }
        defer { sync.stop() }
        #expect(waitUntil { sync.stats.failures >= 2 }, "\(log.all)")
        #expect(sync.stats.pending == 2 && sync.stats.pendingRemovals == 1, "\(sync.stats)")
        #expect(log.all.contains { $0.contains("2 pictures not copied and 1 removal not done yet") }, "the true backlog logged: \(log.all)")
        let behind = healthBody()
        #expect(behind.hasPrefix("ok 3 pictures; sync to \(remote): behind since "), "\(behind)")
        #expect(behind.contains("2 pictures not copied, 1 removal not done"), "\(behind)")
        #expect(behind.contains("; last error: "), "\(behind)")
        #expect(behind.contains("; last success: none since the start"), "\(behind)")
        #expect(alerts.withLock { $0.isEmpty }, "not before gallery.sync_alert")

        // Past gallery.sync_alert (3 s here): one alert, with the backlog.
        #expect(waitUntil { alerts.withLock { $0.count } == 1 }, "\(log.all)")
        let began = try #require(alerts.withLock { $0.first })
        #expect(began.active)
        #expect(began.message.contains("2 pictures not copied, 1 removal not done"), "\(began.message)")
        usleep(500_000)
        #expect(alerts.withLock { $0.count } == 1, "once")

        // The remote back (an empty folder again): the two waiting pictures arrive, the removal is done, one
        // alert that it cleared, /health says so.
        try FileManager.default.removeItem(atPath: remote)
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        #expect(waitUntil { sync.stats.pending == 0 && sync.stats.pendingRemovals == 0 && names(remote).count == 2 }, "\(sync.stats) \(log.all)")
        #expect(waitUntil { alerts.withLock { $0.count } == 2 }, "\(log.all)")
        #expect(alerts.withLock { $0.last?.active } == false)
        #expect(healthBody().hasPrefix("ok 3 pictures; sync to \(remote): caught up, last success "))
    }

    @Test("sync-behind across a gallery restart: raised, the gallery restarted while the remote is away, then back: its end is sent (and no second start)")
    func behindAcrossRestart() throws {
        guard access(rclone, X_OK) == 0 else { throw RcloneMissing() }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let remote = "\(one.dir)/remote"
        try AtomicFile.write([0], to: remote)  // away: a file where its folder should be
        let log = LogRecorder()
        let alerts = Mutex<[Bool]>([])
        try FileManager.default.createDirectory(atPath: "\(one.dir)/cache", withIntermediateDirectories: true)
        var config = GallerySync.Config(remote: remote, rcloneConfig: "/dev/null", cacheDir: "\(one.dir)/cache", stateDir: "\(one.dir)/state",
                                        photosDir: one.photos, backoff: SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400), pollMilliseconds: 100)
        config.alertAfterMilliseconds = 500
        func started() -> GallerySync {
            let sync = GallerySync(config: config, indexPath: "\(one.dir)/index.sqlite", log: log.logger(),
                                   alert: { active, _ in alerts.withLock { $0.append(active) } })
            #expect(sync.start())
            return sync
        }
        var sync = started()
        #expect(waitUntil { alerts.withLock { $0 } == [true] }, "\(log.all)")
        sync.stop()
        // Restarted while still away: the alert stands, not raised again.
        sync = started()
        #expect(waitUntil { sync.stats.failures >= 3 }, "\(log.all)")
        usleep(1_000_000)
        #expect(alerts.withLock { $0 } == [true], "raised once across the restart: \(log.all)")
        #expect(sync.stats.behindSince != nil)
        sync.stop()
        // The remote back while the gallery is stopped: the next start catches up and says the alert ended.
        try FileManager.default.removeItem(atPath: remote)
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        sync = started()
        defer { sync.stop() }
        #expect(waitUntil { names(remote).count == 1 }, "\(log.all)")
        #expect(waitUntil { alerts.withLock { $0 } == [true, false] }, "the end of sync-behind after a restart: \(alerts.withLock { $0 }) \(log.all)")
        #expect(sync.stats.behindSince == nil)
    }

    @Test("a ledger that cannot be opened (gallery.state a file, not a folder): /health says the sync is not copying and why, not 'caught up'")
    func ledgerUnopenedIsNoCatchUp() throws {
        guard access(rclone, X_OK) == 0 else { throw RcloneMissing() }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        try AtomicFile.write([0], to: "\(one.dir)/state")
        let remote = "\(one.dir)/remote"
        let log = LogRecorder()
        let sync = try makeSync(one, remote: remote, log: log)
        #expect(sync.start())
        defer { sync.stop() }
        #expect(waitUntil { log.all.contains { $0.contains("sync: ") && $0.contains("\(one.dir)/state") && $0.hasPrefix("<3>") } }, "\(log.all)")
        usleep(300_000)
        let text = sync.healthText()
        #expect(!text.contains("caught up"), "\(text)")
        #expect(text.contains("not copying") && text.contains("\(one.dir)/state"), "\(text)")
        #expect(names(remote).isEmpty)
    }

    @Test("a picture whose file is gone (a cancelled series' capture) holds no other: not copied, and deleted at the remote; a copy removed there by hand, then taken down, is no failure")
    func goneFilesHoldNothing() throws {
        let (one, second, remote, log, sync) = try twoPicturesToAFolder()
        defer { one.remove() }
        defer { sync.stop() }
        // Recorded, not only there: rclone writes the file before it checks it.
        #expect(waitUntil { sync.stats.copied == 2 && names(remote).count == 2 }, "\(log.all)")
        // The second picture's file deleted on the booth, then a third picture: it arrives; the second's copy goes.
        unlink(second.path)
        let third = try addPicture(one, session: 3)
        #expect(waitUntil { names(remote) == [one.token + ".jpg", third.token + ".jpg"].sorted() }, "\(log.all)")
        #expect(log.all.contains { $0.contains("is indexed but its file is gone; not copied") })
        // The first picture's copy removed at the remote by hand, then the picture taken down: deleted, no failure.
        unlink("\(remote)/\(one.token).jpg")
        #expect(try one.index.remove(token: one.token, at: 900))
        #expect(waitUntil { sync.stats.deleted == 2 }, "\(sync.stats) \(log.all)")
        #expect(sync.stats.failures == 0, "\(String(describing: sync.stats.lastError))")
        #expect(names(remote) == [third.token + ".jpg"])
    }

    @Test("a WebDAV server on loopback (rclone serve webdav): away at the start, the pictures wait and are tried with backoff; back, they arrive once; away and back again, caught up")
    func awayRemoteCatchesUp() throws {
        guard access(rclone, X_OK) == 0 else { throw RcloneMissing() }
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        try addPicture(one, session: 2)
        let port = try freePort()
        let conf = "\(one.dir)/rclone.conf"
        try "[dav]\ntype = webdav\nurl = http://127.0.0.1:\(port)/\nvendor = other\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let served = "\(one.dir)/webdav"
        try FileManager.default.createDirectory(atPath: "\(served)/event", withIntermediateDirectories: true)
        let log = LogRecorder()
        let sync = try makeSync(one, remote: "dav:event", config: conf, log: log)
        #expect(sync.start())
        defer { sync.stop() }
        // Nobody listens: failures, with backoff, the pictures still pending.
        #expect(waitUntil { sync.stats.failures >= 3 }, "\(log.all)")
        #expect(sync.stats.copied == 0 && sync.stats.pending == 2)
        #expect(sync.stats.lastError?.contains("rclone exited") == true, "\(String(describing: sync.stats.lastError))")
        #expect(log.all.filter { $0.contains("not done yet, kept here and tried again with backoff") }.count == 1, "said once: \(log.all)")

        var server = try WebDAVServer(folder: served, port: port)
        #expect(waitUntil { names("\(served)/event").count == 2 && sync.stats.pending == 0 }, "\(log.all)")
        #expect(log.all.contains { $0.contains("dav:event answers again after") })
        let third = try addPicture(one, session: 3)
        #expect(waitUntil { sync.stats.copied == 3 && names("\(served)/event").contains(third.token + ".jpg") }, "\(log.all)")
        server.stop()
        let fourth = try addPicture(one, session: 4)
        let failed = sync.stats.failures
        #expect(waitUntil { sync.stats.failures > failed }, "\(log.all)")
        server = try WebDAVServer(folder: served, port: port)
        defer { server.stop() }
        #expect(waitUntil { sync.stats.copied == 4 && names("\(served)/event").contains(fourth.token + ".jpg") }, "each of the 4 pictures copied once: \(sync.stats) \(log.all)")
        #expect(names("\(served)/event").count == 4)
        #expect(contents("\(served)/event/\(fourth.token).jpg") == contents("\(one.photos)/2026-12-01/\(PhotoFileName.name(session: 4, shot: 0))"))
    }

    @Test("two booths on one remote: the same file names at each booth, two secrets, so four distinct TOKEN.jpg there, each its booth's bytes")
    func twoBoothsOneRemote() throws {
        guard access(rclone, X_OK) == 0 else { throw RcloneMissing() }
        let a = try OnePhoto(try OnePhoto.capture(), session: 1, secret: 3)
        defer { a.remove() }
        let b = try OnePhoto(try OnePhoto.capture() + [1, 2, 3], session: 1, secret: 4)
        defer { b.remove() }
        let a2 = try addPicture(a, session: 2, secret: 3)
        let b2 = try addPicture(b, session: 2, secret: 4)
        let shared = "\(a.dir)/event-remote"
        let log = LogRecorder()
        let syncA = try makeSync(a, remote: shared, log: log), syncB = try makeSync(b, remote: shared, log: log)
        #expect(syncA.start() && syncB.start())
        defer { syncA.stop(); syncB.stop() }
        #expect(waitUntil { syncA.stats.copied == 2 && syncB.stats.copied == 2 && names(shared).count == 4 }, "\(syncA.stats) \(syncB.stats) \(log.all)")
        #expect(Set(names(shared)) == Set([a.token, a2.token, b.token, b2.token].map { $0 + ".jpg" }))
        #expect(contents("\(shared)/\(a.token).jpg") == a.jpeg)
        #expect(contents("\(shared)/\(b.token).jpg") == b.jpeg)
        #expect(contents("\(shared)/\(b2.token).jpg") == contents(b2.path))
    }
}
