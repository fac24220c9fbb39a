import BoothClock
import BoothCore
import BoothDisplay
import BoothJPEG
import BoothRaster
import Testing

/// The mirrored live view on an unturned XRGB8888 screen is drawn onto a canvas stored right to left
/// and mirrored by the copy into framebuffer memory: the screen must look exactly as if the camera's
/// frame had been mirrored first, with the overlays (text, digit, band) reading normally.
@Suite("Mirror folded into the copy-in")
struct MirrorTests {
    /// RGB24 `width` x `height`: a red stripe down the left tenth, a green stripe down the right
    /// tenth, a blue-to-white gradient between (so any left-right mistake shows).
    static func stripes(width: Int, height: Int) -> Frame {
        var bytes = [UInt8](repeating: 0, count: width * 3 * height)
        for y in 0..<height {
            for x in 0..<width {
                let c: (UInt8, UInt8, UInt8)
                if x < width / 10 { c = (255, 0, 0) }
                else if x >= width - width / 10 { c = (0, 255, 0) }
                else { let v = UInt8(x * 255 / width); c = (v, v, 255) }
                let i = (y * width + x) * 3
                bytes[i] = c.0; bytes[i + 1] = c.1; bytes[i + 2] = c.2
            }
        }
        return Frame(format: .rgb24, size: FrameSize(width: width, height: height), bytesPerLine: width * 3,
                     bytes: bytes, timestamp: Monotonic.now(), sequence: 0)
    }

    /// `frame` (RGB24, packed rows) with each row reversed.
    static func mirrored(_ frame: Frame) -> Frame {
        var out = frame.bytes
        let w = frame.size.width
        for y in 0..<frame.size.height {
            for x in 0..<w {
                for c in 0..<3 { out[(y * w + x) * 3 + c] = frame.bytes[(y * w + (w - 1 - x)) * 3 + c] }
            }
        }
        return Frame(format: .rgb24, size: frame.size, bytesPerLine: frame.bytesPerLine, bytes: out,
                     timestamp: frame.timestamp, sequence: 0)
    }

    static let screen = FramebufferFormat.xrgb8888(FrameSize(width: 321, height: 199), lineLength: 321 * 4 + 12)

