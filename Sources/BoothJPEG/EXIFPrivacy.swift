import CExif
import Glibc

/// What a JPEG's metadata can tell about who took it and where, which the gallery does not hand to
/// guests (a DSLR writes them; a webcam's frames and the booth's own pictures have none).
public enum EXIFPrivateField: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The GPS IFD (Exif tag `0x8825` and everything under it): position, altitude, time, direction.
    case gpsPosition = "GPS position"
    /// `BodySerialNumber` (`0xA431`, Exif IFD); `CameraSerialNumber` (`0xC62F`, DNG, IFD0).
    case bodySerialNumber = "camera serial number"
    /// `LensSerialNumber` (`0xA435`).
    case lensSerialNumber = "lens serial number"
    /// `CameraOwnerName` (`0xA430`), `Artist` (`0x013B`), `Copyright` (`0x8298`): where a camera's
    /// owner and author settings put a name.
    case ownerName = "owner's name"
    /// `MakerNote` (`0x927C`): the maker's own block, where Canon, Nikon and Sony keep the serial number.
    case makerNote = "maker note"
    /// The IFD1 thumbnail, which can carry an Exif of its own.
    case thumbnail = "thumbnail"
    /// Any other tag outside the kept list (``EXIFPrivacy/keptTags``), `ImageUniqueID` among them,
    /// and whatever libexif does not read (a third IFD, the Interoperability IFD).
    case otherTags = "other Exif tags"
    /// An `APP1` XMP packet (`http://ns.adobe.com/xap/1.0/`, and extended XMP): it can repeat all of the above.
    case xmp = "XMP packet"
    /// Other metadata segments: `APPn` but JFIF (`APP0`), ICC profile (`APP2`), Adobe (`APP14`) and
    /// the first Exif; `COM` comments. IPTC (`APP13`: by-line, city) and MPF (`APP2`) are among them.
    case otherSegments = "other metadata segments"
    /// Bytes after the image's end (EOI): the preview image a camera appends (MPF), with its own Exif.
    case trailingData = "data after the image"
    /// An Exif segment libexif found damaged: served without it, since what it holds cannot be known.
    case unreadableExif = "damaged Exif"

    public var description: String { rawValue }
}

/// The bytes a JPEG is served with: its marker segments up to the first scan on an allow-list
/// (JFIF, ICC profile, Adobe, the tables and frame headers) and an Exif written again by libexif
/// (`exif_data_load_data`, `exif_content_remove_entry`, `exif_data_save_data`) with only
/// ``keptTags`` and no thumbnail; then the file's own compressed data from its first SOS up to and
/// including its EOI, byte for byte. So a server sends `header`, then the file from `replacing` to
/// `end` (`sendfile` of the whole file where nothing changes). The stored file is never changed.
public struct EXIFPrivacy: Sendable, Equatable {
    /// The bytes that stand for the file's first `replacing` bytes: SOI and the segments kept.
    public var header: [UInt8]
    /// How many of the file's bytes `header` replaces: the offset of its first SOS segment.
    public var replacing: Int
    /// Where the served part of the file ends (just past its EOI); nil: at the file's end.
    public var end: Int64?
    /// What was left out, in the order found.
    public var removed: [EXIFPrivateField]

    /// Served length of a file of `fileSize` bytes.
    public func servedSize(fileSize: Int64) -> Int64 { Int64(header.count) + (end ?? fileSize) - Int64(replacing) }

