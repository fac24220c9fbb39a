import CV4L2
import CV4L2Shims
import Testing

/// The ioctl request numbers computed in C must encode the sizes of the structs Swift passes.
@Suite struct ShimTests {
    /// `_IOC_SIZE(request)`: bits 16…29.
    func size(_ request: UInt) -> Int { Int((request >> 16) & 0x3FFF) }

    @Test func requestNumbersEncodeTheStructSizesSwiftSees() {
        #expect(size(PB_VIDIOC_QUERYCAP) == MemoryLayout<v4l2_capability>.size)
        #expect(size(PB_VIDIOC_S_FMT) == MemoryLayout<v4l2_format>.size)
        #expect(size(PB_VIDIOC_QBUF) == MemoryLayout<v4l2_buffer>.size)
        #expect(size(PB_VIDIOC_DQBUF) == MemoryLayout<v4l2_buffer>.size)
        #expect(size(PB_VIDIOC_S_PARM) == MemoryLayout<v4l2_streamparm>.size)
        #expect(size(PB_VIDIOC_QUERYCTRL) == MemoryLayout<v4l2_queryctrl>.size)
        #expect(size(PB_VIDIOC_QUERYMENU) == MemoryLayout<v4l2_querymenu>.size)
        #expect(size(PB_VIDIOC_ENUM_FRAMESIZES) == MemoryLayout<v4l2_frmsizeenum>.size)
        #expect(size(PB_VIDIOC_ENUM_FRAMEINTERVALS) == MemoryLayout<v4l2_frmivalenum>.size)
        #expect(size(PB_VIDIOC_STREAMON) == MemoryLayout<Int32>.size)
    }

    @Test func knownValues() {
        #expect(PB_VIDIOC_QUERYCAP == 0x8068_5600)  // _IOR('V', 0, 104 bytes) on every ABI
        #expect(PB_VIDIOC_STREAMON == 0x4004_5612)
        #expect(PB_V4L2_CID_POWER_LINE_FREQUENCY == 0x0098_0918)
        #expect(PB_V4L2_CID_EXPOSURE_AUTO == 0x009A_0901)
    }
}
