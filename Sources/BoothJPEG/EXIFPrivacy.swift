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
    /// `CameraOwnerName` (`0xA430`).
    case cameraOwnerName = "camera owner's name"
    /// `MakerNote` (`0x927C`): the maker's own block, where Canon, Nikon and Sony keep the serial number.
    case makerNote = "maker note"
    /// An `APP1` XMP packet (`http://ns.adobe.com/xap/1.0/`, and extended XMP): it can repeat all of the above.
    case xmp = "XMP packet"
    /// An Exif segment libexif found damaged: served without it, since what it holds cannot be known.
    case unreadableExif = "damaged Exif"

    public var description: String { rawValue }
}

/// The header a JPEG is served with: its marker segments up to the first scan, with the Exif
/// segment written again (libexif: `exif_data_load_data`, `exif_content_remove_entry`,
/// `exif_data_save_data`) without the ``EXIFPrivateField``s, and XMP left out. The compressed data
/// from the first SOS on is the file's own, byte for byte, so a server sends `header` and then the
/// file from `replacing` on (`sendfile` where nothing was removed). The stored file is never changed.
public struct EXIFPrivacy: Sendable, Equatable {
    /// The bytes that stand for the file's first `replacing` bytes: SOI and the segments kept.
    public var header: [UInt8]
    /// How many of the file's bytes `header` replaces: the offset of its first SOS segment.
    public var replacing: Int
    /// What was removed, in the order found.
    public var removed: [EXIFPrivateField]

    /// Served length of a file of `fileSize` bytes.
    public func servedSize(fileSize: Int64) -> Int64 { Int64(header.count) + fileSize - Int64(replacing) }

    /// Tags removed wherever they are (IFD0, IFD1, Exif, Interoperability), with what they are.
    static let privateTags: [(tag: UInt32, field: EXIFPrivateField)] = [
        (0xA431, .bodySerialNumber), (0xC62F, .bodySerialNumber), (0xA435, .lensSerialNumber),
        (0xA430, .cameraOwnerName), (0x927C, .makerNote),
    ]
    static let xmpHeaders: [[UInt8]] = [Array("http://ns.adobe.com/xap/1.0/\0".utf8), Array("http://ns.adobe.com/xmp/extension/\0".utf8)]

    /// The header to serve for the JPEG whose first bytes are `prefix`.
    /// - Parameter prefix: the file from offset 0, through its first SOS segment at least (the
    ///   metadata of a camera's JPEG lies within its first 64 KiB–1 MiB).
    /// - Returns: nil when the file carries none of the fields (serve it as it is).
    /// - Throws: ``JPEGMarkerError`` when the markers do not parse up to SOS:
    ///   `.truncated`/`.missingStartOfScan` when `prefix` is too short (read more), anything else
    ///   when the file is not a JPEG that can be served safely.
    public static func served(_ prefix: [UInt8]) throws(JPEGMarkerError) -> EXIFPrivacy? {
        let segments = try JPEGMarkers.segments(prefix)
        guard let sos = segments.last, sos.marker == JPEGMarkers.sos else { throw .missingStartOfScan }
        var header: [UInt8] = [0xFF, JPEGMarkers.soi]
        var removed: [EXIFPrivateField] = []
        for s in segments.dropLast() {
            let payload = prefix[s.payload]
            if s.marker == 0xE1, xmpHeaders.contains(where: { payload.starts(with: $0) }) {
                if !removed.contains(.xmp) { removed.append(.xmp) }
                continue
            }
            if s.marker == 0xE1, payload.starts(with: EXIFOrientationTag.exifHeader) {
                switch exif(payload) {
                case .keep: break
                case let .replace(bytes, fields):
                    removed += fields
                    header += [0xFF, 0xE1, UInt8((bytes.count + 2) >> 8), UInt8((bytes.count + 2) & 0xFF)]
                    header += bytes
                    continue
                case .drop:
                    removed.append(.unreadableExif)
                    continue
                }
            }
            header += prefix[s.range]
        }
        guard !removed.isEmpty else { return nil }
        return EXIFPrivacy(header: header, replacing: sos.offset, removed: removed)
    }

    /// The ``EXIFPrivateField``s `jpeg` carries (none for a JPEG whose markers do not parse).
    public static func privateFields(in jpeg: [UInt8]) -> [EXIFPrivateField] {
        ((try? served(jpeg)) ?? nil)?.removed ?? []
    }

    enum ExifResult: Equatable { case keep, replace([UInt8], [EXIFPrivateField]), drop }

    /// One `Exif\0\0` APP1 payload: unchanged, written again without the fields, or to be left out.
    static func exif(_ payload: ArraySlice<UInt8>) -> ExifResult {
        guard let data = exif_data_new() else { return .drop }
        defer { exif_data_unref(data) }
        // As the camera wrote it: no tags dropped for being unknown, none added or "fixed".
        exif_data_unset_option(data, EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS)
        exif_data_unset_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        let damaged = payload.withUnsafeBufferPointer { b in pb_exif_load(data, b.baseAddress, UInt32(b.count)) }
        guard damaged == 0 else { return .drop }
        var removed: [EXIFPrivateField] = []
        if let gps = pb_exif_ifd(data, Int32(EXIF_IFD_GPS.rawValue)), gps.pointee.count > 0 {
            while gps.pointee.count > 0, let e = gps.pointee.entries[0] { exif_content_remove_entry(gps, e) }
            removed.append(.gpsPosition)
        }
        for i in 0..<Int32(EXIF_IFD_COUNT.rawValue) where i != Int32(EXIF_IFD_GPS.rawValue) {
            guard let ifd = pb_exif_ifd(data, i) else { continue }
            for (tag, field) in privateTags {
                while let e = exif_content_get_entry(ifd, ExifTag(rawValue: tag)) {
                    exif_content_remove_entry(ifd, e)
                    if !removed.contains(field) { removed.append(field) }
                }
            }
        }
        guard !removed.isEmpty else { return .keep }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt32 = 0
        exif_data_save_data(data, &out, &size)
        defer { free(out) }
        // A segment holds at most 65533 payload bytes; what libexif cannot write again is left out.
        guard let out, size >= 6, size <= 65533 else { return .drop }
        return .replace(Array(UnsafeBufferPointer(start: out, count: Int(size))), removed)
    }
}
