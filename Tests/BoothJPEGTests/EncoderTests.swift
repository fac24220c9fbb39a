import BoothCore
import Testing

@testable import BoothJPEG

@Suite struct EncoderTests {
    let width = 320, height = 240

    @Test func rgb24RoundTripIsCloseToTheSource() throws {
        let source = Pattern.rgb(width: width, height: height)
        let jpeg = try JPEGEncoder().encode(
            Pattern.frame(.rgb24, width: width, height: height, bytesPerLine: width * 3, bytes: source), quality: 92)
        let decoder = try JPEGDecoder()
        let header = try decoder.header(jpeg)
        #expect(header == JPEGHeader(size: FrameSize(width: width, height: height), chromaSubsampling: .s420,
                                     colorspace: .yCbCr))
        let image = try decoder.decodeRGB(jpeg)
        #expect(image.size == FrameSize(width: width, height: height))
        let diff = difference(image.bytes, source)
        #expect(diff.mean < 5, "mean error \(diff.mean)")
        #expect(diff.max < 64, "max error \(diff.max)")
    }

    @Test(arguments: [YCbCrRange.limited, .full])
    func yuyvRoundTripIsCloseToTheSource(range: YCbCrRange) throws {
        let source = Pattern.rgb(width: width, height: height)
        let yuyv = Pattern.yuyv(fromRGB: source, width: width, height: height, range: range)
        let jpeg = try JPEGEncoder().encode(
            Pattern.frame(.yuyv, width: width, height: height, bytesPerLine: width * 2, bytes: yuyv),
            quality: 92, yuvRange: range)
        let image = try JPEGDecoder().decodeRGB(jpeg)
        #expect(image.size == FrameSize(width: width, height: height))
        let diff = difference(image.bytes, source)
        #expect(diff.mean < 5, "mean error \(diff.mean)")
        #expect(diff.max < 64, "max error \(diff.max)")
    }

    @Test func limitedRangeIsExpandedToFullRange() throws {
        func decodedFlat(y: UInt8, range: YCbCrRange) throws -> [UInt8] {
            let bytes = [UInt8](repeating: 0, count: 64 * 2 * 32).enumerated().map { i, _ in i % 2 == 0 ? y : 128 }
            let jpeg = try JPEGEncoder().encode(
                Pattern.frame(.yuyv, width: 64, height: 32, bytesPerLine: 128, bytes: bytes), quality: 95, yuvRange: range)
            return try JPEGDecoder().decodeRGB(jpeg).bytes
        }
        // Video black/white (Y' 16/235) become 0/255; passed through as full range they stay 16/235.
        #expect(try decodedFlat(y: 16, range: .limited).allSatisfy { $0 <= 1 })
        #expect(try decodedFlat(y: 235, range: .limited).allSatisfy { $0 >= 254 })
        #expect(try decodedFlat(y: 16, range: .full).allSatisfy { (15...17).contains($0) })
        #expect(try decodedFlat(y: 235, range: .full).allSatisfy { (234...236).contains($0) })
    }

    @Test func bytesPerLinePaddingIsIgnored() throws {
        let encoder = try JPEGEncoder()
        let rgb = Pattern.rgb(width: width, height: height)
        let paddedRGB = Pattern.rgb(width: width, height: height, bytesPerLine: width * 3 + 40, pad: 0xEE)
        let a = try encoder.encode(Pattern.frame(.rgb24, width: width, height: height, bytesPerLine: width * 3, bytes: rgb), quality: 90)
        let b = try encoder.encode(Pattern.frame(.rgb24, width: width, height: height, bytesPerLine: width * 3 + 40,
                                                 bytes: paddedRGB), quality: 90)
        #expect(a == b)

        let yuyv = Pattern.yuyv(fromRGB: rgb, width: width, height: height, range: .limited)
        let paddedYUYV = Pattern.yuyv(fromRGB: rgb, width: width, height: height, range: .limited,
                                      bytesPerLine: width * 2 + 64, pad: 0x11)
        let c = try encoder.encode(Pattern.frame(.yuyv, width: width, height: height, bytesPerLine: width * 2, bytes: yuyv), quality: 90)
        let d = try encoder.encode(Pattern.frame(.yuyv, width: width, height: height, bytesPerLine: width * 2 + 64,
                                                 bytes: paddedYUYV), quality: 90)
        #expect(c == d)
        #expect(a != c)  // different sources, different paths
        let image = try JPEGDecoder().decodeRGB(d)
        #expect(difference(image.bytes, rgb).mean < 5)
    }

    @Test func oddHeightYUYVEncodes() throws {
        let w = 64, h = 33
        let rgb = Pattern.rgb(width: w, height: h)
        let yuyv = Pattern.yuyv(fromRGB: rgb, width: w, height: h, range: .full)
        let jpeg = try JPEGEncoder().encode(Pattern.frame(.yuyv, width: w, height: h, bytesPerLine: w * 2, bytes: yuyv),
                                            quality: 92, yuvRange: .full)
        let image = try JPEGDecoder().decodeRGB(jpeg)
        #expect(image.size == FrameSize(width: w, height: h))
        #expect(difference(image.bytes, rgb).mean < 5)
    }

    @Test func higherQualityMakesLargerFiles() throws {
        let encoder = try JPEGEncoder()
        let frame = Pattern.frame(.rgb24, width: width, height: height, bytesPerLine: width * 3,
                                  bytes: Pattern.noisyRGB(width: width, height: height))
        let sizes = try [30, 60, 92, 100].map { try encoder.encode(frame, quality: $0).count }
        #expect(sizes == sizes.sorted() && Set(sizes).count == sizes.count, "sizes \(sizes)")
    }

    @Test func oneEncoderServesChangingSizesAndFormats() throws {
        let encoder = try JPEGEncoder()
        let decoder = try JPEGDecoder()
        for (w, h) in [(64, 48), (640, 480), (32, 16), (640, 480)] {
            let rgb = Pattern.rgb(width: w, height: h)
            let yuyv = Pattern.yuyv(fromRGB: rgb, width: w, height: h, range: .limited)
            for frame in [Pattern.frame(.rgb24, width: w, height: h, bytesPerLine: w * 3, bytes: rgb),
                          Pattern.frame(.yuyv, width: w, height: h, bytesPerLine: w * 2, bytes: yuyv)] {
                let jpeg = try encoder.encode(frame, quality: 92)
                #expect(try decoder.header(jpeg).size == FrameSize(width: w, height: h))
                #expect(decoder.validate(jpeg))
            }
        }
    }

    @Test func badFramesThrowTypedErrors() throws {
        let encoder = try JPEGEncoder()
        let rgb = Pattern.rgb(width: 16, height: 16)
        let ok = Pattern.frame(.rgb24, width: 16, height: 16, bytesPerLine: 48, bytes: rgb)
        #expect(throws: JPEGFrameError.invalidQuality(0)) { try encoder.encode(ok, quality: 0) }
        #expect(throws: JPEGFrameError.invalidQuality(101)) { try encoder.encode(ok, quality: 101) }
        #expect(throws: JPEGFrameError.alreadyCompressed) {
            try encoder.encode(Pattern.frame(.mjpeg, width: 16, height: 16, bytesPerLine: 0, bytes: [0xFF, 0xD8]), quality: 92)
        }
        #expect(throws: JPEGFrameError.tooFewBytes(count: 767, needed: 768)) {
            try encoder.encode(Pattern.frame(.rgb24, width: 16, height: 16, bytesPerLine: 48, bytes: Array(rgb.dropLast())), quality: 92)
        }
        #expect(throws: JPEGFrameError.bytesPerLineTooSmall(bytesPerLine: 30, minimum: 32)) {
            try encoder.encode(Pattern.frame(.yuyv, width: 16, height: 16, bytesPerLine: 30, bytes: rgb), quality: 92)
        }
        #expect(throws: JPEGFrameError.invalidSize(FrameSize(width: 0, height: 16))) {
            try encoder.encode(Pattern.frame(.rgb24, width: 0, height: 16, bytesPerLine: 48, bytes: rgb), quality: 92)
        }
        #expect(throws: JPEGFrameError.tooFewBytes(count: 0, needed: 32)) {
            try encoder.encode(Pattern.frame(.yuyv, width: 16, height: 1, bytesPerLine: 32, bytes: []), quality: 92)
        }
        // The encoder still works after refusing frames.
        #expect(try JPEGDecoder().validate(encoder.encode(ok, quality: 92)))
    }

    @Test func yuyvConversionAveragesChromaOfRowPairs() {
        // 2x2 pixels: row 0 = Y 10,20 Cb 100 Cr 200; row 1 = Y 30,40 Cb 101 Cr 50.
        let src: [UInt8] = [10, 100, 20, 200, 30, 101, 40, 50]
        let identity = (0...255).map { UInt8($0) }
        let layout = I420Layout(width: 2, height: 2)
        var out = [UInt8](repeating: 0, count: layout.totalBytes)
        src.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { d in
                identity.withUnsafeBufferPointer { t in
                    convertYUYVToI420(s, bytesPerLine: 4, layout: layout, into: d, lumaTable: t, chromaTable: t)
                }
            }
        }
        #expect(out == [10, 20, 30, 40, 101, 125])
    }
}
