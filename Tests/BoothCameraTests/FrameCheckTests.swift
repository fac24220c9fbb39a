import BoothCore
import Testing
@testable import BoothCamera

@Suite struct FrameCheckTests {
    let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x12, 0x34, 0xFF, 0xD9]

    @Test func wholeJPEGPasses() {
        #expect(FrameCheck.defect(of: jpeg, format: .mjpeg) == nil)
    }

    @Test func trailingZeroPaddingIsTolerated() {
        #expect(FrameCheck.defect(of: jpeg + [UInt8](repeating: 0, count: 100), format: .mjpeg) == nil)
    }

    @Test func truncatedJPEGLacksEndMarker() {
        #expect(FrameCheck.defect(of: Array(jpeg.dropLast(1)), format: .mjpeg) == .missingEndOfImage)
        #expect(FrameCheck.defect(of: Array(jpeg.dropLast(2)) + [0, 0, 0], format: .mjpeg) == .missingEndOfImage)
        // Padding other than zeros after EOI is not tolerated.
        #expect(FrameCheck.defect(of: jpeg + [0x55], format: .mjpeg) == .missingEndOfImage)
    }

    @Test func missingStartMarker() {
        #expect(FrameCheck.defect(of: [0x00] + jpeg, format: .mjpeg) == .missingStartOfImage)
        #expect(FrameCheck.defect(of: [0xFF, 0xD8, 0xFF], format: .mjpeg) == .missingStartOfImage)
    }

    @Test func emptyBufferIsADefectInAnyFormat() {
        #expect(FrameCheck.defect(of: [], format: .mjpeg) == .empty)
        #expect(FrameCheck.defect(of: [], format: .yuyv) == .empty)
        #expect(FrameCheck.defect(of: [1, 2, 3, 4], format: .yuyv) == nil)
    }

    /// v4l2loopback 0.12.7's first buffer after STREAMON: an old whole JPEG, zero-padded to the
    /// buffer's length, with bytesused = that length. Fine by every other check; stale.
    @Test func wholeBufferFirstAfterStreamOnIsStale() {
        let whole = jpeg + [UInt8](repeating: 0, count: 54)
        #expect(FrameCheck.defect(of: whole, format: .mjpeg) == nil)
        #expect(FrameCheck.defect(of: whole, format: .mjpeg, bufferLength: whole.count, firstAfterStreamOn: true)
                == .wholeBufferAfterStreamOn)
        // Later buffers, frames shorter than the buffer, and uncompressed formats (whose frames
        // always fill the buffer) are judged as before.
        #expect(FrameCheck.defect(of: whole, format: .mjpeg, bufferLength: whole.count, firstAfterStreamOn: false) == nil)
        #expect(FrameCheck.defect(of: jpeg, format: .mjpeg, bufferLength: 64, firstAfterStreamOn: true) == nil)
        let yuyv = [UInt8](repeating: 128, count: 32)
        #expect(FrameCheck.defect(of: yuyv, format: .yuyv, bufferLength: 32, firstAfterStreamOn: true) == nil)
        #expect(FrameCheck.defect(of: Array(jpeg.dropLast(1)), format: .mjpeg, bufferLength: 64, firstAfterStreamOn: true)
                == .missingEndOfImage)
    }
}
