import BoothCore
import CYUV

/// An XRGB8888 picture in memory: `size.width * size.height` 32-bit pixels, rows top to bottom,
/// each `0xXXRRGGBB` (little-endian bytes B, G, R, X: libyuv's "ARGB" and fbdev's XRGB8888).
/// The screens are drawn here, then turned and converted into the framebuffer's format.
///
/// With ``storedMirrored`` the rows are stored right to left (the screen's mirror image) while every
/// drawing call and ``rgb(x:y:)`` still takes screen coordinates: the compositor's way to fold the
/// live view's mirror into the copy into framebuffer memory (``Framebuffer/presentMirrored(_:)``).
public struct Canvas: Sendable, Equatable {
    public private(set) var size: FrameSize
    /// The pixels as stored: rows top to bottom, each left to right, or right to left when
    /// ``storedMirrored``.
    public var pixels: [UInt32]
    /// True when each row is stored right to left: screen pixel (`x`, `y`) is
    /// `pixels[y * width + width - 1 - x]`. Set before drawing (changing it moves no pixel already
    /// drawn); ``ScreenCompositor`` sets it for the mirrored live view on an XRGB8888 screen that is
    /// not turned. False for a new canvas.
    public var storedMirrored = false

    /// A `size` canvas filled with `color` (`0xRRGGBB`).
    public init(size: FrameSize, color: UInt32 = 0) {
        self.size = FrameSize(width: max(0, size.width), height: max(0, size.height))
        pixels = [UInt32](repeating: color, count: self.size.area)
    }

    public var width: Int { size.width }
    public var height: Int { size.height }
    /// Bytes per row: `width * 4`.
    public var bytesPerLine: Int { size.width * 4 }

    /// The pixel at (`x`, `y`) as `0xRRGGBB` (the X byte masked off); 0 outside.
    public func rgb(x: Int, y: Int) -> UInt32 {
        guard x >= 0, y >= 0, x < width, y < height else { return 0 }
        return pixels[y * width + (storedMirrored ? width - 1 - x : x)] & 0xFF_FFFF
    }

    /// Where screen rectangle `rect` (already clipped) is in storage: the same, or reflected
    /// left-right when ``storedMirrored``.
    package func stored(_ rect: PixelRect) -> PixelRect {
        guard storedMirrored else { return rect }
        return PixelRect(x: width - rect.x - rect.width, y: rect.y, width: rect.width, height: rect.height)
    }

    /// Resizes to `size` (contents undefined afterwards), keeping the storage when it is large enough.
    public mutating func resize(_ newSize: FrameSize) {
        guard newSize != size else { return }
        size = newSize
        if pixels.count != newSize.area { pixels = [UInt32](repeating: 0, count: newSize.area) }
    }

    /// Fills the whole canvas with `color` (`0xRRGGBB`).
    public mutating func fill(_ color: UInt32) {
        pixels.withUnsafeMutableBufferPointer { $0.update(repeating: color | 0xFF00_0000) }
    }

    /// Fills `rect` (clipped to the canvas) with `color`.
    public mutating func fill(_ rect: PixelRect, _ color: UInt32) {
        let r = stored(rect.clipped(to: size))
        guard !r.isEmpty else { return }
        let w = width, c = color | 0xFF00_0000
        pixels.withUnsafeMutableBufferPointer { p in
            for y in r.y..<(r.y + r.height) {
                let row = y * w
                for x in r.x..<(r.x + r.width) { p[row + x] = c }
            }
        }
    }

    /// Darkens (or lightens) `rect` toward `color` by `alpha` (0…255), for bands behind text.
    /// Toward black (`color` 0) it is libyuv's `ARGBShade` (each channel times `255 - alpha`, SIMD).
    public mutating func shade(_ rect: PixelRect, _ color: UInt32, alpha: Int) {
        let r = stored(rect.clipped(to: size))
        guard !r.isEmpty else { return }
        let w = width, a = UInt32(max(0, min(255, alpha)))
        if color & 0xFF_FFFF == 0 {
            let keep = 255 - a, value = 0xFF00_0000 | keep << 16 | keep << 8 | keep
            pixels.withUnsafeMutableBytes { p in
                let at = (p.baseAddress?.assumingMemoryBound(to: UInt8.self)).map { $0 + (r.y * w + r.x) * 4 }
                _ = ARGBShade(at, Int32(w * 4), at, Int32(w * 4), Int32(r.width), Int32(r.height), value)
            }
            return
        }
        pixels.withUnsafeMutableBufferPointer { p in
            for y in r.y..<(r.y + r.height) {
                let row = y * w
                for x in r.x..<(r.x + r.width) { p[row + x] = blend(p[row + x], color, a) }
            }
        }
    }

