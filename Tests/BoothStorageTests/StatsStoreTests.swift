import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing
@testable import BoothStorage

@Suite struct StatsStoreTests {
    func photo(_ dir: String, _ folder: String, _ name: String) throws {
        try makeDirectories("\(dir)/\(folder)")
        try AtomicFile.write([0xFF, 0xD8, 0xFF, 0xD9], to: "\(dir)/\(folder)/\(name)")
    }

    @Test func reconcileAddsOnlySessionsAfterTheLastCounted() {
        var stats = BoothStats(since: 100)
        stats.sessions = 10; stats.completed = 8; stats.captures = 9; stats.lastSession = 10
        let photos = [(session: 9, name: "booth-000009-1.jpg"), (11, "booth-000011-1.jpg"), (12, "booth-000012-1.jpg"),
                      (12, "booth-000012-2.jpg")]
        #expect(StatsStore.reconcile(&stats, photos: photos) == 2)
        #expect(stats.sessions == 12)
        #expect(stats.completed == 10)
        #expect(stats.captures == 12)
        #expect(stats.lastSession == 12)
        #expect(StatsStore.reconcile(&stats, photos: photos) == 0, "a second pass adds nothing")
    }

    @Test("a capture of the last counted session saved after the totals' last write (a power cut) is added once")
    func reconcileAddsCapturesOfTheLastSessionTheTotalsMissed() {
        var stats = BoothStats(since: 100)
        var counters = BoothCounters()
        counters.sessions = 2; counters.captures = 3
        stats.add(counters, since: BoothCounters(), highestSession: 3)   // session 3's captures saved
        var begun = counters
        begun.sessions = 3
        stats.add(begun, since: counters, highestSession: 3)              // session 4 begins: nothing saved yet
        #expect(stats.lastSession == 3)
        var more = begun
        more.captures = 4
        stats.add(more, since: begun, highestSession: 4)                  // session 4's first capture is saved
        #expect(stats.captures == 4 && stats.lastSession == 4 && stats.capturesBeforeLastSession == 3)
        // On disk: session 4 has two captures, the second saved after the totals above were written.
        let photos = [(session: 3, name: "booth-000003-1.jpg"), (4, "booth-000004-1.jpg"), (4, "booth-000004-2.jpg")]
        #expect(StatsStore.uncountedCapturesOfLastSession(stats, photos: photos) == 1)
        #expect(StatsStore.reconcile(&stats, photos: photos) == 0, "no new session")
        #expect(stats.captures == 5)
        #expect(StatsStore.reconcile(&stats, photos: photos) == 0)
        #expect(stats.captures == 5, "a second pass adds nothing")
        // Fewer on disk than counted (a cancelled series deleted): nothing is taken away.
        var deleted = stats
        #expect(StatsStore.reconcile(&deleted, photos: [(session: 4, name: "booth-000004-1.jpg")]) == 0)
        #expect(deleted.captures == 5)
        // Not known (a file from before the field, or a reset in the session): the last session is left as counted.
        var old = stats
        old.capturesBeforeLastSession = nil
        _ = StatsStore.reconcile(&old, photos: photos + [(4, "booth-000004-3.jpg")])
        #expect(old.captures == 5)
        // Sessions found after lastSession move it on, and what was counted before the highest of them is kept.
        var later = stats
        _ = StatsStore.reconcile(&later, photos: photos + [(5, "booth-000005-1.jpg"), (6, "booth-000006-1.jpg")])
        #expect(later.lastSession == 6 && later.captures == 7 && later.capturesBeforeLastSession == 6)
    }

