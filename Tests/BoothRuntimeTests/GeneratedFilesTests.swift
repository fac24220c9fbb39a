import BoothCamera
import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Testing
@testable import BoothRuntime
@testable import BoothStorage

@Suite struct GeneratedFilesTests {
    /// camera.backend's values and words are the built-in backends', installed as photoboothctl installs them.
    init() { CameraBackends.installNames() }

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

    @Test func docsSettingsTableIsWhatTheSchemaGenerates() throws {
        let path = "\(packageRoot())/docs/settings.md"
        guard let bytes = try? AtomicFile.read(path) else {
            Issue.record("no docs/settings.md at \(path)")
            return
        }
        let page = String(decoding: bytes, as: UTF8.self)
        guard let b = page.firstRange(of: Self.begin), let e = page.firstRange(of: Self.end), b.upperBound <= e.lowerBound else {
            Issue.record("docs/settings.md has no \(Self.begin) … \(Self.end) markers; put the output of 'swift run photoboothctl config describe --markdown' between them")
            return
        }
        let table = page[b.upperBound..<e.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(table == Schema.markdownTable().trimmingCharacters(in: .whitespacesAndNewlines),
                "docs/settings.md's settings table differs from the schema; regenerate it with tools/regen-generated")
    }
}
