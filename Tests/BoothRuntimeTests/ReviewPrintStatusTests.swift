import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Testing
@testable import BoothRuntime

// The review screen's print status: the runtime shows the review with the print worker's text for
// that picture and shows it again when the print state changes while the review is up. The print
// destination does not exist (no CUPS needed): the request is held with the printer unavailable.

@Suite("Review screen print status")
struct ReviewPrintStatusTests {
    @Test("a print state change during review re-shows the review with the new text, once per change")
    func printStateChangeRedrawsReview() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.reviewMilliseconds = 60_000
        settings.print.mode = .press
        settings.print.destination = "photobooth-test-no-such-queue"
        settings.print.media = "na_index-4x6_4x6in"
        settings.print.dpi = 20
        settings.print.pollIntervalMilliseconds = 100
        settings.print.backlogMaxAgeMilliseconds = 900_000
        settings.print.journal = "\(dir)/print-journal.json"
        settings.print.spool = "\(dir)/prints"
        let booth = TestBooth(settings)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })

        booth.button.press()
        try #require(await eventually { booth.state.isReview }, "\(booth.logText)")
        guard case let .review(id) = booth.state else { Issue.record("not in review"); return }
        // Nothing asked yet: the review carries no print status. (The state changes before the
        // show command runs: wait for the screen.)
        #expect(await eventually { !booth.display.printStatuses(review: id).isEmpty }, "\(booth.logText)")
        #expect(booth.display.printStatuses(review: id) == [nil])

        // press mode: a press during review asks for the print; the request is held (no such
        // queue) and the review is shown again with what the guest should read. The first re-show
        // may say "Waiting to print…" when the worker has not polled the printer yet.
        booth.button.press()
        #expect(await eventually { booth.display.printStatuses(review: id).contains("Printer offline — your photo is saved") },
                "\(booth.display.printStatuses(review: id))\n\(booth.logText)")
        let asked = booth.display.printStatuses(review: id)
        #expect(asked.count >= 2)
        #expect(asked.dropFirst().allSatisfy { $0 != nil }, "\(asked)")

        // A long press skips it: the review is shown again with "Not printing".
        booth.button.longPressOfNewPress()
        #expect(await eventually { booth.display.printStatuses(review: id).last == "Not printing" }, "\(booth.logText)")
        // Each re-show carries a different text than the one before it (no redraw for polls that change nothing).
        let all = booth.display.printStatuses(review: id)
        for (a, b) in zip(all, all.dropFirst()) { #expect(a != b, "\(all)") }
        // Still in review: the re-shows did not move the session.
        #expect(booth.state == .review(pictureID: id))
    }
}
