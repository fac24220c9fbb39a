import BoothCore
import BoothJPEG
import BoothPorts
import BoothQRCode

/// Renders a picture for the printer: the JPEG decoded (TurboJPEG, at the scale the page needs:
/// ``decodeScale(for:page:)``) and turned upright as its Exif
/// Orientation says (`EXIFOrientation`: a file from a camera or phone held sideways), turned a quarter when its
/// orientation differs from the media's, cropped to the media's exact aspect (fill: no white
/// border, the centre kept), resampled bilinearly to the media's size at `dpi`, and encoded again
/// (TurboJPEG, 4:4:4 as `JPEGEncoder` does for RGB). The printer then gets a page it prints 1:1
/// with `print-scaling=none`.
///
/// Owns a decoder and an encoder: use from one thread.
public final class PrintRenderer {
    private let decoder: JPEGDecoder
    private let encoder: JPEGEncoder
    /// JPEG quality of the rendered page (1…100).
    public let quality: Int

    /// - Throws: ``TurboJPEGError`` when TurboJPEG cannot make a handle.
    public init(quality: Int = 92) throws {
        decoder = try JPEGDecoder()
        encoder = try JPEGEncoder()
        self.quality = quality
    }

    /// The largest page rendered, in pixels (64 megapixels, 192 MB of RGB): 4x6in and 5x7in fit at
    /// 1200 dpi, A4 at 600 dpi. Larger pages are refused before anything is allocated.
    public static let maxPagePixels = 64_000_000

    /// The page size for `media` at `dpi` dots per inch, checked against ``maxPagePixels``.
    /// - Throws: ``PrintPageTooLarge`` naming `print.media` and `print.dpi` and the largest dpi that fits.
    public static func pageSize(for media: MediaSize, dpi: Int) throws(PrintPageTooLarge) -> FrameSize {
        let squareInches = media.widthMillimetres / 25.4 * media.heightMillimetres / 25.4
        let d = Double(dpi)
        let fits = Int((Double(maxPagePixels) / squareInches).squareRoot().rounded(.down))
        guard dpi >= 1, squareInches * d * d <= Double(maxPagePixels) else {
            throw PrintPageTooLarge(media: media.name, dpi: dpi, maxDPI: fits, maxPixels: maxPagePixels)
        }
        let size = media.pixels(dpi: dpi)
        guard size.width * size.height <= maxPagePixels else {
            throw PrintPageTooLarge(media: media.name, dpi: dpi, maxDPI: fits, maxPixels: maxPagePixels)
        }
        return size
    }

    /// Renders `jpeg` at `size` pixels (the media at the print resolution, e.g. 1200x1800), upright
    /// as its Exif Orientation (1…8) says; the page has no Exif, so nothing turns it again.
    /// - Throws: ``PrintPageTooLarge`` when `size` has more than ``maxPagePixels`` (or a side < 1);
    ///   ``TurboJPEGError`` when the JPEG does not decode or the page does not encode.
    /// With `code`, the page carries its QR code (``stamp(_:on:size:dpi:)``, `dpi` the page's dots
    /// per inch); a code that does not fit is left out (``renderPage(_:to:code:dpi:)`` says so).
    public func render(_ jpeg: [UInt8], to size: FrameSize, code: PageCode? = nil, dpi: Int = 300) throws -> [UInt8] {
        try renderPage(jpeg, to: size, code: code, dpi: dpi).page
    }

