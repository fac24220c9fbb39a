import BoothCore
import CTurboJPEG
import CYUV

/// The range of the Y'CbCr values in a YUYV frame.
public enum YCbCrRange: String, Sendable, CaseIterable {
    /// "Video" range, V4L2's default for YUYV (`V4L2_QUANTIZATION_LIM_RANGE`): Y' 16–235, Cb/Cr 16–240.
    /// Expanded to full range on the way into the JPEG, which JFIF defines as full range.
    case limited
    /// Full range, Y'/Cb/Cr 0–255 (`V4L2_QUANTIZATION_FULL_RANGE`), as JFIF: passed through unchanged.
    case full
}

/// Encodes YUYV and RGB24 frames to baseline JPEG with 4:2:0 chroma subsampling, through TurboJPEG.
///
/// Holds one TurboJPEG compressor handle (`tjInitCompress`, destroyed in `deinit`) and its output
/// and plane buffers, reused across calls. Not thread-safe, like the handle: use one encoder per
/// thread (create it on the thread that uses it).
public final class JPEGEncoder {
    let handle: TurboJPEGHandle
    /// TurboJPEG writes into this (`TJFLAG_NOREALLOC`); `tjBufSize` bytes for the last size seen.
    private var output: UnsafeMutablePointer<UInt8>?
    private(set) var outputCapacity = 0
    /// Y, Cb and Cr planes (I420) for YUYV frames, one after another.
    private var planes: [UInt8] = []
    /// The turned picture's pixels (``encode(_:quality:turnedBy:yuvRange:)``): I420 planes for YUYV,
    /// ARGB for RGB24; `unturned` the RGB24 frame's ARGB before the turn.
    private var turned: [UInt8] = []
    private var unturned: [UInt8] = []
    private var lumaTable: [UInt8] = []
    private var chromaTable: [UInt8] = []
    private var tablesRange: YCbCrRange?

    /// Creates a compressor. Throws `TurboJPEGError` (call `tjInitCompress`) when TurboJPEG cannot
    /// allocate one.
    public init() throws(TurboJPEGError) {
        handle = try TurboJPEGHandle(compress: true)
    }

    deinit { output?.deallocate() }

