import BoothCore
import CTurboJPEG

/// A planar Y'CbCr image as a JPEG stores it (JFIF: full range, BT.601), in one byte buffer:
/// the Y plane, then Cb, then Cr (no chroma planes for `.gray`). Plane sizes follow TurboJPEG's
/// `tjPlaneWidth`/`tjPlaneHeight` for `size` and `subsampling` (chroma planes of a 4:2:0 image are
/// half the luma size, rounded up; luma padded to the MCU's multiple of 2 where chroma is halved).
public struct YUVPlanes: Sendable {
    /// Image size in pixels (the Y plane may be padded past it, see `widths`/`heights`).
    public private(set) var size: FrameSize
    public private(set) var subsampling: ChromaSubsampling
    /// Per plane (Y, Cb, Cr): bytes per row, equal to the plane's width.
    public private(set) var widths: [Int]
    /// Per plane: rows.
    public private(set) var heights: [Int]
    /// Per plane: offset of its first byte in `bytes`.
    public private(set) var offsets: [Int]
    /// The planes, one after another.
    public var bytes: [UInt8]

    /// An empty image; `JPEGDecoder.decodeYUVPlanes` resizes it.
    public init() {
        size = FrameSize(width: 0, height: 0)
        subsampling = .s420
        widths = []
        heights = []
        offsets = []
        bytes = []
    }

    /// Number of planes: 1 for `.gray`, else 3.
    public var planeCount: Int { widths.count }

    /// Resizes for `size` and `subsampling`, keeping the storage when it is large enough.
    /// Returns false when TurboJPEG knows no plane size for them (`tjPlaneWidth` fails).
    mutating func reshape(size: FrameSize, subsampling: ChromaSubsampling) -> Bool {
        let samp = subsampling.turboJPEG
        let planes = subsampling == .gray ? 1 : 3
        var w: [Int] = [], h: [Int] = [], o: [Int] = []
        var total = 0
        for id in 0..<planes {
            let pw = Int(tjPlaneWidth(Int32(id), Int32(size.width), samp))
            let ph = Int(tjPlaneHeight(Int32(id), Int32(size.height), samp))
            guard pw > 0, ph > 0 else { return false }
            w.append(pw); h.append(ph); o.append(total)
            total += pw * ph
        }
        self.size = size
        self.subsampling = subsampling
        widths = w; heights = h; offsets = o
        if bytes.count != total {
            if bytes.capacity >= total, bytes.count > total {
                bytes.removeLast(bytes.count - total)
            } else if bytes.capacity >= total {
                bytes.append(contentsOf: repeatElement(0, count: total - bytes.count))
            } else {
                bytes = [UInt8](repeating: 0, count: total)
            }
        }
        return true
    }
}


extension JPEGDecoder {
    /// Decodes to the JPEG's own Y'CbCr planes at `scale` into `planes` (storage reused when large
    /// enough), with no colour conversion and no chroma upsampling: the fastest decode TurboJPEG has.
    /// Returns the header (size before scaling). Wraps `tjDecompressHeader3` +
    /// `tjDecompressToYUVPlanes`. Throws `TurboJPEGError`: a fatal error, a warning (`isWarning`:
    /// corrupt or truncated data; `planes` then hold what libjpeg made of it), a CMYK/YCCK JPEG
    /// (no Y'CbCr planes), or an image over a supported camera's still or over `maxPixels` at `scale`.
    @discardableResult
    public func decodeYUVPlanes(_ jpeg: [UInt8], scale: JPEGScale = .full,
                                into planes: inout YUVPlanes) throws(TurboJPEGError) -> JPEGHeader {
        let header = try checkedHeader(jpeg, scale: scale)
        guard header.colorspace != .cmyk, header.colorspace != .ycck else {
            throw TurboJPEGError(call: "tjDecompressToYUVPlanes", message: "a \(header.colorspace) JPEG has no Y'CbCr planes")
        }
        let size = scale.scaled(header.size)
        guard planes.reshape(size: size, subsampling: header.chromaSubsampling) else {
            throw TurboJPEGError(call: "tjPlaneWidth", message: "no plane size for \(size) \(header.chromaSubsampling.rawValue)")
        }
        let widths = planes.widths, offsets = planes.offsets
        let rc = jpeg.withUnsafeBufferPointer { src in
            planes.bytes.withUnsafeMutableBufferPointer { dst -> Int32 in
                guard let base = dst.baseAddress else { return -1 }
                var pointers: [UnsafeMutablePointer<UInt8>?] = offsets.map { base + $0 }
                var strides: [Int32] = widths.map { Int32($0) }
                return tjDecompressToYUVPlanes(handle.raw, src.baseAddress, UInt(src.count), &pointers,
                                               Int32(size.width), &strides, Int32(size.height), 0)
            }
        }
        guard rc == 0 else { throw handle.error("tjDecompressToYUVPlanes") }
        return header
    }
}

