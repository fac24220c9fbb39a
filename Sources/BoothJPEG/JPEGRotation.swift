import BoothCore
import CTurboJPEG
import CYUV

extension JPEGDecoder {
    /// Decodes to XRGB8888 words into `pixels` (`0xXXRRGGBB`, i.e. bytes B, G, R, X: TurboJPEG's
    /// `TJPF_BGRX`), resized to the scaled size's area, and returns that size. Wraps
    /// `tjDecompressHeader3` + `tjDecompress2` with `TJFLAG_FASTUPSAMPLE | TJFLAG_FASTDCT` (for the
    /// live view: speed over the last bit of quality). Throws `TurboJPEGError` as `decode(_:scale:into:)`.
    @discardableResult
    public func decodeXRGB(_ jpeg: [UInt8], scale: JPEGScale = .full, into pixels: inout [UInt32]) throws(TurboJPEGError) -> FrameSize {
        let size = scale.scaled(try checkedHeader(jpeg, scale: scale).size)
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
    /// Not turned (rotation 0, or Exif Orientation 1 or none for `upright`): the bytes as they came.
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
/// `upright` does the same for a JPEG from outside by its own Exif Orientation (all eight).
/// Not thread-safe (TurboJPEG handles are not): one per thread.
public final class JPEGRotator {
    private let transformer: TurboJPEGHandle
    private let decoder: JPEGDecoder
    private let encoder: JPEGEncoder
    private var rgb: [UInt8] = []

    /// Throws `TurboJPEGError` (`tjInitTransform`, `tjInitDecompress`, `tjInitCompress`) when TurboJPEG cannot allocate.
    public init() throws(TurboJPEGError) {
        guard let raw = tjInitTransform() else {
            throw TurboJPEGError(call: "tjInitTransform", message: TurboJPEGHandle.message(nil))
        }
        transformer = TurboJPEGHandle(raw: raw)
        // A turn that cannot be lossless decodes the whole still: up to the largest a supported camera makes.
        decoder = try JPEGDecoder(maxPixels: JPEGDecoder.largestStillPixels)
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
    /// - Throws: `TurboJPEGError` from the header read (also for an image over a supported camera's still,
    ///   `JPEGDecoder.largestStillPixels`, call `tjDecompress2`, not turned), the transform, decode or encode (a corrupt JPEG);
    ///   `JPEGFrameError` for a bad quality.
    public func rotate(_ jpeg: [UInt8], by rotation: Rotation, quality: Int) throws -> (bytes: [UInt8], method: JPEGRotationMethod) {
        guard rotation != .r0 else { return (jpeg, .unchanged) }
        // The decoder's limit of a supported camera's still holds for the lossless transform too: a 200-byte
        // header claiming 65376x1446 kept tjTransform busy for seconds (found by fuzz/run rotation).
        let header = try decoder.checkedHeader(jpeg, scale: nil)
        if JPEGRotator.isLossless(header, rotation), let bytes = try? transform(jpeg, rotation) {
            return (bytes, .lossless)
        }
        let planes = try reencodePlanes(jpeg, turn: rotation, mirrored: false, quality: quality)
        return (try planes ?? reencode(jpeg, rotation, quality: quality), .reencoded)
    }

    /// True when turning a `header` image upright from `orientation` loses nothing in the DCT
    /// domain (libjpeg's `jtransform_perfect_transform`): a horizontal flip and 270° need whole MCU
    /// columns (width), a vertical flip and 90° whole MCU rows (height), 180° and the transverse
    /// both, the transpose neither.
    public static func isLossless(_ header: JPEGHeader, _ orientation: EXIFOrientation) -> Bool {
        let (mw, mh) = mcuSize(header.chromaSubsampling)
        let wOK = header.size.width % mw == 0, hOK = header.size.height % mh == 0
        switch orientation {
        case .topLeft, .leftTop: return true
        case .topRight, .leftBottom: return wOK
        case .bottomLeft, .rightTop: return hOK
        case .bottomRight, .rightBottom: return wOK && hOK
        }
    }

    /// `jpeg` turned upright as its Exif Orientation tag says (``EXIFOrientation/read(_:)``), the
    /// rule for every JPEG the booth takes in: for 2…8 the matching `tjTransform` op (`TJXOP_HFLIP`,
    /// `ROT180`, `VFLIP`, `TRANSPOSE`, `ROT90`, `TRANSVERSE`, `ROT270`) with `TJXOPT_PERFECT`, losslessly,
    /// when `isLossless(header, orientation)` holds; otherwise decoded, turned
    /// (``EXIFOrientation/upright(_:)``) and encoded again at `quality` (1–100, 4:2:0), never trimming
    /// pixels. Either way the other markers (Exif, ICC, XMP, comments; the Exif thumbnail is not
    /// turned) are kept and the Orientation value is set to 1, so no viewer turns the pixels again.
    /// Orientation 1, no tag or an unreadable one: the bytes as they came (`.unchanged`).
    /// - Throws: `TurboJPEGError` from the header read (also over a supported camera's still,
    ///   `JPEGDecoder.largestStillPixels`, call `tjDecompress2`), decode or encode (a corrupt JPEG); `JPEGFrameError` for a bad quality.
    public func upright(_ jpeg: [UInt8], quality: Int) throws
        -> (bytes: [UInt8], method: JPEGRotationMethod, orientation: EXIFOrientation) {
        let orientation = EXIFOrientation.read(jpeg)
        guard orientation != .topLeft else { return (jpeg, .unchanged, orientation) }
        let header = try decoder.checkedHeader(jpeg, scale: nil)
        if JPEGRotator.isLossless(header, orientation), let bytes = try? transform(jpeg, op: orientation.transformOp, options: TJXOPT_PERFECT) {
            return (EXIFOrientation.resettingTag(bytes), .lossless, orientation)
        }
        guard (1...100).contains(quality) else { throw JPEGFrameError.invalidQuality(quality) }
        let (turn, mirrored) = orientation.uprightTurn
        if let encoded = try reencodePlanes(jpeg, turn: turn, mirrored: mirrored, quality: quality) {
            return (EXIFOrientation.resettingTag(JPEGRotator.copyingMarkers(from: jpeg, into: encoded)), .reencoded, orientation)
        }
        let image = orientation.upright(try decoder.decodeRGB(jpeg))
        let frame = Frame(format: .rgb24, size: image.size, bytesPerLine: image.size.width * 3, bytes: image.bytes,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        let encoded = try encoder.encode(frame, quality: quality)
        return (EXIFOrientation.resettingTag(JPEGRotator.copyingMarkers(from: jpeg, into: encoded)), .reencoded, orientation)
    }

    /// `encoded` with the APPn (except APP0 JFIF and APP14 Adobe, which the encoder writes for
    /// itself) and COM segments of `source` inserted after its own SOI and APP0, as `tjTransform`
    /// copies them (`JCOPYOPT_ALL`). `encoded` unchanged when either does not parse.
    static func copyingMarkers(from source: [UInt8], into encoded: [UInt8]) -> [UInt8] {
        let theirs: [JPEGSegment], own: [JPEGSegment]
        do {
            theirs = try JPEGMarkers.segments(source)
            own = try JPEGMarkers.segments(encoded)
        } catch {
            return encoded
        }
        let kept = theirs.filter { s in ((0xE1...0xEF).contains(s.marker) && s.marker != 0xEE) || s.marker == 0xFE }
        guard !kept.isEmpty else { return encoded }
        let firstOther: JPEGSegment? = own.first { $0.marker != 0xE0 }
        let at = firstOther?.offset ?? 2
        var out: [UInt8] = []
        out.reserveCapacity(encoded.count + kept.reduce(0) { $0 + $1.range.count })
        out.append(contentsOf: encoded[0..<at])
        for s in kept { out.append(contentsOf: source[s.range]) }
        out.append(contentsOf: encoded[at...])
        return out
    }

    private func transform(_ jpeg: [UInt8], _ rotation: Rotation) throws(TurboJPEGError) -> [UInt8] {
        let op: TJXOP
        switch rotation {
        case .r0: op = TJXOP_NONE
        case .r90: op = TJXOP_ROT90
        case .r180: op = TJXOP_ROT180
        case .r270: op = TJXOP_ROT270
        }
        return try transform(jpeg, op: op, options: TJXOPT_PERFECT | TJXOPT_COPYNONE)
    }

    /// Wraps `tjTransform` with one transform `op` and `options` (`TJXOPT_*`).
    private func transform(_ jpeg: [UInt8], op: TJXOP, options: Int32) throws(TurboJPEGError) -> [UInt8] {
        var t = tjtransform()
        t.op = Int32(op.rawValue)
        t.options = options
        var out: UnsafeMutablePointer<UInt8>?
        var outSize: UInt = 0
        let rc = jpeg.withUnsafeBufferPointer { src in
            tjTransform(transformer.raw, src.baseAddress, UInt(src.count), 1, &out, &outSize, &t, 0)
        }
        defer { if let out { tjFree(out) } }
        guard rc == 0, let out else { throw transformer.error("tjTransform") }
        return Array(UnsafeBufferPointer(start: out, count: Int(outSize)))
    }

    /// `jpeg` (4:2:0) decoded to its Y'CbCr planes (`tjDecompressToYUVPlanes`), turned clockwise by `turn` and
    /// mirrored left-right after it when `mirrored` (libyuv's `I420Rotate`, `I420Mirror`), and encoded from the planes
    /// (`tjCompressFromYUVPlanes`, 4:2:0): about 3 bytes a pixel at its peak (4.5 mirrored), where a decode to RGB and
    /// its turn take 11 to 14 (a 102 MP still: some 300 MB, not 1.1 GB), and no colour conversion either way. Nil for a
    /// JPEG of another subsampling or of an odd width or height (a turn would move its chroma samples a pixel off the
    /// 4:2:0 grid; cameras' sizes are even): the RGB path turns it. The buffers are not kept.
    /// - Throws: `TurboJPEGError` from the decode, libyuv or the encode; `JPEGFrameError` for a bad quality.
    private func reencodePlanes(_ jpeg: [UInt8], turn: Rotation, mirrored: Bool, quality: Int) throws -> [UInt8]? {
        let header = try decoder.header(jpeg)
        guard header.chromaSubsampling == .s420, header.size.width % 2 == 0, header.size.height % 2 == 0 else { return nil }
        var planes = YUVPlanes()
        let size = try decoder.decodeYUVPlanes(jpeg, into: &planes).size
        let out = turn.rotated(size), chromaWidth = (out.width + 1) / 2
        let lumaBytes = out.width * out.height, chromaBytes = chromaWidth * ((out.height + 1) / 2)
        /// libyuv's `I420Rotate` (or, from `turned` into `into`, `I420Mirror`) of planes at `from`, strides `strides`.
        func convert(_ from: UnsafePointer<UInt8>, _ offsets: [Int], _ strides: [Int], into d: UnsafeMutablePointer<UInt8>,
                     rotate: Bool) -> Int32 {
            let y = from + offsets[0], cb = from + offsets[1], cr = from + offsets[2]
            let (sy, sc) = (Int32(strides[0]), Int32(strides[1]))
            let (dy, dc) = (Int32(out.width), Int32(chromaWidth))
            return rotate
                ? I420Rotate(y, sy, cb, sc, cr, Int32(strides[2]), d, dy, d + lumaBytes, dc, d + lumaBytes + chromaBytes, dc,
                             Int32(size.width), Int32(size.height), yuvRotation(turn))
                : I420Mirror(y, sy, cb, sc, cr, Int32(strides[2]), d, dy, d + lumaBytes, dc, d + lumaBytes + chromaBytes, dc,
                             Int32(out.width), Int32(out.height))
        }
        var turned = [UInt8](repeating: 0, count: lumaBytes + 2 * chromaBytes)
        let (offsets, strides) = (planes.offsets, planes.widths)
        var rc = planes.bytes.withUnsafeBufferPointer { s in
            turned.withUnsafeMutableBufferPointer { d -> Int32 in
                guard let s = s.baseAddress, let d = d.baseAddress else { return -1 }
                return convert(s, offsets, strides, into: d, rotate: true)
            }
        }
        planes = YUVPlanes()
        if rc == 0 && mirrored {
            var mirror = [UInt8](repeating: 0, count: turned.count)
            rc = turned.withUnsafeBufferPointer { s in
                mirror.withUnsafeMutableBufferPointer { d -> Int32 in
                    guard let s = s.baseAddress, let d = d.baseAddress else { return -1 }
                    return convert(s, [0, lumaBytes, lumaBytes + chromaBytes], [out.width, chromaWidth, chromaWidth], into: d, rotate: false)
                }
            }
            turned = mirror
        }
        guard rc == 0 else { throw TurboJPEGError(call: "I420Rotate/I420Mirror", message: "libyuv returned \(rc)") }
        return try turned.withUnsafeBufferPointer { t in
            try encoder.encodeI420(y: UnsafeBufferPointer(rebasing: t[0..<lumaBytes]), yStride: out.width,
                                   cb: UnsafeBufferPointer(rebasing: t[lumaBytes..<lumaBytes + chromaBytes]),
                                   cr: UnsafeBufferPointer(rebasing: t[(lumaBytes + chromaBytes)...]),
                                   chromaStride: chromaWidth, size: out, quality: quality)
        }
    }

    /// Decoded to RGB24 and encoded once more with its pixels turned by libyuv
    /// (``JPEGEncoder/encode(_:quality:turnedBy:yuvRange:)``).
    private func reencode(_ jpeg: [UInt8], _ rotation: Rotation, quality: Int) throws -> [UInt8] {
        let size = try decoder.decode(jpeg, into: &rgb)
        let frame = Frame(format: .rgb24, size: size, bytesPerLine: size.width * 3, bytes: rgb,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return try encoder.encode(frame, quality: quality, turnedBy: rotation)
    }
}

extension EXIFOrientation {
    /// The `tjTransform` op that turns an image of this orientation upright.
    var transformOp: TJXOP {
        switch self {
        case .topLeft: TJXOP_NONE
        case .topRight: TJXOP_HFLIP
        case .bottomRight: TJXOP_ROT180
        case .bottomLeft: TJXOP_VFLIP
        case .leftTop: TJXOP_TRANSPOSE
        case .rightTop: TJXOP_ROT90
        case .rightBottom: TJXOP_TRANSVERSE
        case .leftBottom: TJXOP_ROT270
        }
    }
}
