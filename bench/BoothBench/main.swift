// BoothBench: figures for the README and the closing notes. Run through bench/run.
//
//   BoothBench capture [--runs N] [--dir DIR]
//     On the simulated camera at 1280x720 YUYV:
//     - capture-loop frames/s: the camera thread's loop (dequeue, trigger check, preview hand-off)
//       paced at 30 fps, and unpaced (the test pattern generated as fast as it can be);
//     - trigger-to-saved latency: trigger → first frame at/after it → JPEG (TurboJPEG q92 4:2:0)
//       → written atomically (temp, fsync, rename, fsync dir), over N captures.
import BoothCamera
import BoothClock
import BoothCore
import BoothPorts
import BoothJPEG
import BoothRuntime
import BoothStorage
import Foundation
import Synchronization

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? 0 : (s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2)
}
func f1(_ x: Double) -> String { String(format: "%.1f", x) }

/// Events from the workers, waited on by the benchmark's thread.
final class EventInbox: Sendable {
    private let events = Mutex<[BoothEvent]>([])
    private let cond = NSCondition()
    func post(_ e: BoothEvent) {
        events.withLock { $0.append(e) }
        cond.lock(); cond.broadcast(); cond.unlock()
    }
    func wait(timeoutSeconds: Double, _ match: (BoothEvent) -> Bool) -> BoothEvent? {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        cond.lock(); defer { cond.unlock() }
        while true {
            if let e = events.withLock({ ev -> BoothEvent? in
                guard let i = ev.firstIndex(where: match) else { return nil }
                return ev.remove(at: i)
            }) { return e }
            if !cond.wait(until: deadline) { return nil }
        }
    }
}

/// Frames/s of the capture loop: nextFrame + trigger selection + preview hand-off.
func loopRate(fps: Double, seconds: Double) throws -> (Double, Int) {
    let camera = SimulatedCamera()
    _ = try camera.start(StreamRequest(device: "sim", format: .yuyv, size: FrameSize(width: 1280, height: 720),
                                       framesPerSecond: fps))
    defer { camera.stop() }
    var selector = CaptureFrameSelector()
    let start = Monotonic.now()
    var frames = 0
    var lastSeq: UInt32 = 0
    while Monotonic.now().milliseconds(since: start) < seconds * 1000 {
        guard let frame = try camera.nextFrame(timeoutMilliseconds: 200) else { continue }
        _ = selector.feed(frame)
        lastSeq = frame.sequence
        frames += 1
    }
    let elapsed = Monotonic.now().milliseconds(since: start) / 1000
    return (Double(frames) / elapsed, Int(lastSeq))
}

/// The storage side of a capture benchmark: the photos directory `dir` prepared, a storage worker (not yet
/// launched) saving into it, the capture box both use and the inbox their events go to.
func benchStorage(dir: String, clock: any MonotonicClock, log: Logger) -> (EventInbox, CaptureBox, StorageWorker) {
    let inbox = EventInbox()
    let captures = CaptureBox()
    let store = PhotoStore(directory: dir)
    do { try store.prepare() } catch { print("bench: \(error)"); exit(1) }
    return (inbox, captures, StorageWorker(store: store, captures: captures, minFree: 0, clock: clock, log: log, post: inbox.post))
}

