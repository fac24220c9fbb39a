import BoothCore
import CYUV

/// The Exif Orientation tag (TIFF tag `0x0112` in IFD0 of a JPEG's `APP1` `Exif` segment; Exif 2.32
/// §4.6.4 A, CIPA DC-008): where the stored image's first row and first column are when it is seen
/// upright, and so the turn a viewer applies to show it. Named as the standard names them
/// (row 0 side, column 0 side). Four are mirrors (2, 4, 5, 7).
public enum EXIFOrientation: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// 1: stored upright (also what a JPEG without the tag means).
    case topLeft = 1
    /// 2: mirrored left to right; upright by a horizontal flip (`TJXOP_HFLIP`).
    case topRight = 2
    /// 3: upside down; upright by a half turn (`TJXOP_ROT180`).
    case bottomRight = 3
    /// 4: mirrored top to bottom; upright by a vertical flip (`TJXOP_VFLIP`).
    case bottomLeft = 4
    /// 5: mirrored across the main diagonal; upright by a transpose (`TJXOP_TRANSPOSE`).
    case leftTop = 5
    /// 6: turned a quarter anticlockwise (a camera held with its grip up); upright by 90° clockwise (`TJXOP_ROT90`).
    case rightTop = 6
    /// 7: mirrored across the anti-diagonal; upright by a transverse (`TJXOP_TRANSVERSE`).
    case rightBottom = 7
    /// 8: turned a quarter clockwise; upright by 270° clockwise (`TJXOP_ROT270`).
    case leftBottom = 8

    /// `"6 (right-top)"`.
    public var description: String {
        let names = ["top-left", "top-right", "bottom-right", "bottom-left", "left-top", "right-top", "right-bottom", "left-bottom"]
        return "\(rawValue) (\(names[rawValue - 1]))"
    }

    /// True for the mirror orientations 2, 4, 5 and 7.
    public var isMirrored: Bool { [.topRight, .bottomLeft, .leftTop, .rightBottom].contains(self) }

    /// True when turning upright swaps width and height (5–8).
    public var swapsAxes: Bool { rawValue >= 5 }

    /// The upright size of an image stored as `stored` pixels.
    public func uprightSize(_ stored: FrameSize) -> FrameSize {
        swapsAxes ? FrameSize(width: stored.height, height: stored.width) : stored
    }

    /// Where the stored pixel at column `x`, row `y` of a `width` × `height` image lands in the
    /// upright image (whose width is `height` for 5–8).
    @inline(__always)
    public func uprightPosition(x: Int, y: Int, width w: Int, height h: Int) -> (x: Int, y: Int) {
        switch self {
        case .topLeft: (x, y)
        case .topRight: (w - 1 - x, y)
        case .bottomRight: (w - 1 - x, h - 1 - y)
        case .bottomLeft: (x, h - 1 - y)
        case .leftTop: (y, x)
        case .rightTop: (h - 1 - y, x)
        case .rightBottom: (h - 1 - y, w - 1 - x)
        case .leftBottom: (y, w - 1 - x)
        }
    }

    /// The orientation a JPEG's Exif says, `.topLeft` when there is none: no `APP1` `Exif` segment
    /// before the first scan, no IFD0 tag `0x0112`, a value outside 1…8, or bytes that do not parse
    /// (this is outside input: every read is bounds-checked, nothing traps).
    public static func read(_ jpeg: [UInt8]) -> EXIFOrientation {
        guard let tag = EXIFOrientationTag.find(in: jpeg) else { return .topLeft }
        return EXIFOrientation(rawValue: tag.value) ?? .topLeft
    }

    /// `image` (RGB24, stored pixels) turned upright: an exact permutation of its pixels, nothing
    /// resampled. For a decoded JPEG whose orientation this is. The turn is libyuv's (`RAWToARGB`,
    /// `ARGBRotate`, `ARGBMirror` for the four mirrored orientations, `ARGBToRAW`); the image as it
    /// came when libyuv refuses it (a size over its limits) or holds too few bytes.
    public func upright(_ image: RGBImage) -> RGBImage {
        guard self != .topLeft else { return image }
        let w = image.size.width, h = image.size.height
        guard w > 0, h > 0, w <= 65_500, h <= 65_500, image.bytes.count >= w * h * 3 else { return image }
        let out = uprightSize(image.size)
        let (turn, mirrored) = uprightTurn
        var argb = [UInt8](repeating: 0, count: w * h * 4)
        var turned = [UInt8](repeating: 0, count: w * h * 4)
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        let rc: Int32 = image.bytes.withUnsafeBufferPointer { src in
            argb.withUnsafeMutableBufferPointer { a in
                turned.withUnsafeMutableBufferPointer { t in
                    rgb.withUnsafeMutableBufferPointer { dst in
                        var rc = RAWToARGB(src.baseAddress, Int32(w * 3), a.baseAddress, Int32(w * 4), Int32(w), Int32(h))
                        if rc == 0 {
                            rc = ARGBRotate(a.baseAddress, Int32(w * 4), t.baseAddress, Int32(out.width * 4),
                                            Int32(w), Int32(h), yuvRotation(turn))
                        }
                        var from = t.baseAddress
                        if rc == 0 && mirrored {
                            rc = ARGBMirror(t.baseAddress, Int32(out.width * 4), a.baseAddress, Int32(out.width * 4),
                                            Int32(out.width), Int32(out.height))
                            from = a.baseAddress
                        }
                        if rc == 0 {
                            rc = ARGBToRAW(from, Int32(out.width * 4), dst.baseAddress, Int32(out.width * 3),
                                           Int32(out.width), Int32(out.height))
                        }
                        return rc
                    }
                }
            }
        }
        guard rc == 0 else { return image }
        return RGBImage(size: out, bytes: rgb)
    }

    /// The clockwise turn, then whether a left-right mirror follows, that makes this orientation upright.
    var uprightTurn: (Rotation, mirrored: Bool) {
        switch self {
        case .topLeft: (.r0, false)
        case .topRight: (.r0, true)
        case .bottomRight: (.r180, false)
        case .bottomLeft: (.r180, true)
        case .leftTop: (.r90, true)
        case .rightTop: (.r90, false)
        case .rightBottom: (.r270, true)
        case .leftBottom: (.r270, false)
        }
    }

    /// `jpeg` with its Exif Orientation value set to 1 in place (same length, every other byte
    /// kept), so that no viewer turns the pixels again; the input unchanged when it has no tag.
    public static func resettingTag(_ jpeg: [UInt8]) -> [UInt8] {
        guard let tag = EXIFOrientationTag.find(in: jpeg), tag.value != 1 else { return jpeg }
        var out = jpeg
        tag.write(1, into: &out)
        return out
    }
}

