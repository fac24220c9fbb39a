import BoothCore
import BoothDisplay
import BoothJPEG
import BoothTestSupport
import Testing

@Suite("Review of the largest stills", .serialized)
struct LargeReviewTests {
    /// A 45, 61 or 102 MP capture (``LargeStill``: bright left half, dark right half) fills the review on a
    /// 1920x1080 screen, decoded at a TurboJPEG scale (the smallest still at or above what is shown).
    @Test("the review of a 45 to 102 MP capture draws the picture", arguments: [LargeStill.mp45, LargeStill.mp61, LargeStill.mp100])
    func reviewDrawsTheLargestStills(size: FrameSize) throws {
        let screen = FrameSize(width: 1920, height: 1080)
        let fb = MemoryFramebuffer(format: .xrgb8888(screen))
        let c = ScreenCompositor(framebuffer: fb, renderer: try Fixture.renderer())
        c.draw(.review(pictureID: 1), live: nil, capture: try LargeStill.jpeg(size), options: LiveViewOptions(), displayRotation: .r0)
        let green = { (x: Int) in Int((fb.rgb(x: x, y: screen.height / 2) >> 8) & 0xFF) }
        #expect(green(screen.width / 2 - 200) > 150, "the bright half is drawn")
        #expect(green(screen.width / 2 + 200) > 20 && green(screen.width / 2 + 200) < 100, "the dark half is drawn, not black")
        #expect(c.renderer.reviewFailure == nil)
    }

    /// On an 8K screen (7680x4320, display and preview.size's bound) a 45 MP capture drawn to fit is wider than its
    /// half-scale decode (4096 of 6476 pixels): the covering scale is 1/1, over the scaler's decoder limit. It is
    /// drawn from the largest decode within the limit, not replaced by text.review_not_shown.
    @Test("the review of a 45 MP capture on an 8K screen draws the picture")
    func reviewOnAnEightKScreen() throws {
        let screen = FrameSize(width: 7680, height: 4320)
        let fb = MemoryFramebuffer(format: .xrgb8888(screen))
        let c = ScreenCompositor(framebuffer: fb, renderer: try Fixture.renderer())
        c.draw(.review(pictureID: 1), live: nil, capture: try LargeStill.jpeg(LargeStill.mp45), options: LiveViewOptions(), displayRotation: .r0)
        #expect(c.renderer.reviewFailure == nil)
        let green = { (x: Int) in Int((fb.rgb(x: x, y: screen.height / 2) >> 8) & 0xFF) }
        #expect(green(screen.width / 2 - 400) > 150, "the bright half is drawn")
    }
}

@Suite("A review that cannot draw")
struct UndrawableReviewTests {
    /// A capture that does not decode leaves the review's words on the screen (not a black screen) and one log line
    /// per picture.
    @Test func theScreenAndTheLogSaySo() throws {
        let screen = FrameSize(width: 640, height: 360)
        let fb = MemoryFramebuffer(format: .xrgb8888(screen))
        let c = ScreenCompositor(framebuffer: fb, renderer: try Fixture.renderer())
        let broken: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]
        c.draw(.review(pictureID: 7), live: nil, capture: broken, options: LiveViewOptions(), displayRotation: .r0)
        #expect(c.renderer.reviewFailure != nil)
        var lit = 0
        for y in 0..<screen.height { for x in 0..<screen.width where fb.rgb(x: x, y: y) == 0xFF_FFFF { lit += 1 } }
        #expect(lit > 100, "text.review_not_shown is drawn")
        let line = try #require(c.reviewFailureToReport(.review(pictureID: 7)))
        #expect(line.contains("review of picture 7: the capture cannot be drawn"), "\(line)")
        c.draw(.review(pictureID: 7), live: nil, capture: broken, options: LiveViewOptions(), displayRotation: .r0)
        #expect(c.reviewFailureToReport(.review(pictureID: 7)) == nil, "once per picture")
        c.draw(.review(pictureID: 8), live: nil, capture: try LargeStill.jpeg(LargeStill.mp45), options: LiveViewOptions(), displayRotation: .r0)
        #expect(c.renderer.reviewFailure == nil)
        #expect(c.reviewFailureToReport(.review(pictureID: 8)) == nil)
    }
}
