@testable import BoothCamera
import BoothClock
import BoothCore
import CLibcameraShim
import CYUV
import BoothPorts
import Synchronization
import Foundation
import Testing

/// The libcamera backend's parts that need no camera: the frame conversions from the formats libcamera's
/// pipelines give (against libyuv's own conversions of the same pixels), the C interface's errors on this
/// machine's real libcamera (which lists no camera here), and the camera choice. Streaming from a real
/// pipeline is the qemu guest's `libcamera-vimc` scenario.
@Suite("libcamera backend")
struct LibcameraTests {
    /// A deterministic I420 image, w × h (odd sizes allowed): planes without padding.
    static func i420(_ w: Int, _ h: Int) -> (y: [UInt8], u: [UInt8], v: [UInt8]) {
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let y = (0..<(w * h)).map { UInt8(truncatingIfNeeded: ($0 % w) * 7 + ($0 / w) * 3) }
        let u = (0..<(cw * ch)).map { UInt8(truncatingIfNeeded: 60 + ($0 % cw) * 5) }
        let v = (0..<(cw * ch)).map { UInt8(truncatingIfNeeded: 200 - ($0 / cw) * 4) }
        return (y, u, v)
    }

    /// libyuv's I420ToYUY2 of the unpadded planes: the reference.
    static func referenceYUYV(_ w: Int, _ h: Int) -> [UInt8] {
        let (y, u, v) = i420(w, h)
        let cw = (w + 1) / 2, rowBytes = ((w + 1) & ~1) * 2
        var out = [UInt8](repeating: 0, count: rowBytes * h)
        _ = I420ToYUY2(y, Int32(w), u, Int32(cw), v, Int32(cw), &out, Int32(rowBytes), Int32(w), Int32(h))
        return out
    }

