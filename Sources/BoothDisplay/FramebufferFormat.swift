import BoothCore
import BoothRaster
import CYUV

/// Where one colour channel sits in a framebuffer pixel (`fb_bitfield`): `offset` bits from the
/// least significant bit, `length` bits wide.
public struct Bitfield: Sendable, Equatable {
    public var offset: Int
    public var length: Int
    public init(offset: Int, length: Int) { self.offset = offset; self.length = length }
}

/// A framebuffer's pixel layout as the driver reports it (`FBIOGET_VSCREENINFO`/`FBIOGET_FSCREENINFO`):
/// the visible size, bits per pixel (16 or 32), bytes per line (`line_length`, may exceed
/// `width * bytesPerPixel`) and the red/green/blue bitfields. Pixels are little-endian words.
public struct FramebufferFormat: Sendable, Equatable, CustomStringConvertible {
    /// Visible size in pixels (`xres` x `yres`).
    public var size: FrameSize
    /// 16 or 32.
    public var bitsPerPixel: Int
    /// Bytes from one line to the next (`line_length`).
    public var lineLength: Int
    public var red: Bitfield, green: Bitfield, blue: Bitfield

    public init(size: FrameSize, bitsPerPixel: Int, lineLength: Int, red: Bitfield, green: Bitfield, blue: Bitfield) {
        self.size = size
        self.bitsPerPixel = bitsPerPixel
        self.lineLength = lineLength
        self.red = red; self.green = green; self.blue = blue
    }

    /// 32 bpp XRGB8888 (red at 16, green at 8, blue at 0); `lineLength` defaults to `width * 4`.
    public static func xrgb8888(_ size: FrameSize, lineLength: Int? = nil) -> FramebufferFormat {
        FramebufferFormat(size: size, bitsPerPixel: 32, lineLength: lineLength ?? size.width * 4,
                          red: Bitfield(offset: 16, length: 8), green: Bitfield(offset: 8, length: 8),
                          blue: Bitfield(offset: 0, length: 8))
    }

    /// 16 bpp RGB565 (red at 11, green at 5 with 6 bits, blue at 0); `lineLength` defaults to `width * 2`.
    public static func rgb565(_ size: FrameSize, lineLength: Int? = nil) -> FramebufferFormat {
        FramebufferFormat(size: size, bitsPerPixel: 16, lineLength: lineLength ?? size.width * 2,
                          red: Bitfield(offset: 11, length: 5), green: Bitfield(offset: 5, length: 6),
                          blue: Bitfield(offset: 0, length: 5))
    }

    public var bytesPerPixel: Int { bitsPerPixel / 8 }
    /// Bytes of one visible row, `width * bytesPerPixel` (≤ `lineLength`).
    public var rowBytes: Int { size.width * bytesPerPixel }

    /// True for the layout libyuv's ARGB matches byte for byte.
    public var isXRGB8888: Bool { self.sameChannels(as: .xrgb8888(size)) && bitsPerPixel == 32 }
    /// True for the layout libyuv's RGB565 matches.
    public var isRGB565: Bool { self.sameChannels(as: .rgb565(size)) && bitsPerPixel == 16 }

    private func sameChannels(as other: FramebufferFormat) -> Bool {
        red == other.red && green == other.green && blue == other.blue
    }

    /// Checks the layout can be drawn: 16 or 32 bpp, channels of 1–8 bits inside the pixel, a line
    /// long enough for a row. Throws ``FramebufferError/unsupportedFormat(_:)`` otherwise.
    public func validate() throws(FramebufferError) {
        let ok = (bitsPerPixel == 16 || bitsPerPixel == 32) && size.width > 0 && size.height > 0
            && lineLength >= rowBytes
            && [red, green, blue].allSatisfy { (1...8).contains($0.length) && $0.offset >= 0 && $0.offset + $0.length <= bitsPerPixel }
        guard ok else { throw FramebufferError.unsupportedFormat(description) }
    }

    /// The pixel value for `0xRRGGBB` in this layout (top bits of each channel).
    public func pixel(rgb: UInt32) -> UInt32 {
        func ch(_ v: UInt32, _ f: Bitfield) -> UInt32 { (v >> UInt32(8 - f.length)) << UInt32(f.offset) }
        return ch((rgb >> 16) & 0xFF, red) | ch((rgb >> 8) & 0xFF, green) | ch(rgb & 0xFF, blue)
    }

    /// `0xRRGGBB` for a pixel value of this layout (each channel widened to 8 bits by repeating its top bits).
    public func rgb(pixel: UInt32) -> UInt32 {
        func ch(_ f: Bitfield) -> UInt32 {
            let v = (pixel >> UInt32(f.offset)) & ((1 << UInt32(f.length)) - 1)
            var out = v << UInt32(8 - f.length)
            var shift = f.length
            while shift < 8 { out |= out >> UInt32(shift); shift *= 2 }
            return out & 0xFF
        }
        return ch(red) << 16 | ch(green) << 8 | ch(blue)
    }

    /// `"1280x800 32bpp XRGB8888 line 5120"`.
    public var description: String {
        let name = isXRGB8888 ? "XRGB8888" : isRGB565 ? "RGB565"
            : "R\(red.length)@\(red.offset) G\(green.length)@\(green.offset) B\(blue.length)@\(blue.offset)"
        return "\(size) \(bitsPerPixel)bpp \(name) line \(lineLength)"
    }
}

