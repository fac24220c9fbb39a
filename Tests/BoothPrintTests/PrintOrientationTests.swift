import BoothCore
import BoothJPEG
import BoothPrint
import BoothTestSupport
import Foundation
import Testing

@Suite("test-print FILE: a JPEG with Exif Orientation prints upright")
struct PrintOrientationTests {
    @Test("the page of a JPEG stored turned or mirrored is upright, for all eight orientations", arguments: 1...8)
    func pageUpright(orientation: Int) throws {
        let url = try #require(SharedImages.captures(endingIn: "_1280x720.jpg").first,
                               Comment(rawValue: SharedImages.missingMessage("_1280x720.jpg")))
        let full = try JPEGDecoder().decodeRGB(try SharedImages.bytes(url), scale: .half)  // 640x360
        // Upright 360x240 (the 4x6 page's aspect), red at the top-left, green at the top-right.
        let w = 360, h = 240
        let upright = EXIFFixture.markedCrop(full.bytes, sourceWidth: full.size.width, x: 100, y: 60, width: w, height: h)
        let stored = EXIFFixture.stored(upright, width: w, height: h, orientation: orientation)
        let encoded = try JPEGEncoder().encode(Frame(format: .rgb24, size: stored.size, bytesPerLine: stored.size.width * 3,
                                                     bytes: stored.bytes, timestamp: MonotonicInstant(nanoseconds: 0),
                                                     sequence: 0), quality: 95)
        let jpeg = EXIFFixture.inserting(EXIFFixture.app1(orientation: orientation, bigEndian: true), into: encoded)
        let page = try PrintRenderer().render(jpeg, to: FrameSize(width: 720, height: 480))
        let image = try JPEGDecoder().decodeRGB(page)
        #expect(image.size == FrameSize(width: 720, height: 480))
        func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (y * image.size.width + x) * 3
            return (Int(image.bytes[i]), Int(image.bytes[i + 1]), Int(image.bytes[i + 2]))
        }
        let tl = rgb(20, 20), tr = rgb(699, 20)
        #expect(tl.0 > 200 && tl.1 < 60 && tl.2 < 60, "orientation \(orientation): red top-left, got \(tl)")
        #expect(tr.0 < 60 && tr.1 > 200 && tr.2 < 60, "orientation \(orientation): green top-right, got \(tr)")
        #expect(try !JPEGMarkers.segments(page).contains { $0.marker == 0xE1 }, "the spooled page carries no Exif to turn it again")
    }
}