func captureLatency(runs: Int, dir: String, log: Logger) -> (total: [Double], toFrame: [Double], toSaved: [Double]) {
    let clock = SystemClock()
    let (inbox, captures, storage) = benchStorage(dir: dir, clock: clock, log: log)
    let settings = Settings.defaults
    let size = FrameSize(width: 1280, height: 720)
    var request = StreamRequest(settings.camera)
    request.size = size
    request.format = .yuyv
    request.device = "sim"
    let camera = StreamingCameraSource(device: { SimulatedCamera() }, stream: request, captureSize: size, clock: clock, log: log)
    storage.launch()
    camera.launch(makeCameraHandlers(captures: captures, displays: [], post: inbox.post))
    camera.startLiveView()
    Thread.sleep(forTimeInterval: 0.5)
    var total: [Double] = [], toFrame: [Double] = [], toSaved: [Double] = []
    for i in 1...runs {
        let id = UInt64(i)
        captures.assign(id: id, session: i, shot: 1)
        // Triggers land at random phases of the 33 ms frame interval, as a countdown's would.
        Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.12))
        let trigger = clock.now()
        camera.takeStill(StillRequest(captureID: id, trigger: trigger, deadline: nil, rotation: .r0, jpegQuality: 92))
        guard inbox.wait(timeoutSeconds: 5, { $0 == .captureSucceeded(id: id) }) != nil,
              let record = captures.get(id) else { print("bench: capture \(id) timed out"); exit(1) }
        storage.save(captureID: id)
        guard case .saved? = inbox.wait(timeoutSeconds: 5, { if case .saved(id, _) = $0 { true } else { false } }) else {
            print("bench: save \(id) failed"); exit(1)
        }
        let savedAt = clock.now()
        total.append(savedAt.milliseconds(since: trigger))
        toFrame.append(record.frameTimestamp.milliseconds(since: trigger))
        toSaved.append(savedAt.milliseconds(since: record.frameTimestamp))
    }
    camera.shutdown(timeoutSeconds: 3)
    storage.finish(timeoutSeconds: 2)
    return (total, toFrame, toSaved)
}

