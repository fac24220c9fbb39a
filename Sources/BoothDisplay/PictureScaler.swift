import BoothCore
import BoothJPEG
import BoothRaster
import CYUV

/// Problems with a camera frame handed to the live view (not the session's picture: that is BoothLayout's `PictureError`).
public enum LiveViewFrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `bytesPerLine` or the byte count is too small for the frame's size and format.
    case malformedFrame(String)

    public var description: String {
        switch self {
        case .malformedFrame(let why): "frame not drawable: \(why)"
        }
    }
}

/// Puts camera frames and JPEGs onto a canvas: decoded to XRGB8888 (MJPEG/JPEG with TurboJPEG's
/// scaled decode, 1/2, 1/4 or 1/8, to the smallest size still at or above what the screen shows;
/// YUYV with libyuv's `YUY2ToARGB`; RGB24 with `RAWToARGB`), turned by the camera rotation
/// (`ARGBRotate`), scaled to fit or fill (`ARGBScale`, bilinear) and mirrored (`ARGBMirror`, at the
/// smaller of the source and the drawn size) for the live view; onto a canvas stored right to left
/// (``Canvas/storedMirrored``) a mirrored live view is drawn as the camera sees it, with no mirror
/// pass. Keeps its buffers between frames. Not thread-safe: one per drawing thread.
public final class PictureScaler {
    private var decoder: JPEGDecoder?
    private var source: [UInt32] = []
    private var sourceSize = FrameSize(width: 0, height: 0)
    private var turned: [UInt32] = []
    private var scaled: [UInt32] = []
    private var mirrored: [UInt32] = []
    /// The TurboJPEG scale of the last JPEG decode (for tests and the bench).
    public private(set) var lastScale: JPEGScale = .full

    public init() {}

    /// Draws `frame` into `area` of `canvas`: turned clockwise by `rotation`, placed by `scaling`
    /// (fit fills the bars black), mirrored left-right when `mirror`.
    /// - Throws: `TurboJPEGError` for an MJPEG frame that does not decode; ``LiveViewFrameError`` for a
    ///   YUYV/RGB24 frame with too few bytes.
    public func draw(_ frame: Frame, into canvas: inout Canvas, area: PixelRect, rotation: Rotation,
                     scaling: Scaling, mirror: Bool) throws {
        switch frame.format {
        case .mjpeg:
            try decode(frame.bytes, for: area.size, rotation: rotation, scaling: scaling)
        case .yuyv, .rgb24:
            try convert(frame)
        }
        place(into: &canvas, area: area, rotation: rotation, scaling: scaling, mirror: mirror)
    }

    /// Draws a JPEG (the capture, already upright) into `area` of `canvas`, never mirrored. Decoded
    /// with TurboJPEG's accurate IDCT and smooth chroma upsampling (RGB24, then `RAWToARGB`): the
    /// fast flags of the live view are never used for a capture.
    /// - Throws: `TurboJPEGError` when it does not decode.
    public func draw(jpeg: [UInt8], into canvas: inout Canvas, area: PixelRect, scaling: Scaling) throws {
        try decode(jpeg, for: area.size, rotation: .r0, scaling: scaling, exact: true)
        place(into: &canvas, area: area, rotation: .r0, scaling: scaling, mirror: false)
    }

    /// Live view (`exact` false): `decodeXRGB`, with `TJFLAG_FASTDCT | TJFLAG_FASTUPSAMPLE`.
    private func decode(_ jpeg: [UInt8], for area: FrameSize, rotation: Rotation, scaling: Scaling,
                        exact: Bool = false) throws {
        let decoder = try self.decoder ?? JPEGDecoder()
        self.decoder = decoder
        let full = try decoder.header(jpeg).size
        // The part of the (turned) picture shown and how large it is drawn decide the decode scale.
        let (dest, crop) = scaling.placement(of: rotation.rotated(full), in: area)
        // A large still drawn larger than at 1/2 (a 45 MP capture on an 8K screen) is decoded within the limit, scaled up.
        let scale = JPEGScale.smallest(from: crop.size, covering: dest.size).within(decoder.maxPixels, for: full)
        lastScale = scale
        guard exact else {
            sourceSize = try decoder.decodeXRGB(jpeg, scale: scale, into: &source)
            return
        }
        var rgb: [UInt8] = []
        let size = try decoder.decode(jpeg, scale: scale, into: &rgb)
        if source.count != size.area { source = [UInt32](repeating: 0, count: size.area) }
        sourceSize = size
        rgb.withUnsafeBufferPointer { src in
            source.withUnsafeMutableBytes { dst in
                _ = RAWToARGB(src.baseAddress, Int32(size.width * 3), dst.baseAddress?.assumingMemoryBound(to: UInt8.self),
                              Int32(size.width * 4), Int32(size.width), Int32(size.height))
            }
        }
    }

