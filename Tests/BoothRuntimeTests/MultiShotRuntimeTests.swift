import BoothCamera
import BoothCore
import BoothPorts
import BoothJPEG
import BoothPrint
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothControl
@testable import BoothRuntime
@testable import BoothStorage

// Multi-shot sessions end to end (issue 7): the real runtime on the simulated camera with a real
// (small) composer, real storage in a temp directory, and the print worker journalling the picture.

/// A real composer for the tests: decodes each capture with TurboJPEG, stacks them top to bottom
/// on one RGB canvas (as wide as the widest), and encodes the canvas once. Deterministic, so a test
/// can compose the saved captures again and compare bytes.
final class StackComposer: PictureComposing {
    let quality = 90
    /// Calls so far.
    let calls = Mutex(0)
    /// The `takenAt` of the latest call.
    let lastTakenAt = Mutex<Date?>(nil)

    func composePicture(captures: [[UInt8]], takenAt: Date) throws -> ComposedPicture {
        calls.withLock { $0 += 1 }
        lastTakenAt.withLock { $0 = takenAt }
        let decoder = try JPEGDecoder()
        let images = try captures.map { jpeg throws(TurboJPEGError) in try decoder.decodeRGB(jpeg) }
        let width = images.map(\.size.width).max() ?? 0
        let height = images.map(\.size.height).reduce(0, +)
        var canvas = [UInt8](repeating: 0, count: width * height * 3)
        var top = 0
        for image in images {
            for row in 0..<image.size.height {
                let src = row * image.bytesPerLine, dst = (top + row) * width * 3
                canvas.replaceSubrange(dst..<(dst + image.bytesPerLine), with: image.bytes[src..<(src + image.bytesPerLine)])
            }
            top += image.size.height
        }
        let frame = Frame(format: .rgb24, size: FrameSize(width: width, height: height), bytesPerLine: width * 3,
                          bytes: canvas, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return ComposedPicture(jpeg: try JPEGEncoder().encode(frame, quality: quality), size: frame.size)
    }
}

/// Fast settings for a series: `shots` shots, no countdown, a short pause between shots, auto print
/// into a spool in `dir` (no CUPS queue by that name: requests are rendered, journalled and held).
func seriesSettings(dir: String, shots: Int, betweenMilliseconds: Int = 150) -> Settings {
    var s = fastSettings(dir: dir)
    s.session.shots = shots
    s.session.betweenShotsMilliseconds = betweenMilliseconds
    s.session.reviewMilliseconds = 400
    s.print.mode = .auto
    s.print.destination = "photobooth-test-no-such-queue"
    s.print.journal = "\(dir)/print-journal.json"
    s.print.spool = "\(dir)/prints"
    s.print.dpi = 100
    return s
}

func fileName(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

extension TestBooth {
    /// On a manual clock, the series under way (no countdown): lets the pause before each next shot
    /// pass once the booth is in it (the capture before it taken: real time), then finishes as
    /// ``finishSession(completed:)`` (the picture composed: real time).
    func finishSeries(shots: Int, inReview: (() -> Bool)? = nil) async -> Bool {
        if shots > 1 {
            for next in 2...shots {
                guard await eventually({ state == .betweenShots(next: next) }),
                      await advance(milliseconds: settings.session.betweenShotsMilliseconds) else { return false }
            }
        }
        return await finishSession(completed: 1, inReview: inReview)
    }
}

@Suite(.serialized) struct MultiShotRuntimeTests {
    @Test("a 3-shot session (and a 1-shot one with a composer): captures and picture side by side, review and print of the picture",
          arguments: [3, 1])
    func seriesEndToEnd(_ shots: Int) async throws {
        let dir = makeTempDir("series-\(shots)"); defer { removeTree(dir) }
        let settings = seriesSettings(dir: dir, shots: shots)
        var options = RuntimeOptions()
        let composer = StackComposer()
        options.composer = composer
        let sessionDate = Date(timeIntervalSince1970: 1_796_000_000)
        options.sessionDate = { sessionDate }
        let booth = TestBooth(settings, options: options, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        // The picture's save is noted during its review (as with any review longer than a save).
        try #require(await booth.finishSeries(shots: shots) { booth.logged("the session's picture saved to") },
                     "the session completes:\n\(booth.logText)")
        #expect(composer.lastTakenAt.withLock { $0 } == sessionDate, "the composer gets the session's date")
        let photos = settings.storage.dir
        try #require(await eventually { savedCaptures(in: photos).count == shots + 1 }, "\(booth.logText)")

        // Files: the captures as taken and the picture, one session number, one folder.
        let files = savedCaptures(in: photos)
        let names = files.map(fileName)
        #expect(names == (1...shots).map { "booth-000001-\($0).jpg" } + ["booth-000001-picture.jpg"])
        #expect(Set(files.map { ($0 as NSString).deletingLastPathComponent }).count == 1, "all in one date folder")
        for path in files { #expect(decodesFully(path), "\(path) decodes") }
        let captureFiles = try files.dropLast().map { try AtomicFile.read($0) }
        let picture = try AtomicFile.read(files[files.count - 1])
        let captureSize = settings.camera.captureSize
        #expect(jpegHeader(ofFile: files[files.count - 1])?.size
                == FrameSize(width: captureSize.width, height: captureSize.height * shots))
        // The picture is exactly the composer's output for the saved captures, in shot order.
        #expect(try StackComposer().composePicture(captures: captureFiles, takenAt: Date()).jpeg == picture)
        #expect(composer.calls.withLock { $0 } == 1)

        // Screens: between shots "k of n", then the review of the picture, with the picture's bytes.
        let screens = booth.display.screens
        if shots > 1 {
            #expect(screens.contains(.betweenShots(next: 2, of: 3)))
            #expect(screens.contains(.betweenShots(next: 3, of: 3)))
        }
        let reviews = screens.compactMap { s -> UInt64? in if case let .review(id) = s { id } else { nil } }
        // One review per session; it is shown again with the same id when its print status changes.
        try #require(Set(reviews).count == 1, "\(reviews)")
        let pictureID = reviews[0]
        #expect(pictureID == UInt64(shots + 1), "the picture has the id after the captures'")
        // Shown again (same bytes) whenever its print status changes.
        #expect(!booth.display.reviewJPEGs.isEmpty && booth.display.reviewJPEGs.allSatisfy { $0 == picture },
                "\(booth.display.reviewJPEGs.map(\.count))")

        // Printing: one request, for the picture's id, rendered from the picture.
        // Journaled first, then rendered by the print thread (renderPending until its page is written).
        try #require(await eventually {
            let requests = booth.runtime.printWorker.journal.requests
            return requests.count == 1 && requests[0].renderPending != true
        }, "\(booth.logText)")
        let request = booth.runtime.printWorker.journal.requests[0]
        #expect(request.captureID == pictureID)
        let page = try AtomicFile.read(request.file)
        let media = try #require(MediaSize(pwg: settings.print.media))
        #expect(page == (try PrintRenderer(quality: 92).render(picture, to: media.pixels(dpi: settings.print.dpi))),
                "the print is the picture rendered to the media")

        // Counting: one session, `shots` captures (the picture is not a capture), in the totals too.
        #expect(booth.runtime.counters.sessions == 1)
        #expect(await eventually { booth.runtime.counters.captures == shots })
        #expect(await eventually { booth.runtime.admin.stats.current.captures == shots })
        #expect(await eventually { booth.logged("session 1's picture saved", "booth-000001-picture.jpg") })
        // The log names the picture by its session, never by the machine's id, which is no capture's (issue 13).
        #expect(booth.logged("session 1's picture composed"), "\(booth.logText)")
        let byID = booth.logs.all.filter { $0.contains("picture \(pictureID)") || $0.contains("capture \(pictureID)") }
        #expect(byID.isEmpty, "\(byID)")

        // A restart counts the files again the same way: next session 2, captures not doubled.
        booth.shutdownAndWait()
        let again = TestBooth(settings, options: options, clock: .startingNow())
        again.start()
        defer { again.shutdownAndWait() }
        try #require(await eventually { again.camera.isStreaming })
        #expect(again.logged("next session 2"))
        #expect(again.runtime.admin.stats.current.captures == shots)
    }

    @Test("a long press between shots cancels the series: nothing composed or printed; captures kept or deleted",
          arguments: [CancelledCaptures.keep, .delete])
    func cancelMidSeries(_ policy: CancelledCaptures) async throws {
        let dir = makeTempDir("cancel-\(policy)"); defer { removeTree(dir) }
        var settings = seriesSettings(dir: dir, shots: 3, betweenMilliseconds: 30_000)
        settings.session.cancelledCaptures = policy
        var options = RuntimeOptions()
        let composer = StackComposer()
        options.composer = composer
        let booth = TestBooth(settings, options: options, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        try #require(await eventually { booth.state == .betweenShots(next: 2) }, "\(booth.logText)")
        let photos = settings.storage.dir
        try #require(await eventually { savedCaptures(in: photos).count == 1 }, "capture 1 is saved")
        let status = booth.runtime.statusReport(configPath: "-")
        #expect(status.state == "between-shots")
        #expect(status.shot == "2 of 3")

        booth.button.longPressOfNewPress()
        try #require(await eventually { booth.runtime.counters.cancelled == 1 && booth.state.isIdle }, "\(booth.logText)")
        switch policy {
        case .keep:
            #expect(savedCaptures(in: photos).map(fileName) == ["booth-000001-1.jpg"])
            #expect(await eventually { booth.runtime.counters.captures == 1 })
        case .delete:
            #expect(await eventually { savedCaptures(in: photos).isEmpty }, "\(booth.logText)")
            // The file goes before the log line that says so.
            #expect(await eventually { booth.logged("capture 1 deleted", "booth-000001-1.jpg") })
            #expect(await eventually { booth.runtime.counters.captures == 0 }, "a deleted capture is not counted")
            #expect(await eventually { booth.runtime.admin.stats.current.captures == 0 })
        }
        // Nothing composed, nothing printed, no picture file, even a while later (the pause between
        // shots passed too, and the threads had a moment).
        try #require(await booth.advance(milliseconds: 31_000))
        try? await Task.sleep(for: .milliseconds(100))
        #expect(composer.calls.withLock { $0 } == 0)
        #expect(booth.runtime.printWorker.journal.requests.isEmpty)
        #expect(!savedCaptures(in: photos).contains { PhotoStore.isPicture(fileName: fileName($0)) })
        #expect(!booth.display.screens.contains { if case .review = $0 { true } else { false } })
    }

    @Test("several shots without a composer: the captures are saved, the session fails at compose, nothing printed")
    func seriesWithoutComposer() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = seriesSettings(dir: dir, shots: 2)
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        #expect(booth.logged("no picture composer"))
        booth.button.press()
        try #require(await eventually { booth.state == .betweenShots(next: 2) }, "\(booth.logText)")
        try #require(await booth.advance(milliseconds: settings.session.betweenShotsMilliseconds))
        try #require(await eventually { booth.runtime.counters.failed == 1 && booth.state.isIdle }, "\(booth.logText)")
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 2 })
        #expect(savedCaptures(in: settings.storage.dir).map(fileName) == ["booth-000001-1.jpg", "booth-000001-2.jpg"])
        // endSession (the failed count) runs before the idle screen is shown: wait for the screen.
        #expect(await eventually { booth.display.screens.contains(.idle(notice: BoothMachine.composeFailedNotice)) },
                "\(booth.display.screens)")
        #expect(booth.runtime.printWorker.journal.requests.isEmpty)
    }

    @Test("one shot without a composer keeps today's behaviour: the capture is the picture (no picture file), printed")
    func singleShotWithoutComposer() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = seriesSettings(dir: dir, shots: 1)
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        try #require(await booth.finishSession(completed: 1), "\(booth.logText)")
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 1 })
        let files = savedCaptures(in: settings.storage.dir)
        #expect(files.map(fileName) == ["booth-000001-1.jpg"])
        #expect(booth.display.screens.contains(.review(pictureID: 1)))
        let saved = try AtomicFile.read(files[0])
        #expect(!booth.display.reviewJPEGs.isEmpty && booth.display.reviewJPEGs.allSatisfy { $0 == saved },
                "\(booth.display.reviewJPEGs.map(\.count)) vs \(saved.count)")
        try #require(await eventually { booth.runtime.printWorker.journal.requests.count == 1 })
        #expect(booth.runtime.printWorker.journal.requests[0].captureID == 1)
    }
}

