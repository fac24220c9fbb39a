import BoothCore

/// JPEGs as a camera held sideways writes them, made by the tests without the code under test:
/// upright RGB24 pixels stored turned or mirrored as Exif Orientation 1…8 says (Exif 2.32 §4.6.4 A:
/// which visual side row 0 and column 0 are on), and an `APP1` `Exif` segment carrying the tag.
public enum EXIFFixture {
    /// The pixels a camera stores for an `upright` image (RGB24, `width` × `height`, rows packed)
    /// when it writes Orientation `orientation` (1…8), and their size (width and height swap for 5…8).
    public static func stored(_ upright: [UInt8], width w: Int, height h: Int, orientation: Int) -> (bytes: [UInt8], size: FrameSize) {
        let size = orientation >= 5 ? FrameSize(width: h, height: w) : FrameSize(width: w, height: h)
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<size.height {
            for x in 0..<size.width {
                // Stored (x, y) shows upright (ux, uy).
                let (ux, uy): (Int, Int)
                switch orientation {
                case 2: (ux, uy) = (w - 1 - x, y)  // row 0 top, column 0 right
                case 3: (ux, uy) = (w - 1 - x, h - 1 - y)  // bottom, right
                case 4: (ux, uy) = (x, h - 1 - y)  // bottom, left
                case 5: (ux, uy) = (y, x)  // row 0 left, column 0 top
                case 6: (ux, uy) = (w - 1 - y, x)  // right, top
                case 7: (ux, uy) = (w - 1 - y, h - 1 - x)  // right, bottom
                case 8: (ux, uy) = (y, h - 1 - x)  // left, bottom
                default: (ux, uy) = (x, y)
                }
                let s = (uy * w + ux) * 3, d = (y * size.width + x) * 3
                out[d] = upright[s]; out[d + 1] = upright[s + 1]; out[d + 2] = upright[s + 2]
            }
        }
        return (out, size)
    }

