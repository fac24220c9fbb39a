import Foundation
import BoothCore
import BoothJPEG
import BoothPrint
import Testing

@Suite("Print journal, health, media and rendering (no CUPS)")
struct PrintJournalTests {
    func journal(_ n: Int, at t: Double = 1000) -> PrintJournal {
        var j = PrintJournal(tag: "t")
        for i in 0..<n { _ = j.add(captureID: UInt64(i + 1), source: "session \(i + 1)", file: "/p/\(i + 1).jpg",
                                   copies: 2, media: "na_index-4x6_4x6in", now: t + Double(i)) }
        return j
    }

    @Test("held requests go out oldest first, within the pending limit, only while the printer allows it")
    func submission() {
        var j = journal(3)
        #expect(j.toSubmit(pendingLimit: 1, health: .ready).map(\.id) == [1])
        #expect(j.toSubmit(pendingLimit: 2, health: .warning(reasons: ["media-low"])).map(\.id) == [1, 2])
        #expect(j.toSubmit(pendingLimit: 5, health: .unavailable(reasons: ["media-empty"], message: "")).isEmpty)
        j.requests[0].state = .submitted
        j.requests[0].jobID = 7
        #expect(j.toSubmit(pendingLimit: 1, health: .ready).isEmpty)
        #expect(j.toSubmit(pendingLimit: 2, health: .unknown("idle")).map(\.id) == [2])
    }

    @Test("reconcile: a held request whose job title CUPS lists (submitted by a run that could not journal it) takes that job and is not submitted again")
    func heldFoundByTitle() throws {
        var j = journal(2)
        let jobs = [CUPSJob(id: 11, state: .completed, title: j.requests[0].title), CUPSJob(id: 3, state: .completed, title: "photobooth-other-2")]
        let changes = j.reconcile(jobs: jobs, sheetsPerCopy: 1, now: 3000)
        #expect(changes.map(\.from) == [.held])
        #expect(j.requests.map(\.state) == [.completed, .held])
        #expect(j.requests[0].jobID == 11)
        #expect(j.toSubmit(pendingLimit: 5, health: .ready).map(\.id) == [2])
    }

    @Test("a page not yet written is never submitted; a job needing more sheets than are counted is reported (needs, counted)")
    func renderPendingAndPaperShort() {
        var j = journal(2)
        j.requests[0].renderPending = true
        #expect(j.toSubmit(pendingLimit: 5, health: .ready).map(\.id) == [2])
        j.sheetsRemaining = 5
        #expect(j.paperShort(sheetsPerCopy: 1) == nil, "2 copies, 5 counted")
        j.requests[1].state = .submitted
        j.requests[0].renderPending = nil
        let short = j.paperShort(sheetsPerCopy: 2)
        #expect(short?.request.id == 1 && short?.needs == 4 && short?.counted == 1, "4 sheets out at CUPS, 1 left")
        j.sheetsRemaining = nil
        #expect(j.paperShort(sheetsPerCopy: 2) == nil, "not counted")
        // Two held, room for one: once the first is out, the second is short.
        var k = journal(2)
        k.sheetsRemaining = 3
        #expect(k.paperShort(sheetsPerCopy: 1) == nil)
        k.requests[0].state = .submitted
        #expect(k.paperShort(sheetsPerCopy: 1)?.request.id == 2)
    }

    @Test("journals written before renderPending and photo existed still decode")
    func oldJournalDecodes() throws {
        let old = #"{"requests":[{"id":1,"source":"session 1","file":"/p/1.jpg","copies":1,"media":"na_index-4x6_4x6in","requestedAt":5,"state":"held","title":"photobooth-t-1"}],"nextID":2,"tag":"t"}"#
        let j = try PrintJournal.decode(Data(old.utf8))
        #expect(j.requests.first?.renderPending == nil && j.requests.first?.photo == nil)
        #expect(j.toSubmit(pendingLimit: 1, health: .ready).map(\.id) == [1])
    }

    @Test("backlog: newest N keeps the newest, max-age drops the old ones; both reported")
    func backlog() {
        var j = journal(4)
        let dropped = j.applyBacklog(.newest(2), now: 2000)
        #expect(dropped.map(\.id) == [1, 2])
        #expect(j.requests.map(\.state) == [.dropped, .dropped, .held, .held])
        var k = journal(3, at: 1000)
        #expect(k.applyBacklog(.maxAge(seconds: 900), now: 1900.5).map(\.id) == [1])
        #expect(k.applyBacklog(.maxAge(seconds: 900), now: 1900.5).isEmpty)
        #expect(k.request(1)?.note?.contains("900 s") == true)
        var all = journal(3)
        #expect(all.applyBacklog(.all, now: 1_000_000).isEmpty)
    }

