import BoothPrint
import Foundation
import Testing

/// Inputs that crashed a fuzzer (fuzz/run journal), kept so the fix stays: each must now be refused by
/// `PrintJournal.decode` (the print worker then moves the file aside and starts a new journal) instead of
/// trapping later.
@Suite struct JournalFuzzRegressionTests {
    /// fuzz/run journal: a completed job of Int.max copies overflowed `reconcile`'s paper count.
    static let copiesAtIntMax = #"{"nextID":2,"requests":[{"copies":9223372036854775807,"file":"/a.jpg","id":1,"jobID":12,"media":"4x6","requestedAt":1,"source":"s","state":"submitted","title":"t"}],"sheetsRemaining":-2,"tag":"x"}"#
    /// fuzz/run journal: `nextID` at Int.max overflowed the next `add`.
    static let nextIDAtIntMax = #"{"nextID":9223372036854775807,"requests":[],"tag":"x"}"#

    func refused(_ text: String) -> Bool {
        do {
            _ = try PrintJournal.decode(Data(text.utf8))
            return false
        } catch is PrintJournalError {
            return true
        } catch {
            return false
        }
    }

    @Test func outOfRangeJournalsAreRefused() {
        #expect(refused(Self.copiesAtIntMax))
        #expect(refused(Self.nextIDAtIntMax))
        #expect(refused(#"{"nextID":0,"requests":[],"tag":"x"}"#))
        #expect(refused(#"{"nextID":2,"requests":[],"sheetsRemaining":-1,"tag":"x"}"#))
        let request = #"{"copies":COPIES,"file":"/a.jpg","id":ID,"media":"4x6","requestedAt":1,"source":"s","state":"held","title":"t"}"#
        func journal(copies: Int, id: Int) -> String {
            #"{"nextID":5,"requests":["# + request.replacingOccurrences(of: "COPIES", with: "\(copies)")
                .replacingOccurrences(of: "ID", with: "\(id)") + #"],"tag":"x"}"#
        }
        #expect(refused(journal(copies: 0, id: 1)))
        #expect(refused(journal(copies: PrintJournal.maxCopies + 1, id: 1)))
        #expect(refused(journal(copies: 1, id: 0)))
        #expect(refused(journal(copies: 1, id: 5)), "an id at or above nextID would be handed out again")
        #expect(!refused(journal(copies: PrintJournal.maxCopies, id: 4)))
    }

    @Test func aJournalAtTheLimitsCountsOnWithoutOverflow() throws {
        let text = #"{"nextID":2147483647,"requests":[{"copies":10,"file":"/a.jpg","id":2147483646,"jobID":12,"media":"4x6","requestedAt":1,"source":"s","state":"submitted","title":"t"}],"sheetsRemaining":9223372036854775807,"tag":"x"}"#
        var journal = try PrintJournal.decode(Data(text.utf8))
        let changes = journal.reconcile(jobs: [CUPSJob(id: 12, state: .completed, title: "t")], sheetsPerCopy: 10, now: 2)
        #expect(changes.count == 1)
        #expect(journal.sheetsRemaining == Int.max - 100, "10 copies (print.copies' most) × 10 sheets")
        #expect(journal.add(captureID: nil, source: "s", file: "/b.jpg", copies: 1, media: "4x6", now: 3).id == 2147483647)
    }
}
