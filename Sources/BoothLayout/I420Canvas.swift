import BoothCore
import BoothJPEG
import BoothRaster
import CYUV

/// A colour as full-range Y'CbCr (JFIF, BT.601), the values the canvas holds.
struct YCbCr: Hashable {
    var y: UInt8
    var cb: UInt8
    var cr: UInt8

    init(_ c: RGBColor) {
        let r = Double(c.red), g = Double(c.green), b = Double(c.blue)
        func clamp(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
        y = clamp(0.299 * r + 0.587 * g + 0.114 * b)
        cb = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b)
        cr = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
    }
}

/// Read-only planes of a source image: luma and, unless gray, two chroma planes subsampled by
/// `chromaShiftX`/`chromaShiftY` (1 = halved). Pointers stay valid only while their owner is alive.
struct PlaneSource {
    var y: UnsafePointer<UInt8>
    var yStride: Int
    var cb: UnsafePointer<UInt8>?
    var cr: UnsafePointer<UInt8>?
    var chromaStride: Int
    var chromaWidth: Int
    var chromaHeight: Int
    var size: FrameSize
    /// log2 of the horizontal and vertical chroma subsampling factors (4:2:0: 1, 1; 4:2:2: 1, 0).
    var chromaShiftX: Int
    var chromaShiftY: Int
}

extension YUVPlanes {
    /// The planes as a `PlaneSource`, for as long as `body` runs; nil (and `body` not run) when empty.
    func withSource<R>(_ body: (PlaneSource) -> R) -> R? {
        let shifts: (Int, Int)
        switch subsampling {
        case .s420: shifts = (1, 1)
        case .s422: shifts = (1, 0)
        case .s444, .gray: shifts = (0, 0)
        case .s440: shifts = (0, 1)
        case .s411: shifts = (2, 0)
        }
        return bytes.withUnsafeBufferPointer { buf -> R? in
            guard let base = buf.baseAddress, planeCount >= 1 else { return nil }
            let chroma = planeCount == 3
            return body(PlaneSource(y: base, yStride: widths[0],
                                    cb: chroma ? base + offsets[1] : nil, cr: chroma ? base + offsets[2] : nil,
                                    chromaStride: chroma ? widths[1] : 0,
                                    chromaWidth: chroma ? widths[1] : 0, chromaHeight: chroma ? heights[1] : 0,
                                    size: size, chromaShiftX: shifts.0, chromaShiftY: shifts.1))
        }
    }
}

/// The picture being composed: I420 planes (full-range Y'CbCr, chroma half size each way),
/// allocated once per sheet size and reused for every picture of that size (first-touch of fresh
/// pages costs about 3 µs per 4 KiB here). `@unchecked Sendable`: confined to the composer's
/// thread, except that `PictureComposer`'s two decoding threads draw into disjoint slot rectangles
/// (a plan's slots never overlap, which the tests check) while the composer's thread waits.
final class I420Canvas: @unchecked Sendable {
    let size: FrameSize
    let lumaStride: Int
    let lumaRows: Int
    let chromaStride: Int
    let chromaRows: Int
    let y: UnsafeMutablePointer<UInt8>
    let cb: UnsafeMutablePointer<UInt8>
    let cr: UnsafeMutablePointer<UInt8>

    init(size: FrameSize) {
        self.size = size
        lumaStride = (size.width + 1) & ~1
        lumaRows = (size.height + 1) & ~1
        chromaStride = lumaStride / 2
        chromaRows = lumaRows / 2
        y = .allocate(capacity: lumaStride * lumaRows)
        cb = .allocate(capacity: chromaStride * chromaRows)
        cr = .allocate(capacity: chromaStride * chromaRows)
    }

    deinit {
        y.deallocate()
        cb.deallocate()
        cr.deallocate()
    }

    var asSource: PlaneSource {
        PlaneSource(y: y, yStride: lumaStride, cb: cb, cr: cr, chromaStride: chromaStride, chromaWidth: chromaStride,
                    chromaHeight: chromaRows, size: size, chromaShiftX: 1, chromaShiftY: 1)
    }

    /// Fills `rect` (even coordinates) with `color`: libyuv `SetPlane` on each plane.
    func fill(_ rect: PixelRect, _ color: YCbCr) {
        let r = rect.clipped(to: FrameSize(width: lumaStride, height: lumaRows))
        guard !r.isEmpty else { return }
        SetPlane(y + r.y * lumaStride + r.x, Int32(lumaStride), Int32(r.width), Int32(r.height), UInt32(color.y))
        let cx = r.x / 2, cy = r.y / 2, cw = (r.width + 1) / 2, ch = (r.height + 1) / 2
        SetPlane(cb + cy * chromaStride + cx, Int32(chromaStride), Int32(cw), Int32(ch), UInt32(color.cb))
        SetPlane(cr + cy * chromaStride + cx, Int32(chromaStride), Int32(cw), Int32(ch), UInt32(color.cr))
    }

