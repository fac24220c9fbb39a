import BoothCore
import BoothJPEG
import BoothTestSupport
import Testing

/// Stills of 45, 61 and 102 MP bodies (``LargeStill``, made at test time): turned upright whole, decoded at the
/// scale a step needs, never refused for their size alone.
@Suite(.serialized) struct LargeStillTests {
    /// The mean luma of rows `rows` of an RGB24 image (green, as the picture is grey).
    static func meanGreen(_ image: RGBImage, rows: Range<Int>) -> Int {
        var sum = 0
        for y in rows { for x in 0..<image.size.width { sum += Int(image.bytes[(y * image.size.width + x) * 3 + 1]) } }
        return sum / max(1, rows.count * image.size.width)
    }

    @Test("a portrait still (EXIF Orientation 6) of 45, 61 and 102 MP is turned upright", arguments: [LargeStill.mp45, LargeStill.mp61, LargeStill.mp100])
    func portraitStillsAreTurnedUpright(size: FrameSize) throws {
        let stored = try LargeStill.jpeg(size, orientation: 6)
        let upright = try JPEGRotator().upright(stored, quality: 90)
        // 5464 rows are not whole MCUs for a quarter turn: the 45 MP one is decoded and encoded again, whole.
        #expect(upright.method == (size == LargeStill.mp45 ? .reencoded : .lossless))
        #expect(EXIFOrientation.read(upright.bytes) == .topLeft)
        let decoder = try JPEGDecoder()
        #expect(try decoder.header(upright.bytes).size == FrameSize(width: size.height, height: size.width))
        let small = try decoder.decodeRGB(upright.bytes, scale: .eighth)
        let half = small.size.height / 2
        #expect(Self.meanGreen(small, rows: 0..<half - 2) > 150, "the stored left half is the top")
        #expect(Self.meanGreen(small, rows: half + 2..<small.size.height) < 100)
    }

    @Test("a whole 102 MP still decodes at the scale a step needs; a decode over the decoder's limit is refused, not made")
    func decodesAtAScale() throws {
        let jpeg = try LargeStill.jpeg(LargeStill.mp100)
        let decoder = try JPEGDecoder()
        #expect(decoder.validate(jpeg))
        var planes = YUVPlanes()
        let header = try decoder.decodeYUVPlanes(jpeg, scale: .half, into: &planes)
        #expect(header.size == LargeStill.mp100)
        #expect(planes.size == FrameSize(width: 5824, height: 4368))
        #expect(try decoder.decodeRGB(jpeg, scale: .quarter).size == FrameSize(width: 2912, height: 2184))
        do {
            _ = try decoder.decodeRGB(jpeg)
            Issue.record("a 102 MP decode at 1/1 went over the decoder's 40 MP")
        } catch {
            #expect(error.description.contains("over the decoder's limit of 40000000 pixels for one decode"), "\(error)")
        }
        // One side longer than any supported camera's, or more pixels: refused whatever the scale.
        let wide = try JPEGDecoder(maxPixels: .max)
        #expect(!wide.validate(try LargeStill.jpeg(FrameSize(width: 12_000, height: 16))))
    }
}
