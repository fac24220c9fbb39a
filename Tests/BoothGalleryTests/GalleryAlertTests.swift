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

// gallery.alert_url: the rows the daemon records in the index, POSTed by photobooth-gallery's
// AlertSender to a real HTTP listener on loopback (python3's http.server: webhook-listener.py).

/// The listener: every POST it answered 200, parsed, oldest first; `failing` makes it answer 500.
private final class Listener {
    let process = Process()
    let out: String, failFlag: String
    let port: UInt16
    init(dir: String, port: UInt16) throws {
        self.port = port
        out = "\(dir)/posts.jsonl"
        failFlag = "\(dir)/fail"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("webhook-listener.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "\(port)", out, failFlag]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try #require(waitUntil(10) { canConnect(port: port) }, "the webhook listener on \(port)")
    }
    var posts: [AlertPayload] {
        guard let data = FileManager.default.contents(atPath: out) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONDecoder().decode(AlertPayload.self, from: Data($0.utf8))
        }
    }
    var failing: Bool {
        get { access(failFlag, F_OK) == 0 }
        set { if newValue { _ = FileManager.default.createFile(atPath: failFlag, contents: nil) } else { unlink(failFlag) } }
    }
    /// SIGKILL: a child of a test's thread (libdispatch's, signals blocked) would keep SIGTERM pending.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

private func sender(_ one: OnePhoto, port: UInt16, intervalMilliseconds: Int64, log: LogRecorder) -> AlertSender {
    AlertSender(config: AlertSender.Config(url: "http://127.0.0.1:\(port)/hook", intervalMilliseconds: intervalMilliseconds,
                                           cacheDir: "\(one.dir)/cache", stateDir: "\(one.dir)/state", booth: "booth-a",
                                           backoff: SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400), pollMilliseconds: 50),
                indexPath: "\(one.dir)/index.sqlite", log: log.logger())
}

@Suite("gallery.alert_url: each change once to a real HTTP listener on loopback, rate limited, none lost across a restart", .serialized)
struct GalleryAlertTests {
    @Test("a change is POSTed once; changes within gallery.alert_interval go together in the next POST; a test alert goes at once; a 500 or no listener is retried; a restart loses and repeats nothing")
    func alerts() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        try FileManager.default.createDirectory(atPath: "\(one.dir)/cache", withIntermediateDirectories: true)
        // Begun and ended before the first start: not sent (the first start sends the conditions active then and what comes after it).
        try one.index.recordAlert("paper-low", active: true, message: "old news", at: 100)
        try one.index.recordAlert("paper-low", active: false, message: "cleared (it was: old news)", at: 101)
        let port = try freePort()
        var listener = try Listener(dir: one.dir, port: port)
        let log = LogRecorder()
        var s = sender(one, port: port, intervalMilliseconds: 1500, log: log)
        #expect(s.start())
        #expect(waitUntil { log.all.contains { $0.contains("alerts: to http://127.0.0.1:\(port)/hook, the changes from now on") } }, "\(log.all)")

        try one.index.recordAlert("fault:camera", active: true, message: "the camera is gone (/dev/video0 unplugged)", at: 200)
        #expect(waitUntil { listener.posts.count == 1 }, "\(log.all)")
        let first = try #require(listener.posts.first)
        #expect(first.booth == "booth-a")
        #expect(first.alerts.map(\.condition) == ["fault:camera"])
        #expect(first.alerts.first?.active == true)
        #expect(first.text == "booth-a: fault:camera began: the camera is gone (/dev/video0 unplugged)")
        let firstAt = Date()

        // Two changes right after: held back by the interval, then one POST with both.
        try one.index.recordAlert("fault:camera", active: false, message: "cleared (it was: the camera is gone)", at: 201)
        try one.index.recordAlert("storage-low", active: true, message: "900 MB free", at: 202)
        #expect(waitUntil { listener.posts.count == 2 }, "\(log.all)")
        #expect(Date().timeIntervalSince(firstAt) >= 1.3, "not before gallery.alert_interval")
        #expect(listener.posts[1].alerts.map(\.condition) == ["fault:camera", "storage-low"])
        #expect(listener.posts[1].alerts.map(\.active) == [false, true])

