import BoothCore
import CTurboJPEG

/// Chroma subsampling of a JPEG image (TurboJPEG's `TJSAMP`), written as in the field: "4:2:0".
public enum ChromaSubsampling: String, Sendable, CaseIterable {
    case s444 = "4:4:4"
    case s422 = "4:2:2"
    case s420 = "4:2:0"
    case gray = "gray"
    case s440 = "4:4:0"
    case s411 = "4:1:1"

    /// TurboJPEG's `TJSAMP` value.
    var turboJPEG: Int32 {
        switch self {
        case .s444: Int32(TJSAMP_444.rawValue)
        case .s422: Int32(TJSAMP_422.rawValue)
        case .s420: Int32(TJSAMP_420.rawValue)
        case .gray: Int32(TJSAMP_GRAY.rawValue)
        case .s440: Int32(TJSAMP_440.rawValue)
        case .s411: Int32(TJSAMP_411.rawValue)
        }
    }

    init?(turboJPEG value: Int32) {
        switch value {
        case Int32(TJSAMP_444.rawValue): self = .s444
        case Int32(TJSAMP_422.rawValue): self = .s422
        case Int32(TJSAMP_420.rawValue): self = .s420
        case Int32(TJSAMP_GRAY.rawValue): self = .gray
        case Int32(TJSAMP_440.rawValue): self = .s440
        case Int32(TJSAMP_411.rawValue): self = .s411
        default: return nil
        }
    }
}

/// Colorspace of a JPEG image (TurboJPEG's `TJCS`).
public enum JPEGColorspace: String, Sendable, CaseIterable {
    case rgb, yCbCr, gray, cmyk, ycck

    init?(turboJPEG value: Int32) {
        switch value {
        case Int32(TJCS_RGB.rawValue): self = .rgb
        case Int32(TJCS_YCbCr.rawValue): self = .yCbCr
        case Int32(TJCS_GRAY.rawValue): self = .gray
        case Int32(TJCS_CMYK.rawValue): self = .cmyk
        case Int32(TJCS_YCCK.rawValue): self = .ycck
        default: return nil
        }
    }
}

/// What a JPEG's header says, read by `tjDecompressHeader3`.
public struct JPEGHeader: Equatable, Sendable {
    /// Image size in pixels.
    public var size: FrameSize
    public var chromaSubsampling: ChromaSubsampling
    public var colorspace: JPEGColorspace

    public init(size: FrameSize, chromaSubsampling: ChromaSubsampling, colorspace: JPEGColorspace) {
        self.size = size
        self.chromaSubsampling = chromaSubsampling
        self.colorspace = colorspace
    }
}

/// A TurboJPEG scaling factor applied while decoding (the IDCT produces the smaller image directly).
/// Only 1/1, 1/2, 1/4 and 1/8: the others (7/8, 3/4, …) decode about 2.5× slower than 1/1.
public enum JPEGScale: Int, Sendable, CaseIterable {
    case full = 1, half = 2, quarter = 4, eighth = 8

    /// The denominator; the numerator is 1.
    public var denominator: Int { rawValue }

    /// The smallest scale (1/8, 1/4, 1/2, else 1/1) at which `size` still covers `needed` both ways: what a step
    /// that draws a `size` image (or the part of it it shows) at `needed` pixels decodes at.
    public static func smallest(from size: FrameSize, covering needed: FrameSize) -> JPEGScale {
        [JPEGScale.eighth, .quarter, .half].first { s in
            size.width / s.denominator >= needed.width && size.height / s.denominator >= needed.height
        } ?? .full
    }

    /// This scale, or the largest smaller one whose decode of an image of `size` makes at most `maxPixels`: a
    /// step whose covering scale would decode a large still whole (a page or a screen larger than it at 1/2)
    /// decodes within the decoder's limit and resamples up (1/8 when none fits).
    public func within(_ maxPixels: Int, for size: FrameSize) -> JPEGScale {
        var scale = self
        while scale.scaled(size).area > maxPixels, let smaller = JPEGScale(rawValue: scale.rawValue * 2) { scale = smaller }
        return scale
    }

    /// The decoded size for an image of `size`, rounded up as TurboJPEG's `TJSCALED`.
    public func scaled(_ size: FrameSize) -> FrameSize {
        FrameSize(width: (size.width + denominator - 1) / denominator,
                  height: (size.height + denominator - 1) / denominator)
    }
}

