import BoothCore
import Testing

@testable import BoothJPEG

/// `JPEGEncoder.encode(_:quality:turnedBy:)`: a YUYV or RGB24 frame's pixels turned by libyuv on
/// the way into one encode, for sizes that are not whole MCUs (40x24: 24 is not a multiple of 16).
@Suite struct TurnedEncodeTests {
    static let width = 40, height = 24

    /// Where the pixel at (x, y) of a `w`x`h` picture lands after a clockwise turn.
    static func turnedPosition(_ r: Rotation, x: Int, y: Int, w: Int, h: Int) -> (x: Int, y: Int) {
        switch r {
        case .r0: (x, y)
        case .r90: (h - 1 - y, x)
        case .r180: (w - 1 - x, h - 1 - y)
        case .r270: (y, w - 1 - x)
        }
    }

    /// The source pixel that lands at (x, y) of the turned picture (`w`x`h` before the turn).
    static func sourcePosition(_ r: Rotation, x: Int, y: Int, w: Int, h: Int) -> (x: Int, y: Int) {
        turnedPosition(r.inverse, x: x, y: y, w: r.rotated(FrameSize(width: w, height: h)).width,
                       h: r.rotated(FrameSize(width: w, height: h)).height)
    }

    /// Y' per pixel (a texture that tells every position apart), Cb/Cr per 2x2 block, so that a turned
    /// copy is again a YUYV frame with the same values.
    static func luma(_ x: Int, _ y: Int) -> UInt8 { UInt8(16 + (x * 37 + y * 11 + (x * y) % 23) % 220) }
    static func chroma(_ bx: Int, _ by: Int) -> (UInt8, UInt8) { (UInt8(60 + (bx * 13) % 120), UInt8(70 + (by * 29) % 110)) }

    /// A YUYV frame `w`x`h` (even) whose pixel (x, y) is the pattern's pixel at `source(x, y)`.
    static func yuyv(w: Int, h: Int, source: (Int, Int) -> (x: Int, y: Int)) -> Frame {
        var bytes = [UInt8](repeating: 0, count: w * h * 2)
        for y in 0..<h {
            for x in stride(from: 0, to: w, by: 2) {
                let a = source(x, y), b = source(x + 1, y)
                let (cb, cr) = chroma(a.x / 2, a.y / 2)
                let o = (y * w + x) * 2
                bytes[o] = luma(a.x, a.y); bytes[o + 1] = cb; bytes[o + 2] = luma(b.x, b.y); bytes[o + 3] = cr
            }
        }
        return Pattern.frame(.yuyv, width: w, height: h, bytesPerLine: w * 2, bytes: bytes)
    }

