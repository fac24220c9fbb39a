// libFuzzer target: what the gallery serves of a camera's JPEG (BoothJPEG EXIFPrivacy: the marker walk,
// libexif reading and writing the Exif again without the GPS IFD, serial numbers, owner and maker note,
// XMP dropped). Input: a JPEG. Checked: what would be served parses, carries none of the fields
// (stripping it again finds nothing), and ends with the file's own bytes from its first scan on.
import BoothJPEG

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEXIF(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size > 0, let data else { return 0 }
    let jpeg = Array(UnsafeBufferPointer(start: data, count: size))
    guard let privacy = (try? EXIFPrivacy.served(jpeg)) ?? nil else { return 0 }
    guard privacy.replacing <= jpeg.count, !privacy.removed.isEmpty else { fatalError("replacing \(privacy.replacing) of \(jpeg.count) bytes") }
    let served = privacy.header + jpeg[privacy.replacing...]
    guard Int64(served.count) == privacy.servedSize(fileSize: Int64(jpeg.count)) else { fatalError("served size") }
    do {
        if let again = try EXIFPrivacy.served(served) { fatalError("served bytes still carry \(again.removed)") }
    } catch {
        fatalError("served bytes do not parse: \(error)")
    }
    return 0
}