    /// Copies all of `other` (same size) into this canvas: libyuv `CopyPlane`.
    func copy(from other: I420Canvas) {
        CopyPlane(other.y, Int32(other.lumaStride), y, Int32(lumaStride), Int32(lumaStride), Int32(lumaRows))
        CopyPlane(other.cb, Int32(other.chromaStride), cb, Int32(chromaStride), Int32(chromaStride), Int32(chromaRows))
        CopyPlane(other.cr, Int32(other.chromaStride), cr, Int32(chromaStride), Int32(chromaStride), Int32(chromaRows))
    }

    /// Draws `crop` of `source` (its luma pixels) scaled into `destination` (even coordinates, inside
    /// the canvas) with libyuv: the box filter (area averaging) when shrinking to less than half on
    /// either axis; bilinear otherwise (enlarging, or shrinking by at most 2×, where each output pixel's
    /// footprint is at most two source pixels and bilinear's 2×2 taps cover it; much faster than the
    /// box filter's row sums at such ratios).
    /// Each plane goes through libyuv `ScalePlane` (chroma resampled to 4:2:0 on the way); gray sources
    /// get neutral chroma. When the chroma shrinks by at most 2× (a 1920x1080 capture in a 600 dpi 2x2
    /// slot: 0.86×) it is sampled, not filtered (`kFilterNone`): filtering it cost 1.1 ms of a 34 ms composition
    /// (CPU, 600 dpi, `bench/run print`), and the result differs from bilinear by 48–54 dB PSNR on the real captures, below what
    /// the 4:2:0 JPEG encode after it loses. Luma is always filtered, chroma too when enlarged or shrunk
    /// by more than 2×.
    func draw(_ source: PlaneSource, crop: PixelRect, into destination: PixelRect) {
        let d = destination
        guard d.width >= 2, d.height >= 2, crop.width >= 1, crop.height >= 1,
              d.x >= 0, d.y >= 0, d.maxX <= lumaStride, d.maxY <= lumaRows else { return }
        let filter = crop.width > 2 * d.width || crop.height > 2 * d.height ? kFilterBox : kFilterBilinear
        let dy = y + d.y * lumaStride + d.x
        let dcx = d.x / 2, dcy = d.y / 2, dcw = d.width / 2, dch = d.height / 2
        let dcb = cb + dcy * chromaStride + dcx, dcr = cr + dcy * chromaStride + dcx
        let sy = source.y + crop.y * source.yStride + crop.x
        guard let scb = source.cb, let scr = source.cr else {
            ScalePlane(sy, Int32(source.yStride), Int32(crop.width), Int32(crop.height),
                       dy, Int32(lumaStride), Int32(d.width), Int32(d.height), filter)
            SetPlane(dcb, Int32(chromaStride), Int32(dcw), Int32(dch), 128)
            SetPlane(dcr, Int32(chromaStride), Int32(dcw), Int32(dch), 128)
            return
        }
        let sx = source.chromaShiftX, sh = source.chromaShiftY
        let cx = crop.x >> sx, cyy = crop.y >> sh
        let cw = min(source.chromaWidth - cx, max(1, (crop.width + (1 << sx) - 1) >> sx))
        let ch = min(source.chromaHeight - cyy, max(1, (crop.height + (1 << sh) - 1) >> sh))
        let ocb = scb + cyy * source.chromaStride + cx, ocr = scr + cyy * source.chromaStride + cx
        let chromaFilter = filter == kFilterBilinear && cw >= dcw && ch >= dch ? kFilterNone : filter
        ScalePlane(sy, Int32(source.yStride), Int32(crop.width), Int32(crop.height),
                   dy, Int32(lumaStride), Int32(d.width), Int32(d.height), filter)
        ScalePlane(ocb, Int32(source.chromaStride), Int32(cw), Int32(ch),
                   dcb, Int32(chromaStride), Int32(dcw), Int32(dch), chromaFilter)
        ScalePlane(ocr, Int32(source.chromaStride), Int32(cw), Int32(ch),
                   dcr, Int32(chromaStride), Int32(dcw), Int32(dch), chromaFilter)
    }