    /// An RGB24 frame `w`x`h` whose pixel (x, y) is the pattern's pixel at `source(x, y)`.
    static func rgb(w: Int, h: Int, source: (Int, Int) -> (x: Int, y: Int)) -> Frame {
        let pattern = Pattern.noisyRGB(width: width, height: height)
        var bytes = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                let s = source(x, y)
                for c in 0..<3 { bytes[(y * w + x) * 3 + c] = pattern[(s.y * width + s.x) * 3 + c] }
            }
        }
        return Pattern.frame(.rgb24, width: w, height: h, bytesPerLine: w * 3, bytes: bytes)
    }

    /// One encode: the turned frame's JPEG is byte for byte the JPEG of the same pixels turned
    /// beforehand (a decode and second encode would differ), and is the turned size.
    @Test(arguments: Rotation.allCases)
    func yuyvIsTurnedBeforeItsOneEncode(rotation: Rotation) throws {
        let w = Self.width, h = Self.height
        let frame = Self.yuyv(w: w, h: h) { x, y in (x, y) }
        let out = rotation.rotated(frame.size)
        let preturned = Self.yuyv(w: out.width, h: out.height) { x, y in Self.sourcePosition(rotation, x: x, y: y, w: w, h: h) }
        let encoder = try JPEGEncoder()
        let turned = try encoder.encode(frame, quality: 90, turnedBy: rotation)
        let reference = try encoder.encode(preturned, quality: 90)
        #expect(try JPEGDecoder().header(turned).size == out)
        #expect(sameBytes(turned, reference), "\(rotation): not the one encode of the turned pixels")
    }

    @Test(arguments: Rotation.allCases)
    func rgb24IsTurnedBeforeItsOneEncode(rotation: Rotation) throws {
        let w = Self.width, h = Self.height
        let frame = Self.rgb(w: w, h: h) { x, y in (x, y) }
        let out = rotation.rotated(frame.size)
        let preturned = Self.rgb(w: out.width, h: out.height) { x, y in Self.sourcePosition(rotation, x: x, y: y, w: w, h: h) }
        let encoder = try JPEGEncoder()
        let turned = try encoder.encode(frame, quality: 90, turnedBy: rotation)
        let reference = try encoder.encode(preturned, quality: 90)
        #expect(try JPEGDecoder().header(turned).size == out)
        #expect(sameBytes(turned, reference), "\(rotation): not the one encode of the turned pixels")
    }

    /// The turn is clockwise: a white top-left corner block on black lands top-right after 90°,
    /// bottom-right after 180°, bottom-left after 270° (checked on the decoded picture, independent
    /// of the permutation above).
    @Test(arguments: Rotation.allCases, [PixelFormat.yuyv, .rgb24])
    func aMarkedCornerLandsClockwise(rotation: Rotation, format: PixelFormat) throws {
        let w = Self.width, h = Self.height
        let frame: Frame
        switch format {
        case .yuyv:
            var bytes = [UInt8](repeating: 128, count: w * h * 2)
            for y in 0..<h { for x in 0..<w { bytes[(y * w + x) * 2] = (x < 8 && y < 8) ? 235 : 16 } }
            frame = Pattern.frame(.yuyv, width: w, height: h, bytesPerLine: w * 2, bytes: bytes)
        default:
            var bytes = [UInt8](repeating: 0, count: w * h * 3)
            for y in 0..<8 { for x in 0..<8 { for c in 0..<3 { bytes[(y * w + x) * 3 + c] = 255 } } }
            frame = Pattern.frame(.rgb24, width: w, height: h, bytesPerLine: w * 3, bytes: bytes)
        }
        let image = try JPEGDecoder().decodeRGB(try JPEGEncoder().encode(frame, quality: 95, turnedBy: rotation))
        let out = rotation.rotated(frame.size)
        #expect(image.size == out)
        func green(_ x: Int, _ y: Int) -> UInt8 { image.bytes[(y * out.width + x) * 3 + 1] }
        let corners = [(2, 2), (out.width - 3, 2), (out.width - 3, out.height - 3), (2, out.height - 3)]
        let lit = corners.indices.filter { green(corners[$0].0, corners[$0].1) > 200 }
        let expected = [Rotation.r0: 0, .r90: 1, .r180: 2, .r270: 3][rotation]
        #expect(lit == [expected].compactMap { $0 }, "\(rotation) \(format): lit corners \(lit)")
        #expect(corners.indices.filter { green(corners[$0].0, corners[$0].1) < 40 }.count == 3)
    }

    /// An odd size turns too (the turned planes are padded for TurboJPEG's 4:2:0 reads): the turned
    /// JPEG decodes to the unturned one's pixels, turned (a smooth picture: the chroma of an odd edge
    /// turned to the front may land half a chroma sample off).
    @Test func oddSizedYUYVTurns() throws {
        let w = 37, h = 21
        var smooth = [UInt8](repeating: 0, count: 38 * h * 3)
        for y in 0..<h { for x in 0..<38 { smooth[(y * 38 + x) * 3] = UInt8(x * 6); smooth[(y * 38 + x) * 3 + 1] = UInt8(y * 11); smooth[(y * 38 + x) * 3 + 2] = 128 } }
        let yuyv = Pattern.yuyv(fromRGB: smooth, width: 38, height: h, range: .limited)
        let frame = Pattern.frame(.yuyv, width: w, height: h, bytesPerLine: 38 * 2, bytes: yuyv)
        let encoder = try JPEGEncoder(), decoder = try JPEGDecoder()
        let plain = try decoder.decodeRGB(try encoder.encode(frame, quality: 95))
        let turned = try decoder.decodeRGB(try encoder.encode(frame, quality: 95, turnedBy: .r90))
        #expect(turned.size == FrameSize(width: h, height: w))
        var expected = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                let p = Self.turnedPosition(.r90, x: x, y: y, w: w, h: h)
                for c in 0..<3 { expected[(p.y * h + p.x) * 3 + c] = plain.bytes[(y * w + x) * 3 + c] }
            }
        }
        // Luma lands exactly (positions); the chroma of the odd edge may sit half a sample off.
        func luma(_ rgb: [UInt8]) -> [UInt8] {
            stride(from: 0, to: rgb.count, by: 3).map { (i: Int) -> UInt8 in
                let r = 299 * Int(rgb[i]), g = 587 * Int(rgb[i + 1]), b = 114 * Int(rgb[i + 2])
                return UInt8((r + g + b) / 1000)
            }
        }
        let lumaDiff = difference(luma(turned.bytes), luma(expected))
        #expect(lumaDiff.mean < 2.5, "luma mean error \(lumaDiff.mean)")
        let diff = difference(turned.bytes, expected)
        #expect(diff.mean < 7, "mean error \(diff.mean)")
    }

    @Test func badFramesThrowAsTheUnturnedEncode() throws {
        let encoder = try JPEGEncoder()
        let mjpeg = Pattern.frame(.mjpeg, width: 16, height: 16, bytesPerLine: 0, bytes: [0xFF, 0xD8])
        #expect(throws: JPEGFrameError.alreadyCompressed) { try encoder.encode(mjpeg, quality: 90, turnedBy: .r90) }
        let short = Pattern.frame(.rgb24, width: 16, height: 16, bytesPerLine: 48, bytes: [UInt8](repeating: 0, count: 100))
        #expect(throws: JPEGFrameError.self) { try encoder.encode(short, quality: 90, turnedBy: .r270) }
        let frame = Pattern.frame(.rgb24, width: 16, height: 16, bytesPerLine: 48, bytes: [UInt8](repeating: 0, count: 768))
        #expect(throws: JPEGFrameError.invalidQuality(0)) { try encoder.encode(frame, quality: 0, turnedBy: .r180) }
    }
}
