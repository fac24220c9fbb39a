/// A problem found while walking the marker segments of a JPEG stream (ITU-T T.81 Annex B).
/// Offsets are byte offsets into the input.
public enum JPEGMarkerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input does not begin with SOI (`FF D8`); also thrown for empty input.
    case missingStartOfImage
    /// The input ends inside the marker or segment that starts at `offset`.
    case truncated(offset: Int)
    /// A byte other than `FF` where a marker was expected.
    case expectedMarker(offset: Int, found: UInt8)
    /// A marker that cannot appear before the first scan (e.g. a second SOI, EOI, RSTn, `FF 00`).
    case unexpectedMarker(offset: Int, marker: UInt8)
    /// A segment length field below 2 (it counts its own two bytes).
    case invalidLength(offset: Int, length: Int)
    /// No start-of-frame segment (SOFn) before the first scan.
    case missingStartOfFrame
    /// The markers end without a start-of-scan segment (SOS, `FF DA`).
    case missingStartOfScan

    public var description: String {
        switch self {
        case .missingStartOfImage: return "JPEG: no SOI marker (FF D8) at offset 0"
        case .truncated(let offset): return "JPEG: data ends inside the segment at offset \(offset)"
        case .expectedMarker(let offset, let found):
            return "JPEG: expected a marker (FF) at offset \(offset), found \(JPEGMarkers.hex(found))"
        case .unexpectedMarker(let offset, let marker):
            return "JPEG: unexpected marker FF \(JPEGMarkers.hex(marker)) at offset \(offset) before the first scan"
        case .invalidLength(let offset, let length):
            return "JPEG: invalid segment length \(length) at offset \(offset)"
        case .missingStartOfFrame: return "JPEG: no SOFn segment before the first scan"
        case .missingStartOfScan: return "JPEG: no SOS segment (FF DA)"
        }
    }
}

/// One marker segment of a JPEG stream: `FF marker`, a 16-bit big-endian length, then the payload.
public struct JPEGSegment: Equatable, Sendable {
    /// The marker code, the byte after `FF` (e.g. `0xC4` for DHT, `0xDA` for SOS).
    public var marker: UInt8
    /// Byte offset of the `FF` that starts the marker.
    public var offset: Int
    /// The segment's length field: payload bytes + 2 (the length field itself), not counting the marker.
    public var length: Int

    public init(marker: UInt8, offset: Int, length: Int) {
        self.marker = marker
        self.offset = offset
        self.length = length
    }

    /// Byte range of the payload (after the length field).
    public var payload: Range<Int> { (offset + 4)..<(offset + 2 + length) }
    /// Byte range of the whole segment, marker included.
    public var range: Range<Int> { offset..<(offset + 2 + length) }
}

/// A small, bounds-checked JPEG marker parser (ITU-T T.81 Annex B), and the standard Huffman
/// tables (Annex K.3) that MJPEG cameras omit. Never traps on malformed input: every problem is a
/// thrown `JPEGMarkerError` or a `false`.
public enum JPEGMarkers {
    /// Start of image.
    public static let soi: UInt8 = 0xD8
    /// End of image.
    public static let eoi: UInt8 = 0xD9
    /// Start of scan.
    public static let sos: UInt8 = 0xDA
    /// Define Huffman table(s).
    public static let dht: UInt8 = 0xC4

    /// True for the start-of-frame markers SOF0–SOF15 (`C0`–`CF`) except DHT (`C4`), JPG (`C8`) and DAC (`CC`).
    public static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// The segments from the one after SOI up to and including the first SOS, in stream order.
    /// Fill bytes (`FF FF …`) before a marker are skipped. Throws `JPEGMarkerError` on missing SOI,
    /// a stray byte, a marker that cannot occur before a scan, a bad length, truncation, or no SOS.
    public static func segments(_ bytes: [UInt8]) throws(JPEGMarkerError) -> [JPEGSegment] {
        guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == soi else { throw .missingStartOfImage }
        var result: [JPEGSegment] = []
        var i = 2
        while true {
            guard i < bytes.count else { throw .missingStartOfScan }
            guard bytes[i] == 0xFF else { throw .expectedMarker(offset: i, found: bytes[i]) }
            let start = i
            // Any number of FF fill bytes may precede a marker (B.1.1.2).
            while i < bytes.count, bytes[i] == 0xFF { i += 1 }
            guard i < bytes.count else { throw .truncated(offset: start) }
            let marker = bytes[i]
            let markerOffset = i - 1
            i += 1
            switch marker {
            case 0x00, 0x01, 0xD0...0xD9:
                // Stuffed zero, TEM, RSTn, SOI, EOI: none belongs between SOI and the first SOS.
                throw .unexpectedMarker(offset: markerOffset, marker: marker)
            default:
                break
            }
            guard i + 1 < bytes.count else { throw .truncated(offset: markerOffset) }
            let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            guard length >= 2 else { throw .invalidLength(offset: markerOffset, length: length) }
            let segment = JPEGSegment(marker: marker, offset: markerOffset, length: length)
            guard segment.range.upperBound <= bytes.count else { throw .truncated(offset: markerOffset) }
            result.append(segment)
            if marker == sos { return result }
            i = segment.range.upperBound
        }
    }