    /// Runs `body` with a pb_lc_frame over `buffers` (one a plane), as libcamera hands them over.
    static func withFrame<R>(_ buffers: [[UInt8]], width: Int, height: Int, stride: Int, fourcc: UInt32,
                             _ body: (pb_lc_frame) throws -> R) rethrows -> R {
        let pointers = buffers.map { b -> UnsafeMutablePointer<UInt8> in
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, b.count))
            p.initialize(from: b, count: b.count)
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        var f = pb_lc_frame()
        f.width = UInt32(width)
        f.height = UInt32(height)
        f.stride = UInt32(stride)
        f.fourcc = fourcc
        f.plane_count = UInt32(buffers.count)
        f.planes.0 = UnsafePointer(pointers[0])
        f.plane_bytes.0 = UInt32(buffers[0].count)
        if buffers.count > 1 { f.planes.1 = UnsafePointer(pointers[1]); f.plane_bytes.1 = UInt32(buffers[1].count) }
        if buffers.count > 2 { f.planes.2 = UnsafePointer(pointers[2]); f.plane_bytes.2 = UInt32(buffers[2].count) }
        return try body(f)
    }

    /// `plane` (rows of `width` bytes) with each row padded to `stride` bytes.
    static func padded(_ plane: [UInt8], width: Int, rows: Int, stride: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0xEE, count: stride * rows)
        for r in 0..<rows { out.replaceSubrange(r * stride..<r * stride + width, with: plane[r * width..<(r + 1) * width]) }
        return out
    }

    @Test("NV12 (one buffer, two planes, padded strides, odd sizes) becomes the YUYV libyuv makes of the same pixels",
          arguments: [(64, 48, 64), (63, 47, 128), (1280, 720, 1280), (33, 17, 64)])
    func nv12(size: (Int, Int, Int)) throws {
        let (w, h, stride) = size
        let (y, u, v) = Self.i420(w, h)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var uv = [UInt8](repeating: 0, count: cw * 2 * ch)
        for i in 0..<(cw * ch) { uv[2 * i] = u[i]; uv[2 * i + 1] = v[i] }
        let luma = Self.padded(y, width: w, rows: h, stride: stride)
        let chroma = Self.padded(uv, width: cw * 2, rows: ch, stride: stride)
        let reference = Self.referenceYUYV(w, h)
        var scratch: [UInt8] = []
        // The Raspberry Pi's way: one dmabuf, the chroma plane after the luma plane.
        let one = try Self.withFrame([luma + chroma], width: w, height: h, stride: stride, fourcc: LibcameraFormat.nv12.rawValue) {
            try LibcameraCamera.convert($0, format: .nv12, chroma: &scratch)
        }
        #expect(one.format == .yuyv && one.size == FrameSize(width: w, height: h))
        #expect(one.bytes == reference)
        let two = try Self.withFrame([luma, chroma], width: w, height: h, stride: stride, fourcc: LibcameraFormat.nv12.rawValue) {
            try LibcameraCamera.convert($0, format: .nv12, chroma: &scratch)
        }
        #expect(two.bytes == reference)
    }

    @Test("YUV420 (three planes at half stride) becomes the same YUYV", arguments: [(64, 48, 64), (63, 47, 96)])
    func yuv420(size: (Int, Int, Int)) throws {
        let (w, h, stride) = size
        let (y, u, v) = Self.i420(w, h)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let planes = [Self.padded(y, width: w, rows: h, stride: stride), Self.padded(u, width: cw, rows: ch, stride: stride / 2),
                      Self.padded(v, width: cw, rows: ch, stride: stride / 2)]
        var scratch: [UInt8] = []
        let frame = try Self.withFrame(planes, width: w, height: h, stride: stride, fourcc: LibcameraFormat.yuv420.rawValue) {
            try LibcameraCamera.convert($0, format: .yuv420, chroma: &scratch)
        }
        #expect(frame.bytes == Self.referenceYUYV(w, h))
    }

    @Test("RGB888 (B, G, R in memory) and BGR888 (R, G, B) both become RGB24 with red first; strides dropped")
    func rgb() throws {
        let w = 5, h = 3, stride = 20
        // Pixel (x, y) is red x*40, green y*80, blue 7.
        var bgrMemory = [UInt8](repeating: 0xEE, count: stride * h)  // RGB888: B, G, R
        var rgbMemory = [UInt8](repeating: 0xEE, count: stride * h)  // BGR888: R, G, B
        for yy in 0..<h {
            for x in 0..<w {
                let r = UInt8(x * 40), g = UInt8(yy * 80), b: UInt8 = 7
                bgrMemory.replaceSubrange(yy * stride + x * 3..<yy * stride + x * 3 + 3, with: [b, g, r])
                rgbMemory.replaceSubrange(yy * stride + x * 3..<yy * stride + x * 3 + 3, with: [r, g, b])
            }
        }
        var scratch: [UInt8] = []
        let a = try Self.withFrame([bgrMemory], width: w, height: h, stride: stride, fourcc: LibcameraFormat.rgb888.rawValue) {
            try LibcameraCamera.convert($0, format: .rgb888, chroma: &scratch)
        }
        let b = try Self.withFrame([rgbMemory], width: w, height: h, stride: stride, fourcc: LibcameraFormat.bgr888.rawValue) {
            try LibcameraCamera.convert($0, format: .bgr888, chroma: &scratch)
        }
        #expect(a.format == .rgb24 && a.bytesPerLine == w * 3)
        #expect(a.bytes == b.bytes)
        #expect(Array(a.bytes[(1 * w + 2) * 3..<(1 * w + 2) * 3 + 3]) == [80, 80, 7], "pixel (2, 1): red 80, green 80, blue 7")
    }

    @Test("a buffer with fewer bytes than its size and stride need is a short frame; none at all is empty")
    func shortFrames() {
        var scratch: [UInt8] = []
        let short = [UInt8](repeating: 0, count: 64 * 48)  // NV12 needs 1.5× that
        #expect(throws: LibcameraCamera.FrameDefectError.self) {
            try Self.withFrame([short], width: 64, height: 48, stride: 64, fourcc: LibcameraFormat.nv12.rawValue) {
                try LibcameraCamera.convert($0, format: .nv12, chroma: &scratch)
            }
        }
        do {
            _ = try Self.withFrame([short], width: 64, height: 48, stride: 64, fourcc: LibcameraFormat.nv12.rawValue) {
                try LibcameraCamera.convert($0, format: .nv12, chroma: &scratch)
            }
        } catch let error as LibcameraCamera.FrameDefectError { #expect(error.defect == .shortFrame) } catch { Issue.record("\(error)") }
        do {
            _ = try Self.withFrame([[]], width: 8, height: 8, stride: 24, fourcc: LibcameraFormat.bgr888.rawValue) {
                try LibcameraCamera.convert($0, format: .bgr888, chroma: &scratch)
            }
            Issue.record("an empty buffer converted")
        } catch let error as LibcameraCamera.FrameDefectError { #expect(error.defect == .empty) } catch { Issue.record("\(error)") }
    }

    @Test("a chroma row longer than its stride (odd width at stride = width) and a YUV420 Cr plane cut short are short frames, never read past")
    func layoutsThatDoNotFit() {
        var scratch: [UInt8] = []
        func defect(_ buffers: [[UInt8]], _ w: Int, _ h: Int, _ stride: Int, _ format: LibcameraFormat) -> FrameDefect? {
            do {
                _ = try Self.withFrame(buffers, width: w, height: h, stride: stride, fourcc: format.rawValue) {
                    try LibcameraCamera.convert($0, format: format, chroma: &scratch)
                }
                return nil
            } catch let error as LibcameraCamera.FrameDefectError { return error.defect } catch { return nil }
        }
        // NV12 63 wide at stride 63: a chroma row is 64 bytes.
        #expect(defect([[UInt8](repeating: 0, count: 63 * 47 + 63 * 24 + 64)], 63, 47, 63, .nv12) == .shortFrame)
        // YUV420 in three planes, the Cr plane one row short.
        let (w, h) = (64, 48)
        #expect(defect([[UInt8](repeating: 0, count: w * h), [UInt8](repeating: 0, count: 32 * 24), [UInt8](repeating: 0, count: 32 * 23)],
                       w, h, w, .yuv420) == .shortFrame)
        #expect(defect([[UInt8](repeating: 0, count: w * h), [UInt8](repeating: 0, count: 32 * 24), [UInt8](repeating: 0, count: 32 * 24)],
                       w, h, w, .yuv420) == nil, "the same with the whole Cr plane converts")
    }

    @Test("on this machine's libcamera (no camera): the listing is empty, a named camera is 'no such camera' (ENODEV), twice in a row")
    func noCamera() throws {
        #expect(libcameraVersion().hasPrefix("v0."))
        #expect(try listLibcameraCameras().filter { !$0.isUVC }.isEmpty)
        for _ in 0..<2 {  // the shared manager stopped after the first and started again
            let camera = LibcameraCamera()
            do {
                _ = try camera.start(StreamRequest(device: "imx708"))
                Issue.record("a camera that is not there started")
            } catch let error as LibcameraError {
                #expect(error.code == ENODEV && error.isDisconnect && error.call == "CameraManager::get", "\(error)")
                #expect(error.description.contains("no camera matches camera.device = 'imx708'"), "\(error)")
            } catch {
                Issue.record("not a camera error: \(error)")
            }
            #expect(throws: LibcameraError.self) { try camera.nextFrame(timeoutMilliseconds: 10) }
        }
    }

    @Test("a libcamera error is libcamera's own type with the call, the code and the camera, in the words a V4L2Error gave it")
    func errorType() {
        let busy = LibcameraError(call: "Camera::acquire", code: -EBUSY, camera: "platform/vimc.0 Sensor B", detail: "in use by rpicam-hello")
        #expect(busy.code == EBUSY && !busy.isDisconnect)
        #expect(busy.description == "libcamera Camera::acquire on platform/vimc.0 Sensor B failed: Device or resource busy (errno 16): in use by rpicam-hello")
        let gone = LibcameraError(call: "request completion", code: ENODEV, camera: "imx708")
        #expect(gone.isDisconnect && gone.description == "libcamera request completion on imx708 failed: No such device (errno 19)")
    }

    @Test("managers on several threads at once share libcamera's one CameraManager (a second would abort the process)")
    func concurrentManagers() async throws {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try listLibcameraCameras().count } }
            for try await _ in group {}
        }
    }

    @Test("the sensor's modes are the raw role's raw formats: Bayer and mono, packed or not; processed formats are not modes")
    func rawFormats() {
        for raw in ["SRGGB10_CSI2P", "SBGGR12", "SGRBG8", "SGBRG16", "R8", "R10_CSI2P", "SRGGB10_PISP_COMP1"] {
            #expect(LibcameraCameraInfo.isRawFormat(raw), "\(raw)")
        }
        for processed in ["NV12", "YUV420", "BGR888", "RGB888", "XRGB8888", "YUYV", "RGB565", "MJPEG", "SRGGB", "R"] {
            #expect(!LibcameraCameraInfo.isRawFormat(processed), "\(processed)")
        }
    }

    @Test("camera.focus = locked locks once continuous autofocus reports Focused; without AfState after the first frames; at the latest at the limit")
    func focusLockWaitsForFocus() {
        // Scanning (1) or idle (0): not yet, however many settle frames passed.
        #expect(!LibcameraCamera.focusSettled(afState: 1, frames: 30, settleFrames: 3))
        #expect(!LibcameraCamera.focusSettled(afState: 0, frames: 12, settleFrames: 3))
        #expect(LibcameraCamera.focusSettled(afState: 2, frames: 1, settleFrames: 3), "Focused at once")
        #expect(LibcameraCamera.focusSettled(afState: 1, frames: LibcameraCamera.focusFrameLimit, settleFrames: 3), "the limit")
        // No AfState: the first frames (the settle frames, at least 10).
        #expect(!LibcameraCamera.focusSettled(afState: -1, frames: 9, settleFrames: 3))
        #expect(LibcameraCamera.focusSettled(afState: -1, frames: 10, settleFrames: 3))
        #expect(!LibcameraCamera.focusSettled(afState: -1, frames: 15, settleFrames: 20))
    }

    @Test("camera.device matches the id, a part of it or of the model, case-insensitive; a UVC webcam's id is told apart")
    func matching() {
        let vimc = LibcameraCameraInfo(id: "platform/vimc.0 Sensor B", model: "Sensor B", location: nil, pixelArraySize: nil,
                                       hasAutofocus: false, controls: [], viewfinderFormats: [], stillFormats: [])
        #expect(vimc.matches("") && vimc.matches("auto") && vimc.matches("platform/vimc.0 Sensor B") && vimc.matches("sensor b"))
        #expect(!vimc.matches("imx708"))
        #expect(!vimc.isUVC)
        let webcam = LibcameraCameraInfo(id: "\\_SB_.PCI0.XHC_.RHUB.HS08-8:1.0-04f2:b6d9", model: "Integrated Camera", location: "external",
                                         pixelArraySize: nil, hasAutofocus: false, controls: [], viewfinderFormats: [], stillFormats: [])
        #expect(webcam.isUVC)
        #expect(resolveCameraBackend(.auto, devices: [], libcameraCameras: [vimc]) == .libcamera)
        #expect(resolveCameraBackend(.auto, devices: [], libcameraCameras: [webcam]) == .v4l2)
        #expect(resolveCameraBackend(.libcamera, devices: []) == .libcamera)
    }

    @Test("auto: libcamera is asked only when no gphoto2 camera and no UVC webcam is there, and chosen only for a camera camera.device names")
    func autoChoice() {
        let vimc = LibcameraCameraInfo(id: "platform/vimc.0 Sensor B", model: "Sensor B", location: nil, pixelArraySize: nil,
                                       hasAutofocus: false, controls: [], viewfinderFormats: [], stillFormats: [])
        func chosen(device: String, v4l2: [CameraInfo], asked: borrowing Mutex<Int>) -> String {
            var s = Settings.defaults
            s.camera.backend = .auto
            s.camera.device = device
            let lines = Mutex<[String]>([])
            _ = makeCameraSource(s, clock: SystemClock(), log: Logger(threshold: .info) { line in lines.withLock { $0.append(line) } },
                                 discover: { v4l2 }, discoverGPhoto2: { [] },
                                 discoverLibcamera: { asked.withLock { $0 += 1 }; return [vimc] })
            return lines.withLock { $0.first { $0.contains("camera: backend") } } ?? "(no backend line)"
        }
        let asked = Mutex(0)
        let vimcNodes = [CameraInfo(path: "/dev/video2", driver: "vimc", card: "vimc", isUsableCapture: true)]
        #expect(chosen(device: "", v4l2: vimcNodes, asked: asked).contains("backend libcamera"))
        #expect(chosen(device: "Sensor B", v4l2: vimcNodes, asked: asked).contains("backend libcamera"))
        #expect(chosen(device: "vivid", v4l2: vimcNodes, asked: asked).contains("backend v4l2"),
                "a camera.device naming a V4L2 node keeps auto on V4L2")
        #expect(asked.withLock { $0 } == 3)
        let webcam = [CameraInfo(path: "/dev/video0", driver: "uvcvideo", card: "C920", isUsableCapture: true)]
        #expect(chosen(device: "", v4l2: webcam, asked: asked).contains("backend v4l2"))
        #expect(asked.withLock { $0 } == 3, "a UVC webcam is chosen without starting libcamera's CameraManager")
    }
}