    /// Encodes one frame to JPEG bytes (JFIF, baseline, standard Huffman tables, 4:2:0).
    ///
    /// - YUYV (`frame.bytesPerLine` ≥ `ceil(width/2) * 4`): converted to I420 planes in one pass
    ///   (Cb/Cr of two rows averaged) and compressed with `tjCompressFromYUVPlanes`, with no RGB
    ///   round-trip. `yuvRange` says how to read the values (V4L2's default for YUYV is `.limited`).
    /// - RGB24 (`frame.bytesPerLine` ≥ `width * 3`): compressed in place with `tjCompress2`.
    /// Bytes past the row size in each line (`bytesPerLine` padding) are ignored.
    ///
    /// - Parameter quality: 1 (smallest) … 100 (best); the booth's default is 92.
    /// - Throws: `JPEGFrameError` for an MJPEG frame, a bad size, quality, `bytesPerLine` or too few
    ///   bytes; `TurboJPEGError` (call `tjCompress2` or `tjCompressFromYUVPlanes`) when TurboJPEG fails.
    public func encode(_ frame: Frame, quality: Int, yuvRange: YCbCrRange = .limited) throws -> [UInt8] {
        try checkRaw(frame, quality: quality)
        let width = frame.size.width, height = frame.size.height
        let subsampling = Int32(TJSAMP_420.rawValue)
        let bound = tjBufSize(Int32(width), Int32(height), subsampling)
        guard bound != UInt(bitPattern: -1), bound <= UInt(Int32.max) else { throw JPEGFrameError.invalidSize(frame.size) }
        let buffer = outputBuffer(capacity: Int(bound))

        var jpegBuf: UnsafeMutablePointer<UInt8>? = buffer
        var jpegSize = UInt(bound)
        let flags = TJFLAG_NOREALLOC
        switch frame.format {
        case .mjpeg:
            throw JPEGFrameError.alreadyCompressed
        case .rgb24:
            let rc = frame.bytes.withUnsafeBufferPointer { src in
                tjCompress2(handle.raw, src.baseAddress, Int32(width), Int32(frame.bytesPerLine), Int32(height),
                            Int32(TJPF_RGB.rawValue), &jpegBuf, &jpegSize, subsampling, Int32(quality), flags)
            }
            guard rc == 0 else { throw handle.error("tjCompress2") }
        case .yuyv:
            let layout = I420Layout(width: width, height: height)
            if planes.count != layout.totalBytes {
                planes = [UInt8](repeating: 0, count: layout.totalBytes)
            }
            if tablesRange != yuvRange { makeTables(yuvRange) }
            let rc = frame.bytes.withUnsafeBufferPointer { src in
                planes.withUnsafeMutableBufferPointer { dst in
                    lumaTable.withUnsafeBufferPointer { luma in
                        chromaTable.withUnsafeBufferPointer { chroma in
                            convertYUYVToI420(src, bytesPerLine: frame.bytesPerLine, layout: layout,
                                              into: dst, lumaTable: luma, chromaTable: chroma)
                            guard let base = dst.baseAddress else { return Int32(-1) }
                            var sources: [UnsafePointer<UInt8>?] = [
                                UnsafePointer(base),
                                UnsafePointer(base + layout.lumaBytes),
                                UnsafePointer(base + layout.lumaBytes + layout.chromaBytes),
                            ]
                            var strides: [Int32] = [Int32(layout.lumaStride), Int32(layout.chromaStride),
                                                    Int32(layout.chromaStride)]
                            return tjCompressFromYUVPlanes(handle.raw, &sources, Int32(width), &strides, Int32(height),
                                                           subsampling, &jpegBuf, &jpegSize, Int32(quality), flags)
                        }
                    }
                }
            }
            guard rc == 0 else { throw handle.error("tjCompressFromYUVPlanes") }
        }
        guard jpegBuf == buffer, jpegSize <= UInt(outputCapacity) else {
            throw TurboJPEGError(call: "tjCompress2", message: "TurboJPEG moved the output buffer despite TJFLAG_NOREALLOC")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(jpegSize)))
    }

    /// Checks a raw frame (YUYV, RGB24) and `quality` for an encode: size 1…65,500 pixels a side,
    /// `bytesPerLine` at least a row, enough bytes for every row.
    /// - Throws: `JPEGFrameError` (see ``encode(_:quality:yuvRange:)``).
    private func checkRaw(_ frame: Frame, quality: Int) throws(JPEGFrameError) {
        guard (1...100).contains(quality) else { throw JPEGFrameError.invalidQuality(quality) }
        let width = frame.size.width, height = frame.size.height
        let rowBytes: Int
        switch frame.format {
        case .mjpeg: throw JPEGFrameError.alreadyCompressed
        case .yuyv: rowBytes = (width + 1) / 2 * 4
        case .rgb24: rowBytes = width * 3
        }
        guard width > 0, height > 0, width <= 65_500, height <= 65_500 else {
            throw JPEGFrameError.invalidSize(frame.size)
        }
        guard frame.bytesPerLine >= rowBytes else {
            throw JPEGFrameError.bytesPerLineTooSmall(bytesPerLine: frame.bytesPerLine, minimum: rowBytes)
        }
        guard frame.bytesPerLine <= Int(Int32.max) else { throw JPEGFrameError.invalidSize(frame.size) }
        let (needed, overflow) = (height - 1).multipliedReportingOverflow(by: frame.bytesPerLine)
        guard !overflow, frame.bytes.count >= needed + rowBytes else {
            throw JPEGFrameError.tooFewBytes(count: frame.bytes.count, needed: overflow ? Int.max : needed + rowBytes)
        }
    }

    /// Encodes one frame turned clockwise by `rotation`, in one encode: the frame's pixels are turned
    /// with libyuv on the way in, so the JPEG is `rotation.rotated(frame.size)` and holds no Exif
    /// Orientation (the pixels are upright). For a YUYV or RGB24 capture of any size (whole MCUs or not);
    /// an MJPEG capture is turned losslessly by ``JPEGRotator`` instead.
    ///
    /// - YUYV: converted to I420 planes as ``encode(_:quality:yuvRange:)`` does, turned with
    ///   `I420Rotate`, compressed with `tjCompressFromYUVPlanes`.
    /// - RGB24: to ARGB with `RAWToARGB` (V4L2's RGB24 is R, G, B bytes: libyuv's "RAW"), turned with
    ///   `ARGBRotate`, compressed with `tjCompress2` (`TJPF_BGRX`).
    /// `.r0` is exactly ``encode(_:quality:yuvRange:)``. A YUYV frame of an odd width or height whose
    /// odd edge the turn brings to the left or top keeps its chroma samples where they were: they land
    /// half a chroma sample (one pixel) off the 4:2:0 grid (cameras' sizes are even).
    ///
    /// - Parameter quality: 1 (smallest) … 100 (best).
    /// - Throws: as ``encode(_:quality:yuvRange:)``; `TurboJPEGError` (call `I420Rotate`, `RAWToARGB` or
    ///   `ARGBRotate`) when libyuv refuses the planes.
    public func encode(_ frame: Frame, quality: Int, turnedBy rotation: Rotation,
                       yuvRange: YCbCrRange = .limited) throws -> [UInt8] {
        guard rotation != .r0 else { return try encode(frame, quality: quality, yuvRange: yuvRange) }
        try checkRaw(frame, quality: quality)
        let width = frame.size.width, height = frame.size.height
        let out = rotation.rotated(frame.size)
        let mode = yuvRotation(rotation)
        switch frame.format {
        case .mjpeg:
            throw JPEGFrameError.alreadyCompressed
        case .yuyv:
            let layout = I420Layout(width: width, height: height)
            let turnedLayout = I420Layout(width: out.width, height: out.height)
            if planes.count != layout.totalBytes { planes = [UInt8](repeating: 0, count: layout.totalBytes) }
            if turned.count != turnedLayout.totalBytes { turned = [UInt8](repeating: 0, count: turnedLayout.totalBytes) }
            if tablesRange != yuvRange { makeTables(yuvRange) }
            let rc = frame.bytes.withUnsafeBufferPointer { src in
                planes.withUnsafeMutableBufferPointer { dst in
                    turned.withUnsafeMutableBufferPointer { t in
                        lumaTable.withUnsafeBufferPointer { luma in
                            chromaTable.withUnsafeBufferPointer { chroma in
                                convertYUYVToI420(src, bytesPerLine: frame.bytesPerLine, layout: layout,
                                                  into: dst, lumaTable: luma, chromaTable: chroma)
                                guard let s = dst.baseAddress, let d = t.baseAddress else { return Int32(-1) }
                                return I420Rotate(s, Int32(layout.lumaStride),
                                                  s + layout.lumaBytes, Int32(layout.chromaStride),
                                                  s + layout.lumaBytes + layout.chromaBytes, Int32(layout.chromaStride),
                                                  d, Int32(turnedLayout.lumaStride),
                                                  d + turnedLayout.lumaBytes, Int32(turnedLayout.chromaStride),
                                                  d + turnedLayout.lumaBytes + turnedLayout.chromaBytes,
                                                  Int32(turnedLayout.chromaStride),
                                                  Int32(width), Int32(height), mode)
                            }
                        }
                    }
                }
            }
            guard rc == 0 else { throw TurboJPEGError(call: "I420Rotate", message: "libyuv returned \(rc)") }
            return try turned.withUnsafeBufferPointer { t throws -> [UInt8] in
                let y = UnsafeBufferPointer(rebasing: t[0..<turnedLayout.lumaBytes])
                let cb = UnsafeBufferPointer(rebasing: t[turnedLayout.lumaBytes..<(turnedLayout.lumaBytes + turnedLayout.chromaBytes)])
                let cr = UnsafeBufferPointer(rebasing: t[(turnedLayout.lumaBytes + turnedLayout.chromaBytes)...])
                return try encodeI420(y: y, yStride: turnedLayout.lumaStride, cb: cb, cr: cr,
                                      chromaStride: turnedLayout.chromaStride, size: out, quality: quality)
            }
        case .rgb24:
            let bytes = frame.size.area * 4
            if unturned.count != bytes { unturned = [UInt8](repeating: 0, count: bytes) }
            if turned.count != bytes { turned = [UInt8](repeating: 0, count: bytes) }
            let converted = frame.bytes.withUnsafeBufferPointer { src in
                unturned.withUnsafeMutableBufferPointer { argb in
                    RAWToARGB(src.baseAddress, Int32(frame.bytesPerLine), argb.baseAddress, Int32(width * 4),
                              Int32(width), Int32(height))
                }
            }
            guard converted == 0 else { throw TurboJPEGError(call: "RAWToARGB", message: "libyuv returned \(converted)") }
            try turnARGB(unturned, size: frame.size, by: rotation, into: &turned)
            return try encode(bgrx: turned, size: out, quality: quality)
        }
    }

    /// `argb` (`size`, rows of `size.width * 4` bytes B, G, R, X) turned clockwise by `rotation` into
    /// `out` (resized to fit). Wraps libyuv's `ARGBRotate`.
    /// - Throws: `TurboJPEGError` (call `ARGBRotate`) when libyuv refuses the sizes.
    func turnARGB(_ argb: [UInt8], size: FrameSize, by rotation: Rotation, into out: inout [UInt8]) throws(TurboJPEGError) {
        let turnedSize = rotation.rotated(size)
        if out.count != size.area * 4 { out = [UInt8](repeating: 0, count: size.area * 4) }
        let rc = argb.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                ARGBRotate(src.baseAddress, Int32(size.width * 4), dst.baseAddress, Int32(turnedSize.width * 4),
                           Int32(size.width), Int32(size.height), yuvRotation(rotation))
            }
        }
        guard rc == 0 else { throw TurboJPEGError(call: "ARGBRotate", message: "libyuv returned \(rc)") }
    }

    /// `tjCompress2` of `size.area` BGRX pixels (4:2:0), for the turned frame and ``JPEGRotator``.
    func encode(bgrx pixels: [UInt8], size: FrameSize, quality: Int) throws -> [UInt8] {
        guard pixels.count >= size.area * 4 else { throw JPEGFrameError.tooFewBytes(count: pixels.count, needed: size.area * 4) }
        let subsampling = Int32(TJSAMP_420.rawValue)
        let bound = tjBufSize(Int32(size.width), Int32(size.height), subsampling)
        guard bound != UInt(bitPattern: -1), bound <= UInt(Int32.max) else { throw JPEGFrameError.invalidSize(size) }
        let buffer = outputBuffer(capacity: Int(bound))
        var jpegBuf: UnsafeMutablePointer<UInt8>? = buffer
        var jpegSize = UInt(bound)
        let rc = pixels.withUnsafeBufferPointer { src in
            tjCompress2(handle.raw, src.baseAddress, Int32(size.width), Int32(size.width * 4), Int32(size.height),
                        Int32(TJPF_BGRX.rawValue), &jpegBuf, &jpegSize, subsampling, Int32(quality), TJFLAG_NOREALLOC)
        }
        guard rc == 0 else { throw handle.error("tjCompress2") }
        guard jpegBuf == buffer, jpegSize <= UInt(outputCapacity) else {
            throw TurboJPEGError(call: "tjCompress2", message: "TurboJPEG moved the output buffer despite TJFLAG_NOREALLOC")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(jpegSize)))
    }

    /// Encodes an XRGB8888 picture (`size.width * size.height` words `0xXXRRGGBB`, rows top to
    /// bottom, i.e. bytes B, G, R, X: TurboJPEG's `TJPF_BGRX`) to JPEG bytes (JFIF, 4:2:0 unless
    /// `chromaSubsampling` says otherwise). Wraps `tjCompress2`; for the file preview, which encodes
    /// the drawn screen.
    /// - Parameter quality: 1 … 100.
    /// - Throws: `JPEGFrameError` for a bad quality, an empty or oversized size or too few pixels;
    ///   `TurboJPEGError` (call `tjCompress2`) when TurboJPEG fails.
    public func encode(xrgb pixels: [UInt32], size: FrameSize, quality: Int,
                       chromaSubsampling: ChromaSubsampling = .s420) throws -> [UInt8] {
        guard (1...100).contains(quality) else { throw JPEGFrameError.invalidQuality(quality) }
        guard size.width > 0, size.height > 0, size.width <= 65_500, size.height <= 65_500 else {
            throw JPEGFrameError.invalidSize(size)
        }
        guard pixels.count >= size.area else { throw JPEGFrameError.tooFewBytes(count: pixels.count * 4, needed: size.area * 4) }
        let subsampling = chromaSubsampling.turboJPEG
        let bound = tjBufSize(Int32(size.width), Int32(size.height), subsampling)
        guard bound != UInt(bitPattern: -1), bound <= UInt(Int32.max) else { throw JPEGFrameError.invalidSize(size) }
        let buffer = outputBuffer(capacity: Int(bound))
        var jpegBuf: UnsafeMutablePointer<UInt8>? = buffer
        var jpegSize = UInt(bound)
        let rc = pixels.withUnsafeBytes { src in
            tjCompress2(handle.raw, src.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(size.width),
                        Int32(size.width * 4), Int32(size.height), Int32(TJPF_BGRX.rawValue), &jpegBuf, &jpegSize,
                        subsampling, Int32(quality), TJFLAG_NOREALLOC)
        }
        guard rc == 0 else { throw handle.error("tjCompress2") }
        guard jpegBuf == buffer, jpegSize <= UInt(outputCapacity) else {
            throw TurboJPEGError(call: "tjCompress2", message: "TurboJPEG moved the output buffer despite TJFLAG_NOREALLOC")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(jpegSize)))
    }

    func outputBuffer(capacity: Int) -> UnsafeMutablePointer<UInt8> {
        if let output, outputCapacity >= capacity { return output }
        output?.deallocate()
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        output = fresh
        outputCapacity = capacity
        return fresh
    }

    private func makeTables(_ range: YCbCrRange) {
        switch range {
        case .full:
            lumaTable = (0...255).map { UInt8($0) }
            chromaTable = lumaTable
        case .limited:
            lumaTable = (0...255).map { v in clampToByte(scaledRounded(v - 16, 255, 219)) }
            chromaTable = (0...255).map { v in clampToByte(scaledRounded(v - 128, 255, 224) + 128) }
        }
        tablesRange = range
    }
}