    /// Draws `mask` (8-bit coverage) in `color` with its top-left at (`x`, `y`), clipped.
    public mutating func draw(_ mask: AlphaMask, x: Int, y: Int, color: UInt32, opacity: Int = 255) {
        let clip = PixelRect(x: x, y: y, width: mask.width, height: mask.height).clipped(to: size)
        guard !clip.isEmpty else { return }
        let w = width, o = UInt32(max(0, min(255, opacity)))
        // Stored right to left: screen column cx is storage column w - 1 - cx.
        let flip = storedMirrored
        pixels.withUnsafeMutableBufferPointer { p in
            mask.alpha.withUnsafeBufferPointer { m in
                for cy in clip.y..<(clip.y + clip.height) {
                    let mrow = (cy - y) * mask.width - x, row = cy * w
                    for cx in clip.x..<(clip.x + clip.width) {
                        let a = UInt32(m[mrow + cx]) * o / 255
                        if a == 0 { continue }
                        let i = row + (flip ? w - 1 - cx : cx)
                        p[i] = a == 255 ? color | 0xFF00_0000 : blend(p[i], color, a)
                    }
                }
            }
        }
    }
}

/// `dst` toward `src` by `a`/255, per channel.
@inline(__always)
func blend(_ dst: UInt32, _ src: UInt32, _ a: UInt32) -> UInt32 {
    let na = 255 - a
    let r = (((src >> 16) & 0xFF) * a + ((dst >> 16) & 0xFF) * na) / 255
    let g = (((src >> 8) & 0xFF) * a + ((dst >> 8) & 0xFF) * na) / 255
    let b = ((src & 0xFF) * a + (dst & 0xFF) * na) / 255
    return 0xFF00_0000 | r << 16 | g << 8 | b
}

/// A rectangle of whole pixels on a canvas, screen or sheet: top-left (`x`, `y`) from the top-left corner,
/// `width` x `height`; all in pixels.
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var size: FrameSize { FrameSize(width: width, height: height) }
    /// The column just right of the rectangle: `x + width` (pixels).
    public var maxX: Int { x + width }
    /// The row just below the rectangle: `y + height` (pixels).
    public var maxY: Int { y + height }
    /// Width over height; 0 for an empty rectangle.
    public var aspect: Double { height > 0 ? Double(width) / Double(height) : 0 }

    /// True when the two share at least one pixel.
    public func intersects(_ other: PixelRect) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }

    /// True when `other` lies entirely inside this rectangle.
    public func contains(_ other: PixelRect) -> Bool {
        other.x >= x && other.y >= y && other.maxX <= maxX && other.maxY <= maxY
    }

    /// The part inside a `size` canvas (empty, width or height 0, when none is).
    public func clipped(to size: FrameSize) -> PixelRect {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(size.width, maxX), y1 = min(size.height, maxY)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// 8-bit coverage (0 transparent … 255 opaque), `width * height` bytes, rows top to bottom:
/// rendered text, drawn in a colour with `Canvas.draw(_:x:y:color:opacity:)`.
public struct AlphaMask: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var alpha: [UInt8]

    public init(width: Int, height: Int, alpha: [UInt8]? = nil) {
        self.width = max(0, width)
        self.height = max(0, height)
        self.alpha = alpha ?? [UInt8](repeating: 0, count: self.width * self.height)
    }
}

/// How a picture fills an area: the whole picture with bars (`fit`) or the area filled, cropped (`fill`).
public enum Scaling: Sendable, Equatable {
    case fit, fill

    public init(_ setting: ScalingSetting) { self = setting == .fill ? .fill : .fit }

    /// Where a `source`-sized picture goes in `area`, and which part of it (in source pixels) is shown.
    /// Fit: all of the source, centred in the largest rect with its aspect ratio. Fill: all of `area`,
    /// the centred part of the source with the area's aspect ratio.
    public func placement(of source: FrameSize, in area: FrameSize) -> (destination: PixelRect, crop: PixelRect) {
        let full = PixelRect(x: 0, y: 0, width: source.width, height: source.height)
        guard source.area > 0, area.area > 0 else {
            return (PixelRect(x: 0, y: 0, width: 0, height: 0), full)
        }
        switch self {
        case .fit:
            // Compare aspect ratios by cross-multiplying: no rounding until the end.
            if source.width * area.height >= area.width * source.height {
                let h = max(1, (area.width * source.height + source.width / 2) / source.width)
                return (PixelRect(x: 0, y: (area.height - h) / 2, width: area.width, height: h), full)
            } else {
                let w = max(1, (area.height * source.width + source.height / 2) / source.height)
                return (PixelRect(x: (area.width - w) / 2, y: 0, width: w, height: area.height), full)
            }
        case .fill:
            let dest = PixelRect(x: 0, y: 0, width: area.width, height: area.height)
            if source.width * area.height >= area.width * source.height {
                let w = max(1, (source.height * area.width + area.height / 2) / area.height)
                return (dest, PixelRect(x: (source.width - w) / 2, y: 0, width: w, height: source.height))
            } else {
                let h = max(1, (source.width * area.height + area.width / 2) / area.width)
                return (dest, PixelRect(x: 0, y: (source.height - h) / 2, width: source.width, height: h))
            }
        }
    }
}
