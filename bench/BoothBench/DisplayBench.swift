// BoothBench display: frames/s of the framebuffer drawing on one thread (one core): a 1280x720
// camera frame (MJPEG, or YUYV) → decode (TurboJPEG scaled decode / libyuv) → scale, mirror →
// the preview screen's text band → conversion to the framebuffer's format → copy into (in-memory)
// framebuffer memory. The MJPEG frame is a real photo when ../shared/images has one, else a pattern.
import BoothClock
import BoothCore
import BoothDisplay
import BoothJPEG
import BoothRaster
import Foundation

func displayBench(seconds: Double) throws {
    let size = FrameSize(width: 1280, height: 720)
    let rgb = try benchPicture(size)
    let mjpeg = try JPEGEncoder().encode(Frame(format: .rgb24, size: size, bytesPerLine: size.width * 3, bytes: rgb,
                                               timestamp: Monotonic.now(), sequence: 0), quality: 85)
    var yuyv = [UInt8](repeating: 0, count: size.width * 2 * size.height)
    for y in 0..<size.height {
        for x in stride(from: 0, to: size.width, by: 2) {
            let i = (y * size.width + x) * 3
            let r = Double(rgb[i]), g = Double(rgb[i + 1]), b = Double(rgb[i + 2])
            let luma = { (r: Double, g: Double, b: Double) in UInt8(max(16, min(235, 16 + 0.257 * r + 0.504 * g + 0.098 * b))) }
            let o = (y * size.width + x) * 2
            yuyv[o] = luma(r, g, b)
            yuyv[o + 1] = UInt8(max(16, min(240, 128 - 0.148 * r - 0.291 * g + 0.439 * b)))
            yuyv[o + 2] = luma(Double(rgb[i + 3]), Double(rgb[i + 4]), Double(rgb[i + 5]))
            yuyv[o + 3] = UInt8(max(16, min(240, 128 + 0.439 * r - 0.368 * g - 0.071 * b)))
        }
    }
    let frames = [
        Frame(format: .mjpeg, size: size, bytesPerLine: 0, bytes: mjpeg, timestamp: Monotonic.now(), sequence: 0),
        Frame(format: .yuyv, size: size, bytesPerLine: size.width * 2, bytes: yuyv, timestamp: Monotonic.now(), sequence: 0),
    ]
    let screens: [(String, FramebufferFormat, Rotation)] = [
        ("800x480 RGB565", .rgb565(FrameSize(width: 800, height: 480)), .r0),
        ("1920x1080 XRGB8888", .xrgb8888(FrameSize(width: 1920, height: 1080)), .r0),
        ("480x800 RGB565 turned 90", .rgb565(FrameSize(width: 480, height: 800)), .r90),
    ]
    let font = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    print("display: 1280x720 camera frame → preview screen (fit, mirrored, text band) → framebuffer, one thread; frames per CPU-second")
    var keyValues: [String] = []

    // DISPLAY_CASES=a,b runs only the cases whose key contains one of the words (e.g. mjpg_1920).
    let only = (ProcessInfo.processInfo.environment["DISPLAY_CASES"] ?? "").split(separator: ",").map(String.init)
    for frame in frames {
        for (name, format, rotation) in screens {
            let key = "\(frame.format.rawValue.lowercased())_\(format.size)_\(format.bitsPerPixel)bpp_r\(rotation.rawValue)"
            if !only.isEmpty && !only.contains(where: { key.contains($0) }) { continue }
            let fb = MemoryFramebuffer(format: format)
            let renderer = ScreenRenderer(font: try Font(path: font), texts: ScreenTexts(Settings.defaults.text))
            let compositor = ScreenCompositor(framebuffer: fb, renderer: renderer)
            let options = LiveViewOptions(cameraRotation: .r0, scaling: .fit, mirror: true)
            compositor.draw(.preview, live: frame, capture: nil, options: options, displayRotation: rotation)  // warm-up
            let start = Monotonic.now(), startCPU = threadCPUSeconds()
            var n = 0
            while Monotonic.now().milliseconds(since: start) < seconds * 1000 {
                compositor.draw(.preview, live: frame, capture: nil, options: options, displayRotation: rotation)
                n += 1
            }
            let wallFPS = Double(n) / (Monotonic.now().milliseconds(since: start) / 1000)
            // Frames per second of this thread's CPU time: what one core gives when the machine is
            // shared (other builds take the rest of the wall time).
            let fps = Double(n) / max(1e-9, threadCPUSeconds() - startCPU)
            let scale = frame.format == .mjpeg ? " (decode \(renderer.lastDecodeScale))" : ""
            print("  \(frame.format.rawValue) → \(name): \(f1(fps)) frames/s of CPU time (\(f1(wallFPS)) wall)\(scale)")
            keyValues.append("\(key)=\(f1(fps))")
        }
    }
    print("display " + keyValues.joined(separator: " "))
}