    /// ``render(_:to:code:dpi:)``, also saying whether the code was drawn (false: none asked, or it
    /// did not fit the page, or the text does not fit a QR code).
    public func renderPage(_ jpeg: [UInt8], to size: FrameSize, code: PageCode?, dpi: Int) throws -> (page: [UInt8], codeDrawn: Bool) {
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        guard size.width >= 1, size.height >= 1, !overflow, pixels <= PrintRenderer.maxPagePixels else {
            throw PrintPageTooLarge(media: "\(size)", dpi: 0, maxDPI: 0, maxPixels: PrintRenderer.maxPagePixels)
        }
        // A large still (a 45 to 102 MP body's) is decoded at the scale the page needs, never whole.
        let still = try decoder.header(jpeg).size
        // A page larger than the still at 1/2 (8x10 in or A4 at 600 dpi from a 45 MP body) would need it decoded
        // whole, over the decoder's limit: it is decoded at the largest scale within the limit and resampled up.
        let scale = PrintRenderer.decodeScale(for: still, page: size).within(decoder.maxPixels, for: still)
        let image = EXIFOrientation.read(jpeg).upright(try decoder.decodeRGB(jpeg, scale: scale))
        var page = PrintRenderer.fill(image, to: size)
        let drawn = code.map { PrintRenderer.stamp($0, on: &page, size: size, dpi: dpi) } ?? false
        let frame = Frame(format: .rgb24, size: size, bytesPerLine: size.width * 3, bytes: page,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return (try encoder.encode(frame, quality: quality), drawn)
    }

    /// The TurboJPEG scale to decode an image of `image` pixels at for a page of `page`: the smallest (1/8, 1/4,
    /// 1/2, else 1/1) whose longer and shorter sides still cover the page's (the page is filled, turned to suit).
    public static func decodeScale(for image: FrameSize, page: FrameSize) -> JPEGScale {
        JPEGScale.smallest(from: FrameSize(width: max(image.width, image.height), height: min(image.width, image.height)),
                           covering: FrameSize(width: max(page.width, page.height), height: min(page.width, page.height)))
    }

    /// The side of a code's module in pixels at `dpi`: the code about 20 mm square with its quiet zone
    /// of 4 modules, a module never under 0.4 mm (what a phone resolves at arm's length) nor 2 px.
    public static func modulePixels(modules: Int, dpi: Int) -> Int {
        let perMillimetre = Double(dpi) / 25.4
        let wanted = (20 * perMillimetre / Double(modules + 8)).rounded()
        return max(2, Int((0.4 * perMillimetre).rounded(.up)), Int(wanted))
    }

    /// Draws `code` on `page` (RGB24, rows packed, `size`): black modules on a white square (the
    /// quiet zone included), 3 mm in from the corner's two edges. - Returns: false, page untouched,
    /// when the text does not fit a QR code (libqrencode) or the square would cover more than half
    /// the page's shorter side.
    public static func stamp(_ code: PageCode, on page: inout [UInt8], size: FrameSize, dpi: Int) -> Bool {
        guard code.corner != .off, let qr = QRCode(code.text), page.count >= size.width * size.height * 3 else { return false }
        let module = modulePixels(modules: qr.size, dpi: dpi)
        let side = module * (qr.size + 8)
        let inset = Int((3 * Double(dpi) / 25.4).rounded())
        guard side + inset <= min(size.width, size.height) / 2 else { return false }
        let left = code.corner == .topLeft || code.corner == .bottomLeft
        let top = code.corner == .topLeft || code.corner == .topRight
        let x0 = left ? inset : size.width - inset - side
        let y0 = top ? inset : size.height - inset - side
        let stride = size.width * 3
        page.withUnsafeMutableBufferPointer { p in
            for y in 0..<side {
                let my = y / module - 4
                for x in 0..<side {
                    let mx = x / module - 4
                    let dark = mx >= 0 && my >= 0 && mx < qr.size && my < qr.size && qr.isDark(x: mx, y: my)
                    let o = (y0 + y) * stride + (x0 + x) * 3
                    let v: UInt8 = dark ? 0 : 255
                    p[o] = v; p[o + 1] = v; p[o + 2] = v
                }
            }
        }
        return true
    }

    /// `image` filled into `size`: rotated a quarter turn (clockwise) when one is landscape and the
    /// other portrait, centre-cropped to the aspect of `size`, bilinearly resampled. RGB24 bytes, rows packed.
    public static func fill(_ image: RGBImage, to size: FrameSize) -> [UInt8] {
        let sw = image.size.width, sourceHeight = image.size.height
        let rotate = (sw > sourceHeight) != (size.width > size.height) && sw != sourceHeight && size.width != size.height
        // The source as seen after the rotation.
        let vw = rotate ? sourceHeight : sw, vh = rotate ? sw : sourceHeight
        // Crop rectangle in the rotated view, centred, with the target's aspect.
        let targetAspect = Double(size.width) / Double(size.height)
        var cw = Double(vw), ch = Double(vh)
        if cw / ch > targetAspect { cw = ch * targetAspect } else { ch = cw / targetAspect }
        let cx = (Double(vw) - cw) / 2, cy = (Double(vh) - ch) / 2
        let sx = cw / Double(size.width), sy = ch / Double(size.height)
        var out = [UInt8](repeating: 0, count: size.width * size.height * 3)
        let src = image.bytes, stride = sw * 3, sh = image.size.height
        out.withUnsafeMutableBufferPointer { dst in
            src.withUnsafeBufferPointer { s in
                for y in 0..<size.height {
                    let fy = max(0, min(Double(vh) - 1, cy + (Double(y) + 0.5) * sy - 0.5))
                    let y0 = Int(fy), y1 = min(y0 + 1, vh - 1), wy = fy - Double(y0)
                    for x in 0..<size.width {
                        let fx = max(0, min(Double(vw) - 1, cx + (Double(x) + 0.5) * sx - 0.5))
                        let x0 = Int(fx), x1 = min(x0 + 1, vw - 1), wx = fx - Double(x0)
                        // (vx, vy) in the rotated view → the source: a clockwise quarter turn means
                        // view (vx, vy) = source column vy, row sh - 1 - vx (the left edge becomes the top).
                        @inline(__always) func at(_ vx: Int, _ vy: Int) -> Int {
                            rotate ? (sh - 1 - vx) * stride + vy * 3 : vy * stride + vx * 3
                        }
                        let a = at(x0, y0), b = at(x1, y0), c = at(x0, y1), d = at(x1, y1)
                        let o = (y * size.width + x) * 3
                        for k in 0..<3 {
                            let top = Double(s[a + k]) * (1 - wx) + Double(s[b + k]) * wx
                            let bottom = Double(s[c + k]) * (1 - wx) + Double(s[d + k]) * wx
                            dst[o + k] = UInt8(max(0, min(255, (top * (1 - wy) + bottom * wy).rounded())))
                        }
                    }
                }
            }
        }
        return out
    }
}
