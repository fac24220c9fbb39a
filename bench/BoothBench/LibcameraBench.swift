// BoothBench libcamera-nv12: the libcamera backend's live-view path for a 1280x720 NV12 source (what the
// Raspberry Pi ISP's viewfinder stream gives), without a camera: a real 1280x720 capture turned into one
// NV12 buffer (libyuv RAWToI420 + I420ToNV12: the luma plane, then the interleaved chroma, a 1280-byte
// stride, as one dmabuf holds them), then for SECONDS on one thread, as the camera thread does for each
// completed request: LibcameraCamera.convert (NV12 → YUYV, libyuv: SplitUVPlane + I420ToYUY2, read in
// place from the buffer) and the frame drawn on a 1920x1080 XRGB8888 screen (in memory: fit, mirror, the
// preview band) as the frame handler does. Prints frames/s (unpaced: the most one core can show) and the
// CPU time a frame, split into the conversion and the drawing.
import BoothCamera
import BoothClock
import BoothCore
import BoothDisplay
import BoothJPEG
import BoothPorts
import BoothRaster
import CLibcameraShim
import CYUV
import Foundation

/// An NV12 buffer (luma rows, then interleaved CbCr rows; stride = width) of the JPEG at `path`.
func nv12Buffer(jpegAt path: String) throws -> (bytes: [UInt8], size: FrameSize) {
    guard let jpeg = FileManager.default.contents(atPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
    let rgb = try JPEGDecoder().decodeRGB([UInt8](jpeg))
    let w = rgb.size.width, h = rgb.size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
    var y = [UInt8](repeating: 0, count: w * h), u = [UInt8](repeating: 0, count: cw * ch), v = u
    // libyuv's RAW is R, G, B in memory: RGBImage's order.
    _ = RAWToI420(rgb.bytes, Int32(w * 3), &y, Int32(w), &u, Int32(cw), &v, Int32(cw), Int32(w), Int32(h))
    var out = [UInt8](repeating: 0, count: w * h + cw * 2 * ch)
    out.withUnsafeMutableBufferPointer { dst in
        guard let d = dst.baseAddress else { return }
        _ = I420ToNV12(y, Int32(w), u, Int32(cw), v, Int32(cw), d, Int32(w), d + w * h, Int32(cw * 2), Int32(w), Int32(h))
    }
    return (out, rgb.size)
}

func libcameraNV12Bench(seconds: Double, path: String) throws {
    let (buffer, size) = try nv12Buffer(jpegAt: path)
    let fb = MemoryFramebuffer(format: .xrgb8888(FrameSize(width: 1920, height: 1080)))
    let font = try Font(path: "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
    let compositor = ScreenCompositor(framebuffer: fb, renderer: ScreenRenderer(font: font, texts: ScreenTexts(Settings.defaults.text)))
    let options = LiveViewOptions(cameraRotation: .r0, scaling: .fit, mirror: true)
    var chroma: [UInt8] = []
    var frames = 0, convertSeconds = 0.0, drawSeconds = 0.0
    let cpu0 = processCPUSeconds(), t0 = Monotonic.now()
    try buffer.withUnsafeBufferPointer { b in
        guard let base = b.baseAddress else { return }
        var f = pb_lc_frame()
        f.width = UInt32(size.width)
        f.height = UInt32(size.height)
        f.stride = UInt32(size.width)
        f.fourcc = LibcameraFormat.nv12.rawValue
        f.plane_count = 1
        f.planes.0 = base
        f.plane_bytes.0 = UInt32(b.count)
        while Monotonic.now().milliseconds(since: t0) < seconds * 1000 {
            f.sequence = UInt64(frames)
            f.timestamp_ns = Monotonic.now().nanoseconds
            let c0 = processCPUSeconds()
            let frame = try LibcameraCamera.convert(f, format: .nv12, chroma: &chroma)
            let c1 = processCPUSeconds()
            compositor.draw(.preview, live: frame, capture: nil, options: options, displayRotation: .r0)
            drawSeconds += processCPUSeconds() - c1
            convertSeconds += c1 - c0
            frames += 1
        }
    }
    let wall = Monotonic.now().milliseconds(since: t0) / 1000, cpu = processCPUSeconds() - cpu0
    let n = Double(max(frames, 1))
    print("libcamera live view, 1280x720 NV12 (one buffer, stride \(size.width)) → YUYV → 1920x1080 screen, one thread: "
          + "\(f1(Double(frames) / wall)) frames/s, \(f1(cpu * 1000 / n)) ms CPU a frame "
          + "(conversion \(f1(convertSeconds * 1000 / n)) ms, drawing \(f1(drawSeconds * 1000 / n)) ms), \(frames) frames in \(f1(wall)) s")
    print("libcamera-nv12 fps=\(f1(Double(frames) / wall)) cpu_ms_per_frame=\(f1(cpu * 1000 / n)) convert_ms=\(f1(convertSeconds * 1000 / n)) draw_ms=\(f1(drawSeconds * 1000 / n))")
}

/// BoothBench upscale --megapixels N IN OUT: the JPEG at IN scaled (libyuv I420Scale, bilinear, its aspect kept)
/// to N million pixels and written to OUT at quality 92: the 24 MP captures a 24 MP body gives, made from the
/// 12-13 MP photos for the print benchmark's resident-memory figure (no 24 MP file is at hand; the pixels are
/// the photo's, interpolated). Returns the size written.
func upscaleJPEG(from input: String, to output: String, megapixels: Double) throws -> FrameSize {
    let rgb = try JPEGDecoder().decodeRGB(try readFile(input))
    let w = rgb.size.width, h = rgb.size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
    let factor = (megapixels * 1e6 / Double(w * h)).squareRoot()
    let size = FrameSize(width: Int(Double(w) * factor) & ~1, height: Int(Double(h) * factor) & ~1)
    var y = [UInt8](repeating: 0, count: w * h), u = [UInt8](repeating: 0, count: cw * ch), v = u
    _ = RAWToI420(rgb.bytes, Int32(w * 3), &y, Int32(w), &u, Int32(cw), &v, Int32(cw), Int32(w), Int32(h))
    let W = size.width, H = size.height, CW = (W + 1) / 2, CH = (H + 1) / 2
    var Y = [UInt8](repeating: 0, count: W * H), U = [UInt8](repeating: 0, count: CW * CH), V = U
    _ = I420Scale(y, Int32(w), u, Int32(cw), v, Int32(cw), Int32(w), Int32(h),
                  &Y, Int32(W), &U, Int32(CW), &V, Int32(CW), Int32(W), Int32(H), kFilterBilinear)
    let jpeg = try Y.withUnsafeBufferPointer { yp in
        try U.withUnsafeBufferPointer { up in
            try V.withUnsafeBufferPointer { vp in
                try JPEGEncoder().encodeI420(y: yp, yStride: W, cb: up, cr: vp, chromaStride: CW, size: size, quality: 92)
            }
        }
    }
    guard FileManager.default.createFile(atPath: output, contents: Data(jpeg)) else { throw CocoaError(.fileWriteUnknown) }
    return size
}