/// CPU time of the calling thread in seconds (CLOCK_THREAD_CPUTIME_ID).
func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// 1280x720 RGB24: a real photo from ../shared/images scaled (nearest) when present, else a pattern.
func benchPicture(_ size: FrameSize) throws -> [UInt8] {
    let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/images").standardized.path
    let files = ((FileManager.default.enumerator(atPath: dir)?.allObjects as? [String]) ?? [])
        .filter { $0.lowercased().hasSuffix(".jpg") }.sorted()
    if let first = files.first, let data = FileManager.default.contents(atPath: dir + "/" + first) {
        let img = try JPEGDecoder(maxPixels: 100_000_000).decodeRGB(Array(data), scale: .quarter)
        var out = [UInt8](repeating: 0, count: size.area * 3)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let sx = x * img.size.width / size.width, sy = y * img.size.height / size.height
                for c in 0..<3 { out[(y * size.width + x) * 3 + c] = img.bytes[(sy * img.size.width + sx) * 3 + c] }
            }
        }
        print("display bench picture: \(first)")
        return out
    }
    var out = [UInt8](repeating: 0, count: size.area * 3)
    var state: UInt32 = 1
    for i in out.indices {
        state = state &* 1_103_515_245 &+ 12345
        out[i] = UInt8(truncatingIfNeeded: (i / 3 % size.width) / 5 + Int(state >> 28))
    }
    return out
}

