import BoothCore
import struct BoothRaster.PixelRect
import BoothJPEG
@testable import BoothLayout
import BoothTestSupport
import Foundation
import Testing

@Suite("Background image with Exif Orientation")
struct BackgroundOrientationTests {
    @Test("a background_image with Orientation 6 (camera turned) composes upright", arguments: [6, 8, 3, 2])
    func backgroundUpright(orientation: Int) throws {
        // A real photo, 300x200 (the 4x6 sheet's aspect) upright, red at its top-left, green at its top-right.
        let url = try #require(SharedImages.captures(endingIn: "_1280x720.jpg").first,
                               Comment(rawValue: SharedImages.missingMessage("_1280x720.jpg")))
        let full = try JPEGDecoder().decodeRGB(try SharedImages.bytes(url), scale: .half)  // 640x360
        let w = 300, h = 200
        let upright = EXIFFixture.markedCrop(full.bytes, sourceWidth: full.size.width, x: 170, y: 80, width: w, height: h)
        let stored = EXIFFixture.stored(upright, width: w, height: h, orientation: orientation)
        let encoded = try JPEGEncoder().encode(Frame(format: .rgb24, size: stored.size, bytesPerLine: stored.size.width * 3,
                                                     bytes: stored.bytes, timestamp: MonotonicInstant(nanoseconds: 0),
                                                     sequence: 0), quality: 95)
        let path = Fixture.temporaryPath("background-\(orientation).jpg")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(EXIFFixture.inserting(EXIFFixture.app1(orientation: orientation), into: encoded)).write(to: URL(fileURLWithPath: path))

        let composer = try PictureComposer(options: PictureOptions(layout: .single, dpi: 100, backgroundImage: path))
        let capture = try Fixture.solidJPEG(width: 640, height: 426, r: 0, g: 0, b: 255)
        let plan = try composer.render(captures: [capture], takenAt: Date())
        #expect(plan.sheet == FrameSize(width: 600, height: 400))
        let p = try #require(composer.canvasPlanes())
        // In the margin, outside the capture's slot: the background's corners, at twice its size.
        let slot = plan.placements[0].destination
        for (x, y) in [(4, 4), (595, 4)] {
            #expect(!(slot.x...slot.maxX).contains(x) || !(slot.y...slot.maxY).contains(y), "(\(x), \(y)) is background")
        }
        func cr(_ x: Int, _ y: Int) -> Int { Int(p.cr[(y / 2) * p.chromaStride + x / 2]) }
        func luma(_ x: Int, _ y: Int) -> Int { Int(p.y[y * p.lumaStride + x]) }
        // Full-range BT.601: red is Y' 76, Cr 255; green Y' 150, Cr 21.
        #expect(cr(4, 4) > 200 && abs(luma(4, 4) - 76) < 20, "orientation \(orientation): red top-left, got Y' \(luma(4, 4)) Cr \(cr(4, 4))")
        #expect(cr(595, 4) < 60 && abs(luma(595, 4) - 150) < 20,
                "orientation \(orientation): green top-right, got Y' \(luma(595, 4)) Cr \(cr(595, 4))")
    }
}
