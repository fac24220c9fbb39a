import BoothCore
import BoothJPEG
import BoothPrint
import BoothTestSupport
import Testing

@Suite("Prints of the largest stills", .serialized)
struct LargeStillPrintTests {
    /// A single shot of a 45, 61 or 102 MP body (``LargeStill``: bright left half, dark right half) prints on a
    /// 4x6 in page at 300 dpi: decoded at the TurboJPEG scale the page needs, not refused for its size.
    @Test("a 45 to 102 MP capture prints", arguments: [LargeStill.mp45, LargeStill.mp61, LargeStill.mp100])
    func largeStillsPrint(size: FrameSize) throws {
        let pageSize = FrameSize(width: 1800, height: 1200)
        let page = try JPEGDecoder().decodeRGB(try PrintRenderer().render(try LargeStill.jpeg(size), to: pageSize))
        #expect(page.size == pageSize)
        let green = { (x: Int) in Int(page.bytes[((pageSize.height / 2) * pageSize.width + x) * 3 + 1]) }
        #expect(green(100) > 150 && green(pageSize.width - 100) < 100, "both halves: \(green(100)), \(green(pageSize.width - 100))")
    }

    /// A page larger than the still at 1/2 (8x10 in at 600 dpi, 6000x4800, from a 45 MP body) would need the still
    /// decoded whole, over the renderer's decoder limit: it is decoded at the largest scale within the limit
    /// (1/2) and resampled up, not refused.
    @Test("a 45 MP capture prints on a page larger than its half-scale decode (8x10 in at 600 dpi)")
    func largeStillLargePage() throws {
        let pageSize = FrameSize(width: 6000, height: 4800)
        let page = try JPEGDecoder().decodeRGB(try PrintRenderer().render(try LargeStill.jpeg(LargeStill.mp45), to: pageSize))
        #expect(page.size == pageSize)
    }

    @Test("the decode scale is the smallest whose sides still cover the page's, either way round")
    func decodeScale() {
        let page = FrameSize(width: 1800, height: 1200)
        #expect(PrintRenderer.decodeScale(for: LargeStill.mp45, page: page) == .quarter)  // 2048x1366
        #expect(PrintRenderer.decodeScale(for: FrameSize(width: 5464, height: 8192), page: page) == .quarter)
        #expect(PrintRenderer.decodeScale(for: LargeStill.mp100, page: page) == .quarter)  // 2912x2184; 1/8 is 1456 wide
        #expect(PrintRenderer.decodeScale(for: FrameSize(width: 1920, height: 1080), page: page) == .full)
        #expect(PrintRenderer.decodeScale(for: FrameSize(width: 14_400, height: 9600), page: page) == .eighth)
    }
}