    /// An `APP1` segment (`FF E1`, length, `Exif\0\0`, TIFF) whose IFD0 holds ImageDescription
    /// (`0x010E`, ASCII, stored past the IFD) and Orientation (`0x0112`, SHORT, `orientation`), in
    /// Intel (`II`) or Motorola (`MM`) byte order.
    public static func app1(orientation: Int, bigEndian: Bool = false) -> [UInt8] {
        var tiff: [UInt8] = []
        func u16(_ v: Int) { tiff += bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) {
            let b = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
            tiff += bigEndian ? b.reversed() : b
        }
        tiff += bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        u16(42); u32(8)
        let description = Array("booth test\0".utf8)
        u16(2)  // entries
        u16(0x010E); u16(2); u32(description.count); u32(8 + 2 + 2 * 12 + 4)
        u16(0x0112); u16(3); u32(1); u16(orientation); u16(0)
        u32(0)  // no IFD1
        tiff += description
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// The private values ``cameraApp1()`` and ``xmpApp1()`` carry: none may reach a guest.
    public static let privateValues = ["SN-4711-BODY", "DNG-SN-31337", "SN-0042-LENS", "Anna Example", "MAKERNOTE-0815", "52,31.2N", "xap/1.0",
                                       "Ben Artist", "(c) Ben Artist", "UNIQUE-ID-0001"]
    /// Values ``cameraApp1()`` carries that a guest may keep.
    public static let keptValues = ["TestMaker", "Test Camera R1", "2026:12:01 20:15:00"]

    /// An `APP1` `Exif` segment as a DSLR writes it (Intel order), built by hand: IFD0 with Make,
    /// Model, Orientation 1, CameraSerialNumber (`0xC62F`) and the pointers; the Exif IFD with
    /// DateTimeOriginal, MakerNote (`0x927C`), CameraOwnerName (`0xA430`), BodySerialNumber
    /// (`0xA431`), LensSerialNumber (`0xA435`); the GPS IFD with version, latitude and longitude.
    public static func cameraApp1() -> [UInt8] {
        typealias Entry = (tag: Int, type: Int, count: Int, value: [UInt8])
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        func ascii(_ tag: Int, _ text: String) -> Entry { let b = Array(text.utf8) + [0]; return (tag, 2, b.count, b) }
        func rationals(_ tag: Int, _ r: [(Int, Int)]) -> Entry { (tag, 5, r.count, r.flatMap { le32($0.0) + le32($0.1) }) }
        /// An IFD at `offset` with its values after it (none next).
        func ifd(_ entries: [Entry], at offset: Int) -> [UInt8] {
            var head = le16(entries.count), values: [UInt8] = []
            let valuesAt = offset + 2 + 12 * entries.count + 4
            for e in entries.sorted(by: { $0.tag < $1.tag }) {
                head += le16(e.tag) + le16(e.type) + le32(e.count)
                if e.value.count <= 4 {
                    head += e.value + [UInt8](repeating: 0, count: 4 - e.value.count)
                } else {
                    head += le32(valuesAt + values.count)
                    values += e.value + (e.value.count % 2 == 1 ? [0] : [])
                }
            }
            return head + le32(0) + values
        }
        let gps: [Entry] = [(0x0000, 1, 4, [2, 3, 0, 0]), ascii(0x0001, "N"), rationals(0x0002, [(52, 1), (31, 1), (1234, 100)]),
                            ascii(0x0003, "E"), rationals(0x0004, [(13, 1), (24, 1), (5678, 100)])]
        let exif: [Entry] = [ascii(0x9003, "2026:12:01 20:15:00"), (0x927C, 7, 14, Array("MAKERNOTE-0815".utf8)), ascii(0xA420, "UNIQUE-ID-0001"),
                             ascii(0xA430, "Anna Example"), ascii(0xA431, "SN-4711-BODY"), ascii(0xA435, "SN-0042-LENS")]
        func ifd0(exifAt: Int, gpsAt: Int) -> [Entry] {
            [ascii(0x010F, "TestMaker"), ascii(0x0110, "Test Camera R1"), (0x0112, 3, 1, le16(1)), ascii(0x013B, "Ben Artist"),
             ascii(0x8298, "(c) Ben Artist"),
             (0x8769, 4, 1, le32(exifAt)), (0x8825, 4, 1, le32(gpsAt)), ascii(0xC62F, "DNG-SN-31337")]
        }
        let first = ifd(ifd0(exifAt: 0, gpsAt: 0), at: 8)
        let exifAt = 8 + first.count
        let exifIFD = ifd(exif, at: exifAt)
        let gpsAt = exifAt + exifIFD.count
        let tiff = [0x49, 0x49] + le16(42) + le32(8) + ifd(ifd0(exifAt: exifAt, gpsAt: gpsAt), at: 8) + exifIFD + ifd(gps, at: gpsAt)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// An `APP1` XMP packet repeating a position and a serial number, as editors and some cameras write it.
    public static func xmpApp1() -> [UInt8] {
        let packet = "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF><rdf:Description "
            + "exif:GPSLatitude=\"52,31.2N\" aux:SerialNumber=\"SN-4711-BODY\"/></rdf:RDF></x:xmpmeta>"
        let payload = Array(packet.utf8)
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// An `APP13` IPTC block with a by-line and a city, as agencies' cameras write it.
    public static func iptcApp13() -> [UInt8] {
        let payload = Array("Photoshop 3.0\0".utf8) + Array("8BIM".utf8) + [0x04, 0x04, 0, 0] + Array("by-line Ben Artist, city Example".utf8)
        return [0xFF, 0xED, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// `jpeg` as a DSLR would write it: ``cameraApp1()``, ``xmpApp1()`` and ``iptcApp13()`` after
    /// SOI (and APP0); with `preview`, that JPEG appended after the EOI with its own ``cameraApp1()``
    /// (the preview image MPF files carry).
    public static func cameraJPEG(_ jpeg: [UInt8], preview: [UInt8]? = nil) -> [UInt8] {
        inserting(cameraApp1() + xmpApp1() + iptcApp13(), into: jpeg) + (preview.map { inserting(cameraApp1(), into: $0) } ?? [])
    }

    /// `jpeg` with `segment` inserted after SOI and a JFIF `APP0` if there is one (where cameras put Exif).
    public static func inserting(_ segment: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        var at = 2
        if jpeg.count > 6, jpeg[2] == 0xFF, jpeg[3] == 0xE0 { at = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5])) }
        return Array(jpeg[0..<at]) + segment + Array(jpeg[at...])
    }

    /// Paints a `size` × `size` square of `rgb` at the top-left corner of an RGB24 image (a marker a
    /// test finds again after the turn: a wrong turn or mirror moves it to another corner).
    public static func paintCorner(_ image: inout [UInt8], width: Int, size: Int, rgb: (UInt8, UInt8, UInt8)) {
        for y in 0..<size {
            for x in 0..<size {
                let i = (y * width + x) * 3
                image[i] = rgb.0; image[i + 1] = rgb.1; image[i + 2] = rgb.2
            }
        }
    }

    /// A `width` × `height` crop at (`x`, `y`) of an RGB24 image `sourceWidth` pixels wide, upright, with
    /// 40-pixel markers: red at its top-left, green at its top-right (which side is which after a turn).
    public static func markedCrop(_ source: [UInt8], sourceWidth: Int, x: Int, y: Int, width w: Int, height h: Int) -> [UInt8] {
        var upright = [UInt8](repeating: 0, count: w * h * 3)
        for row in 0..<h {
            let s = ((row + y) * sourceWidth + x) * 3
            upright.replaceSubrange((row * w * 3)..<((row + 1) * w * 3), with: source[s..<(s + w * 3)])
        }
        paintCorner(&upright, width: w, size: 40, rgb: (255, 0, 0))
        for row in 0..<40 {
            for col in (w - 40)..<w { let i = (row * w + col) * 3; upright[i] = 0; upright[i + 1] = 255; upright[i + 2] = 0 }
        }
        return upright
    }
}