    @Test("backlog max-age: this run's requests by their monotonic held time, an earlier run's by the wall clock")
    func backlogHeldSeconds() {
        // The wall clock a year on (NTP): request 1 held 5 s and 2 held 901 s (monotonic); 3 is an earlier run's.
        var j = journal(3, at: 1000)
        #expect(j.applyBacklog(.maxAge(seconds: 900), now: 1000 + 365 * 86_400, heldSeconds: [1: 5, 2: 901]).map(\.id) == [2, 3])
        // The wall clock set back a year: an earlier run's request is 0 s old, not dropped.
        var k = journal(1, at: 1000)
        #expect(k.applyBacklog(.maxAge(seconds: 900), now: 1000 - 365 * 86_400).isEmpty)
    }

    @Test("reconcile: finished jobs end their requests, only completed ones take paper; a crash before the job id was journaled is resolved by title")
    func reconcile() {
        var j = journal(4)
        j.sheetsRemaining = 10
        j.requests[0].state = .submitted; j.requests[0].jobID = 11
        j.requests[1].state = .submitted; j.requests[1].jobID = 12
        j.requests[2].state = .submitting   // crashed after CUPS created job 13, before the id was journaled
        j.requests[3].state = .submitting   // crashed before CUPS saw it
        let jobs = [CUPSJob(id: 11, state: .completed, title: j.requests[0].title),
                    CUPSJob(id: 12, state: .aborted, title: j.requests[1].title),
                    CUPSJob(id: 13, state: .processing, title: j.requests[2].title),
                    CUPSJob(id: 14, state: .completed, title: "someone else's job")]
        let changes = j.reconcile(jobs: jobs, sheetsPerCopy: 1, now: 3000)
        #expect(j.requests.map(\.state) == [.completed, .held, .submitted, .held], "the aborted job's request held again")
        #expect(j.requests[1].failedJobs == 1 && j.stoppedAfterFailure != nil)
        #expect(j.requests[2].jobID == 13)
        #expect(j.sheetsRemaining == 8, "2 copies × 1 sheet, the aborted one not counted")
        #expect(changes.map(\.request.id) == [1, 2, 3, 4])
        // Idempotent: a second pass changes nothing and counts no paper twice.
        #expect(j.reconcile(jobs: jobs, sheetsPerCopy: 1, now: 3001).isEmpty)
        #expect(j.sheetsRemaining == 8)
    }

    @Test("purge forgets finished requests only; reprints are counted per original")
    func purgeAndReprints() {
        var j = journal(3)
        j.finish(1, .completed, note: nil, now: 1)
        _ = j.add(captureID: nil, source: "reprint of 1", file: "/p/1.jpg", copies: 1, media: "m", now: 2, reprintOf: 1)
        #expect(j.reprints(of: 1) == 1)
        #expect(j.purge() == 1)
        #expect(j.requests.map(\.id) == [2, 3, 4])
    }

