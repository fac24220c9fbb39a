import BoothSystem
import BoothTestSupport
import BoothCore
import BoothDisplay
import BoothPorts
import BoothPrint
import BoothStorage
import Foundation
import Testing
@testable import BoothRuntime

/// The documentation (README.md, docs/*.md, bench/RESULTS.md, hardware/WIRING.md) against the code: every
/// text the screen shows for a fault has a troubleshooting entry, every config example parses with the
/// booth's own parser, and every relative link leads somewhere.
@Suite struct DocsTests {
    @Test("docs/architecture.md's module table is Package.swift's targets with their dependencies (tools/regen-architecture)")
    func moduleTableIsPackageSwifts() throws {
        let package = try String(contentsOfFile: "\(packageRoot())/Package.swift", encoding: .utf8)
        let rows = ArchitectureTests.declaredTargets(package)
            .filter { ($0.kind == "target" || $0.kind == "executableTarget") && !$0.name.hasPrefix("C")
                      && $0.name != "BoothBench" && $0.name != "BoothTestSupport" }
            .map { target -> String in
                // Package.swift's order within the dependency list; the parser gives a set, so compare as sets.
                let ours = target.dependencies.filter { !$0.hasPrefix("C") }.sorted()
                let c = target.dependencies.filter { $0.hasPrefix("C") }.sorted()
                return "\(target.name)\(target.kind == "executableTarget" ? " (program)" : "") | \(ours) | \(c)"
            }
        let doc = try String(contentsOfFile: "\(packageRoot())/docs/architecture.md", encoding: .utf8)
        let begin = try #require(doc.range(of: "<!-- module-graph:begin -->\n"))
        let end = try #require(doc.range(of: "<!-- module-graph:end -->"))
        let table = doc[begin.upperBound..<end.lowerBound].split(separator: "\n").dropFirst(2).map { line -> String in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            func names(_ cell: String) -> [String] {
                cell == "(none)" || cell == "—" ? [] : cell.components(separatedBy: ", ").sorted()
            }
            return cells.count == 3 ? "\(cells[0]) | \(names(cells[1])) | \(names(cells[2]))" : String(line)
        }
        #expect(Set(table) == Set(rows), "stale: run tools/regen-architecture. Only in the doc: \(Set(table).subtracting(rows).sorted()); only in Package.swift: \(Set(rows).subtracting(table).sorted())")
    }

