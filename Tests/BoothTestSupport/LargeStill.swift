import BoothCore
import BoothJPEG
import Foundation
import Synchronization

/// Stills of the largest bodies, made at test time (no photo is committed): 4:2:0 JPEGs of a simple
/// picture, small in bytes however many pixels, encoded from their planes by the project's TurboJPEG
/// encoder (`JPEGEncoder.encodeI420`). As stored, the left half is bright (Y' 200) and the right half dark
/// (Y' 50); with EXIF Orientation 6 the upright picture is bright at the top.
public enum LargeStill {
    /// 45 MP: Canon R5 (8192x5464; 5464 rows are not whole 16-row MCUs, so a quarter turn is re-encoded).
    public static let mp45 = FrameSize(width: 8192, height: 5464)
    /// 61 MP: Sony A7R IV/V (9504x6336).
    public static let mp61 = FrameSize(width: 9504, height: 6336)
    /// 102 MP: Fujifilm GFX100 (11648x8736), the largest still the booth supports.
    public static let mp100 = FrameSize(width: 11648, height: 8736)
    /// Luma of the stored left and right halves.
    public static let brightLuma: UInt8 = 200, darkLuma: UInt8 = 50

    private static let made = Mutex<[String: [UInt8]]>([:])

    /// The JPEG of `size` as stored, with an EXIF Orientation tag of `orientation` (none for 1); made once per process.
    public static func jpeg(_ size: FrameSize, orientation: Int = 1) throws -> [UInt8] {
        let key = "\(size.width)x\(size.height)-\(orientation)"
        if let bytes = made.withLock({ $0[key] }) { return bytes }
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        var y = [UInt8](repeating: darkLuma, count: w * h)
        y.withUnsafeMutableBufferPointer { p in
            for row in 0..<h { UnsafeMutableBufferPointer(rebasing: p[row * w..<row * w + w / 2]).update(repeating: brightLuma) }
        }
        let chroma = [UInt8](repeating: 128, count: cw * ch)
        var bytes = try y.withUnsafeBufferPointer { yp in
            try chroma.withUnsafeBufferPointer { cp in
                try JPEGEncoder().encodeI420(y: yp, yStride: w, cb: cp, cr: cp, chromaStride: cw, size: size, quality: 90)
            }
        }
        if orientation != 1 { bytes = EXIFFixture.inserting(EXIFFixture.app1(orientation: orientation), into: bytes) }
        made.withLock { $0[key] = bytes }
        return bytes
    }

    /// ``jpeg(_:orientation:)`` written to a file in the temporary directory (for the virtual camera's `photo=PATH`):
    /// one name per size and orientation, written atomically at each call (test processes share it, none leaves its own).
    public static func file(_ size: FrameSize, orientation: Int = 1) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("photobooth-large-still-\(size.width)x\(size.height)-\(orientation).jpg")
        try Data(try jpeg(size, orientation: orientation)).write(to: url, options: .atomic)
        return url
    }
}
