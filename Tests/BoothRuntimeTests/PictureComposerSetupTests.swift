import BoothCore
import BoothLayout
import BoothPorts
import BoothJPEG
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothWiring

// photoboothd's composer (the [picture] layout through BoothLayout): made only when a session needs
// one, refused for sheets the booth could not show or print, and made again on reload.
@Suite("Picture composer setup")
struct PictureComposerSetupTests {
    @Test("no composer for one shot (unless picture.compose_single_shot); one for a series")
    func composerWhenNeeded() throws {
        var s = Settings.defaults
        #expect(try makePictureComposer(s) == nil)
        s.picture.composeSingleShot = true
        #expect(try makePictureComposer(s) != nil)
        s.picture.composeSingleShot = false
        s.session.shots = 3
        #expect(try makePictureComposer(s) != nil)
    }

    @Test("a sheet over 40 megapixels is refused with the dpi that fits, before any session")
    func hugeSheetRefused() throws {
        var s = Settings.defaults
        s.session.shots = 2
        s.print.media = "na_5x7_5x7in"
        s.print.dpi = 1200   // 6000x8400: 50 MP
        do {
            _ = try makePictureComposer(s)
            Issue.record("a 50 MP sheet was accepted")
        } catch let error as PictureSetupError {
            #expect(error.description.contains("6000x8400"), "\(error)")
            #expect(error.description.contains("picture.dpi"), "\(error)")
            #expect(error.description.contains("at most 1069"), "\(error)")
        }
        s.print.dpi = 1000   // 5000x7000: 35 MP
        #expect(try makePictureComposer(s) != nil)
    }

    @Test("slots too small to hold a face are an error naming margin, layout and media, with the margin that fits, for every layout (#35)")
    func slotsTooSmall() throws {
        // picture.margin = 40 on 4x6 in: a white sheet with only the date (one capture still gets 22 mm at 40, none at 45).
        for (layout, shots, margin) in [("2x2", 4, 40), ("strip", 2, 40), ("3up", 3, 40), ("single", 1, 45)] {
            let text = "[session]\nshots = \(shots)\n[picture]\nlayout = \(layout)\nmargin = \(margin)\n"
            let settings = try Settings.parse(text: text, file: "booth.conf").get()
            let found = pictureDiagnostics(settings, file: "booth.conf", text: text)
            let error = try #require(found.first, "\(layout): no diagnostic")
            #expect(error.severity == (shots > 1 ? .error : .warning), "\(layout): \(found)")
            #expect(error.key == "picture.margin" && error.line == 5, "\(layout): \(error)")
            for words in ["picture.margin = \(margin)", "picture.layout = \(layout)", "print.media = na_index-4x6_4x6in", "at least 15 mm",
                          "set picture.margin = "] {
                #expect(error.message.contains(words), "\(layout): '\(words)' in \(error.message)")
            }
            var composed = settings
            composed.picture.composeSingleShot = true
            #expect(throws: PictureSetupError.self, "\(layout): no composer for slots that small") { try makePictureComposer(composed) }
        }
        // The margin the message offers works; the default works for every layout, on a 2x6 in strip too.
        for (layout, shots) in [("single", 1), ("2x2", 4), ("strip", 4), ("3up", 3)] {
            for media in ["na_index-4x6_4x6in", "oe_photo-2x6_2x6in", "na_5x7_5x7in"] {
                var s = Settings.defaults
                s.session.shots = shots
                s.picture.layout = PictureLayoutSetting(rawValue: layout) ?? .auto
                s.print.media = media
                #expect(pictureDiagnostics(s, file: "booth.conf", text: nil).isEmpty, "\(layout) on \(media)")
            }
        }
        var s = Settings.defaults
        s.session.shots = 4
        s.picture.marginMillimetres = 40
        let message = try #require(pictureDiagnostics(s, file: "booth.conf", text: nil).first?.message)
        let offered = try #require(message.split(separator: "set picture.margin = ").last?.prefix { $0.isNumber })
        s.picture.marginMillimetres = try #require(Int(offered))
        #expect(pictureDiagnostics(s, file: "booth.conf", text: nil).isEmpty, "the offered margin \(offered) fits: \(message)")
        s.picture.marginMillimetres += 1
        #expect(!pictureDiagnostics(s, file: "booth.conf", text: nil).isEmpty, "and is the largest that does")
    }