    /// The Markdown files the tests read, relative to the package root.
    static func markdownFiles() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: "\(packageRoot())/docs")
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        return ["README.md"] + docs + ["bench/RESULTS.md", "hardware/WIRING.md"]
    }

    static func read(_ file: String) throws -> String {
        String(decoding: try AtomicFile.read("\(packageRoot())/\(file)"), as: UTF8.self)
    }

    // MARK: fault texts

    /// What the screen says when something is wrong, from the code that words it: the `[text]` fault
    /// settings' defaults (``ScreenTexts/fault(_:reason:)`` for every kind, the review that cannot be drawn), the
    /// idle screen's notices (``BoothMachine``'s, and the storage worker's refusal, up to its figures), and the
    /// review's print status lines that say the photo is saved although printing is not going well
    /// (``reviewPrintText(health:request:sentNext:)`` over every request state and printer reason).
    static func screenFaultTexts() throws -> [String] {
        var texts: [String] = []
        let screen = ScreenTexts(Settings.defaults.text)
        for kind in FaultKind.allCases {
            texts.append(screen.fault(kind))
            texts.append(screen.fault(kind, reason: FaultKind.cameraRestingPrefix))
        }
        texts.append(screen.reviewNotShown)
        texts += [BoothMachine.captureFailedNotice, BoothMachine.composeFailedNotice]

        // The storage worker's refusal: its words up to the figures or the error ("Storage almost full (…").
        func lead(_ s: String) -> String {
            String(s.prefix { $0 != "(" && $0 != ":" }).trimmingCharacters(in: .whitespaces)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("docs-tests-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (directory, minFree) in [(dir, UInt64(1_000_000_000_000_000)), ("\(dir)/missing/photos", UInt64(1))] {
            let worker = StorageWorker(store: PhotoStore(directory: directory), captures: CaptureBox(), minFree: minFree,
                                       clock: ManualClock(), log: Logger(threshold: .debug) { _ in }, post: { _ in })
            let refusal = try #require(worker.refusal(), "no refusal for \(directory) with storage.min_free \(minFree)")
            texts.append(lead(refusal))
        }

        let states = ["held", "submitting", "submitted", "completed", "aborted", "cancelled", "dropped", "failed"]
            .compactMap(PrintRequestState.init(rawValue:))
        #expect(states.count == 8)
        let reasons = ["media-empty", "media-needed", "media-jam", "paper-out", "paper-count", "option-rejected",
                       "offline", "cups-unreachable", "paused", "job-failed"]
        let healths: [PrinterHealth] = [.ready, .unknown("idle")] + reasons.map { .unavailable(reasons: [$0], message: $0) }
        for state in states {
            for health in healths {
                for note in [nil, PrintJournal.cancelledAtPrinter] {
                    for failedJobs in [nil, 1] {
                        var request = PrintRequest(id: 1, captureID: 1, source: "picture", file: "p.jpg", copies: 1,
                                                   media: "na_index-4x6_4x6in", requestedAt: 0, title: "photobooth-t-1")
                        request.state = state
                        request.note = note
                        request.failedJobs = failedJobs
                        if let text = reviewPrintText(health: health, request: request), text.contains("your photo is saved") {
                            texts.append(text)
                        }
                    }
                }
            }
        }
        var seen = Set<String>()
        return texts.filter { seen.insert($0).inserted }
    }

    @Test("every text the screen shows for a fault has an entry in docs/troubleshooting.md")
    func everyScreenFaultTextIsInTroubleshooting() throws {
        let texts = try Self.screenFaultTexts()
        // The kinds above, each at least once: the test cannot pass by finding nothing.
        #expect(texts.contains("Camera disconnected — back soon"))
        #expect(texts.contains("Out of paper — your photo is saved"))
        #expect(texts.contains("Storage almost full"))
        #expect(texts.count >= 15, "\(texts)")
        let page = try Self.read("docs/troubleshooting.md")
        for text in texts where !page.contains(text) {
            Issue.record("docs/troubleshooting.md has no entry for the screen's \"\(text)\"")
        }
    }

    // MARK: config examples

    /// Every ```ini block (the fence tag the docs keep for photobooth.conf), with the line its first
    /// setting is on.
    static func configBlocks(in file: String) throws -> [(line: Int, text: String)] {
        var blocks: [(line: Int, text: String)] = []
        var open: (line: Int, lines: [String])?
        var fenced = false
        for (i, line) in try read(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed.hasPrefix("```") {
                    blocks.append((block.line, block.lines.joined(separator: "\n") + "\n"))
                    open = nil
                } else {
                    block.lines.append(String(line))
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                if !fenced && trimmed == "```ini" { open = (i + 2, []) } else { fenced.toggle() }
            }
        }
        return blocks
    }

    @Test("every config example in README.md, docs/ and WIRING.md, copied as it is (comments after values), is valid")
    func everyConfigExampleIsValid() throws {
        var count = 0
        for file in try Self.markdownFiles() {
            for block in try Self.configBlocks(in: file) {
                count += 1
                let check = Settings.check(text: block.text, file: file)
                for d in check.diagnostics {
                    Issue.record("\(file):\(block.line - 1 + (d.line ?? 1)): \(d.severity.rawValue): \(d.message)")
                }
            }
        }
        #expect(count >= 5, "only \(count) ```ini blocks found")
        // The USB button's example reads as meant: the comments after the values are comments.
        let button = try #require(try Self.configBlocks(in: "docs/buttons.md").first { $0.text.contains("input_key") })
        let settings = try Settings.parse(text: button.text, file: "docs/buttons.md").get()
        #expect(settings.button.sources == [.input])
    }

    @Test("a config block that does not parse is reported at its file and line")
    func aBadBlockIsReportedWithItsLine() throws {
        let check = Settings.check(text: "[session]\ncountdown = 5s\ncountdwn = 3s\n", file: "x.md")
        #expect(check.diagnostics.map(\.line) == [3])
    }

    // MARK: links

    /// GitHub's anchor for a heading: lower case, only letters, digits, `-`, `_` and spaces kept, spaces
    /// as `-`; a repeated one gets `-1`, `-2`….
    static func anchors(_ text: String) -> Set<String> {
        var seen: [String: Int] = [:], out = Set<String>(), fenced = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, line.hasPrefix("#"), let space = line.firstIndex(of: " "),
                  line[..<space].allSatisfy({ $0 == "#" }) else { continue }
            let slug = String(line[line.index(after: space)...].lowercased()
                .filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == " " }
                .map { $0 == " " ? "-" : $0 })
            let n = seen[slug, default: 0]
            seen[slug] = n + 1
            out.insert(n == 0 ? slug : "\(slug)-\(n)")
        }
        return out
    }

    /// The targets of `](target)` and `<img src="target"` on `line`.
    static func linkTargets(_ line: Substring) -> [String] {
        var out: [String] = []
        for (open, close) in [("](", ")"), ("<img src=\"", "\"")] {
            var rest = line[...]
            while let o = rest.range(of: open) {
                rest = rest[o.upperBound...]
                guard let c = rest.range(of: close) else { break }
                let target = String(rest[..<c.lowerBound])
                if !target.contains(" ") { out.append(target) }
                rest = rest[c.upperBound...]
            }
        }
        return out
    }

    @Test("every relative link in README.md, docs/ and bench/RESULTS.md leads to a file, and its anchor to a heading there")
    func everyRelativeLinkResolves() throws {
        var checked = 0
        for file in try Self.markdownFiles() {
            let dir = URL(fileURLWithPath: "\(packageRoot())/\(file)").deletingLastPathComponent()
            var fenced = false
            for (i, line) in try Self.read(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if line.hasPrefix("```") { fenced.toggle(); continue }
                if fenced { continue }
                for target in Self.linkTargets(line) where !target.contains(":") {
                    checked += 1
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                    let path = parts[0].isEmpty ? "\(packageRoot())/\(file)" : dir.appendingPathComponent(String(parts[0])).standardized.path
                    guard FileManager.default.fileExists(atPath: path) else {
                        Issue.record("\(file):\(i + 1): \(target): no such file")
                        continue
                    }
                    if parts.count == 2, path.hasSuffix(".md") {
                        let anchors = Self.anchors(String(decoding: try AtomicFile.read(path), as: UTF8.self))
                        if !anchors.contains(String(parts[1])) { Issue.record("\(file):\(i + 1): \(target): no such heading") }
                    }
                }
            }
        }
        #expect(checked > 100, "only \(checked) links checked")
    }

    /// The questions a new operator asked of the README alone (issue 37), each with the page that answers it
    /// whole and the words the answer cannot do without.
    static let questions: [(question: String, page: String, terms: [String])] = [
        ("install as a service on a Pi from nothing", "docs/installing.md",
         ["Raspberry Pi OS", "install.sh --install", "install.sh --unit", "qemu-system-x86_64", "photoboothd --check"]),
        ("a DSLR for stills with its live view on a TV", "docs/cameras.md",
         ["backend = gphoto2", "capture_timeout = 15s", "device = auto", "live_view_device"]),
        ("a USB arcade button's key", "docs/buttons.md", ["source = input", "input_key = ", "evtest", "photoboothctl devices"]),
        ("a SELPHY on auto print with 2 copies", "docs/printing.md",
         ["printer-driver-gutenprint", "lpinfo -m", "lpadmin", "mode = auto", "copies = 2", "jpn_hagaki_100x148mm"]),
        ("out of paper mid-event", "docs/running-an-event.md", ["photoboothctl refill", "print.backlog_max_age", "prints reprint"]),
        ("phones without internet", "docs/gallery.md", ["Stay connected?", "mobile data", "WIFI:"]),
        ("the countdown changed live", "docs/running-an-event.md", ["config set session.countdown", "from the next session"]),
        ("names and date on every picture", "docs/settings.md", ["footer_top = ", "{date}", "compose_single_shot = true"]),
        ("tonight's count and copying the photos off", "docs/running-an-event.md",
         ["photoboothctl stats", "stats --reset", "/var/lib/photobooth/photos"]),
        ("Camera disconnected — back soon", "docs/troubleshooting.md", ["### \"Camera disconnected — back soon\"", "photoboothctl status"]),
        ("the couple sees all while guests see their own", "docs/gallery.md", ["list = true", "pin = ", "never asks for a PIN"]),
        ("the licence", "README.md", ["GPL-3.0-or-later", "](LICENSE)"]),
    ]

    @Test("each question a new operator asked has its answer on one page")
    func eachOperatorQuestionIsAnsweredOnOnePage() throws {
        for (question, page, terms) in Self.questions {
            let text = try Self.read(page)
            for term in terms where !text.contains(term) {
                Issue.record("\(page) no longer answers \"\(question)\": it lacks \"\(term)\"")
            }
        }
    }

    @Test("README.md stays at most 15 KB, and links to every page of docs/")
    func readmeIsShortAndLinksEveryPage() throws {
        let readme = try Self.read("README.md")
        #expect(readme.utf8.count <= 15 * 1024, "README.md is \(readme.utf8.count) bytes")
        for page in try Self.markdownFiles() where page.hasPrefix("docs/") {
            #expect(readme.contains("](\(page)"), "README.md has no link to \(page)")
        }
    }

    @Test("every operator page opens with what it is for, before its first section")
    func everyPageOpensWithItsPurpose() throws {
        for page in try Self.markdownFiles() where page.hasPrefix("docs/") {
            let lines = try Self.read(page).split(separator: "\n")
            #expect(lines.first?.hasPrefix("# ") == true, "\(page) does not start with its title")
            let intro = lines.dropFirst().prefix { !$0.hasPrefix("#") }.joined(separator: " ")
            #expect(intro.count >= 60, "\(page) does not open with a sentence on what it is for")
        }
    }
}