/// BoothBench display-devices DEVICE…: the MJPEG 1280x720 live view drawn to real screens side by
/// side in one run, on one thread: `/dev/dri/cardN` through ``KMSFramebuffer`` (page flips on vblank)
/// at 1920x1080 when the connector offers it (else its preferred mode), `/dev/fbN` through
/// ``FramebufferDevice``, `memory` an in-memory 1920x1080 XRGB8888 framebuffer (the `display`
/// bench's case). For each: `seconds` unpaced (frames per CPU-second, CPU ms per frame, wall
/// frames/s; a KMS frame waits for the previous flip, so its wall rate is bounded by the refresh),
/// then `seconds` paced at 30 frames/s as a camera delivers them (frames drawn, page flips completed,
/// frames dropped because a flip was still pending).
func displayDevicesBench(devices: [String], seconds: Double) throws {
    let size = FrameSize(width: 1280, height: 720)
    let rgb = try benchPicture(size)
    let mjpeg = try JPEGEncoder().encode(Frame(format: .rgb24, size: size, bytesPerLine: size.width * 3, bytes: rgb,
                                               timestamp: Monotonic.now(), sequence: 0), quality: 85)
    let frame = Frame(format: .mjpeg, size: size, bytesPerLine: 0, bytes: mjpeg, timestamp: Monotonic.now(), sequence: 0)
    let font = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    let options = LiveViewOptions(cameraRotation: .r0, scaling: .fit, mirror: true)
    print("display-devices: 1280x720 MJPEG live view → preview screen (fit, mirrored, text band) → screen, one thread")
    var keyValues: [String] = []
    for device in devices {
        let fb: any Framebuffer
        var kms: KMSFramebuffer?
        var name: String
        if device == "memory" {
            fb = MemoryFramebuffer(format: .xrgb8888(FrameSize(width: 1920, height: 1080)))
            name = "memory"
        } else if device.hasPrefix("/dev/dri/") {
            let wanted = Result { () throws(FramebufferError) -> KMSFramebuffer in
                try KMSFramebuffer(path: device, mode: FrameSize(width: 1920, height: 1080), now: { Monotonic.now() }, log: { print("  \($0)") })
            }
            let k: KMSFramebuffer
            if case .failure(.call(let why, let code, _)) = wanted, code == EINVAL {
                // The connector offers no 1920x1080 mode: its preferred one.
                print("  \(device): \(why); its preferred mode")
                k = try KMSFramebuffer(path: device, now: { Monotonic.now() }, log: { print("  \($0)") })
            } else {
                k = try wanted.get()
            }
            kms = k
            fb = k
            name = "kms"
        } else {
            fb = try FramebufferDevice(path: device)
            name = "fbdev"
        }
        defer { fb.close() }
        let compositor = ScreenCompositor(framebuffer: fb, renderer: ScreenRenderer(font: try Font(path: font), texts: ScreenTexts(Settings.defaults.text)))
        compositor.draw(.preview, live: frame, capture: nil, options: options, displayRotation: .r0)  // warm-up, first modeset
        let start = Monotonic.now(), startCPU = threadCPUSeconds()
        var n = 0
        while Monotonic.now().milliseconds(since: start) < seconds * 1000 {
            compositor.draw(.preview, live: frame, capture: nil, options: options, displayRotation: .r0)
            n += 1
        }
        let wall = Monotonic.now().milliseconds(since: start) / 1000, cpu = max(1e-9, threadCPUSeconds() - startCPU)
        let fps = Double(n) / cpu
        print("  \(device) (\(name), \(fb.format)): \(f1(fps)) frames per CPU-second (\(f1(cpu * 1000 / Double(n))) ms CPU a frame), \(f1(Double(n) / wall)) frames/s wall")
        keyValues.append("\(name)_cpu_fps=\(f1(fps))")
        // Paced at 30 frames/s.
        let before = kms?.currentStats
        let pacedStart = Monotonic.now()
        var drawn = 0
        while Monotonic.now().milliseconds(since: pacedStart) < seconds * 1000 {
            let due = pacedStart.adding(milliseconds: Int64((Double(drawn) * 1000 / 30).rounded()))
            let wait = due.milliseconds(since: Monotonic.now())
            if wait > 0 { usleep(useconds_t(wait * 1000)) }
            compositor.draw(.preview, live: frame, capture: nil, options: options, displayRotation: .r0)
            drawn += 1
        }
        let pacedWall = Monotonic.now().milliseconds(since: pacedStart) / 1000
        if let kms, let before {
            let after = kms.currentStats
            let flips = after.flips - before.flips, dropped = after.flipTimeouts - before.flipTimeouts
            print("    paced at 30 frames/s: \(drawn) frames in \(f1(pacedWall)) s, \(flips) page flips completed (\(f1(Double(flips) / pacedWall))/s), "
                  + "\(dropped) frames dropped for a pending flip, refresh \(kms.info.refreshHz ?? 0) Hz")
            keyValues.append("kms_paced_flips_per_s=\(f1(Double(flips) / pacedWall)) kms_paced_dropped=\(dropped)")
        } else {
            print("    paced at 30 frames/s: \(drawn) frames in \(f1(pacedWall)) s (\(f1(Double(drawn) / pacedWall))/s)")
        }
    }
    print("display-devices " + keyValues.joined(separator: " "))
}