/// Where a JPEG's Exif Orientation value is stored: the TIFF structure inside the first `APP1`
/// segment whose payload starts `Exif\0\0` (TIFF 6.0 header `II*\0` or `MM\0*`, IFD0 at its offset,
/// 12-byte entries). Every offset is checked against the segment's end.
struct EXIFOrientationTag: Equatable {
    /// The value as stored (normally 1…8).
    var value: Int
    /// Byte offset of the value in the JPEG.
    var offset: Int
    /// Bytes of the value: 2 for `SHORT` (the standard's type), 4 for `LONG` (some writers).
    var width: Int
    /// Motorola (`MM`) byte order; else Intel (`II`).
    var bigEndian: Bool

    static let exifHeader: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]  // "Exif\0\0"
    static let app1: UInt8 = 0xE1
    static let orientationTag = 0x0112

    /// The tag in `jpeg`, or nil (no Exif APP1, no tag, a malformed TIFF structure, markers that do not parse).
    static func find(in jpeg: [UInt8]) -> EXIFOrientationTag? {
        guard let segments = try? JPEGMarkers.segments(jpeg) else { return nil }
        guard let exif = segments.first(where: { s in
            s.marker == app1 && s.payload.count >= exifHeader.count && jpeg[s.payload.prefix(exifHeader.count)].elementsEqual(exifHeader)
        }) else { return nil }
        let tiff = exif.payload.lowerBound + exifHeader.count, end = exif.payload.upperBound
        guard end - tiff >= 8 else { return nil }
        let bigEndian: Bool
        switch (jpeg[tiff], jpeg[tiff + 1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        /// `n` bytes at TIFF offset `o` as an unsigned integer, nil past the segment.
        func read(_ o: Int, _ n: Int) -> Int? {
            guard o >= 0, o <= end - tiff - n else { return nil }
            var v = 0
            for i in 0..<n {
                let b = Int(jpeg[tiff + o + (bigEndian ? i : n - 1 - i)])
                v = v << 8 | b
            }
            return v
        }
        guard read(2, 2) == 42, let ifd = read(4, 4), let count = read(ifd, 2) else { return nil }
        for i in 0..<count {
            let entry = ifd + 2 + 12 * i
            guard let tag = read(entry, 2), let type = read(entry + 2, 2), let n = read(entry + 4, 4) else { return nil }
            guard tag == orientationTag else { continue }
            let width: Int
            switch type {
            case 3: width = 2  // SHORT
            case 4: width = 4  // LONG
            default: return nil
            }
            guard n >= 1, let value = read(entry + 8, width) else { return nil }
            return EXIFOrientationTag(value: value, offset: tiff + entry + 8, width: width, bigEndian: bigEndian)
        }
        return nil
    }

    /// Writes `value` at this tag's place in `jpeg` (the same stream the tag was found in, or a copy
    /// with the same bytes up to it).
    func write(_ value: Int, into jpeg: inout [UInt8]) {
        guard offset >= 0, offset + width <= jpeg.count else { return }
        for i in 0..<width {
            let shift = 8 * (bigEndian ? width - 1 - i : i)
            jpeg[offset + i] = UInt8(truncatingIfNeeded: value >> shift)
        }
    }
}
