import BoothCore
import Testing
@testable import BoothCamera

// The camera's drop tally (DroppedFrames.swift) and its rate-limited log line.

@Suite struct DroppedFrameTallyTests {
    private func at(_ ms: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }

    @Test func firstDropIsLoggedAtOnceThenAtMostEveryTenSeconds() {
        var tally = DroppedFrameTally()
        #expect(tally.update([:], at: at(0)) == nil)
        #expect(tally.update([.empty: 1], at: at(100)) == "camera: dropped 1 bad frame (1 empty); 1 since start")
        // 30 bad frames a second for 9.9 s: no line.
        var lines: [String] = []
        for i in 1...297 {
            if let l = tally.update([.empty: 1 + i / 3, .missingEndOfImage: i - i / 3], at: at(100 + UInt64(i) * 33)) { lines.append(l) }
        }
        #expect(lines.isEmpty)
        let line = tally.update([.empty: 100, .missingEndOfImage: 198], at: at(10_100))
        #expect(line == "camera: dropped 297 bad frames (198 no-eoi, 99 empty) in the last 10 s; 298 since start")
        // Nothing new: nothing to say, however long it has been.
        #expect(tally.update([.empty: 100, .missingEndOfImage: 198], at: at(60_000)) == nil)
        #expect(tally.total == [.empty: 100, .missingEndOfImage: 198])
    }

    /// The device's counters restart with each stream; the tally keeps counting since the daemon started.
    @Test func totalsSurviveStreamRestarts() {
        var tally = DroppedFrameTally()
        _ = tally.update([.missingStartOfImage: 3], at: at(0))
        tally.streamStarted()
        _ = tally.update([.missingStartOfImage: 1, .wholeBufferAfterStreamOn: 1], at: at(20_000))
        #expect(tally.total == [.missingStartOfImage: 4, .wholeBufferAfterStreamOn: 1])
        #expect(tally.totalCount == 5)
        // Lost frames (sequence gaps) add up across streams the same way.
        _ = tally.update([:], lostFrames: 2, at: at(20_100))
        tally.streamStarted()
        _ = tally.update([:], lostFrames: 3, at: at(20_200))
        #expect(tally.lost == 5)
    }

    @Test func dropsSinceTheLastGoodFrame() {
        var tally = DroppedFrameTally()
        _ = tally.update([.empty: 2], at: at(0))
        #expect(tally.sinceGoodFrame == [.empty: 2])
        tally.goodFrame()
        #expect(tally.sinceGoodFrame.isEmpty)
        _ = tally.update([.empty: 3], at: at(10))
        #expect(tally.sinceGoodFrame == [.empty: 1])
        #expect(DroppedFrameTally.summary([.empty: 1, .missingEndOfImage: 4, .missingStartOfImage: 1]) == "4 no-eoi, 1 empty, 1 no-soi")
    }
}
