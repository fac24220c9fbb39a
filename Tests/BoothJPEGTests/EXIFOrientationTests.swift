import BoothCore
@testable import BoothJPEG
import BoothTestSupport
import Foundation
import Testing

@Suite("Exif Orientation: JPEGs taken in are turned upright")
struct EXIFOrientationTests {
    /// A `size` crop of a real capture (decoded at half size), with a red 32x32 marker at its top-left.
    static func photo(_ size: FrameSize) throws -> [UInt8] {
        let urls = SharedImages.captures(endingIn: "_1280x720.jpg")
        let url = try #require(urls.first, Comment(rawValue: SharedImages.missingMessage("_1280x720.jpg")))
        let full = try JPEGDecoder().decodeRGB(try SharedImages.bytes(url), scale: .half)  // 640x360
        var out = [UInt8](repeating: 0, count: size.width * size.height * 3)
        for y in 0..<size.height {
            let s = ((y + 20) * full.size.width + 40) * 3
            out.replaceSubrange((y * size.width * 3)..<((y + 1) * size.width * 3), with: full.bytes[s..<(s + size.width * 3)])
        }
        EXIFFixture.paintCorner(&out, width: size.width, size: 32, rgb: (255, 0, 0))
        return out
    }

    /// The upright `photo` stored as Orientation `n` says, as a JPEG (q95) with that Exif APP1.
    static func storedJPEG(_ upright: [UInt8], _ size: FrameSize, orientation n: Int, bigEndian: Bool = false) throws -> [UInt8] {
        let stored = EXIFFixture.stored(upright, width: size.width, height: size.height, orientation: n)
        let frame = Frame(format: .rgb24, size: stored.size, bytesPerLine: stored.size.width * 3, bytes: stored.bytes,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        let jpeg = try JPEGEncoder().encode(frame, quality: 95)
        return EXIFFixture.inserting(EXIFFixture.app1(orientation: n, bigEndian: bigEndian), into: jpeg)
    }

    /// Mean absolute difference per channel value, 255 when the sizes differ.
    static func meanDifference(_ a: RGBImage, _ b: [UInt8], _ size: FrameSize) -> Double {
        guard a.size == size, a.bytes.count == b.count else { return 255 }
        var sum = 0
        for i in b.indices { sum += abs(Int(a.bytes[i]) - Int(b[i])) }
        return Double(sum) / Double(b.count)
    }

    @Test("the tag is read in both byte orders, for all eight values", arguments: [false, true])
    func readsBothByteOrders(bigEndian: Bool) throws {
        let plain = try JPEGEncoder().encode(Frame(format: .rgb24, size: FrameSize(width: 16, height: 16), bytesPerLine: 48,
                                                   bytes: [UInt8](repeating: 90, count: 768),
                                                   timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0), quality: 80)
        #expect(EXIFOrientation.read(plain) == .topLeft, "no APP1: upright")
        for n in 1...8 {
            let jpeg = EXIFFixture.inserting(EXIFFixture.app1(orientation: n, bigEndian: bigEndian), into: plain)
            #expect(EXIFOrientation.read(jpeg).rawValue == n)
            // An XMP APP1 before the Exif one is passed over.
            let xmp = Array("http://ns.adobe.com/xap/1.0/\0<x/>".utf8)
            let xmpSegment: [UInt8] = [0xFF, 0xE1, 0, UInt8(xmp.count + 2)] + xmp
            #expect(EXIFOrientation.read(EXIFFixture.inserting(xmpSegment, into: jpeg)).rawValue == n)
            // Reset in place: same length, value 1, the rest kept.
            let reset = EXIFOrientation.resettingTag(jpeg)
            #expect(reset.count == jpeg.count && EXIFOrientation.read(reset) == .topLeft)
            #expect(EXIFOrientationTag.find(in: reset)?.value == 1, "the tag is still there, set to 1")
            #expect(zip(reset, jpeg).filter { $0 != $1 }.count == (n == 1 ? 0 : 1), "one byte changed")
        }
        for bad in [0, 9, 0xFFFF] {
            #expect(EXIFOrientation.read(EXIFFixture.inserting(EXIFFixture.app1(orientation: bad, bigEndian: bigEndian), into: plain)) == .topLeft)
        }
    }

    @Test("garbage Exif never traps and reads as upright: every truncation, every byte flipped")
    func garbageIsUpright() throws {
        let plain = try JPEGEncoder().encode(Frame(format: .rgb24, size: FrameSize(width: 16, height: 16), bytesPerLine: 48,
                                                   bytes: [UInt8](repeating: 90, count: 768),
                                                   timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0), quality: 80)
        let segment = EXIFFixture.app1(orientation: 6)
        let jpeg = EXIFFixture.inserting(segment, into: plain)
        let start = 4 + (Int(plain[4]) << 8 | Int(plain[5]))  // after SOI and APP0
        #expect(Array(jpeg[start..<(start + segment.count)]) == segment)
        for i in 0..<segment.count {
            for v: UInt8 in [0x00, 0xFF, 0x7F] {
                var bytes = jpeg
                bytes[start + i] = v
                _ = EXIFOrientation.read(bytes)
            }
            // The APP1 cut short: its length now claims bytes past the end of the input.
            _ = EXIFOrientation.read(Array(jpeg.prefix(start + i)))
        }
        // A TIFF structure pointing past its segment: IFD0 offset and entry count huge.
        var far = segment
        far[4 + 6 + 4] = 0xFF; far[4 + 6 + 5] = 0xFF; far[4 + 6 + 6] = 0xFF; far[4 + 6 + 7] = 0x7F
        #expect(EXIFOrientation.read(EXIFFixture.inserting(far, into: plain)) == .topLeft)
        var many = segment
        many[4 + 6 + 8] = 0xFF; many[4 + 6 + 9] = 0xFF
        // Intel order: the 0x0112 entry is the second, still inside the segment, so it is found.
        #expect(EXIFOrientation.read(EXIFFixture.inserting(many, into: plain)) == .rightTop)
        #expect(EXIFOrientation.read([]) == .topLeft)
        #expect(EXIFOrientation.read([0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x08, 0x45, 0x78, 0x69, 0x66]) == .topLeft)
    }

    /// 320x240 is whole 4:2:0 MCUs (16x16) both ways; 322x242 is not (re-encoded from its Y'CbCr planes, turned by
    /// libyuv), nor is 321x243 (odd: re-encoded through RGB).
    @Test("all eight orientations of a real photo come out upright, losslessly at whole-MCU sizes",
          arguments: [FrameSize(width: 320, height: 240), FrameSize(width: 322, height: 242), FrameSize(width: 321, height: 243)])
    func allEightUpright(size: FrameSize) throws {
        let upright = try Self.photo(size)
        let rotator = try JPEGRotator()
        let decoder = try JPEGDecoder()
        for n in 1...8 {
            let orientation = try #require(EXIFOrientation(rawValue: n))
            let jpeg = try Self.storedJPEG(upright, size, orientation: n, bigEndian: n % 2 == 0)
            let (bytes, method, seen) = try rotator.upright(jpeg, quality: 95)
            #expect(seen == orientation)
            let wholeMCU = size.width % 16 == 0 && size.height % 16 == 0
            let expected: JPEGRotationMethod = n == 1 ? .unchanged : (wholeMCU || n == 5 ? .lossless : .reencoded)
            #expect(method == expected, "orientation \(n) at \(size)")
            #expect(EXIFOrientation.read(bytes) == .topLeft, "orientation \(n): the result says upright")
            #expect(EXIFOrientationTag.find(in: bytes)?.value == 1, "orientation \(n): the Exif APP1 is kept, tag 1")
            let got = try decoder.decodeRGB(bytes)
            #expect(got.size == size, "orientation \(n): upright size")
            let mean = Self.meanDifference(got, upright, size)
            print("orientation \(n) at \(size): \(method), mean difference \(mean)")
            // The stored JPEG is q95 4:2:0; a re-encode adds a second generation.
            #expect(mean < 3.5, "orientation \(n) (\(method)): mean difference \(mean) to the upright photo")
            // The marker is at the top-left, nowhere else.
            let corner = (got.bytes[(8 * size.width + 8) * 3], got.bytes[(8 * size.width + 8) * 3 + 1])
            #expect(corner.0 > 200 && corner.1 < 60, "orientation \(n): red marker at the top-left, got \(corner)")
            // And the mirror of the right answer is far from it (the check tells mirrors apart).
            let mirrored = EXIFFixture.stored(upright, width: size.width, height: size.height, orientation: 2).bytes
            #expect(Self.meanDifference(got, mirrored, size) > 10)
        }
    }

    /// 1920x1080 4:2:0: whole MCUs across (120), not down (67.5): flips and turns that move the
    /// bottom edge are re-encoded, the others lossless.
    @Test("a real 1920x1080 capture file tagged 2…8 comes out upright; lossless exactly where the width alone decides")
    func realFileUpright() throws {
        let url = try #require(SharedImages.captures1080().first, Comment(rawValue: SharedImages.missingMessage("_1920x1080.jpg")))
        let file = try SharedImages.bytes(url)
        let decoder = try JPEGDecoder(), rotator = try JPEGRotator()
        let original = try decoder.decodeRGB(file)
        for n in 2...8 {
            let (bytes, method, _) = try rotator.upright(EXIFFixture.inserting(EXIFFixture.app1(orientation: n), into: file), quality: 95)
            #expect(method == ([2, 5, 8].contains(n) ? .lossless : .reencoded), "orientation \(n)")
            let got = try decoder.decodeRGB(bytes)
            #expect(got.size == (n >= 5 ? FrameSize(width: 1080, height: 1920) : original.size))
            // Stored again as the tag said, the upright pixels are the file's own.
            let back = EXIFFixture.stored(got.bytes, width: got.size.width, height: got.size.height, orientation: n)
            let mean = Self.meanDifference(original, back.bytes, back.size)
            print("file orientation \(n): \(method), mean difference \(mean)")
            #expect(mean < 2, "orientation \(n) (\(method)): mean difference \(mean)")
        }
    }

    @Test("a decoded image is turned upright by an exact permutation of its pixels")
    func rgbUpright() throws {
        let size = FrameSize(width: 7, height: 5)
        let upright = (0..<(7 * 5 * 3)).map { UInt8($0 % 256) }
        for n in 1...8 {
            let stored = EXIFFixture.stored(upright, width: 7, height: 5, orientation: n)
            let turned = try #require(EXIFOrientation(rawValue: n)).upright(RGBImage(size: stored.size, bytes: stored.bytes))
            #expect(turned == RGBImage(size: size, bytes: upright), "orientation \(n)")
        }
    }

    @Test("a JPEG without the tag, or with Orientation 1, is passed through as it came")
    func uprightUnchanged() throws {
        let jpeg = try Self.storedJPEG(try Self.photo(FrameSize(width: 64, height: 48)), FrameSize(width: 64, height: 48), orientation: 1)
        let rotator = try JPEGRotator()
        #expect(try rotator.upright(jpeg, quality: 90).bytes == jpeg)
        #expect(try rotator.upright(jpeg, quality: 90).method == .unchanged)
        // Orientation 6 on markers TurboJPEG cannot read (no SOF): its error, not a trap.
        let broken = [0xFF, 0xD8] + EXIFFixture.app1(orientation: 6) + [0xFF, 0xDA, 0x00, 0x02]
        #expect(EXIFOrientation.read(broken) == .rightTop)
        #expect(throws: TurboJPEGError.self) { try rotator.upright(broken, quality: 90) }
    }
}