/// libyuv's `RotationMode` for a clockwise quarter turn.
func yuvRotation(_ r: Rotation) -> RotationMode {
    switch r {
    case .r0: kRotate0
    case .r90: kRotate90
    case .r180: kRotate180
    case .r270: kRotate270
    }
}

private func clampToByte(_ x: Int) -> UInt8 {
    UInt8(min(255, max(0, x)))
}

/// `value * numerator / denominator`, rounded half away from zero, in integers.
private func scaledRounded(_ value: Int, _ numerator: Int, _ denominator: Int) -> Int {
    let n = value * numerator
    return n >= 0 ? (n + denominator / 2) / denominator : -((-n + denominator / 2) / denominator)
}

/// Sizes of the I420 planes TurboJPEG reads for a 4:2:0 image (`tjPlaneWidth`/`tjPlaneHeight`):
/// luma padded to even width and height, chroma half of that.
struct I420Layout: Equatable {
    var width: Int
    var height: Int
    var lumaStride: Int { (width + 1) & ~1 }
    var lumaRows: Int { (height + 1) & ~1 }
    var chromaStride: Int { lumaStride / 2 }
    var chromaRows: Int { lumaRows / 2 }
    var lumaBytes: Int { lumaStride * lumaRows }
    var chromaBytes: Int { chromaStride * chromaRows }
    var totalBytes: Int { lumaBytes + 2 * chromaBytes }
}

