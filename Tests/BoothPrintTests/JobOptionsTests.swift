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
