import BoothCore
import BoothJPEG
import BoothLayout
import BoothTestSupport
import Foundation
import Testing

@Suite("Pictures of the largest stills", .serialized)
struct LargeCaptureTests {
    /// Two captures of a 45, 61 or 102 MP body (``LargeStill``: bright left half, dark right half) make a 2-shot
    /// picture: each decoded at the TurboJPEG scale its slot needs, both drawn.
    @Test("a 2-shot session of 45 to 102 MP captures composes", arguments: [LargeStill.mp45, LargeStill.mp61, LargeStill.mp100])
    func twoShotsCompose(size: FrameSize) throws {
        let capture = try LargeStill.jpeg(size)
        let composer = try PictureComposer(options: PictureOptions(dpi: 300))
        let picture = try composer.compose(captures: [capture, capture], takenAt: Date())
        let image = try JPEGDecoder().decodeRGB(picture)
        var bright = 0, dark = 0
        for i in stride(from: 1, to: image.bytes.count, by: 3 * 97) {
            if image.bytes[i] > 170 { bright += 1 } else if image.bytes[i] > 20 && image.bytes[i] < 80 { dark += 1 }
        }
        #expect(bright > 1000 && dark > 1000, "both halves of the captures are drawn: \(bright) bright, \(dark) dark samples")
    }

    /// A slot larger than a quarter of the capture (a single layout at 1000 dpi: about 22 MP) needs the whole 45 MP
    /// capture decoded: the composer's decodes may be as large as a supported camera's still.
    @Test func aLargeSlotDecodesTheWholeCapture() throws {
        let composer = try PictureComposer(options: PictureOptions(layout: .single, dpi: 1000))
        let picture = try composer.compose(captures: [try LargeStill.jpeg(LargeStill.mp45)], takenAt: Date())
        #expect(try JPEGDecoder().header(picture).size == FrameSize(width: 6000, height: 4000))
    }
}
