import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Testing
@testable import BoothRuntime
@testable import BoothStorage

@Suite struct GeneratedFilesTests {
    @Test func committedDefaultConfigIsWhatTheSchemaGenerates() throws {
        let path = "\(packageRoot())/etc/photobooth/photobooth.conf"
        let committed = String(decoding: try AtomicFile.read(path), as: UTF8.self)
        #expect(committed == Schema.defaultConfigText(),
                "etc/photobooth/photobooth.conf differs from the schema; regenerate: swift run photoboothctl config init --force etc/photobooth/photobooth.conf")
        let check = Settings.check(text: committed, file: path)
        #expect(check.diagnostics.isEmpty)
        #expect(check.settings == Settings.defaults)
    }

    static let begin = "<!-- settings-table:begin -->"
    static let end = "<!-- settings-table:end -->"

    @Test func readmeSettingsTableIsWhatTheSchemaGenerates() throws {
        let path = "\(packageRoot())/README.md"
        guard let bytes = try? AtomicFile.read(path) else {
            Issue.record("no README.md at \(path)")
            return
        }
        let readme = String(decoding: bytes, as: UTF8.self)
        guard let b = readme.firstRange(of: Self.begin), let e = readme.firstRange(of: Self.end), b.upperBound <= e.lowerBound else {
            Issue.record("README.md has no \(Self.begin) … \(Self.end) markers; put the output of 'swift run photoboothctl config describe --markdown' between them")
            return
        }
        let table = readme[b.upperBound..<e.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(table == Schema.markdownTable().trimmingCharacters(in: .whitespacesAndNewlines),
                "README's settings table differs from the schema; regenerate it with 'swift run photoboothctl config describe --markdown' and paste it between the markers")
    }

    @Test("README's and WIRING.md's config examples, copied as they are (comments after values), read as meant")
    func configExamplesInTheDocsAreValid() throws {
        var blocks: [(file: String, text: String)] = []
        for file in ["README.md", "hardware/WIRING.md"] {
            let doc = String(decoding: try AtomicFile.read("\(packageRoot())/\(file)"), as: UTF8.self)
            for part in doc.components(separatedBy: "```ini\n").dropFirst() {
                let block = part.components(separatedBy: "```").first ?? ""
                // Only the booth's own sections (README also shows NetworkManager's).
                let section = block.split(separator: "\n").first.map { String($0.dropFirst().dropLast()) } ?? ""
                if Schema.sections.contains(where: { $0.name == section }) { blocks.append((file, block)) }
            }
        }
        #expect(blocks.count >= 3)
        for (file, block) in blocks {
            let check = Settings.check(text: block, file: file)
            #expect(check.diagnostics.isEmpty, "\(file): \(check.diagnostics.map(\.description))\n\(block)")
        }
        let button = try #require(blocks.first { $0.text.contains("input_key") })
        let settings = try Settings.parse(text: button.text, file: "README.md").get()
        #expect(settings.button.sources == [.input])
    }
}
