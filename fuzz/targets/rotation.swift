// libFuzzer target: turning a saved JPEG upright (JPEGRotator: tjTransform lossless, else decode, turn,
// re-encode), the last step before a capture is written. The first byte picks the rotation.
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
    _ = try? rotator.rotate(jpeg, by: turn, quality: 85)
    return 0
}
