import BoothClock
import BoothCore
import BoothDisplay
import BoothJPEG
import BoothRaster
import Foundation

enum Fixture {
    static let fontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    static let texts = ScreenTexts(idle: "Press the button", preview: "Get ready!",
                                   faultCamera: "Camera disconnected — back soon",
                                   faultButton: "Button out of order", faultStorage: "Storage full")

    /// A renderer with the Debian font (fonts-dejavu-core, a build dependency).
    static func renderer() throws -> ScreenRenderer {
        ScreenRenderer(font: try Font(path: fontPath), texts: texts)
    }

    /// An RGB24 frame whose pixel colour depends on the quadrant: top-left red, top-right green,
    /// bottom-left blue, bottom-right yellow.
    static func quadrants(width: Int, height: Int, bytesPerLine: Int? = nil) -> Frame {
        let bpl = bytesPerLine ?? width * 3
        var bytes = [UInt8](repeating: 0, count: bpl * height)
        for y in 0..<height {
            for x in 0..<width {
                let c = quadrantColor(left: x < width / 2, top: y < height / 2)
                let i = y * bpl + x * 3
                bytes[i] = UInt8(c >> 16); bytes[i + 1] = UInt8((c >> 8) & 0xFF); bytes[i + 2] = UInt8(c & 0xFF)
            }
        }
        return Frame(format: .rgb24, size: FrameSize(width: width, height: height), bytesPerLine: bpl, bytes: bytes,
                     timestamp: Monotonic.now(), sequence: 0)
    }

    static func quadrantColor(left: Bool, top: Bool) -> UInt32 {
        switch (left, top) {
        case (true, true): 0xFF_0000
        case (false, true): 0x00_FF00
        case (true, false): 0x00_00FF
        case (false, false): 0xFF_FF00
        }
    }

    /// The quadrant pattern as a JPEG (4:2:0, quality 95).
    static func quadrantsJPEG(width: Int, height: Int) throws -> [UInt8] {
        try JPEGEncoder().encode(quadrants(width: width, height: height), quality: 95)
    }
}

/// True when `a` and `b` are within `tolerance` on each channel.
func near(_ a: UInt32, _ b: UInt32, _ tolerance: Int = 40) -> Bool {
    for shift in [16, 8, 0] {
        let x = Int((a >> UInt32(shift)) & 0xFF), y = Int((b >> UInt32(shift)) & 0xFF)
        if abs(x - y) > tolerance { return false }
    }
    return true
}

func hex(_ v: UInt32) -> String { String(v, radix: 16) }