extension JPEGEncoder {
    /// Encodes I420 planes (full-range Y'CbCr as JFIF, chroma half size each way) to a 4:2:0 JPEG.
    /// `y` holds `height` rows of `yStride` bytes, `cb`/`cr` hold `(height+1)/2` rows of
    /// `chromaStride` bytes; strides are at least `width` and `(width+1)/2`.
    /// - Parameter quality: 1 … 100.
    /// - Throws: `JPEGFrameError.invalidQuality`/`.invalidSize`/`.tooFewBytes`;
    ///   `TurboJPEGError` (call `tjCompressFromYUVPlanes`) when TurboJPEG fails.
    public func encodeI420(y: UnsafeBufferPointer<UInt8>, yStride: Int, cb: UnsafeBufferPointer<UInt8>,
                           cr: UnsafeBufferPointer<UInt8>, chromaStride: Int, size: FrameSize,
                           quality: Int) throws -> [UInt8] {
        guard (1...100).contains(quality) else { throw JPEGFrameError.invalidQuality(quality) }
        let width = size.width, height = size.height
        guard width > 0, height > 0, width <= 65_500, height <= 65_500,
              yStride >= width, chromaStride >= (width + 1) / 2 else { throw JPEGFrameError.invalidSize(size) }
        let chromaRows = (height + 1) / 2
        guard y.count >= yStride * height, cb.count >= chromaStride * chromaRows, cr.count >= chromaStride * chromaRows,
              let yBase = y.baseAddress, let cbBase = cb.baseAddress, let crBase = cr.baseAddress else {
            throw JPEGFrameError.tooFewBytes(count: y.count, needed: yStride * height)
        }
        let subsampling = Int32(TJSAMP_420.rawValue)
        let bound = tjBufSize(Int32(width), Int32(height), subsampling)
        guard bound != UInt(bitPattern: -1), bound <= UInt(Int32.max) else { throw JPEGFrameError.invalidSize(size) }
        let buffer = outputBuffer(capacity: Int(bound))
        var jpegBuf: UnsafeMutablePointer<UInt8>? = buffer
        var jpegSize = UInt(bound)
        var sources: [UnsafePointer<UInt8>?] = [yBase, cbBase, crBase]
        var strides: [Int32] = [Int32(yStride), Int32(chromaStride), Int32(chromaStride)]
        let rc = tjCompressFromYUVPlanes(handle.raw, &sources, Int32(width), &strides, Int32(height),
                                         subsampling, &jpegBuf, &jpegSize, Int32(quality), TJFLAG_NOREALLOC)
        guard rc == 0 else { throw handle.error("tjCompressFromYUVPlanes") }
        guard jpegBuf == buffer, jpegSize <= UInt(outputCapacity) else {
            throw TurboJPEGError(call: "tjCompressFromYUVPlanes",
                                 message: "TurboJPEG moved the output buffer despite TJFLAG_NOREALLOC")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(jpegSize)))
    }
}
