import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Testing
@testable import BoothStorage

/// Inputs that crashed a fuzzer (fuzz/run stats), kept so the fix stays: each must now be handled without a trap.
@Suite struct StatsFuzzRegressionTests {
    /// fuzz/run stats: a totals file at the edge of Int made `reconcile` and `record` overflow (a trap at start,
    /// or at the first session after it).
    static let sessionsAtIntMax = Array(#"{"cancelled":1,"captures":40,"completed":9,"failed":0,"faults":2,"lastSession":11,"sessions":9223372036854775807,"since":1790000000}"#.utf8)

    @Test func implausibleTotalsAreNotTrusted() {
        #expect(StatsStore.decode(Self.sessionsAtIntMax) == nil)
        for field in ["sessions", "completed", "cancelled", "failed", "captures", "faults"] {
            for value in ["-1", "1000000000001", "9223372036854775807"] {
                let text = #"{"cancelled":0,"captures":0,"completed":0,"failed":0,"faults":0,"lastSession":1,"sessions":0,"since":5}"#
                    .replacingOccurrences(of: "\"\(field)\":0", with: "\"\(field)\":\(value)")
                #expect(StatsStore.decode(Array(text.utf8)) == nil, "\(field) = \(value)")
            }
        }
        let lastSessionTooHigh = #"{"cancelled":0,"captures":0,"completed":0,"failed":0,"faults":0,"lastSession":1000000000,"sessions":0,"since":5}"#
        #expect(StatsStore.decode(Array(lastSessionTooHigh.utf8)) == nil)
        let negativeSince = #"{"cancelled":0,"captures":0,"completed":0,"failed":0,"faults":0,"lastSession":1,"sessions":0,"since":-5}"#
        #expect(StatsStore.decode(Array(negativeSince.utf8)) == nil)
        let good = #"{"cancelled":1,"captures":40,"completed":9,"failed":0,"faults":2,"lastSession":11,"sessions":10,"since":1790000000}"#
        #expect(StatsStore.decode(Array(good.utf8))?.sessions == 10)
    }

    @Test func anImplausibleFileIsRebuiltFromThePhotosAndCountedOn() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try makeDirectories("\(dir)/2026-11-29")
        try AtomicFile.write([0xFF, 0xD8, 0xFF, 0xD9], to: "\(dir)/2026-11-29/booth-000003-1.jpg")
        try AtomicFile.write(Self.sessionsAtIntMax, to: "\(dir)/\(StatsStore.fileName)")
        let store = StatsStore(directory: dir, log: LogRecorder().logger(), now: { 1000 })
        store.open(scanning: dir)
        #expect(store.current.sessions == 1, "rebuilt from the one photo")
        #expect(store.current.lastSession == 3)
        var c = BoothCounters()
        c.sessions = 1; c.completed = 1; c.captures = 1
        store.record(c, highestSession: 4)
        store.finish()
        #expect(store.current.sessions == 2)
    }
}
