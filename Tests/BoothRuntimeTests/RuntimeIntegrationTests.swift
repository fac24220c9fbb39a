import BoothClock
import BoothCamera
import BoothCore
import BoothPorts
import BoothDisplay
import BoothJPEG
import BoothRaster
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage

// The real BoothRuntime on its own thread, driven through a fake button, with the simulated
// camera and real storage in a temp directory. Serialized: each test owns its booth and
// these runtimes stream frames, which the 2-core CI machine shares. The booth's timers run on a
// manual clock the test advances (RuntimeHarness.swift).

@Suite(.serialized) struct RuntimeIntegrationTests {
    static let previewSize = FrameSize(width: 320, height: 240)
    static let captureSize = FrameSize(width: 640, height: 480)

    // MARK: 1. Sessions and their files

    @Test func pressesMakeNumberedCapturesAtTheCaptureSizeAndNumbersContinueAfterARestart() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = fastSettings(dir: dir)
        let photos = settings.storage.dir
        do {
            let booth = TestBooth(settings, clock: .startingNow())
            booth.start()
            defer { booth.shutdownAndWait() }
            try #require(await eventually { booth.camera.isStreaming }, "the booth streams in idle")
            for n in 1...3 {
                booth.button.press()
                try #require(await booth.finishSession(completed: n), "session \(n) completes:\n\(booth.logText)")
            }
            try #require(await eventually { savedCaptures(in: photos).count == 3 })
            booth.shutdownAndWait()
            #expect(booth.exited == 0)
        }
        let first = savedCaptures(in: photos)
        #expect(first.map { ($0 as NSString).lastPathComponent }
                == ["booth-000001-1.jpg", "booth-000002-1.jpg", "booth-000003-1.jpg"])
        for path in first {
            let folder = ((path as NSString).deletingLastPathComponent as NSString).lastPathComponent
            #expect(PhotoStore.isDateFolder(folder), "\(path) is in a date folder")
            #expect(jpegHeader(ofFile: path)?.size == settings.camera.captureSize, "\(path) decodes at the capture size")
            #expect(decodesFully(path))
        }

        // A new runtime on the same directory: the files are the truth.
        let again = TestBooth(settings, clock: .startingNow())
        again.start()
        defer { again.shutdownAndWait() }
        try #require(await eventually { again.camera.isStreaming })
        #expect(again.logged("next session 4"))
        again.button.press()
        try #require(await eventually { savedCaptures(in: photos).count == 4 }, "\(again.logText)")
        #expect(savedCaptures(in: photos).map { ($0 as NSString).lastPathComponent }.last == "booth-000004-1.jpg")
    }

    // MARK: 2. Capture size different from the preview size

    @Test func captureAtItsOwnSizeThenTheStreamReturnsToThePreviewSize() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.camera.previewSize = Self.previewSize
        settings.camera.captureSize = Self.captureSize
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        for n in 1...2 {
            let idleScreens = booth.display.screens.filter { $0 == .idle(notice: nil) }.count
            booth.button.press()
            // The state and the completed count change before the idle screen is shown: wait for
            // this session's idle screen, or the frames below would be counted from the previous one.
            try #require(await booth.finishSession(completed: n), "session \(n) completes:\n\(booth.logText)")
            try #require(await eventually {
                booth.display.screens.filter { $0 == .idle(notice: nil) }.count > idleScreens
            }, "session \(n)'s idle screen:\n\(booth.logText)")
            // Back in idle, the live frames are at the preview size again (frames come as the clock moves).
            let back = await booth.advance(untilMilliseconds: 10_000) {
                (booth.display.frameSizes(afterLast: .idle(notice: nil))?.count ?? 0) >= 5
            }
            #expect(back, "live frames arrive after the review")
            let sizes = booth.display.frameSizes(afterLast: .idle(notice: nil)) ?? []
            #expect(!sizes.isEmpty && sizes.allSatisfy { $0 == Self.previewSize },
                    "frames after session \(n) are \(Set(sizes.map(\.description)))")
        }
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 2 })
        for path in savedCaptures(in: settings.storage.dir) {
            #expect(jpegHeader(ofFile: path)?.size == Self.captureSize, "\(path) has the capture size")
        }
        #expect(booth.logged("camera: switched to 640x480 for the capture"))
    }

    // MARK: 3. Camera unplugged and back

    @Test func unpluggedCameraIsAFaultAndTheBoothRecoversByItselfWhenItIsBack() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.previewMilliseconds = nil  // preview until a press
        let booth = TestBooth(settings, cameraName: "sim-unplug-camera", clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        try #require(await eventually { booth.state.isPreview })

        booth.camera.unplug()
        try #require(await eventually { booth.state.faultReasons?[.camera] != nil }, "\(booth.logText)")
        let reason = booth.state.faultReasons?[.camera] ?? ""
        #expect(reason.contains("sim-unplug-camera"), "the reason names the camera: \(reason)")
        // The state changes before the commands that go with it run: wait for those too.
        #expect(await eventually { booth.logged("fault (camera)", "sim-unplug-camera") })
        #expect(await eventually { booth.runtime.counters.failed == 1 }, "the interrupted session counts as failed")
        #expect(await eventually { !booth.camera.isStreaming }, "the camera is released in fault")

        // A retry while unplugged keeps the fault; after the replug a later retry clears it.
        try #require(await booth.advance(untilMilliseconds: 10_000) { booth.logged("fault (camera): camera not available") },
                     "a retry ran while the camera was unplugged:\n\(booth.logText)")
        #expect(booth.state.faultReasons?[.camera] != nil)
        booth.camera.replug()
        // The retries back off (doubling, to 30 s at most).
        try #require(await booth.advance(untilMilliseconds: 60_000) { booth.state.isIdle }, "\(booth.logText)")
        #expect(await eventually { booth.logged("camera recovered") })
        try #require(await eventually { booth.camera.isStreaming })

        booth.button.press()
        try #require(await eventually { booth.state.isPreview })
        booth.button.press()
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 1 }, "\(booth.logText)")
        #expect(await booth.finishSession(completed: 1), "\(booth.logText)")
    }

    // MARK: 4. Storage

    @Test func unwritablePhotosDirectoryIsAStorageFaultNamingThePath() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        let plainFile = "\(dir)/a-regular-file"
        try AtomicFile.write([1, 2, 3], to: plainFile)
        settings.storage.dir = "\(plainFile)/photos"
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.state.faultReasons?[.storage] != nil }, "\(booth.logText)")
        let reason = booth.state.faultReasons?[.storage] ?? ""
        #expect(reason.contains(plainFile), "the reason names the path: \(reason)")
        #expect(await eventually { booth.logged("fault (storage)", plainFile) })
        #expect(await eventually {
            booth.display.screens.contains { if case let .fault(r) = $0 { r[.storage] != nil } else { false } }
        })

        booth.button.press()
        try #require(await eventually { booth.logged("press ignored: booth in fault") })
        #expect(booth.runtime.counters.sessions == 0)
        #expect(booth.state.faultReasons?[.storage] != nil)
    }

    @Test func pressWithTooLittleFreeSpaceIsRefusedWithAReasonAndNoFault() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.storage.minFreeBytes = 1_000_000_000_000_000_000  // more than any disk
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        try #require(await eventually { booth.logged("press refused", "Storage almost full") }, "\(booth.logText)")
        #expect(booth.state.isIdle)
        #expect(booth.runtime.counters.sessions == 0)
        #expect(booth.runtime.counters.faults == 0)
        #expect(!booth.display.screens.contains { if case .fault = $0 { true } else { false } })
        #expect(booth.display.screens.contains {
            if case let .idle(notice?) = $0 { notice.contains("Storage almost full") } else { false }
        }, "the idle screen says why: \(booth.display.screens)")
        #expect(savedCaptures(in: settings.storage.dir).isEmpty)
    }

    // MARK: 5. Long press

    @Test func longPressCancelsPreviewButNotByThePressThatStartedIt() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.previewMilliseconds = nil  // preview until a press
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        let id = booth.button.press()
        try #require(await eventually { booth.state.isPreview })

        booth.button.longPress(id: id)
        try #require(await eventually { booth.logged("long press of the press that started this session ignored") })
        #expect(booth.state.isPreview, "the starting press's own long press does not cancel")

        booth.button.longPressOfNewPress()
        try #require(await eventually { booth.state.isIdle }, "\(booth.logText)")
        #expect(await eventually { booth.runtime.counters.cancelled == 1 })
        #expect(await eventually { booth.logged("session cancelled by a long press") })
        #expect(booth.runtime.counters.captures == 0)
        #expect(savedCaptures(in: settings.storage.dir).isEmpty)
    }

    @Test func longPressOfTheStartingPressDuringCountdownStillTakesThePhoto() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.countdownMilliseconds = 2000
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        // The guest keeps holding the button: the long press comes during the countdown (preview 0 s),
        // which lasts until the test moves the booth's clock.
        let id = booth.button.press()
        try #require(await eventually { booth.state.isCountdown })
        booth.button.longPress(id: id)
        try #require(await eventually { booth.logged("long press of the press that started this session ignored") })
        #expect(booth.state.isCountdown)
        try #require(await booth.advance(milliseconds: 2000))
        try #require(await booth.finishSession(completed: 1), "\(booth.logText)")
        #expect(booth.runtime.counters.cancelled == 0)
        let lines = booth.logs.all
        let ignored = try #require(lines.firstIndex { $0.contains("long press of the press that started this session ignored") },
                                   "\(booth.logText)")
        #expect(lines[..<ignored].last { $0.contains("state: ") }?.hasSuffix("-> countdown") == true,
                "the long press came during the countdown:\n\(booth.logText)")
        #expect(await eventually { savedCaptures(in: settings.storage.dir).count == 1 })
    }

    // MARK: 6. Stuck button

    @Test func stuckButtonIsAFaultUntilReleased() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let booth = TestBooth(fastSettings(dir: dir), clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.fire(.stuck("button stuck: held longer than 30 s (check the wiring)"))
        try #require(await eventually { booth.state.faultReasons?[.button] != nil }, "\(booth.logText)")
        #expect(booth.state.faultReasons?[.button]?.contains("stuck") == true)
        #expect(await eventually { booth.logged("fault (button)", "stuck") })

        booth.button.fire(.unstuck)
        try #require(await eventually { booth.state.isIdle }, "\(booth.logText)")
        #expect(await eventually { booth.logged("button recovered") })
        // And the booth works again.
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        #expect(await booth.finishSession(completed: 1), "\(booth.logText)")
    }

    // MARK: 7. Shutdown

    @Test func shutdownDuringCountdownReturnsZeroAndReleasesTheCamera() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.countdownMilliseconds = 10_000
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        try #require(await eventually { booth.state.isCountdown })

        booth.runtime.requestShutdown()
        try #require(await eventually(timeoutSeconds: 5) { booth.exited != nil }, "run() returns promptly")
        #expect(booth.exited == 0)
        #expect(booth.state == .stopped)
        #expect(!booth.camera.isStreaming, "the camera is stopped")
        #expect(booth.runtime.counters.cancelled == 1)
        #expect(booth.button.isRunning == false, "the button is released")
        #expect(savedCaptures(in: settings.storage.dir).isEmpty)
    }

    @Test func shutdownDuringReviewKeepsTheCaptureOnDisk() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.reviewMilliseconds = 60_000
        settings.camera.captureSize = Self.captureSize
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        try #require(await eventually { booth.state.isReview }, "\(booth.logText)")

        booth.runtime.requestShutdown()
        try #require(await eventually(timeoutSeconds: 5) { booth.exited != nil }, "run() returns promptly")
        #expect(booth.exited == 0)
        #expect(!booth.camera.isStreaming, "the camera is stopped")
        let files = savedCaptures(in: settings.storage.dir)
        #expect(files.count == 1, "the capture in review is on disk when run() returns")
        if let path = files.first {
            #expect(decodesFully(path))
            #expect(jpegHeader(ofFile: path)?.size == Self.captureSize)
        }
        #expect(booth.runtime.counters.completed == 1)
    }

    // MARK: 8. File preview

    // The preview's drawing thread (BoothDisplay) ages the live frame by CLOCK_MONOTONIC: frames stamped
    // on the manual clock look stale once it lags real time by 2 s; nothing here depends on the live view.

    @Test("the file preview is the screen's drawing: idle band, countdown digit, the capture in review")
    func filePreviewIsTheRenderedScreen() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.preview.file = "\(dir)/run/preview.jpg"
        settings.preview.frameRate = 15
        settings.preview.size = FrameSize(width: 320, height: 200)
        // The countdown and the review last until the test moves the booth's clock.
        settings.session.countdownMilliseconds = 3000
        settings.session.reviewMilliseconds = 60_000
        settings.camera.captureSize = Self.captureSize
        let preview = settings.preview.file, size = settings.preview.size
        let booth = TestBooth(settings, filePreview: true, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }

        /// The preview file decoded (nil while missing or not decodable).
        func picture() -> RGBImage? {
            guard let bytes = try? AtomicFile.read(preview), let decoder = try? JPEGDecoder() else { return nil }
            return try? decoder.decodeRGB(bytes)
        }
        /// Pixels in `r` at the text colour (white; the test pattern's bars are at most 75%).
        func textPixels(_ image: RGBImage, in r: PixelRect) -> Int {
            var n = 0
            for y in r.y..<(r.y + r.height) {
                for x in r.x..<(r.x + r.width) {
                    let i = (y * image.size.width + x) * 3
                    if image.bytes[i] >= 230 && image.bytes[i + 1] >= 230 && image.bytes[i + 2] >= 230 { n += 1 }
                }
            }
            return n
        }
        let digit = ScreenRenderer.digitRegion(size), band = ScreenRenderer.bandRegion(size)

        // Idle: the live view at the preview size, the invitation in the band, no digit.
        try #require(await eventually { picture()?.size == size }, "the screen is written at preview.size\n\(booth.logText)")
        let firstBytes = try AtomicFile.read(preview)
        #expect(await booth.advance(untilMilliseconds: 5000) { ((try? AtomicFile.read(preview)) ?? firstBytes) != firstBytes },
                "rewritten while streaming")
        #expect(decodesFully(preview))
        let idle = try #require(picture())
        #expect(textPixels(idle, in: band) > 100, "the idle text in its band")
        #expect(textPixels(idle, in: digit) < 20, "no digit in idle")

        // Countdown: the digit's region is text-coloured.
        booth.button.press()
        #expect(await eventually { picture().map { textPixels($0, in: digit) } ?? 0 > 800 },
                "the countdown digit is drawn into the preview file\n\(booth.logText)")

        // Review: the capture, fitted (640x480 into 320x200: 267x200 with bars), never mirrored.
        try #require(await booth.advance(milliseconds: 3000))
        try #require(await eventually { booth.state.isReview }, "\(booth.logText)")
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 1 })
        let saved = try JPEGDecoder().decodeRGB(try AtomicFile.read(savedCaptures(in: settings.storage.dir)[0]))
        let shownWidth = 267, left = (size.width - shownWidth) / 2
        func differenceFromCapture(_ image: RGBImage) -> Double {
            var total = 0, n = 0
            for y in stride(from: 4, to: size.height - 4, by: 7) {
                for x in stride(from: left + 4, to: left + shownWidth - 4, by: 7) {
                    let sx = (x - left) * saved.size.width / shownWidth, sy = y * saved.size.height / size.height
                    for c in 0..<3 {
                        total += abs(Int(image.bytes[(y * size.width + x) * 3 + c]) - Int(saved.bytes[(sy * saved.size.width + sx) * 3 + c]))
                        n += 1
                    }
                }
            }
            return Double(total) / Double(max(1, n))
        }
        #expect(await eventually { picture().map { differenceFromCapture($0) < 25 } ?? false },
                "during review the preview shows the capture: mean difference \(picture().map(differenceFromCapture) ?? -1)")
        let review = try #require(picture())
        #expect(review.size == size)
        let bar = 3 * (size.height / 2 * size.width + 4)
        #expect(review.bytes[bar] < 20 && review.bytes[bar + 1] < 20 && review.bytes[bar + 2] < 20, "letterbox bar")
        #expect(textPixels(review, in: digit) < 20 && textPixels(review, in: band) < 20, "no text without printing")
        // The preview thread keeps rewriting the file (temp file, rename) until the booth stops:
        // "left" is checked once it has.
        booth.shutdownAndWait()
        try #require(booth.exited != nil, "run() returned")
        #expect(listDirectory("\(dir)/run").filter { $0 != "preview.jpg" }.isEmpty, "no temp files left")
    }
}
