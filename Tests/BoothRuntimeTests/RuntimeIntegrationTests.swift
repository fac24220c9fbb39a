import BoothCamera
import BoothCore
import BoothJPEG
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime

// The real BoothRuntime on its own thread, driven through a fake button, with the simulated
// camera and real storage in a temp directory. Serialized: each test owns its booth and
// these runtimes stream frames, which the 2-core CI machine shares.

@Suite(.serialized) struct RuntimeIntegrationTests {
    static let previewSize = FrameSize(width: 320, height: 240)
    static let captureSize = FrameSize(width: 640, height: 480)

    // MARK: 1. Sessions and their files

    @Test func pressesMakeNumberedCapturesAtTheCaptureSizeAndNumbersContinueAfterARestart() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = fastSettings(dir: dir)
        let photos = settings.storage.dir
        do {
            let booth = TestBooth(settings)
            booth.start()
            defer { booth.shutdownAndWait() }
            try #require(await eventually { booth.camera.isStreaming }, "the booth streams in idle")
            for n in 1...3 {
                booth.button.press()
                try #require(await eventually { booth.runtime.counters.completed == n && booth.state.isIdle },
                             "session \(n) completes:\n\(booth.logText)")
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
        let again = TestBooth(settings)
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
        let booth = TestBooth(settings)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        for n in 1...2 {
            booth.button.press()
            try #require(await eventually { booth.runtime.counters.completed == n && booth.state.isIdle },
                         "session \(n) completes:\n\(booth.logText)")
            // Back in idle, the live frames are at the preview size again.
            let back = await eventually {
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
        let booth = TestBooth(settings, cameraName: "sim-unplug-camera")
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
        try #require(await eventually { booth.logged("fault (camera): camera not available") },
                     "a retry ran while the camera was unplugged:\n\(booth.logText)")
        #expect(booth.state.faultReasons?[.camera] != nil)
        booth.camera.replug()
        try #require(await eventually(timeoutSeconds: 15) { booth.state.isIdle }, "\(booth.logText)")
        #expect(await eventually { booth.logged("camera recovered") })
        try #require(await eventually { booth.camera.isStreaming })

        booth.button.press()
        try #require(await eventually { booth.state.isPreview })
        booth.button.press()
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 1 }, "\(booth.logText)")
        #expect(await eventually { booth.runtime.counters.completed == 1 })
    }

    // MARK: 4. Storage

    @Test func unwritablePhotosDirectoryIsAStorageFaultNamingThePath() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        let plainFile = "\(dir)/a-regular-file"
        try AtomicFile.write([1, 2, 3], to: plainFile)
        settings.storage.dir = "\(plainFile)/photos"
        let booth = TestBooth(settings)
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
        let booth = TestBooth(settings)
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
        let booth = TestBooth(settings)
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
        let booth = TestBooth(settings)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        let id = booth.button.press()
        try #require(await eventually { booth.state.isCountdown })
        booth.button.longPress(id: id)  // the guest keeps holding the button
        try #require(await eventually { booth.runtime.counters.completed == 1 }, "\(booth.logText)")
        #expect(booth.runtime.counters.cancelled == 0)
        #expect(booth.logged("long press of the press that started this session ignored"))
        #expect(await eventually { savedCaptures(in: settings.storage.dir).count == 1 })
    }

    // MARK: 6. Stuck button

    @Test func stuckButtonIsAFaultUntilReleased() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let booth = TestBooth(fastSettings(dir: dir))
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
        #expect(await eventually { booth.runtime.counters.completed == 1 }, "\(booth.logText)")
    }

    // MARK: 7. Shutdown

    @Test func shutdownDuringCountdownReturnsZeroAndReleasesTheCamera() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.countdownMilliseconds = 10_000
        let booth = TestBooth(settings)
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
        let booth = TestBooth(settings)
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

    @Test func filePreviewIsAValidJPEGWhileStreamingAndTheCaptureDuringReview() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.preview.file = "\(dir)/run/preview.jpg"
        settings.preview.frameRate = 15
        settings.session.reviewMilliseconds = 60_000
        settings.camera.captureSize = Self.captureSize
        let preview = settings.preview.file
        let booth = TestBooth(settings, filePreview: true)
        booth.start()
        defer { booth.shutdownAndWait() }

        try #require(await eventually { jpegHeader(ofFile: preview)?.size == Self.previewSize },
                     "the live view is written at the preview size")
        // Rewritten while streaming, each version a whole JPEG.
        let firstBytes = try AtomicFile.read(preview)
        #expect(await eventually { ((try? AtomicFile.read(preview)) ?? firstBytes) != firstBytes }, "rewritten")
        #expect(decodesFully(preview))

        booth.button.press()
        try #require(await eventually { booth.state.isReview }, "\(booth.logText)")
        try #require(await eventually { savedCaptures(in: settings.storage.dir).count == 1 })
        let saved = try AtomicFile.read(savedCaptures(in: settings.storage.dir)[0])
        #expect(await eventually { (try? AtomicFile.read(preview)) == saved },
                "during review the preview file is the saved capture, byte for byte")
        #expect(jpegHeader(ofFile: preview)?.size == Self.captureSize)
        #expect(listDirectory("\(dir)/run").filter { $0 != "preview.jpg" }.isEmpty, "no temp files left")
    }
}