    @Test("capturesBeforeLastSession survives the JSON file; a file without it decodes as not known")
    func capturesBeforeLastSessionRoundTrips() throws {
        var stats = BoothStats(since: 7)
        stats.lastSession = 9; stats.captures = 20; stats.capturesBeforeLastSession = 18
        let bytes = try AtomicFile.jsonEncoder().encode(stats)
        #expect(StatsStore.decode(Array(bytes)) == stats)
        let older = Array(#"{"cancelled":0,"captures":20,"completed":9,"failed":0,"faults":0,"lastSession":9,"sessions":9,"since":7}"#.utf8)
        #expect(StatsStore.decode(older)?.capturesBeforeLastSession == nil)
        #expect(StatsStore.decode(older)?.captures == 20)
    }

    @Test func missingFileIsRebuiltFromThePhotosAndTotalsPersistAcrossRestarts() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try photo(dir, "2026-11-28", "booth-000001-1.jpg")
        try photo(dir, "2026-11-29", "booth-000002-1.jpg")
        try photo(dir, "not-a-date", "booth-000099-1.jpg")
        let log = LogRecorder()
        let first = StatsStore(directory: dir, log: log.logger(), now: { 1000 })
        first.open(scanning: dir)
        #expect(first.current.sessions == 2)
        #expect(first.current.captures == 2)
        #expect(first.current.since == 1000)
        // One more session in this run: counters since start, as the runtime keeps them.
        var c = BoothCounters()
        c.sessions = 1; c.completed = 1; c.captures = 1
        first.record(c, highestSession: 3)
        c.sessions = 2; c.cancelled = 1
        first.record(c, highestSession: 4)
        first.finish()
        let saved = try JSONDecoder().decode(BoothStats.self, from: Data(try AtomicFile.read(first.path)))
        #expect(saved.sessions == 4)
        #expect(saved.completed == 3)
        #expect(saved.cancelled == 1)
        #expect(saved.lastSession == 4)
        // A restart after a crash: session 5's photo was saved but the totals were not written.
        try photo(dir, "2026-11-29", "booth-000005-1.jpg")
        let second = StatsStore(directory: dir, log: log.logger(), now: { 2000 })
        second.open(scanning: dir)
        #expect(second.current.sessions == 5)
        #expect(second.current.captures == 4)
        #expect(second.current.since == 1000, "since survives a restart")
        let old = second.reset()
        #expect(old.sessions == 5)
        second.finish()
        let afterReset = try JSONDecoder().decode(BoothStats.self, from: Data(try AtomicFile.read(second.path)))
        #expect(afterReset.sessions == 0)
        #expect(afterReset.since == 2000)
        #expect(afterReset.lastSession == 5, "photos counted before the reset are not counted again")
    }

    @Test func unreadableFileIsRebuilt() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try photo(dir, "2026-11-29", "booth-000007-1.jpg")
        try AtomicFile.write(Array("{not json".utf8), to: "\(dir)/\(StatsStore.fileName)", replace: true)
        let log = LogRecorder()
        let store = StatsStore(directory: dir, log: log.logger(), now: { 5 })
        store.open(scanning: dir)
        store.finish()
        #expect(store.current.sessions == 1)
        #expect(log.all.contains { $0.contains("unreadable, rebuilt from the photos") })
    }
}

/// BoothStats holds the one ``BoothCounters``; its file keeps the flat form earlier daemons wrote.
@Suite struct StatsCountersTests {
    @Test("a stats file of the flat form reads into the counters, and is written back in the same form")
    func theFileStaysFlat() throws {
        let old = #"{"cancelled":2,"captures":17,"completed":9,"failed":1,"faults":3,"lastSession":12,"sessions":12,"since":1796000000}"#
        let stats = try #require(StatsStore.decode(Array(old.utf8)))
        var expected = BoothCounters()
        expected.sessions = 12; expected.completed = 9; expected.cancelled = 2
        expected.failed = 1; expected.captures = 17; expected.faults = 3
        #expect(stats.counters == expected)
        #expect(stats.sessions == 12 && stats.since == 1_796_000_000 && stats.lastSession == 12)
        let written = String(decoding: try AtomicFile.jsonEncoder(pretty: false).encode(stats), as: UTF8.self)
        #expect(written == old)
    }

    @Test("adding the runtime's counts since start: each of the six counts moves by its own difference")
    func addingMovesEachCountByItsOwn() {
        var totals = BoothStats(since: 0)
        var then = BoothCounters(), now = BoothCounters()
        for (i, k) in BoothCounters.all.enumerated() { then[keyPath: k] = i; now[keyPath: k] = 10 * (i + 1) }
        totals.add(now, since: then, highestSession: 7)
        #expect(BoothCounters.all.map { totals.counters[keyPath: $0] } == [10, 19, 28, 37, 46, 55])
        #expect(totals.lastSession == 7)
    }
}
