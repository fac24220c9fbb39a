import BoothCore
import BoothJPEG
import Testing

@Suite struct DecoderTests {
    static func sample(width: Int = 320, height: Int = 240, quality: Int = 90) throws -> [UInt8] {
        try JPEGEncoder().encode(Pattern.frame(.rgb24, width: width, height: height, bytesPerLine: width * 3,
                                               bytes: Pattern.rgb(width: width, height: height)), quality: quality)
    }

    @Test(arguments: [(JPEGScale.full, 100, 75), (.half, 50, 38), (.quarter, 25, 19), (.eighth, 13, 10)])
    func scaledDecodeHasTheScaledSize(scale: JPEGScale, width: Int, height: Int) throws {
        let jpeg = try Self.sample(width: 100, height: 75)
        let decoder = try JPEGDecoder()
        let image = try decoder.decodeRGB(jpeg, scale: scale)
        #expect(image.size == FrameSize(width: width, height: height))
        #expect(image.bytes.count == width * height * 3)
        #expect(scale.scaled(FrameSize(width: 100, height: 75)) == image.size)
    }

    @Test func scaledDecodeKeepsTheColours() throws {
        // A flat colour stays that colour at every scale.
        let w = 64, h = 64
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        for i in stride(from: 0, to: rgb.count, by: 3) { rgb[i] = 200; rgb[i + 1] = 60; rgb[i + 2] = 30 }
        let jpeg = try JPEGEncoder().encode(Pattern.frame(.rgb24, width: w, height: h, bytesPerLine: w * 3, bytes: rgb),
                                            quality: 95)
        let decoder = try JPEGDecoder()
        for scale in JPEGScale.allCases {
            let image = try decoder.decodeRGB(jpeg, scale: scale)
            let expected = [UInt8](repeating: 0, count: image.bytes.count).indices.map { [200, 60, 30][$0 % 3] } as [UInt8]
            #expect(difference(image.bytes, expected).max <= 3, "scale 1/\(scale.denominator)")
        }
    }

    @Test func decodeReusesTheCallersBuffer() throws {
        let jpeg = try Self.sample()
        let decoder = try JPEGDecoder()
        var buffer: [UInt8] = []
        let full = try decoder.decode(jpeg, into: &buffer)
        #expect(full == FrameSize(width: 320, height: 240) && buffer.count == 320 * 240 * 3)
        let storage = buffer.withUnsafeBufferPointer { $0.baseAddress }
        let half = try decoder.decode(jpeg, scale: .half, into: &buffer)
        #expect(half == FrameSize(width: 160, height: 120) && buffer.count == 160 * 120 * 3)
        try decoder.decode(jpeg, into: &buffer)
        #expect(buffer.withUnsafeBufferPointer { $0.baseAddress } == storage)
        #expect(buffer == (try decoder.decodeRGB(jpeg)).bytes)
    }

    @Test func validateAcceptsCompleteImagesAndZeroPadding() throws {
        let jpeg = try Self.sample()
        let decoder = try JPEGDecoder()
        #expect(decoder.validate(jpeg))
        #expect(decoder.validate(jpeg + [UInt8](repeating: 0, count: 100)))
    }

    @Test func validateRejectsTruncatedCorruptAndGarbage() throws {
        let jpeg = try Self.sample()
        let decoder = try JPEGDecoder()
        #expect(!decoder.validate([]))
        #expect(!decoder.validate([0xFF, 0xD8]))
        #expect(!decoder.validate([0xFF, 0xD8, 0xFF, 0xD9]))
        #expect(!decoder.validate([UInt8](repeating: 0x5A, count: 4096)))
        #expect(!decoder.validate(Array(jpeg.dropLast())))         // EOI cut
        #expect(!decoder.validate(Array(jpeg.dropLast(2))))
        #expect(!decoder.validate(jpeg + [0x12, 0x34]))             // not ending in EOI
        for fraction in [0.1, 0.5, 0.9] {
            let cut = Array(jpeg.prefix(Int(Double(jpeg.count) * fraction)))
            #expect(!decoder.validate(cut), "prefix \(fraction)")
            // Truncated entropy data behind a well-formed EOI: libjpeg warns, validate says no.
            #expect(!decoder.validate(cut + [0xFF, 0xD9]), "prefix \(fraction) + EOI")
        }
        // The decoder still works after rejecting.
        let stillValid = decoder.validate(jpeg)
        #expect(stillValid)
    }

    @Test func truncatedDecodeThrowsAWarningNamingTheCall() throws {
        let jpeg = try Self.sample()
        let decoder = try JPEGDecoder()
        let cut = Array(jpeg.prefix(jpeg.count / 2))
        do {
            _ = try decoder.decodeRGB(cut)
            Issue.record("a truncated JPEG decoded without a warning")
        } catch {
            #expect(error.call == "tjDecompress2")
            #expect(error.isWarning)
            #expect(error.message.localizedStandardContains("premature end"), "\(error)")
        }
    }

    @Test func garbageHeaderThrowsAFatalErrorNamingTheCall() throws {
        let decoder = try JPEGDecoder()
        // [0x00]: libjpeg first warns (premature end: 1 byte), then fails on the missing SOI, and
        // TurboJPEG 2.1 reports TJERR_WARNING for the call; the others fail outright.
        for (bytes, warning) in [([], false), ([0x00], true), ([UInt8](repeating: 0x5A, count: 1000), false)] as [([UInt8], Bool)] {
            do {
                _ = try decoder.header(bytes)
                Issue.record("garbage produced a header")
            } catch {
                #expect(error.call == "tjDecompressHeader3")
                #expect(error.isWarning == warning, "\(error)")
                #expect(!error.message.isEmpty)
            }
        }
        // A failed header leaves TurboJPEG's handle mid-header; the decoder recovers from it.
        let jpeg = try Self.sample()
        #expect(try decoder.header(jpeg).size == FrameSize(width: 320, height: 240))
        #expect(decoder.validate(jpeg))
    }

    /// `maxPixels` bounds what one decode makes, after scaling: the whole image is refused, a half-size decode made.
    @Test func decodesOverTheLimitAreRefused() throws {
        let jpeg = try Self.sample()
        let decoder = try JPEGDecoder(maxPixels: 320 * 240 - 1)
        #expect(try decoder.header(jpeg).size == FrameSize(width: 320, height: 240))
        #expect(decoder.validate(jpeg), "validate decodes at 1/8")
        #expect(throws: TurboJPEGError.self) { try decoder.decodeRGB(jpeg) }
        #expect(try decoder.decodeRGB(jpeg, scale: .half).size == FrameSize(width: 160, height: 120))
    }
}