    /// The tags kept, by IFD (libexif's `EXIF_IFD_0`, `EXIF_IFD_EXIF`): what the photo is and how it
    /// was exposed, nothing about who or where. Every other IFD (GPS, IFD1, Interoperability) is emptied.
    public static let keptTags: [Int32: Set<UInt32>] = [
        // Make, Model, Orientation, X/YResolution, ResolutionUnit, DateTime, YCbCrPositioning.
        Int32(EXIF_IFD_0.rawValue): [0x010F, 0x0110, 0x0112, 0x011A, 0x011B, 0x0128, 0x0132, 0x0213],
        // Exposure time, F-number, program, ISO, sensitivity type and index, Exif version, the dates
        // and their offsets and sub-seconds, components, shutter, aperture, bias, max aperture,
        // metering, light source, flash, focal length, Flashpix version, colour space, pixel size,
        // rendering, exposure mode, white balance, zoom, 35 mm focal length, scene type, lens
        // specification, make and model.
        Int32(EXIF_IFD_EXIF.rawValue): [0x829A, 0x829D, 0x8822, 0x8827, 0x8830, 0x8832, 0x9000, 0x9003, 0x9004, 0x9010, 0x9011,
                                        0x9012, 0x9101, 0x9201, 0x9202, 0x9204, 0x9205, 0x9207, 0x9208, 0x9209, 0x920A, 0x9290,
                                        0x9291, 0x9292, 0xA000, 0xA001, 0xA002, 0xA003, 0xA401, 0xA402, 0xA403, 0xA404, 0xA405,
                                        0xA406, 0xA432, 0xA433, 0xA434],
    ]
    /// Tags that say who: reported by name when removed.
    static let namedTags: [UInt32: EXIFPrivateField] = [
        0xA431: .bodySerialNumber, 0xC62F: .bodySerialNumber, 0xA435: .lensSerialNumber,
        0xA430: .ownerName, 0x013B: .ownerName, 0x8298: .ownerName, 0x927C: .makerNote,
    ]
    static let xmpHeaders: [[UInt8]] = [Array("http://ns.adobe.com/xap/1.0/\0".utf8), Array("http://ns.adobe.com/xmp/extension/\0".utf8)]
    static let iccHeader = Array("ICC_PROFILE\0".utf8)
    static let jfifHeader = Array("JFIF\0".utf8)
    static let adobeHeader = Array("Adobe".utf8)

    /// The bytes to serve for the JPEG whose first bytes are `prefix`.
    /// - Parameters:
    ///   - prefix: the file from offset 0, through its first SOS segment at least (the metadata of
    ///     a camera's JPEG lies within its first 64 KiB–1 MiB).
    ///   - imageEnd: the offset just past the file's EOI (``imageEnd(read:from:fileSize:)``); with
    ///     `fileSize` larger, what follows is left out. nil: not looked for.
    /// - Returns: nil when nothing is to be left out (serve the file as it is).
    /// - Throws: ``JPEGMarkerError`` when the markers do not parse up to SOS:
    ///   `.truncated`/`.missingStartOfScan` when `prefix` is too short (read more), anything else
    ///   when the file is not a JPEG that can be served safely.
    public static func served(_ prefix: [UInt8], imageEnd: Int64? = nil, fileSize: Int64? = nil) throws(JPEGMarkerError) -> EXIFPrivacy? {
        let segments = try JPEGMarkers.segments(prefix)
        guard let sos = segments.last, sos.marker == JPEGMarkers.sos else { throw .missingStartOfScan }
        var header: [UInt8] = [0xFF, JPEGMarkers.soi]
        var removed: [EXIFPrivateField] = []
        func note(_ f: EXIFPrivateField) { if !removed.contains(f) { removed.append(f) } }
        var exifSeen = false
        for s in segments.dropLast() {
            let payload = prefix[s.payload]
            switch s.marker {
            case 0xE1 where payload.starts(with: EXIFOrientationTag.exifHeader) && !exifSeen:
                exifSeen = true
                switch exif(payload) {
                case .keep:
                    header += prefix[s.range]
                case let .replace(bytes, fields):
                    fields.forEach(note)
                    header += [0xFF, 0xE1, UInt8((bytes.count + 2) >> 8), UInt8((bytes.count + 2) & 0xFF)]
                    header += bytes
                case .drop:
                    note(.unreadableExif)
                }
            case 0xE1 where xmpHeaders.contains(where: { payload.starts(with: $0) }):
                note(.xmp)
            case 0xE0 where payload.starts(with: jfifHeader), 0xE2 where payload.starts(with: iccHeader),
                 0xEE where payload.starts(with: adobeHeader):
                header += prefix[s.range]
            case 0xE0...0xEF, 0xFE:
                note(.otherSegments)
            default:
                // Tables, frame header, restart interval: the image itself.
                header += prefix[s.range]
            }
        }
        var end: Int64?
        if let imageEnd, let fileSize, imageEnd < fileSize {
            end = imageEnd
            note(.trailingData)
        }
        guard !removed.isEmpty else { return nil }
        return EXIFPrivacy(header: header, replacing: sos.offset, end: end, removed: removed)
    }

