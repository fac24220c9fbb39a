import BoothCore
import BoothJPEG
import BoothTestSupport
import Foundation

/// Test patterns, colour conversion for building YUYV sources, image comparison, and the shared
/// real photos.
enum Pattern {
    /// An RGB24 pattern: red ramps left→right, green top→bottom, blue in a 16-pixel checkerboard
    /// (aligned with 4:2:0 MCUs). `bytesPerLine` ≥ `width * 3`; padding bytes are `pad`.
    static func rgb(width: Int, height: Int, bytesPerLine: Int? = nil, pad: UInt8 = 0xAB) -> [UInt8] {
        TestPattern.rgb(width: width, height: height, bytesPerLine: bytesPerLine, pad: pad)
    }

    /// A textured pattern (pseudo-random noise over the ramps) so that quality changes the size.
    static func noisyRGB(width: Int, height: Int) -> [UInt8] {
        var out = rgb(width: width, height: height)
        var state: UInt32 = 12345
        for i in out.indices {
            state = state &* 1_103_515_245 &+ 12345
            let noise = Int((state >> 16) & 0x3F) - 32
            out[i] = UInt8(max(0, min(255, Int(out[i]) + noise)))
        }
        return out
    }

    /// RGB24 (tightly packed) → YUYV with BT.601 coefficients, `range` limited (Y' 16–235) or full.
    /// Cb/Cr of each horizontal pixel pair are averaged. Lines are `bytesPerLine` bytes, padding `pad`.
    static func yuyv(fromRGB rgb: [UInt8], width: Int, height: Int, range: YCbCrRange,
                     bytesPerLine: Int? = nil, pad: UInt8 = 0xCD) -> [UInt8] {
        let bpl = bytesPerLine ?? width * 2
        var out = [UInt8](repeating: pad, count: bpl * height)
        func ycc(_ i: Int) -> (Double, Double, Double) {
            let r = Double(rgb[i]) / 255, g = Double(rgb[i + 1]) / 255, b = Double(rgb[i + 2]) / 255
            let y = 0.299 * r + 0.587 * g + 0.114 * b
            let cb = (b - y) / 1.772, cr = (r - y) / 1.402
            switch range {
            case .limited: return (16 + 219 * y, 128 + 224 * cb, 128 + 224 * cr)
            case .full: return (255 * y, 128 + 255 * cb, 128 + 255 * cr)
            }
        }
        func byte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
        for y in 0..<height {
            for x in stride(from: 0, to: width, by: 2) {
                let a = ycc((y * width + x) * 3), b = ycc((y * width + x + 1) * 3)
                let o = y * bpl + x * 2
                out[o] = byte(a.0)
                out[o + 1] = byte((a.1 + b.1) / 2)
                out[o + 2] = byte(b.0)
                out[o + 3] = byte((a.2 + b.2) / 2)
            }
        }
        return out
    }

    static func frame(_ format: PixelFormat, width: Int, height: Int, bytesPerLine: Int, bytes: [UInt8]) -> Frame {
        Frame(format: format, size: FrameSize(width: width, height: height), bytesPerLine: bytesPerLine,
              bytes: bytes, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
    }
}

/// Mean and maximum absolute difference between two equally sized RGB24 buffers.
func difference(_ a: [UInt8], _ b: [UInt8]) -> (mean: Double, max: Int) {
    precondition(a.count == b.count, "compared buffers differ in size")
    var sum = 0, worst = 0
    for i in a.indices {
        let d = abs(Int(a[i]) - Int(b[i]))
        sum += d
        worst = max(worst, d)
    }
    return (Double(sum) / Double(max(1, a.count)), worst)
}

/// The bytes with every DHT segment before the first scan removed (what a DHT-less MJPEG camera sends).
func strippingHuffmanTables(_ jpeg: [UInt8]) throws -> [UInt8] {
    let tables = try JPEGMarkers.segments(jpeg).filter { $0.marker == JPEGMarkers.dht }
    var out = jpeg
    for segment in tables.reversed() { out.removeSubrange(segment.range) }
    return out
}


/// Byte-for-byte equality through `Data` (memcmp), fast also in debug builds.
func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool { Data(a) == Data(b) }
