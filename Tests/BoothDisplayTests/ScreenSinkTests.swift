import BoothClock
import BoothCore
import BoothDisplay
import BoothPorts
import BoothTestSupport
import Foundation
import Synchronization
import Testing

/// `FramebufferDisplay` as the screen sink: content arrives as data (`ScreenContent`), the turns come
/// from the booth's one orientation source, the drawing thread is a `WorkerThread`.
@Suite struct ScreenSinkTests {
    /// A source whose turns the test sets; counts its readings.
    final class SetSource: OrientationSource {
        let turns: Mutex<Orientation>
        let readings = Mutex(0)
        init(_ o: Orientation) { turns = Mutex(o) }
        var current: Orientation { readings.withLock { $0 += 1 }; return turns.withLock { $0 } }
        var status: OrientationStatus {
            let t = current
            return OrientationStatus(accelerometer: nil, lastSample: nil, camera: t.camera, display: t.display, source: "test")
        }
        func reconfigure(_ settings: Settings) {}
        var settingsInUse: (camera: RotationSetting, display: RotationSetting) {
            let t = turns.withLock { $0 }
            return (RotationSetting(t.camera), RotationSetting(t.display))
        }
    }

    @Test func theReviewsPictureArrivesAsDataAndTheScreenTurnsByTheSource() throws {
        let size = FrameSize(width: 64, height: 32)
        let framebuffer = MemoryFramebuffer(format: .xrgb8888(size))
        let source = SetSource(Orientation(camera: .r0, display: .r0))
        let display = try FramebufferDisplay(framebuffer: framebuffer, fontPath: Fixture.fontPath, texts: Fixture.texts,
                                             options: LiveViewOptions(), orientation: source, framesPerSecond: 100,
                                             console: nil, log: { _ in })
        let sink: any DisplaySink = display
        display.start()
        let picture = try Fixture.quadrantsJPEG(width: 64, height: 32)
        sink.show(ScreenContent(.review(pictureID: 1), picture: picture, status: nil))
        #expect(waitUntil(5) { near(framebuffer.rgb(x: 8, y: 4), 0xFF_0000) && near(framebuffer.rgb(x: 56, y: 28), 0xFF_FF00) },
                "the review's picture, upright: top-left red \(hex(framebuffer.rgb(x: 8, y: 4)))")
        // The source turns the screen half round: the next drawing follows it (no new content needed).
        source.turns.withLock { $0 = Orientation(camera: .r0, display: .r180) }
        #expect(waitUntil(5) { near(framebuffer.rgb(x: 8, y: 4), 0xFF_FF00) && near(framebuffer.rgb(x: 56, y: 28), 0xFF_0000) },
                "turned 180: top-left is the picture's bottom-right yellow \(hex(framebuffer.rgb(x: 8, y: 4)))")
        #expect(source.readings.withLock { $0 } >= 2)
        let start = Monotonic.now()
        sink.close()
        #expect(Monotonic.now().milliseconds(since: start) < 1_500, "the drawing thread finished at once")
        let drawn = display.framesDrawn
        sink.show(ScreenContent(.idle(notice: nil)))
        usleep(50_000)
        #expect(display.framesDrawn == drawn, "nothing is drawn after close")
    }

    @Test("the frame-rate limit waits on the injected clock: a new screen within the interval is drawn when the clock has moved past it, not after a real-time sleep")
    func frameRateLimitOnTheInjectedClock() throws {
        let framebuffer = MemoryFramebuffer(format: .xrgb8888(FrameSize(width: 64, height: 32)))
        let clock = ManualClock()
        // One frame a second: the second screen waits for the rest of 1000 ms on `clock`.
        let display = try FramebufferDisplay(framebuffer: framebuffer, fontPath: Fixture.fontPath, texts: Fixture.texts,
                                             options: LiveViewOptions(), orientation: SetSource(Orientation(camera: .r0, display: .r0)),
                                             framesPerSecond: 1, console: nil, clock: clock, log: { _ in })
        defer { display.close() }
        display.start()
        #expect(waitUntil(5) { display.framesDrawn == 1 }, "the first screen is drawn at once")
        display.show(ScreenContent(.preview))
        clock.advance(milliseconds: 999)
        #expect(!waitUntil(0.1) { display.framesDrawn > 1 }, "999 ms on the clock: still inside the interval")
        clock.advance(milliseconds: 1)
        // A real-time sleep would need most of a second more; the advance wakes the wait.
        #expect(waitUntil(0.5) { display.framesDrawn == 2 }, "the clock reached the interval's end: drawn")
        #expect(!waitUntil(0.1) { display.framesDrawn > 2 }, "nothing more to draw")
    }
}
