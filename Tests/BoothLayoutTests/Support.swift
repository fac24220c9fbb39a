import BoothCore
import BoothJPEG
import CPNG
import BoothTestSupport
import Foundation

/// Synthetic captures, PNG writing, the shared real photos.
enum Fixture {
    /// An RGB24 test pattern, `width` × `height`: colour ramps plus a 16-pixel checker, tinted by `seed`.
    static func patternRGB(width: Int, height: Int, seed: Int) -> [UInt8] {
        TestPattern.rgb(width: width, height: height, seed: seed)
    }

    /// A JPEG (q95, 4:2:0) of the test pattern.
    static func patternJPEG(width: Int, height: Int, seed: Int) throws -> [UInt8] {
        let rgb = patternRGB(width: width, height: height, seed: seed)
        return try JPEGEncoder().encode(Frame(format: .rgb24, size: FrameSize(width: width, height: height),
                                              bytesPerLine: width * 3, bytes: rgb, timestamp: MonotonicInstant(nanoseconds: 0),
                                              sequence: 0), quality: 95)
    }

    /// A JPEG of one solid colour.
    static func solidJPEG(width: Int, height: Int, r: UInt8, g: UInt8, b: UInt8) throws -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) { rgb[3 * i] = r; rgb[3 * i + 1] = g; rgb[3 * i + 2] = b }
        return try JPEGEncoder().encode(Frame(format: .rgb24, size: FrameSize(width: width, height: height),
                                              bytesPerLine: width * 3, bytes: rgb, timestamp: MonotonicInstant(nanoseconds: 0),
                                              sequence: 0), quality: 98)
    }

    /// Writes an RGBA PNG (libpng `png_image_write_to_file`).
    static func writePNG(path: String, width: Int, height: Int, rgba: [UInt8]) -> Bool {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = UInt32(cpng_format_rgba)
        let ok = rgba.withUnsafeBytes { buf in
            png_image_write_to_file(&image, path, 0, buf.baseAddress, Int32(width * 4), nil)
        }
        return ok != 0
    }

    static func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("boothlayout-\(getpid())-\(name)").path
    }

    static var goldenDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("golden")
    }

    /// Full-range Y' of an sRGB colour (JFIF).
    static func luma(_ r: Double, _ g: Double, _ b: Double) -> Double { 0.299 * r + 0.587 * g + 0.114 * b }
}