    @Test("a reload from one shot to three makes the composer: the next series gets its picture")
    func reloadMakesComposer() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = seriesSettings(dir: dir, shots: 1)
        settings.print.mode = .off
        let reloaded = ReloadSource(settings)
        var options = RuntimeOptions()
        options.composer = try makePictureComposer(settings)
        options.composerFactory = { try makePictureComposer($0) }
        #expect(options.composer == nil)
        let booth = TestBooth(settings, options: options, reloaded: reloaded, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })

        var three = settings
        three.session.shots = 3
        three.picture.dpi = .dpi150
        reloaded.settings.withLock { $0 = three }
        guard case .accepted = booth.runtime.requestReload() else {
            Issue.record("reload refused: \(booth.logText)")
            return
        }
        try #require(await eventually { booth.logged("settings reloaded") })
        booth.button.press()
        try #require(await booth.finishSeries(shots: 3), "\(booth.logText)")
        // The storage thread saves (and fsyncs) beside the session: the files may land after the review ended.
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 4 }, "\(booth.logText)")
        let paths: [String] = savedCaptures(in: settings.storage.dir)
        let files = paths.map { (path: String) -> String in fileName(path) }.sorted()
        #expect(files == ["booth-000001-1.jpg", "booth-000001-2.jpg", "booth-000001-3.jpg", "booth-000001-picture.jpg"],
                "\(files)")
        let picture = try #require(paths.first { (path: String) -> Bool in path.hasSuffix("-picture.jpg") })
        let header = try #require(jpegHeader(ofFile: picture))
        // 4x6 in at 150 dpi, turned to suit the 3-up layout.
        #expect([FrameSize(width: 600, height: 900), FrameSize(width: 900, height: 600)].contains(header.size), "\(header.size)")
    }

    @Test("a reload whose [picture] cannot be made is refused; the running settings stay")
    func reloadRefusedForBadPicture() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = seriesSettings(dir: dir, shots: 1)
        let reloaded = ReloadSource(settings)
        var options = RuntimeOptions()
        options.composerFactory = { try makePictureComposer($0) }
        let booth = TestBooth(settings, options: options, reloaded: reloaded)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        var bad = settings
        bad.session.shots = 2
        bad.picture.overlay = "\(dir)/no-such-overlay.png"
        reloaded.settings.withLock { $0 = bad }
        guard case let .refused(error) = booth.runtime.requestReload() else {
            Issue.record("a reload with a missing overlay was accepted")
            return
        }
        #expect(error.description.contains("[picture]"), "\(error)")
        #expect(error.description.contains("no-such-overlay.png"), "\(error)")
    }

    @Test("config diagnostics for [picture] files: an error naming key and line when sessions need the composer, else a warning")
    func pictureFileDiagnostics() throws {
        let text = "[session]\nshots = 3\n\n[picture]\nfooter_top = Anna\noverlay = /nonexistent/frame.png\n"
        let settings = try Settings.parse(text: text, file: "booth.conf").get()
        let errors = pictureDiagnostics(settings, file: "booth.conf", text: text)
        #expect(errors.count == 1)
        #expect(errors.first?.severity == .error)
        #expect(errors.first?.line == 6)
        #expect(errors.first?.key == "picture.overlay")
        #expect(errors.first?.description.hasPrefix("booth.conf:6: picture.overlay: /nonexistent/frame.png") == true,
                "\(errors)")

        var single = settings
        single.session.shots = 1
        let warnings = pictureDiagnostics(single, file: "booth.conf", text: text)
        #expect(warnings.map(\.severity) == [.warning], "\(warnings)")

        var fine = settings
        fine.picture.overlay = ""
        #expect(pictureDiagnostics(fine, file: "booth.conf", text: text).isEmpty)
        fine.picture.font = "/nonexistent/font.ttf"
        #expect(pictureDiagnostics(fine, file: "booth.conf", text: text).first?.key == "picture.font")
    }
}
