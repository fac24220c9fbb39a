import BoothClock
import BoothCore
import BoothDisplay
import BoothOrientation
import BoothPorts
import BoothTestSupport
import Glibc
import Synchronization
import Testing
@testable import BoothWiring

/// A screen that records what it was shown.
private final class RecordingScreen: DisplaySink {
    let shown = Mutex<[ScreenContent]>([])
    let frames = Mutex(0)
    let closed = Mutex(false)
    func show(_ content: ScreenContent) { shown.withLock { $0.append(content) } }
    func frame(_ frame: Frame) { frames.withLock { $0 += 1 } }
    func close() { closed.withLock { $0 = true } }
}

@Suite("A screen plugged in later")
struct PendingScreenTests {
    @Test("until the screen opens content is kept and frames dropped; then it gets the last content and everything after")
    func opensLater() throws {
        let attempts = Mutex(0)
        let real = RecordingScreen()
        let pending = PendingScreen(intervalMilliseconds: 20) { () -> (any DisplaySink)? in
            attempts.withLock { $0 += 1; return $0 >= 3 ? real : nil }
        }
        pending.show(ScreenContent(.idle(notice: nil)))
        pending.show(ScreenContent(.fault(reasons: [.camera: "camera lost"])))
        pending.frame(Frame(format: .yuyv, size: FrameSize(width: 2, height: 2), bytesPerLine: 4, bytes: [UInt8](repeating: 0, count: 8),
                            timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0))
        #expect(pending.start())
        waitUntil(5) { pending.opened }
        #expect(pending.opened)
        #expect(attempts.withLock { $0 } == 3)
        #expect(real.shown.withLock { $0 } == [ScreenContent(.fault(reasons: [.camera: "camera lost"]))])
        #expect(real.frames.withLock { $0 } == 0, "frames before it opened are dropped")
        pending.show(ScreenContent(.idle(notice: nil)))
        #expect(real.shown.withLock { $0 }.last == ScreenContent(.idle(notice: nil)))
        pending.close()
        #expect(real.closed.withLock { $0 })
    }

    @Test("closed before the screen came: no more attempts, nothing left open")
    func closedFirst() {
        let attempts = Mutex(0)
        let pending = PendingScreen(intervalMilliseconds: 10) { () -> (any DisplaySink)? in attempts.withLock { $0 += 1 }; return nil }
        #expect(pending.start())
        usleep(50_000)
        pending.close()
        let after = attempts.withLock { $0 }
        usleep(50_000)
        #expect(attempts.withLock { $0 } == after)
        #expect(!pending.opened)
    }
}

@Suite("Which screen display.device names")
struct ScreenChoiceTests {
    private func card(_ path: String, connected: Int) -> KMSCardInfo {
        KMSCardInfo(path: path, driver: "vc4", connectors: 2, connected: connected, connector: connected > 0 ? "HDMI-A-1" : nil,
                    mode: connected > 0 ? FrameSize(width: 1920, height: 1080) : nil, refreshHz: connected > 0 ? 60 : nil)
    }

    @Test("auto: the first card with a connected screen (on a Pi 5 often not card0), else /dev/fb0, else none with why")
    func auto() {
        let cards = { ["/dev/dri/card0", "/dev/dri/card1"] }
        let pi5: (String) -> Result<KMSCardInfo, FramebufferError> = { .success($0 == "/dev/dri/card0" ? self.card($0, connected: 0) : self.card($0, connected: 1)) }
        #expect(resolveScreen("auto", cards: cards, probe: pi5, fb0: { .plain }) == .kms("/dev/dri/card1"))
        #expect(resolveScreen("AUTO", cards: cards, probe: { .success(self.card($0, connected: 1)) }, fb0: { .plain }) == .kms("/dev/dri/card0"))
        let unplugged: (String) -> Result<KMSCardInfo, FramebufferError> = { .success(self.card($0, connected: 0)) }
        #expect(resolveScreen("auto", cards: cards, probe: unplugged, fb0: { .plain }) == .fbdev("/dev/fb0"))
        #expect(resolveScreen("auto", cards: cards, probe: unplugged, fb0: { .drmEmulation }) == .kms("/dev/dri/card0"),
                "fb0 is the card's own fbdev emulation: the card, waited for, rather than drawing blind through its emulation")
        #expect(resolveScreen("auto", cards: { [] }, probe: unplugged, fb0: { .drmEmulation }) == .fbdev("/dev/fb0"),
                "no KMS card to use: the emulation is still a screen")
        #expect(resolveScreen("auto", cards: cards, probe: unplugged, fb0: { .none }) == .kms("/dev/dri/card0"),
                "no screen plugged in and no fbdev: the first card, to wait for one")
        #expect(resolveScreen("auto", cards: { [] }, probe: unplugged, fb0: { .none })
                == .none("display.device = auto found no screen (no /dev/dri/card*, no /dev/fb0)"))
        #expect(resolveScreen("auto", cards: cards, probe: { .failure(.call("\($0): no KMS (No such device)", errno: ENODEV, device: $0)) }, fb0: { .none })
                == .none("display.device = auto found no screen (/dev/dri/card0: no KMS (No such device); /dev/dri/card1: no KMS (No such device), no /dev/fb0)"))
    }

    @Test("a path under /dev/dri is KMS, any other an fbdev; empty is no screen")
    func paths() {
        #expect(resolveScreen("/dev/dri/card1") == .kms("/dev/dri/card1"))
        #expect(resolveScreen("/dev/fb1") == .fbdev("/dev/fb1"))
        #expect(resolveScreen("") == .none("display.device is empty"))
    }

    @Test("a display.device card that does not exist is said at once, with the cards there are, and waited for")
    func mistypedCard() {
        var s = Settings.defaults
        s.display.device = "/dev/dri/card97"
        let recorder = LogRecorder()
        let screens = framebufferDisplays(s, SystemClock(), recorder.logger(), OrientationTracker(settings: s))
        #expect(screens.count == 1)
        #expect((screens.first as? PendingScreen)?.opened == false)
        #expect(recorder.all.contains { $0.contains("display: /dev/dri/card97: no such device (DRM cards here: ")
                                            && $0.contains("looking again every 5 s") })
        for screen in screens { screen.close() }
    }

    @Test("a node that is no KMS device, or none at all, is a clear error naming it")
    func notKMS() {
        #expect(throws: FramebufferError.call("/dev/null: no KMS (No such device)", errno: ENODEV, device: "/dev/null")) {
            try KMSFramebuffer.probe("/dev/null")
        }
        #expect(throws: FramebufferError.call("/dev/null: not a KMS device (No such device)", errno: ENODEV, device: "/dev/null")) {
            try KMSFramebuffer(path: "/dev/null", now: { MonotonicInstant(nanoseconds: 0) }, log: { _ in })
        }
        #expect(throws: FramebufferError.self) { try KMSFramebuffer.probe("/nonexistent/card0") }
        #expect(KMSFramebuffer.cards(directory: "/nonexistent").isEmpty)
    }
}
