// BoothBench gphoto2-live | gphoto2-still: the gphoto2 backend (GPhoto2CameraSource) against libgphoto2's
// virtual camera (hardware/gphoto2/setup), Debian 12's ptp2 driver; bench/run gphoto2 sets IOLIBS, CAMLIBS,
// VCAMERADIR (the card: the shared 12-13 MP photos) and VCAMERA_LIVEVIEWDIR (the live-view frames).
//
// - gphoto2-live: live view at the highest camera.live_view_rate (60), each frame drawn on a 1920x1080
//   XRGB8888 screen (in memory: decode at its TurboJPEG scale, fit, mirror, the preview band) in the
//   frame handler: frames/s on screen and the process's CPU time per frame (getrusage), over SECONDS.
// - gphoto2-still: trigger → still (trigger_capture, event drain, download, upright) → saved (the storage
//   worker: atomic, fsync'd), over RUNS stills of the card's photos a second apart (as a countdown spaces them), with the source's own split
//   (trigger→shutter, shutter→file, download, upright/turn) and the save.
import BoothCamera
import BoothClock
import BoothCore
import BoothDisplay
import BoothPorts
import BoothRaster
import BoothRuntime
import BoothStorage
import Foundation
import Synchronization

/// The process's CPU time (user + system) in seconds (getrusage RUSAGE_SELF).
func processCPUSeconds() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
}

func gphoto2Settings() -> Settings.Camera {
    var c = Settings.defaults.camera
    c.backend = .gphoto2
    c.liveViewRate = 60
    c.captureTimeoutMilliseconds = 20_000
    return c
}

func gphoto2LiveBench(seconds: Double, label: String) {
    let log = Logger(threshold: .warning)
    let fb = MemoryFramebuffer(format: .xrgb8888(FrameSize(width: 1920, height: 1080)))
    guard let font = try? Font(path: "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf") else { print("bench: no font"); exit(1) }
    let compositor = Mutex(ScreenCompositor(framebuffer: fb, renderer: ScreenRenderer(font: font, texts: ScreenTexts(Settings.defaults.text))))
    let options = LiveViewOptions(cameraRotation: .r0, scaling: .fit, mirror: true)
    let drawn = Mutex(0), size = Mutex<FrameSize?>(nil)
    let source = GPhoto2CameraSource(settings: gphoto2Settings(), clock: SystemClock(), log: log)
    source.launch(CameraSourceHandlers(event: { e in if case let .fault(m) = e { print("bench: fault: \(m)") } }, liveFrame: { frame in
        compositor.withLock { $0.draw(.preview, live: frame, capture: nil, options: options, displayRotation: .r0) }
        drawn.withLock { $0 += 1 }
        size.withLock { $0 = frame.size }
    }))
    source.startLiveView()
    let warm = Date(timeIntervalSinceNow: 10)
    while drawn.withLock({ $0 }) < 5 && Date() < warm { usleep(10_000) }
    let n0 = drawn.withLock { $0 }, cpu0 = processCPUSeconds(), t0 = Monotonic.now()
    Thread.sleep(forTimeInterval: seconds)
    let n = drawn.withLock { $0 } - n0, cpu = processCPUSeconds() - cpu0, wall = Monotonic.now().milliseconds(since: t0) / 1000
    source.shutdown(timeoutSeconds: 3)
    let fps = Double(n) / wall, msPerFrame = n > 0 ? cpu * 1000 / Double(n) : 0
    print("gphoto2 live view, \(label) frames (\(size.withLock { $0 }.map { "\($0)" } ?? "none")) → 1920x1080 screen: "
          + "\(f1(fps)) frames/s on screen, \(f1(msPerFrame)) ms CPU a frame (process, all threads), \(n) frames in \(f1(wall)) s")
    print("gphoto2-live label=\(label) fps=\(f1(fps)) cpu_ms_per_frame=\(f1(msPerFrame))")
}

func gphoto2StillBench(runs: Int, dir: String) {
    let log = Logger(threshold: ProcessInfo.processInfo.environment["BENCH_DEBUG"] != nil ? .debug : .warning)
    let clock = SystemClock()
    let (inbox, captures, storage) = benchStorage(dir: dir, clock: clock, log: log)
    let source = GPhoto2CameraSource(settings: gphoto2Settings(), liveView: false, clock: clock, log: log)
    storage.launch()
    source.launch(makeCameraHandlers(captures: captures, displays: [], post: inbox.post))
    source.startLiveView()
    var total: [Double] = [], shutter: [Double] = [], file: [Double] = [], download: [Double] = [], prepare: [Double] = [],
        save: [Double] = [], bytes: [Double] = []
    for i in 1...max(1, runs) {
        let id = UInt64(i)
        captures.assign(id: id, session: i, shot: 1)
        // A second between stills, as a countdown gives the camera (and its late capture-complete event).
        Thread.sleep(forTimeInterval: 1)
        let trigger = clock.now()
        source.takeStill(StillRequest(captureID: id, trigger: trigger, deadline: trigger.adding(milliseconds: 20_000), rotation: .r0, jpegQuality: 92))
        guard inbox.wait(timeoutSeconds: 30, { $0 == .captureSucceeded(id: id) }) != nil, let record = captures.get(id),
              let t = source.lastStillTimings else { print("bench: still \(id) timed out"); exit(1) }
        storage.save(captureID: id)
        guard case .saved? = inbox.wait(timeoutSeconds: 10, { if case .saved(id, _) = $0 { true } else { false } }) else {
            print("bench: save \(id) failed"); exit(1)
        }
        let savedAt = clock.now()
        total.append(savedAt.milliseconds(since: trigger))
        shutter.append(t.triggerToShutter); file.append(t.shutterToFile); download.append(t.download); prepare.append(t.prepare)
        save.append(savedAt.milliseconds(since: record.readyAt))
        bytes.append(Double(t.bytes))
    }
    source.shutdown(timeoutSeconds: 3)
    storage.finish(timeoutSeconds: 2)
    print("gphoto2 still (the card's 12-13 MP photos in turn, \(Int(median(bytes) / 1000)) kB median) over \(runs): trigger → saved median "
          + "\(f1(median(total))) ms (min \(f1(total.min() ?? 0)), max \(f1(total.max() ?? 0)))")
    print("  trigger→shutter \(f1(median(shutter))) ms, shutter→file on the camera \(f1(median(file))) ms, download \(f1(median(download))) ms, "
          + "upright/turn \(f1(median(prepare))) ms, still → saved (atomic, fsync) \(f1(median(save))) ms")
    print("gphoto2-still trigger_to_saved_ms=\(f1(median(total))) download_ms=\(f1(median(download))) save_ms=\(f1(median(save)))")
}
