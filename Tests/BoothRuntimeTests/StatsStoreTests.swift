import BoothCore
import BoothPorts
import Foundation
import Glibc
import Testing
@testable import BoothRuntime
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