/// An RGB24 image: `size.width * 3` bytes per line, rows top to bottom, R G B per pixel.
public struct RGBImage: Sendable, Equatable {
    public var size: FrameSize
    public var bytes: [UInt8]
    public var bytesPerLine: Int { size.width * 3 }

    public init(size: FrameSize, bytes: [UInt8]) {
        self.size = size
        self.bytes = bytes
    }
}

/// Reads JPEG headers, decodes JPEG to RGB24, and validates JPEG bytes, through TurboJPEG.
///
/// Holds one TurboJPEG decompressor handle (`tjInitDecompress`, destroyed in `deinit`) and a
/// scratch buffer for `validate`, reused across calls. Not thread-safe, like the handle: use one
/// decoder per thread (create it on the thread that uses it).
public final class JPEGDecoder {
    var handle: TurboJPEGHandle
    private var scratch: [UInt8] = []

    /// The largest still of the cameras the booth supports, in pixels: 11648x8736 (Fujifilm's GFX100
    /// bodies, 102 MP); a 45 MP body (Canon R5 8192x5464, Nikon D850/Z7 8256x5504) and a 61 MP one
    /// (Sony A7R IV/V 9504x6336) are within it. A JPEG whose header claims more is refused before anything
    /// is done with it, the lossless turn (`tjTransform`) included: a hostile header can claim 65500x65500.
    public static let largestStillPixels = 11_648 * 8_736
    /// The longest side of a supported camera's still, in pixels (the GFX100's 11648): a header claiming a
    /// longer side (a 200-byte file claiming 65376x1446 kept `tjTransform` busy for seconds) is refused.
    public static let largestStillSide = 11_648

    /// The most pixels one decode makes, after TurboJPEG's scaling: bounds the memory of a decode (3 bytes a
    /// pixel for RGB24, 4 for XRGB, about 1.5 for 4:2:0 planes). A step that needs less than the whole
    /// still decodes at a scale (``JPEGScale``) and stays under it; a decode over it is refused, not made.
    public let maxPixels: Int

    /// Creates a decompressor whose decodes make at most `maxPixels` pixels each (default 40 MP: a whole
    /// 45 MP still is decoded at 1/2, a ``JPEGRotator`` re-encoding a whole still uses
    /// ``largestStillPixels``). Headers over ``largestStillPixels`` or ``largestStillSide`` are refused
    /// whatever `maxPixels` is. Throws `TurboJPEGError` (call `tjInitDecompress`) when TurboJPEG cannot
    /// allocate one.
    public init(maxPixels: Int = 40_000_000) throws(TurboJPEGError) {
        handle = try TurboJPEGHandle(compress: false)
        self.maxPixels = maxPixels
    }

    /// Size, chroma subsampling and colorspace from the JPEG's markers, without decoding.
    /// Wraps `tjDecompressHeader3`; throws its `TurboJPEGError` for bytes that are not a JPEG
    /// (or an empty array).
    public func header(_ jpeg: [UInt8]) throws(TurboJPEGError) -> JPEGHeader {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = -1, colorspace: Int32 = -1
        let rc = jpeg.withUnsafeBufferPointer { buf in
            tjDecompressHeader3(handle.raw, buf.baseAddress, UInt(buf.count), &width, &height,
                                &subsampling, &colorspace)
        }
        guard rc == 0 else {
            let error = handle.error("tjDecompressHeader3")
            // TurboJPEG 2.1's tjDecompressHeader3 returns on a libjpeg error without
            // jpeg_abort_decompress, leaving the handle mid-header: the next call on it then fails
            // even for a good JPEG. A fresh handle is the documented way back to a clean state.
            if let fresh = try? TurboJPEGHandle(compress: false) { handle = fresh }
            throw error
        }
        guard let chroma = ChromaSubsampling(turboJPEG: subsampling) else {
            throw TurboJPEGError(call: "tjDecompressHeader3", message: "unknown chroma subsampling \(subsampling)")
        }
        guard let space = JPEGColorspace(turboJPEG: colorspace) else {
            throw TurboJPEGError(call: "tjDecompressHeader3", message: "unknown colorspace \(colorspace)")
        }
        return JPEGHeader(size: FrameSize(width: Int(width), height: Int(height)),
                          chromaSubsampling: chroma, colorspace: space)
    }

