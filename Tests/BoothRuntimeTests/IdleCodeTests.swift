import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Testing
@testable import BoothRuntime

@Suite("The idle screen's codes: the last picture's for gallery.idle_code, the Wi-Fi's (booth's own clock)")
struct IdleCodeTests {
    @Test("kept after the review, gone after gallery.idle_code or when taken down, each session its own; a reload of the Wi-Fi shows at once")
    func idleCode() async throws {
        let dir = makeTempDir("idle-code"); defer { removeTree(dir) }
        var settings = seriesSettings(dir: dir, shots: 1)
        settings.print.mode = .off
        settings.gallery.idleCodeMilliseconds = 60_000
        settings.gallery.wifiSSID = "Photobooth"
        settings.gallery.wifiPassword = "smile-please"
        var options = RuntimeOptions()
        options.pictureLink = { path, _ in "http://10.42.0.1:8080/p/" + fileName(path).replacingOccurrences(of: ".jpg", with: "") }
        let file = ReloadSource(settings)
        let clock = ManualClock.startingNow()
        let booth = TestBooth(settings, options: options, reloaded: file, clock: clock)
        booth.start()
        defer { booth.shutdownAndWait() }
        let wifi = "WIFI:T:WPA;S:Photobooth;P:smile-please;;"
        try #require(await eventually { booth.state.isIdle && booth.display.lastContent?.wifi == wifi }, "\(booth.logText)")
        #expect(booth.display.lastContent?.link == nil, "no picture yet")

        func session(_ n: Int) async throws -> String {
            booth.button.press()
            #expect(await booth.finishSession(completed: n, inReview: { booth.display.lastContent?.link != nil }), "\(booth.logText)")
            let idle = try #require(booth.display.lastContent)
            #expect({ if case .idle = idle.screen { true } else { false } }(), "the idle screen")
            #expect(idle.wifi == wifi)
            return try #require(idle.link, "the last picture's code on the idle screen")
        }
        let first = try await session(1)
        #expect(first.hasPrefix("http://10.42.0.1:8080/p/booth-000001"))
        // Its time: 60 s on the booth's clock, then off the screen, the Wi-Fi code stays.
        #expect(await booth.advance(milliseconds: 55_000, stepMilliseconds: 1000))
        #expect(booth.display.lastContent?.link == first, "still there after 55 s")
        #expect(await booth.advance(milliseconds: 6_000, stepMilliseconds: 1000))
        #expect({ if case .idle? = booth.display.lastContent?.screen { true } else { false } }(), "the idle screen")
        #expect(booth.display.lastContent?.link == nil, "gone after 60 s")
        #expect(booth.display.lastContent?.wifi == wifi)

        // Taken down (photoboothctl gallery remove): gone at once.
        let second = try await session(2)
        booth.runtime.forgetIdleLink(token: String(second.split(separator: "/").last ?? ""))
        #expect(booth.display.lastContent?.link == nil)
        #expect(booth.logged("the idle screen's code of a picture taken down is gone"))

        // The next sessions: each one's own code, never an earlier one's.
        let third = try await session(3)
        #expect(third.hasPrefix("http://10.42.0.1:8080/p/booth-000003"))
        let fourth = try await session(4)
        #expect(fourth.hasPrefix("http://10.42.0.1:8080/p/booth-000004"))

        // A reload of the Wi-Fi: the idle screen on the glass shows the new code now.
        file.settings.withLock { $0.gallery.wifiSSID = "Booth 2" }
        guard case .accepted = booth.runtime.requestReload() else { Issue.record("reload refused"); return }
        #expect(await eventually { booth.display.lastContent?.wifi == "WIFI:T:WPA;S:Booth 2;P:smile-please;;" }, "\(booth.logText)")
    }

    @Test("the default gallery.idle_code: the last picture's code leaves the idle screen 30 s after its review, before the next guest walks up")
    func defaultIdleCodeIsShort() async throws {
        let dir = makeTempDir("idle-code-default"); defer { removeTree(dir) }
        var settings = seriesSettings(dir: dir, shots: 1)
        settings.print.mode = .off
        settings.gallery.idleCodeMilliseconds = Settings.defaults.gallery.idleCodeMilliseconds
        var options = RuntimeOptions()
        options.pictureLink = { path, _ in "http://10.42.0.1:8080/p/" + fileName(path).replacingOccurrences(of: ".jpg", with: "") }
        let clock = ManualClock.startingNow()
        let booth = TestBooth(settings, options: options, clock: clock)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.state.isIdle && booth.camera.isStreaming }, "\(booth.logText)")
        booth.button.press()
        #expect(await booth.finishSession(completed: 1, inReview: { booth.display.lastContent?.link != nil }), "\(booth.logText)")
        let link = booth.display.lastContent?.link
        #expect(link != nil, "a guest who missed the review can still scan it for a moment")
        #expect(await booth.advance(milliseconds: 25_000, stepMilliseconds: 1000))
        #expect(booth.display.lastContent?.link == link, "still there 25 s after the review")
        #expect(await booth.advance(milliseconds: 6_000, stepMilliseconds: 1000))
        #expect(booth.display.lastContent?.link == nil, "gone 30 s after the review: the next guest cannot scan it")
    }
}