    @Test("mirrored live view: the camera's left column lands at the screen's right; overlays unmirrored",
          arguments: [(FrameSize(width: 200, height: 124), Scaling.fit), (FrameSize(width: 200, height: 124), .fill),
                      (FrameSize(width: 642, height: 398), .fit), (FrameSize(width: 641, height: 360), .fill)])
    func mirroredLiveViewMatchesMirroredFrame(frameSize: FrameSize, scaling: Scaling) throws {
        let format = MirrorTests.screen
        let w = format.size.width, h = format.size.height
        let frame = MirrorTests.stripes(width: frameSize.width, height: frameSize.height)
        let fast = MemoryFramebuffer(format: format, fill: 0xAB)
        let c = ScreenCompositor(framebuffer: fast, renderer: try Fixture.renderer())
        // The countdown: an asymmetric digit "3" and "Photo 2 of 3" in the band over the live view.
        let screen = Screen.countdown(remaining: 3, shot: 2, of: 3)
        c.draw(screen, live: frame, capture: nil, options: LiveViewOptions(scaling: scaling, mirror: true),
               displayRotation: .r0)
        #expect(c.canvas.storedMirrored, "the mirror goes into the copy-in on this screen")
        // Reference: the frame mirrored by hand, drawn without mirroring (canvas left to right).
        // (Fill crops 641 → 581 columns: an even margin, so the centred crop of the mirrored frame
        // is the mirror of the centred crop; with an odd one they are a source column apart.)
        let reference = MemoryFramebuffer(format: format, fill: 0xAB)
        let r = ScreenCompositor(framebuffer: reference, renderer: try Fixture.renderer())
        r.draw(screen, live: MirrorTests.mirrored(frame), capture: nil,
               options: LiveViewOptions(scaling: scaling, mirror: false), displayRotation: .r0)
        #expect(!r.canvas.storedMirrored)
        var worst = 0, at = (0, 0)
        for y in 0..<h {
            for x in 0..<w {
                let a = fast.rgb(x: x, y: y), b = reference.rgb(x: x, y: y)
                for shift: UInt32 in [16, 8, 0] {
                    let d = abs(Int((a >> shift) & 0xFF) - Int((b >> shift) & 0xFF))
                    if d > worst { worst = d; at = (x, y) }
                }
            }
        }
        // Bilinear rounding may differ by a level or two where mirror and scale swap places.
        #expect(worst <= 3, "largest channel difference \(worst) at \(at)")
        // The camera's left stripe (red) is at the screen's right, its right stripe (green) at the left.
        let picture = scaling.placement(of: frameSize, in: format.size).destination
        let y = picture.y + picture.height / 4
        #expect(near(fast.rgb(x: picture.x + picture.width - 2, y: y), 0xFF_0000, 30),
                "right edge \(hex(fast.rgb(x: picture.x + picture.width - 2, y: y)))")
        #expect(near(fast.rgb(x: picture.x + 1, y: y), 0x00_FF00, 30), "left edge \(hex(fast.rgb(x: picture.x + 1, y: y)))")
        // Padding past each line is never written.
        let bytes = fast.bytes
        for row in [0, h / 2, h - 1] {
            #expect(bytes[(row * format.lineLength + format.rowBytes)..<((row + 1) * format.lineLength)].allSatisfy { $0 == 0xAB })
        }
    }

    @Test("without mirror, on a turned screen, on RGB565 and for the review the canvas stays left to right")
    func fastPathOnlyWhereItApplies() throws {
        let frame = MirrorTests.stripes(width: 200, height: 124)
        let xrgb = ScreenCompositor(framebuffer: MemoryFramebuffer(format: MirrorTests.screen), renderer: try Fixture.renderer())
        xrgb.draw(.preview, live: frame, capture: nil, options: LiveViewOptions(mirror: false), displayRotation: .r0)
        #expect(!xrgb.canvas.storedMirrored)
        xrgb.draw(.preview, live: frame, capture: nil, options: LiveViewOptions(mirror: true), displayRotation: .r90)
        #expect(!xrgb.canvas.storedMirrored, "a turned screen goes through ARGBRotate")
        xrgb.draw(.review(pictureID: 1), live: frame, capture: nil, options: LiveViewOptions(mirror: true), displayRotation: .r0)
        #expect(!xrgb.canvas.storedMirrored, "the review is never mirrored")
        let rgb565 = FramebufferFormat.rgb565(FrameSize(width: 321, height: 199))
        let fb = MemoryFramebuffer(format: rgb565)
        let c = ScreenCompositor(framebuffer: fb, renderer: try Fixture.renderer())
        c.draw(.preview, live: frame, capture: nil, options: LiveViewOptions(scaling: .fill, mirror: true), displayRotation: .r0)
        #expect(!c.canvas.storedMirrored)
        #expect(near(fb.rgb(x: 319, y: 20), 0xFF_0000, 30) && near(fb.rgb(x: 1, y: 20), 0x00_FF00, 30))
    }

    @Test("a canvas stored right to left takes screen coordinates and converts back upright")
    func storedMirroredCanvas() {
        var canvas = Canvas(size: FrameSize(width: 5, height: 2))
        canvas.storedMirrored = true
        canvas.fill(PixelRect(x: 0, y: 0, width: 2, height: 1), 0xFF_0000)
        #expect(canvas.rgb(x: 0, y: 0) == 0xFF_0000 && canvas.rgb(x: 1, y: 0) == 0xFF_0000 && canvas.rgb(x: 2, y: 0) == 0)
        #expect(canvas.pixels[4] & 0xFF_FFFF == 0xFF_0000 && canvas.pixels[0] & 0xFF_FFFF == 0, "stored at the right")
        var mask = AlphaMask(width: 2, height: 1)
        mask.alpha = [255, 0]
        canvas.draw(mask, x: 3, y: 1, color: 0x00_00FF)
        #expect(canvas.rgb(x: 3, y: 1) == 0x00_00FF && canvas.rgb(x: 4, y: 1) == 0)
        #expect(canvas.pixels[5 + 1] & 0xFF_FFFF == 0x00_00FF)
        // Converted for a 16 bpp screen (no mirrored copy-in there), it comes out as the screen shows it.
        let format = FramebufferFormat.rgb565(canvas.size)
        let converter = FramebufferConverter(format: format)
        #expect(converter.convert(canvas, rotation: .r0))
        let fb = MemoryFramebuffer(format: format)
        fb.present(converter.packed)
        #expect(fb.rgb(x: 0, y: 0) == 0xFF_0000 && fb.rgb(x: 4, y: 0) == 0 && fb.rgb(x: 3, y: 1) == 0x00_00FF)
        // Presented straight on XRGB8888, the copy-in reverses the rows.
        let xrgb = MemoryFramebuffer(format: .xrgb8888(canvas.size, lineLength: 5 * 4 + 8), fill: 0xAB)
        #expect(FramebufferConverter(format: xrgb.format).present(canvas, rotation: .r0, on: xrgb))
        #expect(xrgb.rgb(x: 0, y: 0) == 0xFF_0000 && xrgb.rgb(x: 1, y: 0) == 0xFF_0000 && xrgb.rgb(x: 2, y: 0) == 0)
        #expect(xrgb.rgb(x: 3, y: 1) == 0x00_00FF)
        #expect(xrgb.bytes[20..<28].allSatisfy { $0 == 0xAB }, "padding untouched")
    }
}

@Suite("Review decode")
struct ReviewDecodeTests {
    @Test("the review shows the capture as TurboJPEG's accurate decode gives it, not the live view's fast decode")
    func reviewUsesAccurateDecode() throws {
        let size = FrameSize(width: 320, height: 200)
        // Sharp colour edges: fast chroma upsampling and the fast IDCT differ from the accurate decode there.
        let jpeg = try Fixture.quadrantsJPEG(width: size.width, height: size.height)
        let fb = MemoryFramebuffer(format: .xrgb8888(size))
        let c = ScreenCompositor(framebuffer: fb, renderer: try Fixture.renderer())
        c.draw(.review(pictureID: 1), live: nil, capture: jpeg, options: LiveViewOptions(), displayRotation: .r0)
        let accurate = try JPEGDecoder().decodeRGB(jpeg)
        var fast: [UInt32] = []
        try JPEGDecoder().decodeXRGB(jpeg, into: &fast)
        var differsFromAccurate = 0, differsFromFast = 0
        for y in 0..<size.height {
            for x in 0..<size.width {
                let i = (y * size.width + x) * 3
                let exact = UInt32(accurate.bytes[i]) << 16 | UInt32(accurate.bytes[i + 1]) << 8 | UInt32(accurate.bytes[i + 2])
                if fb.rgb(x: x, y: y) != exact { differsFromAccurate += 1 }
                if fb.rgb(x: x, y: y) != fast[y * size.width + x] & 0xFF_FFFF { differsFromFast += 1 }
            }
        }
        #expect(differsFromAccurate == 0, "\(differsFromAccurate) pixels differ from the accurate decode")
        #expect(differsFromFast > 0, "the fast decode differs somewhere, so this test can tell them apart")
    }
}
