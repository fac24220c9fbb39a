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
                == [.gpsPosition, .bodySerialNumber, .lensSerialNumber, .ownerName, .makerNote, .otherTags, .xmp, .otherSegments])

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
        #expect(!Self.contains(served, "Photoshop 3.0"), "no IPTC")
    }

    @Test("the booth's own JPEGs are served as stored; an Exif keeps only the kept tags (Orientation, both byte orders)")
    func clean() throws {
        let plain = try Self.plainJPEG()
        #expect(try EXIFPrivacy.served(plain) == nil)
        #expect(try EXIFPrivacy.served(plain, imageEnd: Int64(plain.count), fileSize: Int64(plain.count)) == nil, "ends at its EOI")
        for bigEndian in [false, true] {
            let jpeg = EXIFFixture.inserting(EXIFFixture.app1(orientation: 6, bigEndian: bigEndian), into: plain)
            let p = try #require(try EXIFPrivacy.served(jpeg))
            #expect(p.removed == [.otherTags], "ImageDescription is not on the list")
            let served = p.header + jpeg[p.replacing...]
            #expect(EXIFOrientationTag.find(in: served)?.value == 6, "Orientation kept")
            #expect(!Self.contains(served, "booth test"))
        }
    }

    @Test("a preview image appended after the EOI (MPF) is not served, nor its Exif; the EOI is found past stuffed FF 00")
    func trailing() throws {
        let plain = try Self.plainJPEG()
        let camera = EXIFFixture.cameraJPEG(plain, preview: plain)
        #expect(EXIFPrivacy.privateFields(in: camera).contains(.trailingData))
        let sos = try #require(try JPEGMarkers.segments(camera).last).offset
        let end = try #require(EXIFPrivacy.imageEnd(in: camera, from: sos))
        let p = try #require(try EXIFPrivacy.served(camera, imageEnd: end, fileSize: Int64(camera.count)))
        let served = p.header + camera[p.replacing..<Int(end)]
        #expect(Int64(served.count) == p.servedSize(fileSize: Int64(camera.count)))
        #expect(Array(served.suffix(2)) == [0xFF, 0xD9])
        #expect(EXIFFixture.privateValues.filter { Self.contains(served, $0) } == [], "the preview's Exif is not served")
        let same = try JPEGDecoder().decodeRGB(served).bytes == (try JPEGDecoder().decodeRGB(plain).bytes)
        #expect(same, "the primary image")
        #expect(EXIFPrivacy.imageEnd(in: plain, from: try #require(try JPEGMarkers.segments(plain).last).offset) == Int64(plain.count))
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