    @Test("health: reasons classified, suffixes stripped; a stopped queue, a silent printer, an idle queue without a printer URI")
    func health() {
        func q(_ reasons: [String], state: Int = 3, accepting: Bool = true, uri: String? = "ipp://p/ipp/print") -> PrinterAttributes {
            PrinterAttributes(state: state, reasons: reasons, acceptingJobs: accepting, message: "", deviceURI: uri, mediaSupported: [])
        }
        #expect(PrinterHealth.classify(queue: .success(q([])), device: .success(q([]))) == .ready)
        #expect(PrinterHealth.classify(queue: .success(q([])), device: .success(q(["media-empty-warning", "media-needed-warning"])))
                == .unavailable(reasons: ["media-empty", "media-needed"], message: ""))
        #expect(PrinterHealth.classify(queue: .success(q(["media-low-report"])), device: nil) == .warning(reasons: ["media-low"]))
        #expect(PrinterHealth.classify(queue: .success(q(["paused"], state: 5)), device: .success(q([]))).reasons == ["paused"])
        #expect(PrinterHealth.classify(queue: .success(q([], accepting: false)), device: nil).reasons == ["not-accepting-jobs"])
        let gone = PrintError(call: "httpConnect2", message: "Connection refused", destination: "ipp://p")
        #expect(PrinterHealth.classify(queue: .success(q([])), device: .failure(gone)).reasons == ["offline"])
        if case .unknown = PrinterHealth.classify(queue: .success(q([], uri: "gutenprint53+usb://x")), device: nil) {} else {
            Issue.record("an idle queue whose printer cannot be asked is unknown")
        }
    }

    @Test("review text follows the request and the printer")
    func reviewText() {
        var r = PrintRequest(id: 1, captureID: 1, source: "s", file: "f", copies: 1, media: "m", requestedAt: 0, title: "t")
        #expect(reviewPrintText(health: .ready, request: nil) == nil)
        #expect(reviewPrintText(health: .ready, request: r) == "Waiting to print…")
        #expect(reviewPrintText(health: .unavailable(reasons: ["media-needed"], message: ""), request: r) == "Out of paper — your photo is saved")
        #expect(reviewPrintText(health: .unavailable(reasons: ["offline"], message: ""), request: r) == "Printer offline — your photo is saved")
        r.state = .submitted
        #expect(reviewPrintText(health: .ready, request: r) == "Printing…")
        r.state = .completed
        #expect(reviewPrintText(health: .ready, request: r) == "Printed")
    }

    @Test("PWG media names give the size; pixels at a resolution")
    func media() throws {
        let m = try #require(MediaSize(pwg: "na_index-4x6_4x6in"))
        #expect(m.pixels(dpi: 300) == FrameSize(width: 1200, height: 1800))
        #expect(MediaSize(pwg: "iso_a6_105x148mm")?.pixels(dpi: 254) == FrameSize(width: 1050, height: 1480))
        #expect(MediaSize(pwg: "photo") == nil)
        #expect(MediaSize(pwg: "x_inf_1e999x6in") == nil)
        #expect(MediaSize(pwg: "x_big_99999x6in") == nil)
    }

    @Test("renderer guard: a page beyond 64 megapixels is refused with the keys and the dpi that fits, before anything is allocated")
    func pageLimit() throws {
        let four = try #require(MediaSize(pwg: "na_index-4x6_4x6in"))
        #expect(try PrintRenderer.pageSize(for: four, dpi: 1200) == FrameSize(width: 4800, height: 7200))
        let big = try #require(MediaSize(pwg: "custom_max_1000x1000mm"))
        #expect(throws: PrintPageTooLarge(media: "custom_max_1000x1000mm", dpi: 300, maxDPI: 203, maxPixels: 64_000_000)) {
            try PrintRenderer.pageSize(for: big, dpi: 300)
        }
        #expect(try PrintRenderer.pageSize(for: big, dpi: 203) == FrameSize(width: 7992, height: 7992))
        do {
            _ = try PrintRenderer.pageSize(for: big, dpi: 1200)
            Issue.record("a 1 m square page at 1200 dpi was accepted")
        } catch {
            #expect(error.description == "print.media custom_max_1000x1000mm at print.dpi 1200 is larger than the renderer's 64 megapixels; use print.dpi 203 or less, or a smaller media")
        }
        // An absurd dpi (settings set directly, not through the schema) does not trap either.
        #expect(throws: PrintPageTooLarge.self) { try PrintRenderer.pageSize(for: four, dpi: Int.max) }
        // render() itself refuses a page that large (and one whose area overflows) without decoding.
        let photo = try #require(samplePhoto())
        let renderer = try PrintRenderer()
        #expect(throws: PrintPageTooLarge.self) { try renderer.render(photo, to: FrameSize(width: 47_244, height: 47_244)) }
        #expect(throws: PrintPageTooLarge.self) { try renderer.render(photo, to: FrameSize(width: Int.max / 2, height: 4)) }
    }

    @Test("fill: a landscape picture is turned a quarter clockwise for portrait media and centre-cropped to its aspect")
    func fill() {
        // 4x2 landscape: left half red, right half blue; top row bright, bottom dark.
        var bytes: [UInt8] = []
        for y in 0..<2 { for x in 0..<4 { bytes += x < 2 ? [y == 0 ? 250 : 100, 0, 0] : [0, 0, y == 0 ? 250 : 100] } }
        let out = PrintRenderer.fill(RGBImage(size: FrameSize(width: 4, height: 2), bytes: bytes), to: FrameSize(width: 2, height: 4))
        // Clockwise: the source's left (red) becomes the top, its bottom row becomes the left column.
        #expect(out[0] > 0 && out[2] == 0, "top-left red")
        #expect(out[(3 * 2) * 3 + 2] > 0 && out[(3 * 2) * 3] == 0, "bottom-left blue")
        #expect(out[0] < out[3], "left column from the dark bottom row")
    }

    @Test("render: decodes, fills the media size, encodes a JPEG of exactly that size")
    func render() throws {
        let photo = try #require(samplePhoto())
        let page = try PrintRenderer().render(photo, to: FrameSize(width: 400, height: 600))
        #expect(try JPEGDecoder().header(page).size == FrameSize(width: 400, height: 600))
    }

    @Test("finished requests beyond the newest N are forgotten, oldest first; live ones never")
    func forgetFinished() {
        var j = journal(6)
        _ = j.finish(1, .completed, note: nil, now: 2000)
        _ = j.finish(2, .dropped, note: "old", now: 2000)
        _ = j.finish(4, .aborted, note: nil, now: 2000)
        _ = j.finish(5, .completed, note: nil, now: 2000)
        j.requests[2].state = .submitted   // 3 is out at the printer, 6 held
        #expect(j.forgetFinished(keeping: 2).map(\.id) == [1, 2])
        #expect(j.requests.map(\.id) == [3, 4, 5, 6])
        #expect(j.forgetFinished(keeping: 2).isEmpty, "two finished are kept")
        #expect(j.forgetFinished(keeping: 0).map(\.id) == [4, 5])
        #expect(j.requests.map(\.id) == [3, 6], "live requests stay")
        #expect(j.nextID == 7, "ids are never reused")
    }
}
