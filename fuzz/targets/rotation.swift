// libFuzzer target: turning a saved JPEG upright (JPEGRotator: tjTransform lossless, else decode, turn,
// re-encode), the last step before a capture is written. The first byte picks the rotation; with bit 2 set,
// the JPEG is turned upright by its Exif Orientation instead (JPEGRotator.upright).
import BoothCore
import BoothJPEG

nonisolated(unsafe) var rotator: JPEGRotator? = try? JPEGRotator()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRotation(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let rotator else { fatalError("TurboJPEG handles not created") }
    guard size > 1, let data else { return 0 }
    let rotations: [Rotation] = [.r0, .r90, .r180, .r270]
    let turn = rotations[Int(data[0] & 3)]
    let jpeg = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 4 != 0 {
        // Upright by the JPEG's own Exif Orientation (tjTransform HFLIP…ROT270, or decode, turn, re-encode).
        _ = try? rotator.upright(jpeg, quality: 85)
    } else {
        _ = try? rotator.rotate(jpeg, by: turn, quality: 85)
    }
    return 0
}