    /// True when the bytes begin with SOI (`FF D8`).
    public static func startsWithSOI(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == soi
    }

    /// True when the bytes end with EOI (`FF D9`), ignoring trailing `00` padding (some UVC
    /// cameras pad MJPEG buffers with zeros after EOI).
    public static func endsWithEOI(_ bytes: [UInt8]) -> Bool {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x00 { end -= 1 }
        return end >= 2 && bytes[end - 2] == 0xFF && bytes[end - 1] == eoi
    }

    /// True when a DHT segment precedes the first scan. Throws `JPEGMarkerError` when the markers
    /// cannot be parsed.
    public static func hasHuffmanTables(_ bytes: [UInt8]) throws(JPEGMarkerError) -> Bool {
        try segments(bytes).contains { $0.marker == dht }
    }

    /// The bytes with the standard Huffman tables (`standardHuffmanTablesSegment`, T.81 Annex K.3)
    /// inserted as one DHT segment just before the first SOS, for the Huffman-coded sequential
    /// frames (SOF0 baseline, SOF1 extended) that MJPEG cameras send without tables. Lossless: every
    /// other byte, the entropy-coded data included, is kept as it was.
    ///
    /// Returns the input unchanged when a DHT segment already precedes the first scan, or when the
    /// frame is not SOF0/SOF1 (progressive, lossless and arithmetic-coded frames are not given
    /// default tables). Throws `JPEGMarkerError` when the markers cannot be parsed or there is no
    /// SOFn before the SOS.
    public static func insertingStandardHuffmanTables(_ bytes: [UInt8]) throws(JPEGMarkerError) -> [UInt8] {
        let list = try segments(bytes)
        guard let frame = list.first(where: { isStartOfFrame($0.marker) }) else { throw .missingStartOfFrame }
        if list.contains(where: { $0.marker == dht }) { return bytes }
        guard frame.marker == 0xC0 || frame.marker == 0xC1 else { return bytes }
        // `segments` ends with the SOS it found.
        guard let scan = list.last, scan.marker == sos else { throw .missingStartOfScan }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + standardHuffmanTablesSegment.count)
        out.append(contentsOf: bytes[0..<scan.offset])
        out.append(contentsOf: standardHuffmanTablesSegment)
        out.append(contentsOf: bytes[scan.offset...])
        return out
    }

    /// One DHT segment (`FF C4`, length 418) holding the four tables of ITU-T T.81 Annex K.3
    /// (Tables K.3–K.6): luminance DC (class 0, id 0), luminance AC (class 1, id 0),
    /// chrominance DC (class 0, id 1), chrominance AC (class 1, id 1). 420 bytes.
    public static let standardHuffmanTablesSegment: [UInt8] = {
        let tables: [(classAndID: UInt8, counts: [UInt8], values: [UInt8])] = [
            (0x00, dcLuminanceCounts, dcValues),
            (0x10, acLuminanceCounts, acLuminanceValues),
            (0x01, dcChrominanceCounts, dcValues),
            (0x11, acChrominanceCounts, acChrominanceValues),
        ]
        var payload: [UInt8] = []
        for table in tables {
            payload.append(table.classAndID)
            payload.append(contentsOf: table.counts)
            payload.append(contentsOf: table.values)
        }
        let length = payload.count + 2
        return [0xFF, dht, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }()

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    // Table K.3: number of luminance DC codes of each length 1…16.
    static let dcLuminanceCounts: [UInt8] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    // Table K.4.
    static let dcChrominanceCounts: [UInt8] = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    // DC symbols are the magnitude categories 0…11 for both.
    static let dcValues: [UInt8] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    // Table K.5.
    static let acLuminanceCounts: [UInt8] = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D]
    static let acLuminanceValues: [UInt8] = [
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
        0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0,
        0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28,
        0x29, 0x2A, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
        0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
        0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
        0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
        0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5,
        0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2,
        0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
        0xF9, 0xFA,
    ]
    // Table K.6.
    static let acChrominanceCounts: [UInt8] = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]
    static let acChrominanceValues: [UInt8] = [
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
        0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xA1, 0xB1, 0xC1, 0x09, 0x23, 0x33, 0x52, 0xF0,
        0x15, 0x62, 0x72, 0xD1, 0x0A, 0x16, 0x24, 0x34, 0xE1, 0x25, 0xF1, 0x17, 0x18, 0x19, 0x1A, 0x26,
        0x27, 0x28, 0x29, 0x2A, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
        0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
        0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
        0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5,
        0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3,
        0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA,
        0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
        0xF9, 0xFA,
    ]
}