        // A test alert is not held back.
        let tested = Date()
        try one.index.recordAlert("test", active: true, message: "a test alert", at: 203)
        #expect(waitUntil { listener.posts.count == 3 }, "\(log.all)")
        #expect(Date().timeIntervalSince(tested) < 1.0, "a test alert goes at once")
        #expect(listener.posts[2].text == "booth-a: test alert: a test alert")

        // The listener answers 500: kept and retried; answering again, sent once.
        listener.failing = true
        try one.index.recordAlert("paper-out", active: true, message: "the printer is out of paper", at: 300)
        #expect(waitUntil { s.stats.failures >= 2 }, "\(log.all)")
        #expect(s.stats.lastError == "answered 500")
        #expect(log.all.filter { $0.contains("kept, tried again with backoff") }.count == 1)
        listener.failing = false
        #expect(waitUntil { listener.posts.count == 4 }, "\(log.all)")
        #expect(listener.posts[3].alerts.map(\.condition) == ["paper-out"])

        // The gallery stops and the listener is gone; a change meanwhile; both back: sent once, nothing repeated.
        s.stop()
        listener.stop()
        try one.index.recordAlert("paper-out", active: false, message: "cleared (it was: the printer is out of paper)", at: 400)
        s = sender(one, port: port, intervalMilliseconds: 1500, log: log)
        #expect(s.start())
        #expect(waitUntil { s.stats.failures >= 1 }, "no listener: \(log.all)")
        listener = try Listener(dir: one.dir, port: port)
        defer { listener.stop(); s.stop() }
        #expect(waitUntil { listener.posts.count == 5 }, "\(log.all)")
        #expect(listener.posts[4].alerts.map(\.condition) == ["paper-out"])
        #expect(listener.posts[4].alerts.map(\.active) == [false])
        usleep(600_000)
        let ids = listener.posts.flatMap { $0.alerts.map(\.id) }
        #expect(ids == Array(3...8), "each alert once, in order, the ones before the first start not sent: \(ids)")
    }

    @Test("the cursor lives in gallery.state: a first start announces the conditions active then; a change while the gallery is stopped and its cache emptied is still sent; an older gallery's cursor in the cache is moved there")
    func cursorInStateAndFirstStart() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        try one.index.recordAlert("paper-low", active: true, message: "old news", at: 100)
        try one.index.recordAlert("paper-low", active: false, message: "cleared (it was: old news)", at: 101)
        try one.index.recordAlert("fault:storage", active: true, message: "the stick is gone", at: 102)
        let port = try freePort()
        let listener = try Listener(dir: one.dir, port: port)
        defer { listener.stop() }
        let log = LogRecorder()
        var settings = Settings.defaults
        settings.gallery.alertURL = "http://127.0.0.1:\(port)/hook"
        settings.gallery.cache = "\(one.dir)/cache"
        settings.gallery.state = "\(one.dir)/state"
        func started() throws -> AlertSender {
            for dir in [settings.gallery.cache, settings.gallery.state] {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            }
            var config = AlertSender.Config(settings)
            config.booth = "booth-a"
            config.intervalMilliseconds = 100
            config.backoff = SyncBackoff(firstMilliseconds: 100, maxMilliseconds: 400)
            config.pollMilliseconds = 50
            let s = AlertSender(config: config, indexPath: "\(one.dir)/index.sqlite", log: log.logger())
            #expect(s.start())
            return s
        }
        // The first start, a fault active: it is announced (the ended paper-low is not).
        var s = try started()
        #expect(waitUntil { listener.posts.count == 1 }, "the active fault is not announced: \(log.all)")
        #expect(listener.posts.first?.alerts.map(\.condition) == ["fault:storage"])
        #expect(listener.posts.first?.text == "booth-a: fault:storage began: the stick is gone")
        s.stop()

        // Stopped: a fault begins; the cache is emptied. The next start sends it, and only it.
        try one.index.recordAlert("fault:camera", active: true, message: "the camera is gone", at: 200)
        try FileManager.default.removeItem(atPath: settings.gallery.cache)
        s = try started()
        #expect(waitUntil { listener.posts.count == 2 }, "the change recorded while stopped is lost: \(log.all)")
        #expect(listener.posts.last?.alerts.map(\.condition) == ["fault:camera"])
        usleep(400_000)
        s.stop()
        #expect(listener.posts.count == 2, "nothing sent twice")

        // An older gallery's cursor (at the last alert sent) in the cache: moved to gallery.state, nothing sent twice.
        try FileManager.default.removeItem(atPath: settings.gallery.state)
        try AtomicFile.write(Array("4\n".utf8), to: "\(settings.gallery.cache)/alerts-cursor")
        try one.index.recordAlert("fault:camera", active: false, message: "cleared (it was: the camera is gone)", at: 300)
        s = try started()
        defer { s.stop() }
        #expect(waitUntil { listener.posts.count == 3 }, "\(log.all)")
        #expect(listener.posts.last?.alerts.map(\.id) == [5])
        #expect(waitUntil { access("\(settings.gallery.state)/alerts-cursor", F_OK) == 0 }, "the cursor is in gallery.state: \(log.all)")
        #expect(access("\(settings.gallery.cache)/alerts-cursor", F_OK) != 0, "and no longer in the cache")
        let ids = listener.posts.flatMap { $0.alerts.map(\.id) }
        #expect(ids == [3, 4, 5], "each alert once: \(ids)")
    }

    @Test("the gallery's own alerts (sync-behind) go to the webhook with the daemon's, and are retried the same way")
    func galleryOwnAlerts() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let port = try freePort()
        let listener = try Listener(dir: one.dir, port: port)
        defer { listener.stop() }
        let log = LogRecorder()
        let s = sender(one, port: port, intervalMilliseconds: 100, log: log)
        #expect(s.start())
        defer { s.stop() }
        #expect(waitUntil { log.all.contains { $0.contains("the changes from now on") } }, "\(log.all)")
        listener.failing = true
        s.raise("sync-behind", active: true, message: "sync to dav:event behind for 10 min: 3 pictures not copied")
        #expect(waitUntil { s.stats.failures >= 1 }, "\(log.all)")
        listener.failing = false
        #expect(waitUntil { listener.posts.count == 1 }, "\(log.all)")
        #expect(listener.posts.first?.text == "booth-a: sync-behind began: sync to dav:event behind for 10 min: 3 pictures not copied")
        try one.index.recordAlert("fault:camera", active: true, message: "gone", at: 200)
        s.raise("sync-behind", active: false, message: "caught up")
        #expect(waitUntil { listener.posts.count == 2 }, "\(log.all)")
        #expect(listener.posts.last?.alerts.map(\.condition).sorted() == ["fault:camera", "sync-behind"])
        usleep(400_000)
        #expect(listener.posts.count == 2, "each once")
    }

    @Test("the gallery's own alert not POSTed yet when it stops (the webhook away) is sent after its restart, once")
    func ownAlertsKeptAcrossARestart() throws {
        let one = try OnePhoto(try OnePhoto.capture(), session: 1)
        defer { one.remove() }
        let port = try freePort()
        let listener = try Listener(dir: one.dir, port: port)
        defer { listener.stop() }
        let log = LogRecorder()
        var s = sender(one, port: port, intervalMilliseconds: 100, log: log)
        #expect(s.start())
        #expect(waitUntil { log.all.contains { $0.contains("the changes from now on") } }, "\(log.all)")
        listener.failing = true
        s.raise("sync-behind", active: false, message: "sync to dav:event caught up")
        #expect(waitUntil { s.stats.failures >= 1 }, "\(log.all)")
        s.stop()
        listener.failing = false
        s = sender(one, port: port, intervalMilliseconds: 100, log: log)
        #expect(s.start())
        defer { s.stop() }
        #expect(waitUntil(10) { listener.posts.count == 1 }, "the end of sync-behind lost with the restart: \(log.all)")
        #expect(listener.posts.first?.alerts.map(\.condition) == ["sync-behind"])
        #expect(listener.posts.first?.alerts.first?.active == false)
        usleep(400_000)
        #expect(listener.posts.count == 1, "once")
    }
}
