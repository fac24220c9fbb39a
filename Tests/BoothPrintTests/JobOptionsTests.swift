import BoothCore
import Testing
@testable import BoothPrint

// Job options are built by name: whatever order the options are listed or asked in, each name
// carries its own value (the print worker used to patch them by position, `options[0] = ("copies", …)`).
@Suite struct JobOptionsTests {
    @Test("every order of the options sends each name with its own value")
    func reorderingCannotSendWrongValues() {
        var settings = Settings.defaults.print
        settings.copies = 3
        settings.media = "na_index-4x6_4x6in"
        settings.color = .monochrome
        var job = JobOptions(settings)
        // A request held from before a reload keeps its own copies and media.
        job.copies = 2
        job.media = "na_5x7_5x7in"
        let expected = ["copies": "2", "media": "na_5x7_5x7in", "print-color-mode": "monochrome", "print-scaling": "none"]
        let all = JobOptions.Option.allCases
        #expect(Dictionary(uniqueKeysWithValues: job.pairs) == expected)
        #expect(job.pairs.count == all.count)
        for order in permutations(all) {
            let pairs = job.pairs(order)
            #expect(pairs.map { $0.0 } == order.map { $0.rawValue })
            #expect(Dictionary(uniqueKeysWithValues: pairs) == expected, "\(order)")
        }
    }

    @Test("the journal's copies range is print.copies' range from the schema")
    func oneCopiesRange() throws {
        #expect(PrintJournal.maxCopies == Settings.Print.copiesRange.upperBound)
        let spec = try #require(Schema.spec(for: "print.copies"))
        guard case let .int(range, _) = spec.type else {
            Issue.record("print.copies is not an int setting: \(spec.type)")
            return
        }
        #expect(range == Settings.Print.copiesRange)
    }

    private func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[T]] in
            var rest = items
            let head = rest.remove(at: i)
            return permutations(rest).map { [head] + $0 }
        }
    }
}

// print.media is parsed once, when it is set (the file read, an override, code): the renderer and the
// picture's sheet read the parsed size, never the name.
@Suite struct MediaParsedOnceTests {
    @Test("the settings carry print.media parsed; setting another name parses it again, an invalid one leaves no size")
    func theSettingsCarryTheParsedMedia() throws {
        let file = try Settings.parse(text: "[print]\nmedia = iso_a6_105x148mm\n", file: "test.conf").get()
        let a6 = try #require(file.print.mediaSize)
        #expect(a6.name == "iso_a6_105x148mm" && a6.widthMillimetres == 105 && a6.heightMillimetres == 148)
        #expect(Settings.defaults.print.mediaSize?.name == "na_index-4x6_4x6in")
        var s = Settings.defaults.print
        s.media = "na_5x7_5x7in"
        #expect(s.mediaSize?.widthMillimetres == 5 * 25.4)
        #expect(s.mediaSize?.heightMillimetres == 7 * 25.4)
        s.media = "photo"
        #expect(s.mediaSize == nil, "not a name with a size (the schema refuses it in a file)")
    }
}
