import BoothCore

/// Draws the simulated camera's moving test pattern into YUYV or RGB24 frames: scrolling colour
/// bars (75% bars like vivid's), a bouncing box, and the frame number and time in a built-in
/// 5x7 bitmap digit font. Row templates are built once per size, so a frame costs one row copy
/// per line plus a few small rectangles.
struct TestPattern {
    let format: PixelFormat
    let size: FrameSize
    let bytesPerPixel: Int
    let bytesPerLine: Int
    /// Two periods of the bar row, so any scroll offset can be copied in one piece.
    private var barRow: [UInt8]

    /// Colours as (Y, U, V) and (R, G, B).
    struct Color {
        var y: UInt8, u: UInt8, v: UInt8
        var r: UInt8, g: UInt8, b: UInt8
    }

    static let bars: [Color] = [
        Color(y: 180, u: 128, v: 128, r: 191, g: 191, b: 191),  // white 75%
        Color(y: 168, u: 44, v: 136, r: 191, g: 191, b: 0),     // yellow
        Color(y: 145, u: 147, v: 44, r: 0, g: 191, b: 191),     // cyan
        Color(y: 133, u: 63, v: 52, r: 0, g: 191, b: 0),        // green
        Color(y: 63, u: 193, v: 204, r: 191, g: 0, b: 191),     // magenta
        Color(y: 51, u: 109, v: 212, r: 191, g: 0, b: 0),       // red
        Color(y: 28, u: 212, v: 120, r: 0, g: 0, b: 191),       // blue
        Color(y: 16, u: 128, v: 128, r: 0, g: 0, b: 0),         // black
    ]
    static let white = Color(y: 235, u: 128, v: 128, r: 255, g: 255, b: 255)
    static let black = Color(y: 16, u: 128, v: 128, r: 0, g: 0, b: 0)
    static let box = Color(y: 82, u: 90, v: 240, r: 255, g: 0, b: 0)

    /// `size.width` must be even for YUYV (callers round it).
    init(format: PixelFormat, size: FrameSize) {
        self.format = format
        self.size = size
        bytesPerPixel = format == .rgb24 ? 3 : 2
        bytesPerLine = size.width * bytesPerPixel
        barRow = [UInt8](repeating: 0, count: bytesPerLine * 2)
        let barWidth = max(2, (size.width / TestPattern.bars.count) & ~1)
        barRow.withUnsafeMutableBufferPointer { row in
            guard let base = row.baseAddress else { return }
            var x = 0
            while x < size.width * 2 {
                let color = TestPattern.bars[(x / barWidth) % TestPattern.bars.count]
                TestPattern.put(color, at: x, width: 2, into: base, format: format)
                x += 2
            }
        }
    }

    /// Bytes of one frame.
    var frameLength: Int { bytesPerLine * size.height }

    /// Renders frame `index` showing `seconds` (since the stream started) into `out`
    /// (`frameLength` bytes).
    func render(index: UInt32, seconds: Double, into out: UnsafeMutableRawPointer) {
        let w = size.width, h = size.height
        // Scrolling bars: 8 px per frame, even so YUYV pairs stay aligned.
        let shift = (Int(index % UInt32(max(w, 1))) * 8) % max(w, 1) & ~1
        barRow.withUnsafeBytes { row in
            guard let base = row.baseAddress else { return }
            let src = base + shift * bytesPerPixel
            for y in 0..<h { (out + y * bytesPerLine).copyMemory(from: src, byteCount: bytesPerLine) }
        }
        // A box bouncing on a triangle wave.
        let boxSize = max(8, (min(w, h) / 6) & ~1)
        let spanX = max(1, w - boxSize), spanY = max(1, h - boxSize)
        let bx = TestPattern.bounce(Int(index) * 6, spanX) & ~1
        let by = TestPattern.bounce(Int(index) * 4, spanY)
        fill(TestPattern.box, x: bx, y: by, width: boxSize, height: boxSize, into: out)
        // Frame number and time, on a black strip.
        let scale = max(2, (h / 120) & ~1)
        let text = TestPattern.digits(index, count: 6) + "  " + TestPattern.time(seconds)
        let glyphW = 6 * scale, glyphH = 9 * scale
        let stripW = min(w, text.count * glyphW + 2 * scale), stripH = min(h, glyphH)
        fill(TestPattern.black, x: 0, y: 0, width: stripW & ~1, height: stripH, into: out)
        var penX = scale * 2
        for ch in text {
            if let rows = DigitFont.glyph(ch) {
                for (ry, bits) in rows.enumerated() {
                    for rx in 0..<5 where bits & (0x10 >> rx) != 0 {
                        fill(TestPattern.white, x: penX + rx * scale, y: scale + ry * scale,
                             width: scale, height: scale, into: out)
                    }
                }
            }
            penX += glyphW
        }
    }

    /// Fills a rectangle (clipped to the frame; x and width rounded to even pixels for YUYV).
    func fill(_ color: Color, x: Int, y: Int, width: Int, height: Int, into out: UnsafeMutableRawPointer) {
        let x0 = max(0, x) & ~1, y0 = max(0, y)
        let x1 = min(size.width, (x + width + 1) & ~1), y1 = min(size.height, y + height)
        guard x1 > x0, y1 > y0 else { return }
        for row in y0..<y1 {
            TestPattern.put(color, at: x0, width: x1 - x0, into: out + row * bytesPerLine, format: format)
        }
    }

    /// Writes `width` pixels of `color` from pixel `x` of a row (`x`, `width` even for YUYV).
    static func put(_ color: Color, at x: Int, width: Int, into row: UnsafeMutableRawPointer, format: PixelFormat) {
        let p = row.assumingMemoryBound(to: UInt8.self)
        if format == .rgb24 {
            var i = x * 3
            for _ in 0..<width {
                p[i] = color.r; p[i + 1] = color.g; p[i + 2] = color.b
                i += 3
            }
        } else {
            var i = x * 2
            for _ in 0..<(width / 2) {
                p[i] = color.y; p[i + 1] = color.u; p[i + 2] = color.y; p[i + 3] = color.v
                i += 4
            }
        }
    }

    static func bounce(_ t: Int, _ span: Int) -> Int {
        let m = t % (2 * span)
        return m < span ? m : 2 * span - m
    }

    static func digits(_ n: UInt32, count: Int) -> String {
        let s = String(n)
        return s.count >= count ? s : String(repeating: "0", count: count - s.count) + s
    }

    /// `"12.345"`: seconds with milliseconds.
    static func time(_ seconds: Double) -> String {
        let ms = UInt32(clamping: Int((max(seconds, 0) * 1000).rounded(.down)))
        return String(ms / 1000) + "." + digits(ms % 1000, count: 3)
    }
}

/// A 5x7 bitmap font for digits, `.` and `:` (one byte per row, bit 4 is the leftmost pixel).
enum DigitFont {
    static func glyph(_ c: Character) -> [UInt8]? {
        switch c {
        case "0": return [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E]
        case "1": return [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E]
        case "2": return [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F]
        case "3": return [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E]
        case "4": return [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02]
        case "5": return [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E]
        case "6": return [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E]
        case "7": return [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08]
        case "8": return [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E]
        case "9": return [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C]
        case ".": return [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C]
        case ":": return [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00]
        default: return nil
        }
    }
}
