import BoothCore
import CTurboJPEG

extension JPEGDecoder {
    /// Decodes to XRGB8888 words into `pixels` (`0xXXRRGGBB`, i.e. bytes B, G, R, X: TurboJPEG's
    /// `TJPF_BGRX`), resized to the scaled size's area, and returns that size. Wraps
    /// `tjDecompressHeader3` + `tjDecompress2` with `TJFLAG_FASTUPSAMPLE | TJFLAG_FASTDCT` (for the
    /// live view: speed over the last bit of quality). Throws `TurboJPEGError` as `decode(_:scale:into:)`.
    @discardableResult
    public func decodeXRGB(_ jpeg: [UInt8], scale: JPEGScale = .full, into pixels: inout [UInt32]) throws(TurboJPEGError) -> FrameSize {
        let size = scale.scaled(try checkedHeader(jpeg).size)
        if pixels.count != size.area { pixels = [UInt32](repeating: 0, count: size.area) }
        let w = Int32(size.width), h = Int32(size.height)
        let rc = jpeg.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBytes { dst in
                tjDecompress2(handle.raw, src.baseAddress, UInt(src.count),
                              dst.baseAddress?.assumingMemoryBound(to: UInt8.self), w, w * 4, h,
                              Int32(TJPF_BGRX.rawValue), TJFLAG_FASTUPSAMPLE | TJFLAG_FASTDCT)
            }
        }
        guard rc == 0 else { throw handle.error("tjDecompress2") }
        return size
    }
}

/// How a JPEG was turned by ``JPEGRotator``.
public enum JPEGRotationMethod: String, Sendable, Equatable {
    /// Not turned (rotation 0): the bytes as they came.
    case unchanged
    /// Turned in the DCT domain with `tjTransform` (no generation loss).
    case lossless
    /// Decoded, turned, encoded again at the given quality (the size is not a whole number of MCUs
    /// for this turn; a lossless transform would have trimmed the partial blocks).
    case reencoded
}

/// Turns JPEG images upright in their pixels, never in metadata: losslessly with TurboJPEG's
/// transform (`tjTransform`, `TJXOP_ROT90/180/270`, `TJXOPT_PERFECT`, `TJXOPT_COPYNONE` so no EXIF
/// orientation survives to contradict the pixels) when the image is a whole number of MCUs along the
/// edges the turn moves; otherwise decodes, turns and re-encodes (4:2:0), never trimming pixels.
/// Not thread-safe (TurboJPEG handles are not): one per thread.
public final class JPEGRotator {
    private let transformer: TurboJPEGHandle
    private let decoder: JPEGDecoder
    private let encoder: JPEGEncoder
    private var rgb: [UInt8] = []
    private var turned: [UInt8] = []

    /// Throws `TurboJPEGError` (`tjInitTransform`, `tjInitDecompress`, `tjInitCompress`) when TurboJPEG cannot allocate.
    public init() throws(TurboJPEGError) {
        guard let raw = tjInitTransform() else {
            throw TurboJPEGError(call: "tjInitTransform", message: TurboJPEGHandle.message(nil))
        }
        transformer = TurboJPEGHandle(raw: raw)
        decoder = try JPEGDecoder()
        encoder = try JPEGEncoder()
    }

    /// True when turning a `header` image by `rotation` loses nothing in the DCT domain: 180° needs
    /// whole MCUs both ways, 90° whole MCU rows at the bottom (height), 270° whole MCU columns at the
    /// right (width). MCUs are `tjMCUWidth`/`tjMCUHeight` of the chroma subsampling (16x16 for 4:2:0,
    /// 16x8 for 4:2:2, 8x8 for 4:4:4 and gray).
    public static func isLossless(_ header: JPEGHeader, _ rotation: Rotation) -> Bool {
        let (mw, mh) = mcuSize(header.chromaSubsampling)
        let wOK = header.size.width % mw == 0, hOK = header.size.height % mh == 0
        switch rotation {
        case .r0: return true
        case .r90: return hOK
        case .r180: return wOK && hOK
        case .r270: return wOK
        }
    }

    static func mcuSize(_ s: ChromaSubsampling) -> (Int, Int) {
        switch s {
        case .s444, .gray: (8, 8)
        case .s422: (16, 8)
        case .s420: (16, 16)
        case .s440: (8, 16)
        case .s411: (32, 8)
        }
    }

    /// `jpeg` turned clockwise by `rotation`, and how. `quality` (1–100) is used only when re-encoding.
    /// - Throws: `TurboJPEGError` from the header read (also for an image over the decoder's 40 MP limit,
    ///   call `tjDecompress2`, not turned), the transform, decode or encode (a corrupt JPEG);
    ///   `JPEGFrameError` for a bad quality.
    public func rotate(_ jpeg: [UInt8], by rotation: Rotation, quality: Int) throws -> (bytes: [UInt8], method: JPEGRotationMethod) {
        guard rotation != .r0 else { return (jpeg, .unchanged) }
        // The decoder's pixel limit holds for the lossless transform too: a 200-byte header claiming
        // 65376x1446 kept tjTransform busy for seconds (found by fuzz/run rotation).
        let header = try decoder.checkedHeader(jpeg)
        if JPEGRotator.isLossless(header, rotation), let bytes = try? transform(jpeg, rotation) {
            return (bytes, .lossless)
        }
        return (try reencode(jpeg, rotation, quality: quality), .reencoded)
    }

    private func transform(_ jpeg: [UInt8], _ rotation: Rotation) throws(TurboJPEGError) -> [UInt8] {
        var t = tjtransform()
        switch rotation {
        case .r0: t.op = Int32(TJXOP_NONE.rawValue)
        case .r90: t.op = Int32(TJXOP_ROT90.rawValue)
        case .r180: t.op = Int32(TJXOP_ROT180.rawValue)
        case .r270: t.op = Int32(TJXOP_ROT270.rawValue)
        }
        t.options = TJXOPT_PERFECT | TJXOPT_COPYNONE
        var out: UnsafeMutablePointer<UInt8>?
        var outSize: UInt = 0
        let rc = jpeg.withUnsafeBufferPointer { src in
            tjTransform(transformer.raw, src.baseAddress, UInt(src.count), 1, &out, &outSize, &t, 0)
        }
        defer { if let out { tjFree(out) } }
        guard rc == 0, let out else { throw transformer.error("tjTransform") }
        return Array(UnsafeBufferPointer(start: out, count: Int(outSize)))
    }

    private func reencode(_ jpeg: [UInt8], _ rotation: Rotation, quality: Int) throws -> [UInt8] {
        let size = try decoder.decode(jpeg, into: &rgb)
        let out = rotation.rotated(size)
        if turned.count != rgb.count { turned = [UInt8](repeating: 0, count: rgb.count) }
        let w = size.width, h = size.height, ow = out.width
        rgb.withUnsafeBufferPointer { src in
            turned.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    for x in 0..<w {
                        let (dx, dy): (Int, Int)
                        switch rotation {
                        case .r0: (dx, dy) = (x, y)
                        case .r90: (dx, dy) = (h - 1 - y, x)
                        case .r180: (dx, dy) = (w - 1 - x, h - 1 - y)
                        case .r270: (dx, dy) = (y, w - 1 - x)
                        }
                        let s = (y * w + x) * 3, d = (dy * ow + dx) * 3
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
        let frame = Frame(format: .rgb24, size: out, bytesPerLine: ow * 3, bytes: turned,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return try encoder.encode(frame, quality: quality)
    }
}