    private func convert(_ frame: Frame) throws(LiveViewFrameError) {
        let w = frame.size.width, h = frame.size.height
        let rowBytes = frame.format == .yuyv ? (w + 1) / 2 * 4 : w * 3
        guard w > 0, h > 0, frame.bytesPerLine >= rowBytes,
              frame.bytes.count >= (h - 1) * frame.bytesPerLine + rowBytes else {
            throw .malformedFrame("\(frame.format.rawValue) \(frame.size), \(frame.bytesPerLine) bytes per line, \(frame.bytes.count) bytes")
        }
        if source.count != frame.size.area { source = [UInt32](repeating: 0, count: frame.size.area) }
        sourceSize = frame.size
        frame.bytes.withUnsafeBufferPointer { src in
            source.withUnsafeMutableBytes { dst in
                let d = dst.baseAddress?.assumingMemoryBound(to: UInt8.self)
                if frame.format == .yuyv {
                    _ = YUY2ToARGB(src.baseAddress, Int32(frame.bytesPerLine), d, Int32(w * 4), Int32(w), Int32(h))
                } else {
                    _ = RAWToARGB(src.baseAddress, Int32(frame.bytesPerLine), d, Int32(w * 4), Int32(w), Int32(h))
                }
            }
        }
    }

    private func place(into canvas: inout Canvas, area: PixelRect, rotation: Rotation, scaling: Scaling, mirror: Bool) {
        let area = area.clipped(to: canvas.size)
        guard !area.isEmpty, sourceSize.area > 0 else { return }
        // Turn.
        let picture: FrameSize
        if rotation == .r0 {
            picture = sourceSize
        } else {
            picture = rotation.rotated(sourceSize)
            if turned.count != picture.area { turned = [UInt32](repeating: 0, count: picture.area) }
            source.withUnsafeBytes { s in
                turned.withUnsafeMutableBytes { d in
                    _ = ARGBRotate(s.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(sourceSize.width * 4),
                                   d.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(picture.width * 4),
                                   Int32(sourceSize.width), Int32(sourceSize.height), libyuvRotation(rotation))
                }
            }
        }
        let (dest, shown) = scaling.placement(of: picture, in: area.size)
        if scaling == .fit {
            // The bars only: the picture covers the rest.
            let top = PixelRect(x: area.x, y: area.y, width: area.width, height: dest.y)
            let bottom = PixelRect(x: area.x, y: area.y + dest.y + dest.height, width: area.width,
                                   height: area.height - dest.y - dest.height)
            let left = PixelRect(x: area.x, y: area.y + dest.y, width: dest.x, height: dest.height)
            let right = PixelRect(x: area.x + dest.x + dest.width, y: area.y + dest.y,
                                  width: area.width - dest.x - dest.width, height: dest.height)
            for bar in [top, bottom, left, right] { canvas.fill(bar, 0) }
        }
        let stride = canvas.width * 4
        // A canvas stored right to left (``Canvas/storedMirrored``) takes the picture at the
        // reflected place, and reflected once more: a mirrored live view is then not mirrored here
        // at all (the copy into the framebuffer does it).
        let at = canvas.stored(PixelRect(x: area.x + dest.x, y: area.y + dest.y, width: dest.width, height: dest.height))
        let mirror = mirror != canvas.storedMirrored
        let destOffset = (at.y * canvas.width + at.x) * 4
        var crop = shown
        var pictureIsMirrored = false
        if mirror && crop.size.area <= dest.size.area {
            // Upscaling: mirror the smaller source, then scale straight into the canvas.
            let from = rotation == .r0 ? source : turned
            if mirrored.count != picture.area { mirrored = [UInt32](repeating: 0, count: picture.area) }
            from.withUnsafeBytes { s in
                mirrored.withUnsafeMutableBytes { d in
                    _ = ARGBMirror(s.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(picture.width * 4),
                                   d.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(picture.width * 4),
                                   Int32(picture.width), Int32(picture.height))
                }
            }
            crop.x = picture.width - crop.x - crop.width
            pictureIsMirrored = true
        }
        func scale(into out: UnsafeMutablePointer<UInt8>?, stride outStride: Int) {
            let pixels = pictureIsMirrored ? mirrored : rotation == .r0 ? source : turned
            pixels.withUnsafeBytes { s in
                let from = (s.baseAddress?.assumingMemoryBound(to: UInt8.self)).map { $0 + (crop.y * picture.width + crop.x) * 4 }
                _ = ARGBScale(from, Int32(picture.width * 4), Int32(crop.width), Int32(crop.height),
                              out, Int32(outStride), Int32(dest.width), Int32(dest.height), kFilterBilinear)
            }
        }
        if mirror && !pictureIsMirrored {
            // Downscaling: scale first, then mirror the smaller result into the canvas.
            if scaled.count != dest.size.area { scaled = [UInt32](repeating: 0, count: dest.size.area) }
            scaled.withUnsafeMutableBytes { t in scale(into: t.baseAddress?.assumingMemoryBound(to: UInt8.self), stride: dest.width * 4) }
            scaled.withUnsafeBytes { t in
                canvas.pixels.withUnsafeMutableBytes { c in
                    _ = ARGBMirror(t.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(dest.width * 4),
                                   (c.baseAddress?.assumingMemoryBound(to: UInt8.self)).map { $0 + destOffset }, Int32(stride),
                                   Int32(dest.width), Int32(dest.height))
                }
            }
        } else {
            canvas.pixels.withUnsafeMutableBytes { c in
                scale(into: (c.baseAddress?.assumingMemoryBound(to: UInt8.self)).map { $0 + destOffset }, stride: stride)
            }
        }
    }
}