    /// Decodes to RGB24 into `rgb`, which is resized to `width * 3 * height` bytes of the scaled
    /// size (its storage is reused when large enough), and returns that size.
    /// Wraps `tjDecompressHeader3` + `tjDecompress2`. Throws `TurboJPEGError`: a fatal error, a
    /// warning (`isWarning`: corrupt or truncated data; `rgb` then holds what libjpeg made of it),
    /// or an image over a supported camera's still or over `maxPixels` at `scale` (call `tjDecompress2`, not decoded).
    @discardableResult
    public func decode(_ jpeg: [UInt8], scale: JPEGScale = .full, into rgb: inout [UInt8]) throws(TurboJPEGError) -> FrameSize {
        let size = scale.scaled(try checkedHeader(jpeg, scale: scale).size)
        let count = size.width * 3 * size.height
        if rgb.count > count {
            rgb.removeLast(rgb.count - count)  // keeps the storage
        } else if rgb.count < count {
            if rgb.capacity >= count {
                rgb.append(contentsOf: repeatElement(0, count: count - rgb.count))
            } else {
                rgb = [UInt8](repeating: 0, count: count)
            }
        }
        try decompress(jpeg, scale: scale, size: size, into: &rgb)
        return size
    }

    /// Decodes to a new RGB24 image (see `decode(_:scale:into:)`, which reuses a buffer instead).
    public func decodeRGB(_ jpeg: [UInt8], scale: JPEGScale = .full) throws(TurboJPEGError) -> RGBImage {
        var bytes: [UInt8] = []
        let size = try decode(jpeg, scale: scale, into: &bytes)
        return RGBImage(size: size, bytes: bytes)
    }

    /// True when `jpeg` is a complete, decodable JPEG: it starts with SOI, ends with EOI (trailing
    /// `00` padding allowed), and decodes with no TurboJPEG error and no warning (libjpeg warns on
    /// truncated or corrupt entropy data). Decodes at 1/8 scale into a reused buffer: the whole
    /// entropy-coded data is still read and checked, only the IDCT output is smaller.
    /// Images over a supported camera's still (``largestStillPixels``) are invalid.
    public func validate(_ jpeg: [UInt8]) -> Bool {
        guard JPEGMarkers.startsWithSOI(jpeg), JPEGMarkers.endsWithEOI(jpeg) else { return false }
        do {
            try decode(jpeg, scale: .eighth, into: &scratch)
            return true
        } catch {
            return false
        }
    }

    /// The header of `jpeg`, refused (call `tjDecompress2`, "over the decoder's limit") when it claims more
    /// than a supported camera's still (``largestStillPixels``, ``largestStillSide``) or when its decode at
    /// `scale` would make more than ``maxPixels`` pixels. The lossless turn checks with `scale` nil: the
    /// still's size alone.
    func checkedHeader(_ jpeg: [UInt8], scale: JPEGScale? = .full) throws(TurboJPEGError) -> JPEGHeader {
        let header = try header(jpeg)
        let size = header.size
        guard size.width > 0, size.height > 0 else {
            throw TurboJPEGError(call: "tjDecompress2", message: "image \(size) has no pixels; not decoded")
        }
        guard size.area <= Self.largestStillPixels, max(size.width, size.height) <= Self.largestStillSide else {
            throw TurboJPEGError(call: "tjDecompress2",
                                 message: "image \(size) is over the decoder's limit of \(Self.largestStillPixels) pixels and "
                                     + "\(Self.largestStillSide) a side (the largest still of a supported camera); not decoded")
        }
        if let scale, scale.scaled(size).area > maxPixels {
            throw TurboJPEGError(call: "tjDecompress2",
                                 message: "image \(size) decoded at 1/\(scale.denominator) is \(scale.scaled(size)), over the "
                                     + "decoder's limit of \(maxPixels) pixels for one decode; not decoded")
        }
        return header
    }

    private func decompress(_ jpeg: [UInt8], scale: JPEGScale, size: FrameSize,
                            into rgb: inout [UInt8]) throws(TurboJPEGError) {
        let scaledWidth = Int32(size.width), scaledHeight = Int32(size.height)
        let rc = jpeg.withUnsafeBufferPointer { src in
            rgb.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(handle.raw, src.baseAddress, UInt(src.count), dst.baseAddress,
                              scaledWidth, scaledWidth * 3, scaledHeight, Int32(TJPF_RGB.rawValue), 0)
            }
        }
        guard rc == 0 else { throw handle.error("tjDecompress2") }
    }
}