    /// Blends `color` into the canvas through `mask` (coverage 0…255) placed with its top-left corner
    /// at (`x`, `y`): value = (color × a + value × (255 − a)) / 255; chroma with the mean coverage of
    /// each 2×2 block. Parts outside the canvas are left out.
    func blend(_ mask: AlphaMask, x: Int, y top: Int, color: YCbCr) {
        let cy = Int(color.y), ccb = Int(color.cb), ccr = Int(color.cr)
        mask.alpha.withUnsafeBufferPointer { alpha in
            guard let a = alpha.baseAddress else { return }
            for row in 0..<mask.height {
                let py = top + row
                guard py >= 0, py < size.height else { continue }
                let line = y + py * lumaStride
                for col in 0..<mask.width {
                    let px = x + col
                    guard px >= 0, px < size.width else { continue }
                    let k = Int(a[row * mask.width + col])
                    guard k > 0 else { continue }
                    line[px] = UInt8((cy * k + Int(line[px]) * (255 - k) + 127) / 255)
                }
            }
            // Chroma: one value per 2×2 block of the sheet.
            let bx0 = max(0, x) / 2, by0 = max(0, top) / 2
            let bx1 = min(size.width, x + mask.width + 1) / 2, by1 = min(size.height, top + mask.height + 1) / 2
            guard bx1 > bx0, by1 > by0 else { return }
            for by in by0..<by1 {
                for bx in bx0..<bx1 {
                    var sum = 0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let mx = bx * 2 + dx - x, my = by * 2 + dy - top
                        if mx >= 0, mx < mask.width, my >= 0, my < mask.height { sum += Int(a[my * mask.width + mx]) }
                    }
                    let k = (sum + 2) / 4
                    guard k > 0 else { continue }
                    let i = by * chromaStride + bx
                    cb[i] = UInt8((ccb * k + Int(cb[i]) * (255 - k) + 127) / 255)
                    cr[i] = UInt8((ccr * k + Int(cr[i]) * (255 - k) + 127) / 255)
                }
            }
        }
    }

    /// Blends `overlay` (same size as the canvas) over rows `rows` (even bounds) with its alpha plane:
    /// libyuv `I420Blend` (value = (overlay × a + canvas × (255 − a) + 255) >> 8; chroma alpha the
    /// 2×2 mean).
    func blend(_ overlay: Overlay, rows: Range<Int>) {
        let r0 = rows.lowerBound & ~1, r1 = min(lumaRows, (rows.upperBound + 1) & ~1)
        guard r1 > r0 else { return }
        let c0 = r0 / 2
        let o = overlay.planes
        I420Blend(o.y + r0 * o.lumaStride, Int32(o.lumaStride), o.cb + c0 * o.chromaStride, Int32(o.chromaStride),
                  o.cr + c0 * o.chromaStride, Int32(o.chromaStride),
                  y + r0 * lumaStride, Int32(lumaStride), cb + c0 * chromaStride, Int32(chromaStride),
                  cr + c0 * chromaStride, Int32(chromaStride),
                  overlay.alpha + r0 * o.lumaStride, Int32(o.lumaStride),
                  y + r0 * lumaStride, Int32(lumaStride), cb + c0 * chromaStride, Int32(chromaStride),
                  cr + c0 * chromaStride, Int32(chromaStride), Int32(lumaStride), Int32(r1 - r0))
    }
}

/// A PNG overlay at one sheet size: its colour as I420 planes (`ARGBToJ420`), its alpha as a
/// full-size plane (`ARGBExtractAlpha`), and the rows where the alpha is not all zero.
final class Overlay {
    let planes: I420Canvas
    let alpha: UnsafeMutablePointer<UInt8>
    /// Rows with any alpha above zero; empty for a fully transparent overlay.
    let rows: Range<Int>

    /// Scales `image` to cover `size`, aspect kept and the overhang cropped evenly (libyuv
    /// `ARGBScale`, box filter), and converts it.
    init(_ image: BGRAImage, size: FrameSize) {
        let planes = I420Canvas(size: size)
        let stride = planes.lumaStride, rowsCount = planes.lumaRows
        let alpha = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * rowsCount)
        alpha.initialize(repeating: 0, count: stride * rowsCount)
        var scaled = [UInt8](repeating: 0, count: stride * 4 * rowsCount)
        image.bytes.withUnsafeBufferPointer { src in
            scaled.withUnsafeMutableBufferPointer { dst in
                guard let s = src.baseAddress, let d = dst.baseAddress else { return }
                // Keep the overlay's aspect: scale it to cover the sheet, cropping the overhang
                // evenly (as pibooth does); an overlay made for the sheet's aspect is not cropped.
                let (crop, _) = PicturePlan.place(image.size, in: PixelRect(x: 0, y: 0, width: size.width, height: size.height),
                                                  fit: false)
                let source = s + crop.y * image.size.width * 4 + crop.x * 4
                ARGBScale(source, Int32(image.size.width * 4), Int32(crop.width), Int32(crop.height),
                          d, Int32(stride * 4), Int32(size.width), Int32(size.height), kFilterBox)
                ARGBToJ420(d, Int32(stride * 4), planes.y, Int32(stride), planes.cb, Int32(planes.chromaStride),
                           planes.cr, Int32(planes.chromaStride), Int32(stride), Int32(rowsCount))
                ARGBExtractAlpha(d, Int32(stride * 4), alpha, Int32(stride), Int32(size.width), Int32(size.height))
            }
        }
        var first = -1, last = -1
        for row in 0..<rowsCount {
            let line = UnsafeBufferPointer(start: alpha + row * stride, count: stride)
            if line.contains(where: { $0 != 0 }) {
                if first < 0 { first = row }
                last = row
            }
        }
        rows = first < 0 ? 0..<0 : first..<(last + 1)
        self.planes = planes
        self.alpha = alpha
    }

    deinit { alpha.deallocate() }
}