@Suite struct PictureFileTests {
    @Test func pictureNamesAreTiedToTheirCapturesAndAreNotCountedAsCaptures() throws {
        #expect(PhotoStore.captureName(session: 42, shot: 0) == "booth-000042-picture.jpg")
        #expect(PhotoStore.captureName(session: 42, shot: 3) == "booth-000042-3.jpg")
        #expect(PhotoStore.sessionNumber(inFileName: "booth-000042-picture.jpg") == 42)
        #expect(PhotoStore.isPicture(fileName: "booth-000042-picture.jpg"))
        #expect(!PhotoStore.isPicture(fileName: "booth-000042-1.jpg"))
        #expect(!PhotoStore.isPicture(fileName: "other-picture.jpg"))

        let dir = makeTempDir(); defer { removeTree(dir) }
        let store = PhotoStore(directory: dir, dateFolder: { "2026-11-29" })
        try store.prepare()
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]
        for shot in 1...3 { _ = try store.saveCapture(jpeg, session: 7, shot: shot) }
        let picturePath = try store.saveCapture(jpeg, session: 7, shot: 0)
        #expect(picturePath.hasSuffix("2026-11-29/booth-000007-picture.jpg"))
        // The session-number rebuild from the files sees the picture's number too; the totals count captures only.
        let again = PhotoStore(directory: dir, dateFolder: { "2026-11-29" })
        try again.prepare()
        #expect(again.nextSession == 8)
        let files = StatsStore.captureFiles(in: dir)
        #expect(files.count == 3 && files.allSatisfy { $0.session == 7 })
        var stats = BoothStats(since: 0)
        #expect(StatsStore.reconcile(&stats, photos: files) == 1)
        #expect(stats.captures == 3 && stats.lastSession == 7)
        // A session whose first name is taken moves to a new number; its other shots and picture follow.
        let stray = "\(dir)/2026-11-29/booth-000008-1.jpg"
        try AtomicFile.write(jpeg, to: stray, durable: false, replace: false)
        let first = try again.saveCapture(jpeg, session: 8, shot: 1)
        let second = try again.saveCapture(jpeg, session: 8, shot: 2)
        let tied = try again.saveCapture(jpeg, session: 8, shot: 0)
        #expect(fileName(first) == "booth-000009-1.jpg")
        #expect(fileName(second) == "booth-000009-2.jpg")
        #expect(fileName(tied) == "booth-000009-picture.jpg")
        try again.delete(path: stray)
        try again.delete(path: first)
        try again.delete(path: second)
        try again.delete(path: tied)
        // Deleting a capture (a cancelled series) removes its file.
        try store.delete(path: "\(dir)/2026-11-29/booth-000007-2.jpg")
        #expect(StatsStore.captureFiles(in: dir).count == 2)
        #expect(throws: FileError.self) { try store.delete(path: "\(dir)/2026-11-29/booth-000007-2.jpg") }
    }
}

extension BoothRuntime {
    /// The print worker behind the printer port (the runtime makes a `PrintWorker`); these tests read its journal.
    var printWorker: PrintWorker { printer as! PrintWorker }
}
