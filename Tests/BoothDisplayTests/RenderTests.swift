import BoothClock
import BoothCore
import BoothDisplay
import BoothJPEG
import BoothRaster
import Testing

@Suite("Screens into in-memory framebuffers")
struct RenderTests {
    /// Odd line lengths: padding past each row must stay untouched.
    static let formats: [FramebufferFormat] = [
        .xrgb8888(FrameSize(width: 321, height: 199), lineLength: 321 * 4 + 12),
        .rgb565(FrameSize(width: 321, height: 199), lineLength: 321 * 2 + 6),
    ]

    func compose(_ format: FramebufferFormat) throws -> (ScreenCompositor, MemoryFramebuffer) {
        let fb = MemoryFramebuffer(format: format, fill: 0xAB)
        return (ScreenCompositor(framebuffer: fb, renderer: try Fixture.renderer()), fb)
    }

    @Test("countdown digit is drawn in its region, in both formats", arguments: formats)
    func countdownDigit(format: FramebufferFormat) throws {
        let (c, fb) = try compose(format)
        func whiteInDigitRegion() -> (count: Int, signature: [Bool]) {
            let r = ScreenRenderer.digitRegion(format.size)
            var count = 0, sig: [Bool] = []
            for y in stride(from: r.y, to: r.y + r.height, by: 3) {
                for x in stride(from: r.x, to: r.x + r.width, by: 3) {
                    let white = near(fb.rgb(x: x, y: y), 0xFF_FFFF, 20)
                    if white { count += 1 }
                    sig.append(white)
                }
            }
            return (count, sig)
        }
        c.draw(.countdown(remaining: 3, shot: 1, of: 1), live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        let three = whiteInDigitRegion()
        // Corners are the dark background (no live view).
        #expect(near(fb.rgb(x: 2, y: 2), ScreenRenderer.dark, 8))
        #expect(near(fb.rgb(x: format.size.width - 3, y: format.size.height - 3), ScreenRenderer.dark, 8))
        #expect(three.count > 40, "digit 3 left \(three.count) white samples")
        c.draw(.countdown(remaining: 2, shot: 1, of: 1), live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        let two = whiteInDigitRegion()
        #expect(two.count > 40)
        #expect(two.signature != three.signature, "2 and 3 draw differently")
        // Padding past each line is never written.
        let bytes = fb.bytes
        for y in [0, 100, format.size.height - 1] {
            let pad = bytes[(y * format.lineLength + format.rowBytes)..<((y + 1) * format.lineLength)]
            #expect(pad.allSatisfy { $0 == 0xAB }, "line \(y) padding overwritten")
        }
    }

    @Test("the live view is mirrored in preview; the capture in review is not", arguments: formats)
    func mirrorOnPreviewOnly(format: FramebufferFormat) throws {
        let (c, fb) = try compose(format)
        let w = format.size.width, h = format.size.height
        // Same aspect as the screen region sampled; fill so no bars.
        let frame = Fixture.quadrants(width: 160, height: 100)
        let options = LiveViewOptions(cameraRotation: .r0, scaling: .fill, mirror: true)
        c.draw(.preview, live: frame, capture: nil, options: options, displayRotation: .r0)
        // Mirrored: the camera's top-left (red) is on the screen's top-right.
        #expect(near(fb.rgb(x: w - 10, y: 10), 0xFF_0000), "got \(hex(fb.rgb(x: w - 10, y: 10)))")
        #expect(near(fb.rgb(x: 10, y: 10), 0x00_FF00), "got \(hex(fb.rgb(x: 10, y: 10)))")
        var unmirrored = options
        unmirrored.mirror = false
        c.draw(.preview, live: frame, capture: nil, options: unmirrored, displayRotation: .r0)
        #expect(near(fb.rgb(x: 10, y: 10), 0xFF_0000))
        // Review shows the capture as taken, even with mirror on.
        let jpeg = try Fixture.quadrantsJPEG(width: 320, height: 200)
        c.draw(.review(pictureID: 1), live: frame, capture: jpeg, options: options, displayRotation: .r0)
        #expect(near(fb.rgb(x: 10, y: 10), 0xFF_0000), "review top-left \(hex(fb.rgb(x: 10, y: 10)))")
        #expect(near(fb.rgb(x: w - 10, y: h - 10), 0xFF_FF00))
    }

    @Test("a frame the camera turned (libcamera's sensor flips) is turned by what is left of camera.rotation", arguments: formats)
    func cameraTurnedFrames(format: FramebufferFormat) throws {
        let (c, fb) = try compose(format)
        let w = format.size.width
        var frame = Fixture.quadrants(width: 160, height: 100)
        let half = LiveViewOptions(cameraRotation: .r180, scaling: .fill, mirror: false)
        // Turned by us: the camera's bottom-right (yellow) is on the screen's top-left.
        c.draw(.preview, live: frame, capture: nil, options: half, displayRotation: .r0)
        #expect(near(fb.rgb(x: 10, y: 10), 0xFF_FF00), "got \(hex(fb.rgb(x: 10, y: 10)))")
        // Turned by the camera already: drawn as it came, not turned back.
        frame.turned = .r180
        c.draw(.preview, live: frame, capture: nil, options: half, displayRotation: .r0)
        #expect(near(fb.rgb(x: 10, y: 10), 0xFF_0000), "got \(hex(fb.rgb(x: 10, y: 10)))")
        #expect(near(fb.rgb(x: w - 10, y: 10), 0x00_FF00), "got \(hex(fb.rgb(x: w - 10, y: 10)))")
        // camera.rotation 0 with a frame the camera turned 180 (set to 180 before a reload): turned back by us.
        c.draw(.preview, live: frame, capture: nil, options: LiveViewOptions(cameraRotation: .r0, scaling: .fill, mirror: false),
               displayRotation: .r0)
        #expect(near(fb.rgb(x: 10, y: 10), 0xFF_FF00), "got \(hex(fb.rgb(x: 10, y: 10)))")
    }

    @Test("fit letterboxes with black bars, fill crops", arguments: formats)
    func letterbox(format: FramebufferFormat) throws {
        let (c, fb) = try compose(format)
        let w = format.size.width, h = format.size.height
        // A 4:3 frame on a ~16:10 screen: bars left and right in fit.
        let frame = Fixture.quadrants(width: 120, height: 90)
        let fit = LiveViewOptions(cameraRotation: .r0, scaling: .fit, mirror: false)
        c.draw(.countdown(remaining: 1, shot: 1, of: 1), live: frame, capture: nil, options: fit, displayRotation: .r0)
        let picture = Scaling.fit.placement(of: frame.size, in: format.size).destination
        #expect(picture.x > 10 && picture.width < w)
        #expect(fb.rgb(x: 2, y: h / 2) == 0 && fb.rgb(x: w - 3, y: 5) == 0, "bars are black")
        #expect(near(fb.rgb(x: picture.x + 4, y: 4), 0xFF_0000), "picture starts after the bar")
        let fill = LiveViewOptions(cameraRotation: .r0, scaling: .fill, mirror: false)
        c.draw(.countdown(remaining: 1, shot: 1, of: 1), live: frame, capture: nil, options: fill, displayRotation: .r0)
        #expect(near(fb.rgb(x: 2, y: h / 4), 0xFF_0000) && near(fb.rgb(x: w - 3, y: h - 3), 0xFF_FF00), "fill: no bars")
    }

    @Test("display rotation 90 maps the drawing's corners clockwise", arguments: formats)
    func displayRotationCorners(format: FramebufferFormat) throws {
        let converter = FramebufferConverter(format: format)
        let logical = converter.canvasSize(for: .r90)
        #expect(logical == FrameSize(width: format.size.height, height: format.size.width))
        var canvas = Canvas(size: logical, color: 0)
        let corners: [(Int, Int, UInt32)] = [(0, 0, 0xFF_0000), (logical.width - 1, 0, 0x00_FF00),
                                             (0, logical.height - 1, 0x00_00FF), (logical.width - 1, logical.height - 1, 0xFF_FFFF)]
        for (x, y, color) in corners { canvas.fill(PixelRect(x: x, y: y, width: 1, height: 1), color) }
        #expect(converter.convert(canvas, rotation: .r90))
        let fb = MemoryFramebuffer(format: format, fill: 0xAB)
        fb.present(converter.packed)
        let W = format.size.width, H = format.size.height
        // Clockwise: top-left → top-right, top-right → bottom-right, bottom-left → top-left.
        #expect(fb.rgb(x: W - 1, y: 0) == 0xFF_0000)
        #expect(fb.rgb(x: W - 1, y: H - 1) == 0x00_FF00)
        #expect(fb.rgb(x: 0, y: 0) == 0x00_00FF)
        #expect(fb.rgb(x: 0, y: H - 1) == 0xFF_FFFF)
        #expect(!converter.convert(Canvas(size: format.size), rotation: .r90), "a canvas of the wrong size is refused")
    }

    @Test("camera rotation turns the live view clockwise")
    func cameraRotation() throws {
        let (c, fb) = try compose(.xrgb8888(FrameSize(width: 200, height: 200)))
        let frame = Fixture.quadrants(width: 100, height: 100)
        c.draw(.preview, live: frame, capture: nil,
               options: LiveViewOptions(cameraRotation: .r90, scaling: .fill, mirror: false), displayRotation: .r0)
        // Turned clockwise: the camera's bottom-left (blue) is now top-left, its top-left (red) top-right.
        #expect(near(fb.rgb(x: 10, y: 10), 0x00_00FF))
        #expect(near(fb.rgb(x: 190, y: 10), 0xFF_0000))
        #expect(near(fb.rgb(x: 190, y: 100 + 5), 0x00_FF00) || near(fb.rgb(x: 190, y: 150), 0x00_FF00))
    }

    @Test("MJPEG live frames decode at the smallest TurboJPEG scale still covering the screen")
    func scaledDecode() throws {
        let renderer = try Fixture.renderer()
        let jpeg = try Fixture.quadrantsJPEG(width: 1280, height: 720)
        let frame = Frame(format: .mjpeg, size: FrameSize(width: 1280, height: 720), bytesPerLine: 0, bytes: jpeg,
                          timestamp: Monotonic.now(), sequence: 1)
        var small = Canvas(size: FrameSize(width: 320, height: 180))
        renderer.render(.preview, live: frame, capture: nil, options: LiveViewOptions(mirror: false), into: &small)
        #expect(renderer.lastDecodeScale.denominator == 4)
        #expect(near(small.rgb(x: 5, y: 5), 0xFF_0000))
        var large = Canvas(size: FrameSize(width: 800, height: 480))
        renderer.render(.preview, live: frame, capture: nil, options: LiveViewOptions(mirror: false), into: &large)
        #expect(renderer.lastDecodeScale.denominator == 1, "640x360 would be below 800 wide")
    }

    @Test("fault screen shows the guest's words and the idle screen its band")
    func faultAndIdle() throws {
        let (c, fb) = try compose(.xrgb8888(FrameSize(width: 400, height: 240)))
        c.draw(.fault(reasons: [.camera: "camera lost: VIDIOC_DQBUF: ENODEV"]), live: nil, capture: nil,
               options: LiveViewOptions(), displayRotation: .r0)
        var white = 0
        for y in 0..<240 { for x in 0..<400 where near(fb.rgb(x: x, y: y), 0xFF_FFFF, 30) { white += 1 } }
        #expect(white > 300, "text drawn")
        #expect(fb.rgb(x: 1, y: 1) == ScreenRenderer.faultBackground)
        c.draw(.idle(notice: nil), live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        let band = ScreenRenderer.bandRegion(FrameSize(width: 400, height: 240))
        var inBand = 0, above = 0
        for y in 0..<240 {
            for x in 0..<400 where near(fb.rgb(x: x, y: y), 0xFF_FFFF, 30) {
                if y >= band.y { inBand += 1 } else { above += 1 }
            }
        }
        #expect(inBand > 100 && above == 0, "the invitation sits in the band")
        c.draw(.capture, live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        #expect(fb.rgb(x: 200, y: 120) == 0xFF_FFFF)
    }

    @Test("review shows the print status in its band, over the photo; a new status draws differently", arguments: formats)
    func reviewPrintStatus(format: FramebufferFormat) throws {
        let (c, fb) = try compose(format)
        let size = format.size
        // A capture with the screen's aspect, so the photo covers the whole screen (no bars).
        let capture = try Fixture.quadrantsJPEG(width: size.width * 2, height: size.height * 2)
        let region = ScreenRenderer.statusRegion(size)
        func textSamples() -> (count: Int, signature: [Bool]) {
            var count = 0, sig: [Bool] = []
            for y in region.y..<(region.y + region.height) {
                for x in stride(from: region.x, to: region.x + region.width, by: 2) {
                    let white = near(fb.rgb(x: x, y: y), 0xFF_FFFF, 30)
                    if white { count += 1 }
                    sig.append(white)
                }
            }
            return (count, sig)
        }
        c.draw(.review(pictureID: 1), live: nil, capture: capture, options: LiveViewOptions(), displayRotation: .r0)
        #expect(textSamples().count == 0, "no status, no text")
        // Above the band, the photo is untouched (bottom-left quadrant blue).
        #expect(near(fb.rgb(x: size.width / 4, y: region.y - 6), 0x00_00FF))
        c.draw(.review(pictureID: 1), live: nil, capture: capture, status: "Printing…",
               options: LiveViewOptions(), displayRotation: .r0)
        let printing = textSamples()
        #expect(printing.count > 60, "status text drawn in its region: \(printing.count) white samples")
        // The band darkens the photo behind the text; the photo above it is unchanged.
        #expect(near(fb.rgb(x: size.width / 4, y: region.y - 6), 0x00_00FF))
        #expect(near(fb.rgb(x: 1, y: size.height - 2), 0x00_0040, 50), "band shades the blue photo")
        c.draw(.review(pictureID: 1), live: nil, capture: capture, status: "Out of paper — your photo is saved",
               options: LiveViewOptions(), displayRotation: .r0)
        let paper = textSamples()
        #expect(paper.count > 60)
        #expect(paper.signature != printing.signature, "the new status is drawn")
    }

    @Test("RGB565 pixels keep the channel bitfields")
    func rgb565Bitfields() {
        let f = FramebufferFormat.rgb565(FrameSize(width: 1, height: 1))
        #expect(f.pixel(rgb: 0xFF_0000) == 0xF800)
        #expect(f.pixel(rgb: 0x00_FF00) == 0x07E0)
        #expect(f.pixel(rgb: 0x00_00FF) == 0x001F)
        #expect(f.rgb(pixel: 0xF800) == 0xFF_0000)
        #expect(f.isRGB565 && !f.isXRGB8888)
        // A BGR565 panel (blue in the top bits) goes through the generic path.
        let bgr = FramebufferFormat(size: FrameSize(width: 3, height: 1), bitsPerPixel: 16, lineLength: 8,
                                    red: Bitfield(offset: 0, length: 5), green: Bitfield(offset: 5, length: 6),
                                    blue: Bitfield(offset: 11, length: 5))
        let converter = FramebufferConverter(format: bgr)
        var canvas = Canvas(size: bgr.size)
        canvas.fill(PixelRect(x: 0, y: 0, width: 1, height: 1), 0xFF_0000)
        canvas.fill(PixelRect(x: 2, y: 0, width: 1, height: 1), 0x00_00FF)
        #expect(converter.convert(canvas, rotation: .r0))
        let fb = MemoryFramebuffer(format: bgr)
        fb.present(converter.packed)
        #expect(fb.rgb(x: 0, y: 0) == 0xFF_0000 && fb.rgb(x: 2, y: 0) == 0x00_00FF)
        #expect(fb.bytes[0] == 0x1F && fb.bytes[1] == 0x00)
    }
}

@Suite("Multi-shot screens")
struct ShotScreenTests {
    @Test func shotTextsReplaceTheirPlaceholders() {
        #expect(ScreenTexts.shotText("{shot} of {shots}", shot: 2, of: 4) == "2 of 4")
        #expect(ScreenTexts.shotText("Photo {shot}/{shots} – {shot}", shot: 3, of: 3) == "Photo 3/3 – 3")
        #expect(ScreenTexts.shotText("Smile!", shot: 1, of: 2) == "Smile!")
    }

    /// Light pixels (text) in the bottom band, sampled every other pixel.
    static func lightInBand(_ fb: MemoryFramebuffer, _ size: FrameSize) -> [Bool] {
        let band = ScreenRenderer.bandRegion(size)
        var out: [Bool] = []
        for y in stride(from: band.y, to: band.y + band.height, by: 2) {
            for x in stride(from: 0, to: size.width, by: 2) { out.append(near(fb.rgb(x: x, y: y), 0xFF_FFFF, 30)) }
        }
        return out
    }

    @Test("the countdown of a series says which shot in the band; a single shot's does not; between shots says the next")
    func shotBand() throws {
        let format = FramebufferFormat.xrgb8888(FrameSize(width: 400, height: 300), lineLength: 400 * 4)
        let fb = MemoryFramebuffer(format: format, fill: 0)
        let c = ScreenCompositor(framebuffer: fb, renderer: try Fixture.renderer())
        c.draw(.countdown(remaining: 3, shot: 1, of: 1), live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        let single = Self.lightInBand(fb, format.size).filter { $0 }.count
        c.draw(.countdown(remaining: 3, shot: 2, of: 4), live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        let second = Self.lightInBand(fb, format.size)
        c.draw(.countdown(remaining: 3, shot: 3, of: 4), live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        let third = Self.lightInBand(fb, format.size)
        #expect(second.filter { $0 }.count > single + 30, "the band has text with several shots")
        #expect(second != third, "'Photo 2 of 4' and 'Photo 3 of 4' draw differently")
        c.draw(.betweenShots(next: 2, of: 4), live: nil, capture: nil, options: LiveViewOptions(), displayRotation: .r0)
        let between = Self.lightInBand(fb, format.size)
        #expect(between.filter { $0 }.count > 30, "between shots, the band says which shot is next")
        #expect(between != second, "'2 of 4' is not 'Photo 2 of 4'")
    }
}

@Suite("Band shading through libyuv")
struct ShadeTests {
    @Test("shading toward black with ARGBShade matches the per-pixel blend within 2 per channel, inside the rectangle only")
    func shadeMatchesBlend() {
        let size = FrameSize(width: 67, height: 23)
        var canvas = Canvas(size: size)
        for y in 0..<size.height {
            for x in 0..<size.width {
                canvas.pixels[y * size.width + x] = 0xFF00_0000 | UInt32(x * 3) << 16 | UInt32(y * 11) << 8 | UInt32((x * y) & 0xFF)
            }
        }
        let before = canvas
        let rect = PixelRect(x: 5, y: 3, width: 50, height: 15)
        for alpha in [0, 1, 150, 160, 254, 255] {
            var shaded = before
            shaded.shade(rect, 0, alpha: alpha)
            // The same blend with a colour one step from black takes the per-pixel path.
            var reference = before
            reference.shade(rect, 0x00_0001, alpha: alpha)
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
                    if inside {
                        #expect(near(shaded.rgb(x: x, y: y), reference.rgb(x: x, y: y), 2),
                                "alpha \(alpha) at \(x),\(y): \(hex(shaded.rgb(x: x, y: y))) vs \(hex(reference.rgb(x: x, y: y)))")
                    } else {
                        #expect(shaded.rgb(x: x, y: y) == before.rgb(x: x, y: y), "outside the rectangle untouched")
                    }
                }
            }
        }
        var black = before
        black.shade(rect, 0, alpha: 255)
        #expect(black.rgb(x: 10, y: 10) == 0)
    }
}

@Suite struct FaultWordsTests {
    /// A camera fault whose reason says the camera rests (its battery is empty) gets text.fault_camera_resting;
    /// every other camera fault text.fault_camera.
    @Test func aRestingCameraHasItsOwnWords() {
        let texts = ScreenTexts(Settings.defaults.text)
        #expect(texts.fault(.camera, reason: FaultKind.cameraRestingPrefix + "the camera's battery is empty (0%)") == "The camera is resting — back soon")
        #expect(texts.fault(.camera, reason: "camera lost: no camera answers") == "Camera disconnected — back soon")
        #expect(texts.fault(.camera) == "Camera disconnected — back soon")
        #expect(texts.fault(.storage, reason: FaultKind.cameraRestingPrefix) == Settings.defaults.text.faultStorage)
    }
}