/// YUYV (Y0 Cb Y1 Cr per two pixels) → I420 planes in `dst` (Y, then Cb, then Cr, as `layout`),
/// each value mapped through its table; Cb/Cr of each row pair averaged (rounding up). An odd last
/// row pairs with itself, so the padding TurboJPEG reads is filled too. The caller has checked
/// that `src` holds `(height-1) * bytesPerLine + ceil(width/2)*4` bytes.
func convertYUYVToI420(_ src: UnsafeBufferPointer<UInt8>, bytesPerLine: Int, layout: I420Layout,
                       into dst: UnsafeMutableBufferPointer<UInt8>,
                       lumaTable: UnsafeBufferPointer<UInt8>, chromaTable: UnsafeBufferPointer<UInt8>) {
    guard let s = src.baseAddress, let d = dst.baseAddress, let lt = lumaTable.baseAddress,
          let ct = chromaTable.baseAddress, lumaTable.count == 256, chromaTable.count == 256,
          dst.count >= layout.totalBytes else { return }
    let pairs = layout.chromaStride
    let cb = d + layout.lumaBytes
    let cr = cb + layout.chromaBytes
    var row = 0
    while row < layout.lumaRows {
        let r0 = min(row, layout.height - 1), r1 = min(row + 1, layout.height - 1)
        let s0 = s + r0 * bytesPerLine, s1 = s + r1 * bytesPerLine
        let y0 = d + row * layout.lumaStride, y1 = y0 + layout.lumaStride
        let c = (row / 2) * layout.chromaStride
        for i in 0..<pairs {
            let p0 = s0 + 4 * i, p1 = s1 + 4 * i
            y0[2 * i] = lt[Int(p0[0])]
            y0[2 * i + 1] = lt[Int(p0[2])]
            y1[2 * i] = lt[Int(p1[0])]
            y1[2 * i + 1] = lt[Int(p1[2])]
            cb[c + i] = ct[(Int(p0[1]) + Int(p1[1]) + 1) >> 1]
            cr[c + i] = ct[(Int(p0[3]) + Int(p1[3]) + 1) >> 1]
        }
        row += 2
    }
}