    /// The offset just past the first EOI (`FF D9`) after the first scan's start `from`, reading the
    /// file through `read(offset, count)` in 1 MiB pieces; nil when there is none before `fileSize`
    /// (a file cut short: served to its end). In the compressed data `FF` is followed by `00`
    /// (stuffing), `D0`–`D7` (restart markers) or, in a progressive JPEG, the next scan's tables and
    /// SOS; the first `FF D9` ends the primary image.
    public static func imageEnd(read: (Int64, Int) -> [UInt8]?, from: Int64, fileSize: Int64) -> Int64? {
        var at = from
        var previousFF = false
        while at < fileSize {
            guard let chunk = read(at, Int(min(1 << 20, fileSize - at))), !chunk.isEmpty else { return nil }
            for (i, b) in chunk.enumerated() {
                if previousFF && b == JPEGMarkers.eoi { return at + Int64(i) + 1 }
                previousFF = b == 0xFF
            }
            at += Int64(chunk.count)
        }
        return nil
    }

    /// ``imageEnd(read:from:fileSize:)`` of a whole file in memory.
    public static func imageEnd(in jpeg: [UInt8], from: Int) -> Int64? {
        imageEnd(read: { o, n in Array(jpeg[Int(o)..<min(jpeg.count, Int(o) + n)]) }, from: Int64(from), fileSize: Int64(jpeg.count))
    }

    /// The ``EXIFPrivateField``s `jpeg` carries, trailing data included (none for a JPEG whose
    /// markers do not parse).
    public static func privateFields(in jpeg: [UInt8]) -> [EXIFPrivateField] {
        guard let sos = try? JPEGMarkers.segments(jpeg).last else { return [] }
        let end = imageEnd(in: jpeg, from: sos.offset)
        return ((try? served(jpeg, imageEnd: end, fileSize: Int64(jpeg.count))) ?? nil)?.removed ?? []
    }

    enum ExifResult: Equatable { case keep, replace([UInt8], [EXIFPrivateField]), drop }

    /// One `Exif\0\0` APP1 payload written again with ``keptTags`` only and no thumbnail: kept as it
    /// is when that gives the same bytes, left out when libexif finds it damaged or cannot write it.
    static func exif(_ payload: ArraySlice<UInt8>) -> ExifResult {
        guard let data = exif_data_new() else { return .drop }
        defer { exif_data_unref(data) }
        // As the camera wrote it: no tags dropped for being unknown, none added or "fixed".
        exif_data_unset_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        let damaged = payload.withUnsafeBufferPointer { b in pb_exif_load(data, b.baseAddress, UInt32(b.count)) }
        guard damaged == 0 else { return .drop }
        var removed: [EXIFPrivateField] = []
        func note(_ f: EXIFPrivateField) { if !removed.contains(f) { removed.append(f) } }
        for i in 0..<Int32(EXIF_IFD_COUNT.rawValue) {
            guard let ifd = pb_exif_ifd(data, i) else { continue }
            let kept = keptTags[i] ?? []
            var n = 0
            while n < Int(ifd.pointee.count) {
                guard let e = ifd.pointee.entries[n] else { n += 1; continue }
                let tag = e.pointee.tag.rawValue
                if kept.contains(tag) { n += 1; continue }
                if i == Int32(EXIF_IFD_GPS.rawValue) { note(.gpsPosition) }
                else if i == Int32(EXIF_IFD_1.rawValue) { note(.thumbnail) }
                else { note(namedTags[tag] ?? .otherTags) }
                exif_content_remove_entry(ifd, e)
            }
        }
        if data.pointee.data != nil || data.pointee.size > 0 {
            pb_exif_drop_thumbnail(data)
            note(.thumbnail)
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt32 = 0
        exif_data_save_data(data, &out, &size)
        defer { free(out) }
        // A segment holds at most 65533 payload bytes; what libexif cannot write again is left out.
        guard let out, size >= 6, size <= 65533 else { return .drop }
        let bytes = Array(UnsafeBufferPointer(start: out, count: Int(size)))
        // The same bytes: nothing was there that libexif did not read.
        if bytes.elementsEqual(payload) { return .keep }
        // What libexif read but did not write back (a third IFD, an unread pointer) went too.
        if removed.isEmpty { removed.append(.otherTags) }
        return .replace(bytes, removed)
    }
}
