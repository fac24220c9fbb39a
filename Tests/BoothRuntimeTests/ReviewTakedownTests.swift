import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Testing
@testable import BoothRuntime

@Suite("A picture taken down during its own review (booth's own clock)")
struct ReviewTakedownTests {
    @Test("its QR code leaves the review at once, the review stays; the idle screen after it carries no code")
    func reviewCodeGoes() async throws {
        let dir = makeTempDir("review-takedown"); defer { removeTree(dir) }
        var settings = seriesSettings(dir: dir, shots: 1)
        settings.print.mode = .off
        settings.gallery.idleCodeMilliseconds = 60_000
        var options = RuntimeOptions()
        options.pictureLink = { path, _ in "http://10.42.0.1:8080/p/" + fileName(path).replacingOccurrences(of: ".jpg", with: "") }
        let clock = ManualClock.startingNow()
        let booth = TestBooth(settings, options: options, clock: clock)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually {
            booth.state.isIdle && { if case .idle? = booth.display.lastContent?.screen { true } else { false } }()
        }, "\(booth.logText)")

        booth.button.press()
        try #require(await eventually { booth.state.isReview }, "\(booth.logText)")
        try #require(await eventually { booth.display.lastContent?.link != nil }, "\(booth.logText)")
        let link = try #require(booth.display.lastContent?.link)
        let reviews = booth.display.reviewJPEGs.count

        // Taken down (photoboothctl gallery remove) while its review is on screen: redrawn without the code now.
        booth.runtime.forgetIdleLink(token: String(link.split(separator: "/").last ?? ""))
        #expect(booth.display.reviewJPEGs.count == reviews + 1, "the review drawn again")
        #expect(booth.display.reviewJPEGs.last?.isEmpty == false, "with its picture")
        let now = try #require(booth.display.lastContent)
        #expect({ if case .review = now.screen { true } else { false } }(), "still the review")
        #expect(now.link == nil, "no code for a picture taken down")
        #expect(booth.logged("the review's code of a picture taken down is gone"))

        // The rest of the review, and the idle screen after it: no code comes back.
        #expect(await booth.advance(milliseconds: settings.session.reviewMilliseconds / 2))
        #expect(booth.display.lastContent?.link == nil)
        #expect(await booth.advance(milliseconds: settings.session.reviewMilliseconds))
        #expect(await eventually { booth.state.isIdle }, "\(booth.logText)")
        #expect(booth.display.lastContent?.link == nil, "not on the idle screen either")
    }
}
