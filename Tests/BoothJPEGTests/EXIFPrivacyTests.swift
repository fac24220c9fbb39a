import BoothCore
@testable import BoothJPEG
import BoothTestSupport
import Testing

@Suite("Served JPEGs carry no GPS position, serial number, owner or maker note (libexif)")
struct EXIFPrivacyTests {
    /// A 320x240 gradient as the booth's encoder writes it (no Exif of its own).
    static func plainJPEG() throws -> [UInt8] {
        let size = FrameSize(width: 320, height: 240)
        var rgb = [UInt8](repeating: 0, count: size.width * size.height * 3)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let i = (y * size.width + x) * 3
                rgb[i] = UInt8(x * 255 / size.width); rgb[i + 1] = UInt8(y * 255 / size.height); rgb[i + 2] = 128
            }
        }
        let frame = Frame(format: .rgb24, size: size, bytesPerLine: size.width * 3, bytes: rgb,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return try JPEGEncoder().encode(frame, quality: 90)
    }

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard needle.count <= bytes.count else { return false }
        return (0...(bytes.count - needle.count)).contains { i in bytes[i..<(i + needle.count)].elementsEqual(needle) }
    }

    @Test("a DSLR's JPEG: served without the fields, Make, Model, date and Orientation kept, pixels the file's own")
    func camera() throws {
        let plain = try Self.plainJPEG()
        let camera = EXIFFixture.cameraJPEG(plain)
        #expect(EXIFFixture.privateValues.filter { !Self.contains(camera, $0) } == [], "the fixture carries them all")
        #expect(Set(EXIFPrivacy.privateFields(in: camera))
                == [.gpsPosition, .bodySerialNumber, .lensSerialNumber, .cameraOwnerName, .makerNote, .xmp])

        let privacy = try #require(try EXIFPrivacy.served(camera))
        let served = privacy.header + camera[privacy.replacing...]
        #expect(Int64(served.count) == privacy.servedSize(fileSize: Int64(camera.count)))
        #expect(EXIFFixture.privateValues.filter { Self.contains(served, $0) } == [], "none of them is served")
        #expect(EXIFFixture.keptValues.filter { !Self.contains(served, $0) } == [], "all of these are kept")
        #expect(EXIFPrivacy.privateFields(in: served).isEmpty, "libexif finds no GPS IFD and none of the tags in what is served")
        #expect(EXIFOrientationTag.find(in: served)?.value == 1)
        // The compressed data is the file's: the same pixels, the same bytes from the first scan on.
        let scan = plain.count - (try #require(try JPEGMarkers.segments(plain).last?.offset))
        #expect(served.suffix(scan).elementsEqual(plain.suffix(scan)))
        let same = try JPEGDecoder().decodeRGB(served).bytes == (try JPEGDecoder().decodeRGB(plain).bytes)
        #expect(same, "the same pixels")
        #expect(try EXIFPrivacy.served(served) == nil, "stripping again finds nothing")
    }

    @Test("the booth's own JPEGs and harmless Exif are served as stored")
    func clean() throws {
        let plain = try Self.plainJPEG()
        #expect(try EXIFPrivacy.served(plain) == nil)
        #expect(try EXIFPrivacy.served(EXIFFixture.inserting(EXIFFixture.app1(orientation: 1), into: plain)) == nil)
        #expect(try EXIFPrivacy.served(EXIFFixture.inserting(EXIFFixture.app1(orientation: 1, bigEndian: true), into: plain)) == nil)
    }

    @Test("only the GPS IFD, or only the XMP packet, is removed on its own")
    func single() throws {
        let plain = try Self.plainJPEG()
        let xmp = EXIFFixture.inserting(EXIFFixture.xmpApp1(), into: plain)
        let p = try #require(try EXIFPrivacy.served(xmp))
        #expect(p.removed == [.xmp])
        let rest = p.header + xmp[p.replacing...] == plain
        #expect(rest, "the XMP segment out, everything else as it was")
    }

    @Test("damaged Exif is left out; a prefix without its scan asks for more; not a JPEG is an error")
    func damaged() throws {
        let plain = try Self.plainJPEG()
        let payload = Array("Exif".utf8) + [0, 0] + Array("XX not a TIFF header at all".utf8)
        let bad = EXIFFixture.inserting([0xFF, 0xE1, 0, UInt8(payload.count + 2)] + payload, into: plain)
        let p = try #require(try EXIFPrivacy.served(bad))
        #expect(p.removed == [.unreadableExif])
        let rest = p.header + bad[p.replacing...] == plain
        #expect(rest, "the damaged segment out, everything else as it was")

        let camera = EXIFFixture.cameraJPEG(plain)
        #expect(throws: JPEGMarkerError.self) { try EXIFPrivacy.served(Array(camera.prefix(300))) }
        do {
            _ = try EXIFPrivacy.served(Array(camera.prefix(300)))
        } catch .truncated, .missingStartOfScan {
            // what a caller answers by reading more
        } catch {
            Issue.record("a short prefix gives \(error), not .truncated or .missingStartOfScan")
        }
        #expect(throws: JPEGMarkerError.missingStartOfImage) { try EXIFPrivacy.served(Array("<html>".utf8)) }
    }
}
