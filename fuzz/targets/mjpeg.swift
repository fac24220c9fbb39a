// libFuzzer target: the camera worker's path for an MJPEG frame from the camera: the frame check done at
// VIDIOC_DQBUF (FrameCheck), standard Huffman table insertion, TurboJPEG validation (header + decode at
// 1/8), and the full decode used for the live view.
import BoothCamera
import BoothCore
import BoothJPEG

nonisolated(unsafe) var decoder: JPEGDecoder? = try? JPEGDecoder(maxPixels: 4_000_000)
nonisolated(unsafe) var rgb: [UInt8] = []

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMJPEG(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let decoder else { fatalError("tjInitDecompress failed") }
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    _ = FrameCheck.defect(of: bytes, format: .mjpeg, bufferLength: bytes.count + 16, firstAfterStreamOn: true)
    _ = FrameCheck.defect(of: bytes, format: .yuyv)
    guard FrameCheck.defect(of: bytes, format: .mjpeg) == nil else { return 0 }
    guard let frame = try? JPEGMarkers.insertingStandardHuffmanTables(bytes) else { return 0 }
    if decoder.validate(frame) {
        _ = try? decoder.header(frame)
        _ = try? decoder.decode(frame, scale: .quarter, into: &rgb)
    }
    return 0
}