var args = Array(CommandLine.arguments.dropFirst())
if args.first == "print" || args.first == "print-rss" {
    // BoothBench print [--runs N] [--out DIR] [--pibooth FILE] CAPTURE…  |  print-rss --dpi D CAPTURE…
    var runs = 9, out = "/tmp/photobooth-print-bench", piboothFile = "", dpi = 600, background: String?, overlayPNG = false
    var paths: [String] = []
    var k = 1
    while k < args.count {
        switch args[k] {
        case "--runs": k += 1; runs = Int(args[k]) ?? runs
        case "--out": k += 1; out = args[k]
        case "--pibooth": k += 1; piboothFile = args[k]
        case "--dpi": k += 1; dpi = Int(args[k]) ?? dpi
        case "--background": k += 1; background = args[k]
        case "--overlay-png": overlayPNG = true
        default: paths.append(args[k])
        }
        k += 1
    }
    if args.first == "print-rss" {
        try printRSS(dpi: dpi, paths: paths, background: background, overlayPNG: overlayPNG)
        exit(0)
    }
    var pibooth: [String: [[Double]]] = [:]
    if !piboothFile.isEmpty, let data = FileManager.default.contents(atPath: piboothFile),
       let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
        for (key, value) in object { if let samples = value as? [[Double]] { pibooth[key] = samples } }
        if let rss = object["maxrss_kb"] as? Int { print("pibooth process peak RSS: \(rss / 1024) MB") }
    }
    try printBench(runs: max(7, runs), paths: paths, outDir: out, pibooth: pibooth)
    exit(0)
}
if args.first == "display-devices" {
    // BoothBench display-devices [--seconds S] DEVICE…  (/dev/dri/cardN, /dev/fbN, memory)
    var seconds = 10.0, devices: [String] = []
    var k = 1
    while k < args.count {
        if args[k] == "--seconds", k + 1 < args.count { k += 1; seconds = Double(args[k]) ?? seconds } else { devices.append(args[k]) }
        k += 1
    }
    try displayDevicesBench(devices: devices, seconds: seconds)
    exit(0)
}
if args.first == "compose-ahead" {
    // BoothBench compose-ahead [--runs N] CAPTURE…
    var runs = 7, paths: [String] = []
    var k = 1
    while k < args.count {
        if args[k] == "--runs", k + 1 < args.count { runs = Int(args[k + 1]) ?? runs; k += 2 } else { paths.append(args[k]); k += 1 }
    }
    try composeAheadBench(runs: runs, paths: paths, dir: "/tmp/photobooth-compose-ahead-\(getpid())")
    exit(0)
}
if args.first == "gphoto2-live" || args.first == "gphoto2-still" {
    // BoothBench gphoto2-live [--seconds S] [--label L] | gphoto2-still [--runs N] [--dir DIR]
    var seconds = 10.0, label = "live-view", runs = 12, dir = "/tmp/photobooth-gphoto2-bench-\(getpid())"
    var k = 1
    while k + 1 < args.count {
        switch args[k] {
        case "--seconds": seconds = Double(args[k + 1]) ?? seconds
        case "--label": label = args[k + 1]
        case "--runs": runs = Int(args[k + 1]) ?? runs
        case "--dir": dir = args[k + 1]
        default: print("unknown option \(args[k])"); exit(64)
        }
        k += 2
    }
    if args.first == "gphoto2-live" { gphoto2LiveBench(seconds: seconds, label: label) } else {
        gphoto2StillBench(runs: runs, dir: dir)
        try? FileManager.default.removeItem(atPath: dir)
    }
    exit(0)
}
if args.first == "upscale" {
    // BoothBench upscale --megapixels N IN OUT
    guard args.count == 5, args[1] == "--megapixels", let mp = Double(args[2]), mp > 0 else { print("usage: BoothBench upscale --megapixels N IN OUT"); exit(64) }
    let size = try upscaleJPEG(from: args[3], to: args[4], megapixels: mp)
    print("upscaled \((args[3] as NSString).lastPathComponent) to \(size)")
    exit(0)
}
if args.first == "large-still-rss" {
    // BoothBench large-still-rss --megapixels N CAPTURE
    guard args.count == 4, args[1] == "--megapixels", let mp = Double(args[2]), mp > 0 else {
        print("usage: BoothBench large-still-rss --megapixels N CAPTURE"); exit(64)
    }
    try largeStillRSS(megapixels: mp, path: args[3])
    exit(0)
}
if args.first == "libcamera-nv12" {
    // BoothBench libcamera-nv12 [--seconds S] CAPTURE_1280x720
    var seconds = 10.0, path = ""
    var k = 1
    while k < args.count {
        if args[k] == "--seconds", k + 1 < args.count { seconds = Double(args[k + 1]) ?? seconds; k += 2 } else { path = args[k]; k += 1 }
    }
    try libcameraNV12Bench(seconds: seconds, path: path)
    exit(0)
}
if args.first == "display" {
    try displayBench(seconds: 3)
    exit(0)
}
guard args.first == "capture" else {
    print("usage: BoothBench capture [--runs N] [--dir DIR] | libcamera-nv12 [--seconds S] CAPTURE | gphoto2-live [--seconds S] [--label L] | gphoto2-still [--runs N] [--dir DIR] | display | display-devices [--seconds S] DEVICE… | print [--runs N] [--out DIR] [--pibooth FILE] CAPTURE… | print-rss --dpi D CAPTURE…")
    exit(64)
}
var runs = 30
var dir = "/tmp/photobooth-bench-\(getpid())"
var i = 1
while i < args.count {
    switch args[i] {
    case "--runs": i += 1; runs = Int(args[i]) ?? runs
    case "--dir": i += 1; dir = args[i]
    default: print("unknown option \(args[i])"); exit(64)
    }
    i += 1
}
let log = Logger(threshold: .warning)
print("simulated camera, 1280x720 YUYV, \(ProcessInfo.processInfo.activeProcessorCount) cores")
let (paced, _) = try loopRate(fps: 30, seconds: 3)
let (unpaced, _) = try loopRate(fps: 1000, seconds: 3)
print("capture loop: \(f1(paced)) frames/s paced at 30 fps; \(f1(unpaced)) frames/s unpaced (test pattern generation included)")
let lat = captureLatency(runs: runs, dir: dir, log: log)
try? FileManager.default.removeItem(atPath: dir)
print("trigger-to-saved over \(runs) captures: median \(f1(median(lat.total))) ms, "
      + "min \(f1(lat.total.min() ?? 0)) ms, max \(f1(lat.total.max() ?? 0)) ms")
print("  trigger-to-frame: median \(f1(median(lat.toFrame))) ms (0 to one frame interval, 33 ms at 30 fps)")
print("  frame-to-saved (JPEG q92 4:2:0 + atomic durable write): median \(f1(median(lat.toSaved))) ms")
print("capture loop_fps_paced=\(f1(paced)) loop_fps_unpaced=\(f1(unpaced)) trigger_to_saved_ms=\(f1(median(lat.total)))")
