import BoothCore
import BoothJPEG
import BoothTestSupport
import Foundation
import Testing

/// The shared real photos (`<package>/../shared/images/captures`, or `$PHOTOBOOTH_SHARED_IMAGES`).
@Suite struct RealCaptureTests {
    @Test func capturesValidateAndSurviveDHTStripAndInsert() throws {
        let files = SharedImages.captures()
        guard !files.isEmpty else {
            Issue.record("missing prerequisite: \(SharedImages.missingMessage())")
            return
        }
        let decoder = try JPEGDecoder()
        for url in files {
            let name = url.lastPathComponent
            let jpeg = try SharedImages.bytes(url)
            #expect(decoder.validate(jpeg), "\(name)")
            // Names are <scene>_<W>x<H>.jpg.
            let sizeText = name.dropLast(4).split(separator: "_").last.map(String.init) ?? ""
            #expect(try decoder.header(jpeg).size == FrameSize(parsing: sizeText), "\(name)")
            #expect(try JPEGMarkers.hasHuffmanTables(jpeg), "\(name)")
            #expect(sameBytes(try JPEGMarkers.insertingStandardHuffmanTables(jpeg), jpeg), "\(name)")
            #expect(!decoder.validate(Array(jpeg.prefix(jpeg.count * 3 / 4))), "\(name) truncated")

            let tables = try JPEGMarkers.segments(jpeg).filter { $0.marker == JPEGMarkers.dht }.flatMap { jpeg[$0.payload] }
            guard sameBytes(tables, Array(JPEGMarkers.standardHuffmanTablesSegment.dropFirst(4))) else {
                print("RealCaptureTests: \(name) uses its own (optimised) Huffman tables; strip/insert not applicable")
                continue
            }
            let fixed = try JPEGMarkers.insertingStandardHuffmanTables(try strippingHuffmanTables(jpeg))
            #expect(!sameBytes(fixed, jpeg) && fixed.count == jpeg.count - 4 * 4 - 416 + 420, "\(name)")
            #expect(decoder.validate(fixed), "\(name)")
            let original = try decoder.decodeRGB(jpeg), reinserted = try decoder.decodeRGB(fixed)
            #expect(original.size == reinserted.size && sameBytes(original.bytes, reinserted.bytes), "\(name)")
        }
    }
}
