// libFuzzer target: JPEG marker handling (segment walk, SOI/EOI checks, standard Huffman table insertion,
// the Exif Orientation tag).
import BoothJPEG

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMarkers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    _ = JPEGMarkers.startsWithSOI(bytes)
    _ = JPEGMarkers.endsWithEOI(bytes)
    if let list = try? JPEGMarkers.segments(bytes) {
        for s in list {
            // Every segment the walk returns lies inside the input.
            if s.range.upperBound > bytes.count || s.payload.lowerBound > s.payload.upperBound { fatalError("segment \(s) outside \(bytes.count) bytes") }
        }
    }
    _ = try? JPEGMarkers.hasHuffmanTables(bytes)
    // The Exif Orientation reader (APP1 TIFF IFD0 tag 0x0112): any value it returns is 1…8, and the
    // reset changes no length.
    _ = EXIFOrientation.read(bytes)
    if EXIFOrientation.resettingTag(bytes).count != bytes.count { fatalError("orientation reset changed the length") }
    if let out = try? JPEGMarkers.insertingStandardHuffmanTables(bytes) {
        // Insertion only ever adds the one DHT segment.
        if out.count != bytes.count && out.count != bytes.count + JPEGMarkers.standardHuffmanTablesSegment.count {
            fatalError("insertion changed \(bytes.count) bytes into \(out.count)")
        }
        _ = try? JPEGMarkers.segments(out)
    }
    return 0
}
