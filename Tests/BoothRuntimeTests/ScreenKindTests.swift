import BoothClock
import BoothControl
import BoothCore
import BoothDeviceListing
import BoothDisplay
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothWiring

/// The devices a kind was asked to make screens for.
private final class MadeScreens: Sendable {
    let devices = Mutex<[String]>([])
}

/// A screen kind only the tests have, in the shape every kind has: `display.device = test:NAME` names
/// it, `auto` never picks it, its display is a ``RecordingDisplay`` (the one the test holds), and its
/// section of `devices` lists the one screen it has.
private func testScreenKind(_ display: RecordingDisplay, made: MadeScreens = MadeScreens()) -> ScreenKind {
    ScreenKind(name: "test", role: .device(claims: { $0.hasPrefix("test:") }, detect: nil),
               make: { request in
                   made.devices.withLock { $0.append(request.device) }
                   return [display]
               },
               devices: { report, _ in
                   report.screens = (report.screens ?? []) + [DeviceReport.ScreenSection(kind: "test", title: "screens (test)",
                                                                                        entries: ["test:one (records what it is shown)"])]
               })
}

@Suite("Screens as descriptors: a kind is one descriptor and one registry line")
struct ScreenKindTests {
    @Test("a test-only kind registered with one line: display.device names it, and auto, the KMS and fbdev paths are as before")
    func resolution() {
        let registry = ScreenRegistry(kinds: ScreenRegistry.builtIn.kinds + [testScreenKind(RecordingDisplay())])
        #expect(registry.resolve("test:one") == .screen(kind: "test", device: "test:one"))
        #expect(registry.resolve("/dev/dri/card1") == .kms("/dev/dri/card1"))
        #expect(registry.resolve("/dev/fb1") == .fbdev("/dev/fb1"), "any other path stays an fbdev, whatever kinds come after")
        #expect(registry.resolve("") == .none("display.device is empty"))
        let noScreen: (ScreenKind) -> ScreenDetection? = { _ in ScreenDetection(candidates: [], seen: "nothing") }
        #expect(registry.resolve("auto", detecting: noScreen) == .none("display.device = auto found no screen (nothing, nothing)"),
                "auto asks the kinds that detect (KMS, fbdev), not the test kind")
        #expect(ScreenRegistry.builtIn.resolve("test:one") == .fbdev("test:one"), "without its registry line the kind does not exist")
        // display.device is a path the kinds claim: the settings check takes the kind's own names as they are.
        let checked = Settings.check(text: "[display]\ndevice = test:one\n", file: "booth.conf")
        #expect(checked.diagnostics.isEmpty && checked.settings?.display.device == "test:one", "\(checked.diagnostics)")
    }

    @Test("the test-only kind's section is in the devices listing, after the built-in kinds' own")
    func listedByDevices() {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let registry = ScreenRegistry(kinds: ScreenRegistry.builtIn.kinds + [testScreenKind(RecordingDisplay())])
        let report = DeviceReport.gather(source: "test", devRoot: dir, screens: registry.deviceSections)
        #expect(report.screens == [DeviceReport.ScreenSection(kind: "test", title: "screens (test)",
                                                              entries: ["test:one (records what it is shown)"])])
        #expect(report.drmCards.isEmpty, "no /dev/dri under \(dir)")
        #expect(DeviceReport.gather(source: "test", devRoot: dir).screens == nil, "the built-in kinds alone: no such section")
    }

    @Test("a session on the test-only kind's screen: a press, the countdown, the flash and the picture in review, shown on it")
    func runsASession() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.display.device = "test:one"
        settings.session.countdownMilliseconds = 2000
        let screen = RecordingDisplay(), made = MadeScreens()
        let registry = ScreenRegistry(kinds: ScreenRegistry.builtIn.kinds + [testScreenKind(screen, made: made)])
        let booth = TestBooth(settings, clock: .startingNow(), screens: registry)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming }, "\(booth.logText)")
        #expect(made.devices.withLock { $0 } == ["test:one"], "the kind made its screen once, for the device display.device names")
        booth.button.press()
        try #require(await booth.advance(untilMilliseconds: 10_000) { booth.state.isReview }, "\(booth.logText)")
        // The review screen is drawn after the state turns review, on the display's own thread.
        _ = await eventually { screen.screens.contains { if case .review = $0 { true } else { false } } }
        let shown = screen.screens
        #expect(shown.contains { if case .countdown = $0 { true } else { false } }, "\(shown)")
        #expect(shown.contains(.capture), "\(shown)")
        #expect(shown.contains { if case .review = $0 { true } else { false } }, "\(shown)")
        try #require(await eventually { screen.reviewJPEGs.contains { !$0.isEmpty } }, "the picture itself is shown in review")
        #expect(booth.display.screens.isEmpty, "the harness's own display is not the booth's screen here")
    }
}
