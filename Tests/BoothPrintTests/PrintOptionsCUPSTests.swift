import BoothCore
import BoothPorts
import BoothPrint
import BoothRuntime
import BoothTestSupport
import Foundation
import Testing

// A destination that does not support the options asked for: a simulated printer with only 4x6 and
// 5x7 media and monochrome, behind a cupsd limited to one copy. Its attributes carry the
// pwg-raster ones cupsd's `-m everywhere` needs to make a PPD, so the queue lists what it supports
// (the default test printer gets no PPD and its queue is raw: only copies could be checked there).

// Part of the serialized print suite: CUPS_SERVER is process-wide.
extension PrintWorkerCUPSTests {
    /// printer.conf restricted to 4x6 and 5x7 media and monochrome.
    static func restrictedPrinter() throws -> String {
        let base = try String(contentsOfFile: "\(packageRoot())/Tests/BoothPrintTests/printer.conf", encoding: .utf8)
        var lines = base.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            if line.hasPrefix("ATTR keyword media-supported ") { return "ATTR keyword media-supported na_index-4x6_4x6in,na_5x7_5x7in" }
            if line.hasPrefix("ATTR keyword print-color-mode-supported ") { return "ATTR keyword print-color-mode-supported monochrome" }
            if line.hasPrefix("ATTR keyword print-color-mode-default ") { return "ATTR keyword print-color-mode-default monochrome" }
            return String(line)
        }
        // The queue then sends media as media-col (a size), which the printer checks against media-size-supported.
        lines += ["ATTR resolution pwg-raster-document-resolution-supported 300dpi",
                  "ATTR keyword pwg-raster-document-type-supported sgray_8",
                  "ATTR collection media-size-supported {",
                  "  MEMBER integer x-dimension 10160", "  MEMBER integer y-dimension 15240",
                  "},{", "  MEMBER integer x-dimension 12700", "  MEMBER integer y-dimension 17780", "}", ""]
        return lines.joined(separator: "\n")
    }

    @Test("media, copies or colour the destination does not support: named with what it supports, the print held, nothing submitted; fixed by a reload, a new print goes out")
    func rejectedOptions() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let stack = try CUPSStack(attributes: Self.restrictedPrinter(), maxCopies: 1)
        let rig = try PrintRig(stack: stack) { $0.media = "iso_a6_105x148mm"; $0.color = .monochrome }
        defer { rig.stop() }
        func nothingSubmitted(_ what: String) async throws {
            let polls = rig.worker.polls
            #expect(await eventually { rig.worker.polls >= polls + 3 })
            #expect(rig.states() == [.held], "\(what)")
            #expect(rig.worker.journal.outstanding == 0, "\(what)")
            #expect(try rig.stack.jobs().isEmpty, "\(what): a job reached CUPS")
            #expect(rig.stack.printed().isEmpty, "\(what): a page reached the printer")
        }

        // Media.
        rig.worker.request(jpeg: photo, captureID: 1, source: "session 1")
        let media = "booth rejects media=iso_a6_105x148mm; it supports: na_index-4x6_4x6in,na_5x7_5x7in"
        #expect(await eventually { rig.worker.status().lastError == media }, "\(rig.worker.status())\n\(rig.logs.text)")
        #expect(rig.worker.health == .unavailable(reasons: ["option-rejected"], message: media))
        #expect(rig.worker.status().health == "unavailable")
        #expect(await eventually { rig.worker.journal.held.count == 1 })
        #expect(rig.worker.reviewText(captureID: 1) == "Printer not set up for this print — your photo is saved")
        try await nothingSubmitted("media")
        #expect(rig.logs.all.filter { $0.contains("print: \(media); prints are held (fix print.media and reload)") }.count == 1,
                "named once, not at every poll\n\(rig.logs.text)")

        // Copies (cupsd's MaxCopies 1).
        var s = rig.settings
        s.media = "na_5x7_5x7in"
        s.copies = 2
        rig.worker.reconfigure(s)
        let copies = "booth rejects copies=2; it supports: 1-1"
        #expect(await eventually { rig.worker.status().lastError == copies }, "\(rig.worker.status())")
        // lastError is set under the worker's lock; the log line that names the fix follows it.
        #expect(await eventually { rig.logs.contains("fix print.copies and reload") }, "\(rig.logs.text)")
        try await nothingSubmitted("copies")

        // Colour.
        s.copies = 1
        s.color = .color
        rig.worker.reconfigure(s)
        let colour = "booth rejects print-color-mode=color; it supports: monochrome"
        #expect(await eventually { rig.worker.status().lastError == colour }, "\(rig.worker.status())")
        #expect(await eventually { rig.logs.contains("fix print.color and reload") }, "\(rig.logs.text)")
        try await nothingSubmitted("colour")

        // Fixed. The held request keeps the media its page was rendered for (A6): checked again at
        // submission, failed and reported, never sent. A new picture prints on 5x7 in monochrome.
        s.color = .monochrome
        rig.worker.reconfigure(s)
        #expect(await eventually { rig.states() == [.failed] }, "\(rig.logs.text)")
        #expect(rig.worker.journal.requests.first?.note == media)
        #expect(await eventually { rig.logs.contains("print 1 (session 1): not submitted: \(media)") })
        #expect(rig.worker.reviewText(captureID: 1) == "Printing failed — your photo is saved")
        rig.worker.request(jpeg: photo, captureID: 2, source: "session 2")
        #expect(await eventually { rig.states() == [.failed, .completed] }, "\(rig.logs.text)")
        let printed = rig.stack.printed()
        try #require(printed.count == 1, "\(rig.logs.text)")
        // Through the queue's PPD the media arrives as a size: 5x7 in hundredths of a millimetre.
        #expect(printed[0].options["IPP_MEDIA_COL"]?.contains("media-size={x-dimension=12700 y-dimension=17780}") == true,
                "\(printed[0].options)")
        #expect(printed[0].doc == Array(try #require(FileManager.default.contents(atPath: rig.worker.journal.requests[1].file))))
        #expect(printed[0].options["IPP_PRINT_COLOR_MODE"] == "monochrome")
        #expect(try rig.stack.jobs().count == 1)
    }
}
