import BoothCore
import BoothJPEG
import Testing

@Suite("Captures turned upright in their pixels")
struct JPEGRotationTests {
    /// A noisy-ish RGB pattern so a lossless/lossy difference shows.
    static func frame(_ w: Int, _ h: Int) -> Frame {
        var bytes = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 3
                bytes[i] = UInt8((x * 255) / max(1, w - 1))
                bytes[i + 1] = UInt8((y * 255) / max(1, h - 1))
                bytes[i + 2] = UInt8(((x / 8 + y / 8) % 2) * 200 + 20)
            }
        }
        return Frame(format: .rgb24, size: FrameSize(width: w, height: h), bytesPerLine: w * 3, bytes: bytes,
                     timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
    }

    /// RGB24 turned clockwise.
    static func rotate(_ img: RGBImage, _ r: Rotation) -> RGBImage {
        let w = img.size.width, h = img.size.height, out = r.rotated(img.size)
        var bytes = [UInt8](repeating: 0, count: img.bytes.count)
        for y in 0..<h {
            for x in 0..<w {
                let (dx, dy): (Int, Int)
                switch r {
                case .r0: (dx, dy) = (x, y)
                case .r90: (dx, dy) = (h - 1 - y, x)
                case .r180: (dx, dy) = (w - 1 - x, h - 1 - y)
                case .r270: (dx, dy) = (y, w - 1 - x)
                }
                for c in 0..<3 { bytes[(dy * out.width + dx) * 3 + c] = img.bytes[(y * w + x) * 3 + c] }
            }
        }
        return RGBImage(size: out, bytes: bytes)
    }

    @Test("an MCU-aligned capture turns losslessly: same pixels as decode-then-rotate", arguments: [Rotation.r90, .r180, .r270])
    func lossless(rotation: Rotation) throws {
        let jpeg = try JPEGEncoder().encode(Self.frame(64, 48), quality: 90)
        let (turned, method) = try JPEGRotator().rotate(jpeg, by: rotation, quality: 90)
        #expect(method == .lossless)
        let decoder = try JPEGDecoder()
        let expected = Self.rotate(try decoder.decodeRGB(jpeg), rotation)
        let got = try decoder.decodeRGB(turned)
        #expect(got.size == expected.size)
        // The DCT coefficients are moved, not recomputed: what is left is libjpeg's IDCT and chroma
        // upsampling rounding, which are not exactly symmetric under a turn.
        let (worst, mean) = Self.difference(got, expected)
        print("lossless \(rotation): max difference \(worst), mean \(mean)")
        #expect(worst <= 4 && mean < 0.5, "lossless turn decodes to the rotated pixels (max \(worst), mean \(mean))")
    }

    static func difference(_ a: RGBImage, _ b: RGBImage) -> (Int, Double) {
        guard a.bytes.count == b.bytes.count, !a.bytes.isEmpty else { return (255, 255) }
        var worst = 0, sum = 0
        for i in a.bytes.indices {
            let d = abs(Int(a.bytes[i]) - Int(b.bytes[i]))
            worst = max(worst, d); sum += d
        }
        return (worst, Double(sum) / Double(a.bytes.count))
    }

    @Test("a capture that is not whole MCUs is re-encoded, never trimmed", arguments: [Rotation.r90, .r180, .r270])
    func reencoded(rotation: Rotation) throws {
        // 4:2:0 MCUs are 16x16: 70x34 has partial blocks on both edges.
        let jpeg = try JPEGEncoder().encode(Self.frame(70, 34), quality: 90)
        let (turned, method) = try JPEGRotator().rotate(jpeg, by: rotation, quality: 90)
        #expect(method == .reencoded)
        let decoder = try JPEGDecoder()
        let expected = Self.rotate(try decoder.decodeRGB(jpeg), rotation)
        let got = try decoder.decodeRGB(turned)
        #expect(got.size == rotation.rotated(FrameSize(width: 70, height: 34)), "all pixels kept")
        let (_, mean) = Self.difference(got, expected)
        // Generation loss on this harsh pattern (8-pixel blue checkerboard, 4:2:0) is a few levels;
        // a wrong turn is tens.
        let wrong = Self.rotate(try decoder.decodeRGB(jpeg), rotation == .r180 ? .r0 : rotation.inverse)
        let (_, wrongMean) = Self.difference(got, wrong)
        #expect(mean < 12 && wrongMean > 3 * mean, "re-encoded pixels are the rotated ones (mean \(mean), wrong turn \(wrongMean))")
    }

    @Test("MCU alignment per turn and subsampling")
    func alignment() {
        let h = { (w: Int, hh: Int) in JPEGHeader(size: FrameSize(width: w, height: hh), chromaSubsampling: .s420, colorspace: .yCbCr) }
        #expect(JPEGRotator.isLossless(h(1280, 720), .r90))
        #expect(JPEGRotator.isLossless(h(1280, 720), .r180))
        #expect(!JPEGRotator.isLossless(h(1920, 1080), .r90), "1080 is not a multiple of 16")
        #expect(JPEGRotator.isLossless(h(1920, 1080), .r270), "270 needs whole columns only")
        #expect(!JPEGRotator.isLossless(h(1920, 1080), .r180))
    }

    @Test("no EXIF orientation survives the turn")
    func exifDropped() throws {
        var jpeg = try JPEGEncoder().encode(Self.frame(64, 48), quality: 90)
        // APP1 "Exif" with a little-endian TIFF IFD holding Orientation (0x0112) = 6.
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00,
                             0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00]
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        jpeg.insert(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload, at: 2)
        let (turned, method) = try JPEGRotator().rotate(jpeg, by: .r90, quality: 90)
        #expect(method == .lossless)
        #expect(!containsExif(turned))
        #expect(containsExif(jpeg))
    }

    func containsExif(_ b: [UInt8]) -> Bool {
        let needle = Array("Exif".utf8)
        guard b.count > needle.count else { return false }
        for i in 0..<(b.count - needle.count) where Array(b[i..<(i + needle.count)]) == needle { return true }
        return false
    }
}