/// Turns a canvas by the display rotation and converts it into a framebuffer's layout, in an
/// off-screen buffer of `format.rowBytes * height` bytes (libyuv's `ARGBRotate` and
/// `ARGBToRGB565`; a per-pixel loop for other bitfields), ready to be copied in line by line.
/// Keeps its buffers between frames. Not thread-safe: one per drawing thread.
public final class FramebufferConverter {
    public let format: FramebufferFormat
    private var turned = Canvas(size: FrameSize(width: 0, height: 0))
    /// The converted frame, `format.rowBytes` per row, packed.
    public private(set) var packed: [UInt8]

    public init(format: FramebufferFormat) {
        self.format = format
        packed = [UInt8](repeating: 0, count: format.rowBytes * format.size.height)
    }

    /// The canvas size to draw for this framebuffer under `rotation` (width and height swap for 90/270).
    public func canvasSize(for rotation: Rotation) -> FrameSize { rotation.rotated(format.size) }

    /// Converts `canvas` turned by `rotation` and presents it on `framebuffer` (whose format must be
    /// this converter's). An XRGB8888 framebuffer without a turn is copied straight from the canvas.
    /// Returns false (nothing presented) when the canvas is not `canvasSize(for: rotation)`.
    /// A canvas stored right to left (``Canvas/storedMirrored``) goes in through
    /// ``Framebuffer/presentMirrored(_:)`` on that path, so the copy-in is the mirror too.
    @discardableResult
    public func present(_ canvas: Canvas, rotation: Rotation, on framebuffer: any Framebuffer) -> Bool {
        if presentsStraight(canvas.size, rotation: rotation) {
            canvas.pixels.withUnsafeBytes { canvas.storedMirrored ? framebuffer.presentMirrored($0) : framebuffer.present($0) }
            return true
        }
        guard convert(canvas, rotation: rotation) else { return false }
        framebuffer.present(packed)
        return true
    }

    /// True when a `size` canvas under `rotation` is copied into the framebuffer as it is, with no
    /// conversion pass: an XRGB8888 framebuffer of that size, not turned.
    public func presentsStraight(_ size: FrameSize, rotation: Rotation) -> Bool {
        rotation == .r0 && format.isXRGB8888 && size == format.size
    }

    /// Converts `canvas` (which must be `canvasSize(for: rotation)`) turned clockwise by `rotation`
    /// (a canvas stored right to left is put back left to right first, `ARGBMirror`).
    /// Returns false (nothing converted) when the canvas has another size.
    @discardableResult
    public func convert(_ canvas: Canvas, rotation: Rotation) -> Bool {
        guard canvas.size == canvasSize(for: rotation) else { return false }
        var canvas = canvas
        if canvas.storedMirrored {
            var upright = Canvas(size: canvas.size)
            canvas.pixels.withUnsafeBytes { s in
                upright.pixels.withUnsafeMutableBytes { d in
                    _ = ARGBMirror(s.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(canvas.bytesPerLine),
                                   d.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(canvas.bytesPerLine),
                                   Int32(canvas.width), Int32(canvas.height))
                }
            }
            canvas = upright
        }
        let source: Canvas
        if rotation == .r0 {
            source = canvas
        } else {
            turned.resize(format.size)
            canvas.pixels.withUnsafeBytes { src in
                turned.pixels.withUnsafeMutableBytes { dst in
                    _ = ARGBRotate(src.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(canvas.bytesPerLine),
                                   dst.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(format.size.width * 4),
                                   Int32(canvas.width), Int32(canvas.height), libyuvRotation(rotation))
                }
            }
            source = turned
        }
        let w = format.size.width, h = format.size.height
        if format.isXRGB8888 {
            packed.withUnsafeMutableBytes { dst in
                source.pixels.withUnsafeBytes { src in
                    if let d = dst.baseAddress, let s = src.baseAddress { d.copyMemory(from: s, byteCount: w * h * 4) }
                }
            }
        } else if format.isRGB565 {
            source.pixels.withUnsafeBytes { src in
                packed.withUnsafeMutableBufferPointer { dst in
                    _ = ARGBToRGB565(src.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(w * 4),
                                     dst.baseAddress, Int32(w * 2), Int32(w), Int32(h))
                }
            }
        } else {
            let bpp = format.bytesPerPixel, f = format
            source.pixels.withUnsafeBufferPointer { src in
                packed.withUnsafeMutableBufferPointer { dst in
                    for i in 0..<(w * h) {
                        let v = f.pixel(rgb: src[i])
                        dst[i * bpp] = UInt8(truncatingIfNeeded: v)
                        dst[i * bpp + 1] = UInt8(truncatingIfNeeded: v >> 8)
                        if bpp == 4 {
                            dst[i * bpp + 2] = UInt8(truncatingIfNeeded: v >> 16)
                            dst[i * bpp + 3] = UInt8(truncatingIfNeeded: v >> 24)
                        }
                    }
                }
            }
        }
        return true
    }
}

func libyuvRotation(_ r: Rotation) -> RotationMode {
    switch r {
    case .r0: kRotate0
    case .r90: kRotate90
    case .r180: kRotate180
    case .r270: kRotate270
    }
}
