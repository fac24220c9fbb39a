import BoothClock
import BoothCore
import BoothJPEG
import BoothPorts
import Glibc
import Synchronization

/// A ``CameraSource`` for a DSLR or mirrorless camera through libgphoto2 (``GPhoto2Camera``), on a thread
/// of its own ("camera"): every libgphoto2 call blocks on USB.
///
/// - Live view: `gp_camera_capture_preview` at `camera.live_view_rate` (frames/s), each frame checked as an
///   MJPEG frame (``FrameCheck``) before the screens get it; bad ones are counted by kind. A body that
///   drops live view for a still gets it back on the next preview call (its driver restarts it).
/// - Stills: `gp_camera_trigger_capture`, then `gp_camera_wait_for_event` drained (``StillFiles``) until
///   the JPEG is on the camera and the capture complete, `gp_camera_file_get`, and with
///   `camera.capture_target = ram` `gp_camera_file_delete`. The JPEG is checked, made upright by its EXIF
///   Orientation (``JPEGRotator/upright(_:quality:)``) and turned by `camera.rotation`. A request that
///   arrives while a still is on its way is answered by that still: a retry never fires the shutter again.
/// - Faults: a camera that is gone or held by another process is a fault (``CameraSourceEvent/fault(_:)``)
///   with the operator's advice (``GPhoto2Advice``); ``probe()`` opens it again by enumeration.
///   A failed focus is retried once, then the still fails.
/// - A libgphoto2 call that never returns cannot be interrupted: the thread's ``heartbeat`` then stays
///   busy, the watchdog's liveness check names the stuck camera thread, and systemd restarts the daemon.
public final class GPhoto2CameraSource: CameraSource {
    enum Request: Sendable {
        case start, stop, probe, prepare
        case still(StillRequest)
        case snapshot(rotation: Rotation, jpegQuality: Int, @Sendable ([UInt8]?) -> Void)
        case reconfigure(Settings.Camera)
        case shutdown
    }

    /// The timings of one still, ms (the log's and `bench/`'s figures).
    public struct StillTimings: Sendable, Equatable {
        /// Countdown zero (the request's trigger) → `gp_camera_trigger_capture` returned (the shutter released).
        public var triggerToShutter: Double
        /// Shutter → the file added on the camera (`GP_EVENT_FILE_ADDED`).
        public var shutterToFile: Double
        /// `gp_camera_file_get`.
        public var download: Double
        /// Checking, making upright and turning the JPEG.
        public var prepare: Double
        /// The file's size, bytes.
        public var bytes: Int
    }

    /// The camera thread, its queue of requests, the handlers and the status box.
    private let worker = CameraWorker<Request, CameraSourceStatus>(status: CameraSourceStatus())
    let settings: Mutex<Settings.Camera>
    private let lastTimings = Mutex<StillTimings?>(nil)
    private let clock: any MonotonicClock
    private let log: Logger
    let ownLiveView: Bool
    /// How long past a still's deadline its file is still waited for once the shutter fired (ms): a photo
    /// taken is downloaded and answers the machine's retry, not lost to a second shutter.
    let lateFileGraceMilliseconds: Int64
    /// How often the battery level is read while the camera is open (ms).
    let batteryPollMilliseconds: Int64

    /// - Parameters:
    ///   - settings: `camera.*` (device, live_view_rate, capture_target, rotation is in each request).
    ///   - liveView: false when the screens get their live view elsewhere (``PairedCameraSource``) or not at all.
    ///   - lateFileGraceMilliseconds: how long past a still's deadline its file is waited for once the shutter fired (ms).
    ///   - batteryPollMilliseconds: how often the battery level is read while the camera is open (ms).
    public init(settings: Settings.Camera, liveView: Bool = true, clock: any MonotonicClock, log: Logger,
                lateFileGraceMilliseconds: Int64 = 10_000, batteryPollMilliseconds: Int64 = 30_000) {
        self.batteryPollMilliseconds = batteryPollMilliseconds
        self.settings = Mutex(settings)
        self.ownLiveView = liveView
        self.lateFileGraceMilliseconds = lateFileGraceMilliseconds
        self.clock = clock
        self.log = log
    }

    /// Live view when it is the camera's own; the still size is the body's (unknown until a still).
    public var capabilities: CameraCapabilities {
        CameraCapabilities(hasLiveView: ownLiveView, liveViewModes: [], stillSizes: [], controls: [])
    }

    /// Starts the thread (`pthread_create`); without one the camera is a fault.
    public func launch(_ handlers: CameraSourceHandlers) {
        worker.launch(handlers, log: log) { [self] w in self.run(w) }
    }

    /// Opens the camera (enumeration, `gp_camera_init`) and, with its own live view, starts polling frames.
    public func startLiveView() { send(.start) }
    /// Stops live view and releases the camera (`gp_camera_exit`).
    public func stopLiveView() { send(.stop) }
    /// Opens the camera when closed and checks it answers (a preview frame, or its battery level).
    public func probe() { send(.probe) }
    /// Takes one still on the camera thread: `gp_camera_trigger_capture`, then `gp_camera_wait_for_event`
    /// until the JPEG is added and the capture complete (with RAW+JPEG the JPEG), `gp_camera_file_get`, and
    /// `gp_camera_file_delete` unless `camera.capture_target = card`. Answers once, as `.still` (the JPEG
    /// bytes, upright: EXIF Orientation applied in the pixels, the tag reset to 1) or `.stillFailed` (a
    /// focus failure, a full or missing card, a timeout past `request`'s deadline); a still whose shutter
    /// fired is never triggered again by a retry.
    public func takeStill(_ request: StillRequest) { send(.still(request)) }
    /// Starts the camera's autofocus (libgphoto2's `autofocusdrive`: Nikon AfDrive, Canon EOS DoAf, Fuji) so
    /// it is done before the countdown's zero; a body without it, or a failed focus, is logged.
    public func prepareStill() { send(.prepare) }
    /// The last live-view frame polled (`gp_camera_capture_preview`, JPEG), turned by `rotation` (re-encoded
    /// at `jpegQuality`, 1…100, when turned); `reply` gets nil when no frame has arrived or it does not
    /// decode. `reply` runs on the camera thread.
    public func snapshot(rotation: Rotation, jpegQuality: Int, _ reply: @escaping @Sendable ([UInt8]?) -> Void) {
        send(.snapshot(rotation: rotation, jpegQuality: jpegQuality, reply))
    }
    /// Takes new `[camera]` settings on the camera thread: the live-view rate and timeouts from the next frame
    /// and still; the capture target and `camera.device` when the camera is next opened.
    public func reconfigure(_ s: Settings.Camera) { send(.reconfigure(s)) }

    /// Ends live view, releases the camera (`gp_camera_exit`) and waits up to `timeoutSeconds` (s) for the
    /// camera thread to end; a libgphoto2 call that never returns leaves the thread behind after that.
    public func shutdown(timeoutSeconds: Double) {
        worker.finish(sending: .shutdown, timeoutSeconds: timeoutSeconds)
    }

    /// What the camera thread last reported: live view running (or the camera open), its model (`card`) and
    /// port (`devicePath`), the live-view frame size, rate measured and counts (delivered, dropped by kind),
    /// its battery level (%), the last error.
    public var status: CameraSourceStatus { worker.statusBox.withLock { $0 } }
    /// The last still's timings, for the bench and tests.
    public var lastStillTimings: StillTimings? { lastTimings.withLock { $0 } }
    /// Turned by the camera thread before each libgphoto2 request and each trigger: a thread stuck in a call
    /// that never returns stops turning it, which the watchdog's liveness check sees.
    public var heartbeat: Heartbeat { worker.heartbeat }

    private func send(_ r: Request) { worker.send(r) }

    private func post(_ event: CameraSourceEvent) { worker.post(event) }

    // MARK: The thread

    private final class Local {
        var camera: GPhoto2Camera?
        var open = false
        var liveView = false
        var nextFrameAt: MonotonicInstant?
        var sequence: UInt32 = 0
        var latest: Frame?
        var decoder: JPEGDecoder?
        var rotator: JPEGRotator?
        /// Live-view frames dropped on arrival since the daemon started, by kind, and when that was last logged.
        var dropped: [String: Int] = [:]
        var droppedUnlogged = 0
        var droppedLoggedAt: MonotonicInstant?
        var nextBatteryAt: MonotonicInstant?
        var frameTimes: [MonotonicInstant] = []
        /// Live-view calls failed in a row (busy and timeout answers too).
        var failedPreviews = 0
        /// True while `camera.capture_target = ram` is in force on the camera (set at open): only then are
        /// a still's files deleted from the camera after the download.
        var ramTarget = false
        /// Why the camera is not usable though it answers (a full card, RAW only), until a probe finds it fixed.
        var unusable: Set<GPhoto2FaultKind> = []
        /// Whether the body has libgphoto2's `autofocusdrive`; nil until asked (once per open).
        var canDriveFocus: Bool?
    }

    /// Live-view calls that may fail in a row (a frame without a JPEG) before the camera counts as lost.
    static let previewFailureLimit = 50

    private func run(_ w: WorkerThread) {
        let local = Local()
        defer { close(local) }
        while true {
            heartbeat.turn(at: clock.now())
            // One request at a time: a still's retry waits in the queue while the still before it is on its way.
            while let request = worker.takeFirst() {
                heartbeat.turn(at: clock.now())
                if !handle(request, local) { return }
            }
            let now = clock.now()
            if local.open, let at = local.nextBatteryAt, now >= at { pollBattery(local) }
            if local.open && local.liveView, let at = local.nextFrameAt {
                if now >= at {
                    liveFrame(local)
                    continue
                }
                if w.waitForWork(until: at, { worker.hasRequests }) == .stop { return }
            } else {
                if !worker.hasRequests { heartbeat.waiting() }
                let until = local.open ? local.nextBatteryAt : nil
                if w.waitForWork(until: until, { worker.hasRequests }) == .stop { return }
            }
        }
    }

    private func handle(_ request: Request, _ local: Local) -> Bool {
        switch request {
        case .start:
            if !local.open { open(local, reportFault: true) }
            if local.open, ownLiveView, !local.unusable.contains(.batteryEmpty) { local.liveView = true; local.nextFrameAt = clock.now() }
        case .stop:
            close(local)
        case .probe:
            probe(local)
        case .prepare:
            focus(local)
        case let .still(still):
            takeStill(still, local)
        case let .snapshot(rotation, quality, reply):
            reply(local.latest.flatMap { try? turned($0.bytes, rotation, quality: quality, local).bytes })
        case let .reconfigure(s):
            settings.withLock { $0 = s }
        case .shutdown:
            return false
        }
        return true
    }

    private func open(_ local: Local, reportFault: Bool) {
        let s = settings.withLock { $0 }
        guard let camera = local.camera ?? GPhoto2Camera() else {
            if reportFault { post(.fault("camera not available: gp_context_new failed (out of memory)")) }
            return
        }
        local.camera = camera
        do {
            let info = try camera.open(s.device)
            local.open = true
            local.failedPreviews = 0
            local.canDriveFocus = nil
            let details = camera.details()
            var warnings: [String] = []
            local.ramTarget = false
            var target = details.captureTarget
            if let w = captureTargetWarning(s.captureTarget, details) { warnings.append(w) }
            else if let choice = GPhoto2CaptureTarget.choice(for: s.captureTarget, among: details.captureTargets) {
                if choice == details.captureTarget {
                    local.ramTarget = s.captureTarget == .ram
                } else {
                    do {
                        try camera.setConfig("capturetarget", choice)
                        target = choice
                        local.ramTarget = s.captureTarget == .ram
                    } catch {
                        warnings.append("camera.capture_target = \(s.captureTarget.rawValue): setting '\(choice)' failed: \(error); stills stay where the camera stores them (none deleted)")
                    }
                }
            }
            worker.statusBox.withLock {
                $0.streaming = true
                $0.devicePath = info.port
                $0.card = info.model
                $0.format = "MJPG"
                $0.framesPerSecond = Double(s.liveViewRate)
                $0.batteryPercent = details.batteryPercent
                $0.lastError = nil
                $0.warnings = warnings
            }
            local.nextBatteryAt = clock.now().adding(milliseconds: batteryPollMilliseconds)
            if let level = details.batteryPercent, level <= Self.batteryEmptyPercent { batteryEmpty(level, local) }
            log.info("camera: gphoto2 \(info) open" + (details.batteryPercent.map { ", battery \($0)%" } ?? "")
                     + (target.map { ", capture target \($0)" } ?? ""))
            for w in warnings { log.warning("camera: \(w)") }
        } catch {
            let text = describe(error, camera: camera)
            local.open = false
            worker.statusBox.withLock { $0.streaming = false; $0.lastError = text }
            if reportFault {
                log.error("camera: \(text)")
                post(.fault("camera not available: \(text)"))
            }
        }
    }

    private func close(_ local: Local) {
        local.camera?.close()
        if local.open { log.info("camera: gphoto2 camera released") }
        local.open = false
        local.liveView = false
        local.nextFrameAt = nil
        local.latest = nil
        worker.statusBox.withLock { $0.streaming = false }
    }

    /// The camera failed while in use: released, reported with the advice, found again by ``probe()``.
    private func lost(_ error: any Error, _ local: Local) {
        let text = describe(error, camera: local.camera)
        close(local)
        local.camera = nil
        worker.statusBox.withLock { $0.lastError = text }
        log.error("camera: \(text)")
        post(.fault("camera lost: \(text)"))
    }

    private func probe(_ local: Local) {
        if !local.open { open(local, reportFault: false) }
        guard local.open, let camera = local.camera else {
            post(.fault("camera not available: \(worker.statusBox.withLock { $0.lastError } ?? "no camera")"))
            return
        }
        do {
            // A resting camera is asked only something small (a preview would start a Nikon's live view).
            if ownLiveView && local.unusable.isEmpty {
                do { _ = try camera.preview() } catch where error.kind == .unsupported { try camera.ping() }
            } else {
                try camera.ping()
            }
        } catch {
            lost(error, local)
            return
        }
        if let why = stillUnusable(local, camera) {
            post(.fault(why.hasPrefix(FaultKind.cameraRestingPrefix) ? why : "camera not usable: \(why)"))
            return
        }
        local.unusable = []
        if ownLiveView {
            local.liveView = true
            local.nextFrameAt = clock.now()
        }
        post(.recovered)
    }

    /// Why a camera that answers still cannot take stills (each reason recorded in ``Local/unusable``, checked
    /// again where the camera tells: its battery first, free space on the card, its image format); nil once
    /// none holds.
    private func stillUnusable(_ local: Local, _ camera: GPhoto2Camera) -> String? {
        if local.unusable.contains(.batteryEmpty) {
            // An unreadable level is no sign of a charged battery: still resting.
            let level = camera.batteryPercent()
            if level.map({ $0 <= Self.batteryEmptyPercent }) ?? true {
                return FaultKind.cameraRestingPrefix + "the camera's battery is still empty (\(level.map { "\($0)%" } ?? "its level unreadable"))"
            }
        }
        if local.unusable.contains(.cardFull) || local.unusable.contains(.noCard) {
            // A full card reports too little free space; a missing one no storage at all.
            switch camera.freeBytes() {
            case let free? where free < Self.minimumFreeBytes:
                return GPhoto2Advice.text(for: .cardFull) + " (\(free / 1_000_000) MB free)"
            case nil where local.unusable.contains(.noCard):
                return GPhoto2Advice.text(for: .noCard) + " (the camera reports no storage)"
            default: break
            }
        }
        if local.unusable.contains(.other), let format = camera.details().imageFormat {
            // RAW only: a format the body names as RAW and not JPEG (Sony's "Standard" is a JPEG quality).
            let words = format.uppercased()
            let raw = ["RAW", "NEF", "ARW", "CR2", "CR3", "RAF", "ORF", "DNG"].contains { words.contains($0) }
            if raw && !words.contains("JPEG") && !words.contains("JPG") && !words.contains("+") {
                return "the camera still saves only RAW files (image format '\(format)'): set its image quality to JPEG or RAW+JPEG"
            }
        }
        return nil
    }

    /// Free space on the card below which a card-full fault does not clear (a 24 MP JPEG is 10–15 MB).
    static let minimumFreeBytes: Int64 = 50_000_000

    /// A battery at or below this level is empty (%): the camera is resting until it is charged or swapped.
    static let batteryEmptyPercent = 0

    /// The operator's words for an empty battery at `level` percent (the log's, the fault's and `--check`'s).
    static func batteryEmptyText(_ level: Int) -> String {
        "the camera's battery is empty (\(level)%): charge or swap it (a mains adapter keeps the body going all night)"
    }

    /// The battery is empty: a fault whose reason starts with ``FaultKind/cameraRestingPrefix`` (the guests
    /// read `text.fault_camera_resting`); the captures a session took are kept, the session ends as failed.
    private func batteryEmpty(_ level: Int, _ local: Local) {
        guard !local.unusable.contains(.batteryEmpty) else { return }
        local.unusable.insert(.batteryEmpty)
        local.liveView = false
        let text = Self.batteryEmptyText(level)
        worker.statusBox.withLock { $0.lastError = text; $0.batteryPercent = level }
        log.error("camera: \(text)")
        post(.fault(FaultKind.cameraRestingPrefix + text))
    }

    private func pollBattery(_ local: Local) {
        local.nextBatteryAt = clock.now().adding(milliseconds: batteryPollMilliseconds)
        guard let level = local.camera?.batteryPercent() else { return }
        if level <= Self.batteryEmptyPercent {
            batteryEmpty(level, local)
            return
        }
        let before = worker.statusBox.withLock { s in defer { s.batteryPercent = level }; return s.batteryPercent }
        if level <= CameraSourceStatus.batteryLowPercent, before.map({ $0 > CameraSourceStatus.batteryLowPercent }) ?? true {
            log.warning("camera: " + CameraSourceStatus.batteryLowText(level))
        }
    }

    // MARK: Live view

    private func liveFrame(_ local: Local) {
        let rate = max(1, settings.withLock { $0.liveViewRate })
        let started = clock.now()
        local.nextFrameAt = started.adding(milliseconds: Int64(1000 / rate))
        guard let camera = local.camera else { return }
        let bytes: [UInt8]
        do {
            bytes = try camera.preview()
        } catch where (error.kind == .busy || error.kind == .timeout) && local.failedPreviews < Self.previewFailureLimit {
            local.failedPreviews += 1
            noteDropped("busy", local)
            return
        } catch where error.kind == .unsupported {
            log.warning("camera: \(error): no live view from this body (set camera.live_view_device to a webcam beside it, or none)")
            local.liveView = false
            return
        } catch where !error.kind.needsReopen && local.failedPreviews < Self.previewFailureLimit {
            // A frame the driver could not make sense of (no JPEG in the answer): counted like a bad frame.
            local.failedPreviews += 1
            noteDropped("preview-error", local)
            if local.failedPreviews == 1 { log.warning("camera: live-view frame failed: \(error)") }
            return
        } catch {
            lost(error, local)
            return
        }
        local.failedPreviews = 0
        if let defect = FrameCheck.defect(of: bytes, format: .mjpeg) {
            noteDropped(defect.rawValue, local)
            return
        }
        let size: FrameSize
        do {
            let decoder = try local.decoder ?? JPEGDecoder()
            local.decoder = decoder
            size = try decoder.header(bytes).size
        } catch {
            noteDropped("undecodable", local)
            return
        }
        local.sequence &+= 1
        let now = clock.now()
        let frame = Frame(format: .mjpeg, size: size, bytesPerLine: 0, bytes: bytes, timestamp: now,
                          timestampIsMonotonic: false, sequence: local.sequence)
        local.latest = frame
        local.frameTimes.append(now)
        if local.frameTimes.count > 30 { local.frameTimes.removeFirst(local.frameTimes.count - 30) }
        let measured: Double? = local.frameTimes.count >= 2
            ? Double(local.frameTimes.count - 1) * 1000 / max(1, now.milliseconds(since: local.frameTimes[0])) : nil
        worker.statusBox.withLock {
            $0.size = size
            $0.framesDelivered += 1
            $0.measuredFramesPerSecond = measured
        }
        worker.liveFrame(frame)
    }

    /// Counts a live-view frame dropped for `kind` (a ``FrameDefect`` name, `"busy"`, `"undecodable"`); one log
    /// line at most every ``DroppedFrameTally/logIntervalMilliseconds``.
    private func noteDropped(_ kind: String, _ local: Local) {
        local.dropped[kind, default: 0] += 1
        local.droppedUnlogged += 1
        worker.statusBox.withLock { $0.droppedByKind[kind, default: 0] += 1 }
        let now = clock.now()
        if let at = local.droppedLoggedAt, now.milliseconds(since: at) < Double(DroppedFrameTally.logIntervalMilliseconds) { return }
        let summary = local.dropped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        log.warning("camera: dropped \(local.droppedUnlogged) live-view \(local.droppedUnlogged == 1 ? "frame" : "frames") (since start: \(summary))")
        local.droppedUnlogged = 0
        local.droppedLoggedAt = now
    }

    // MARK: Stills

    /// The countdown began: the body's autofocus (`autofocusdrive`), where it has one.
    private func focus(_ local: Local) {
        guard local.open, let camera = local.camera, local.unusable.isEmpty else { return }
        guard local.canDriveFocus ?? camera.hasConfig("autofocusdrive", toggle: true) else {
            local.canDriveFocus = false
            return
        }
        local.canDriveFocus = true
        let started = clock.now()
        do {
            try camera.setToggle("autofocusdrive")
            log.info("camera: autofocus before the shutter (autofocusdrive) in \(Int(clock.now().milliseconds(since: started))) ms")
        } catch {
            log.warning("camera: autofocus before the shutter failed (\(error)); the still is taken anyway, focusing as it is released")
        }
    }

    private func takeStill(_ request: StillRequest, _ local: Local) {
        if !local.open { open(local, reportFault: true) }
        guard local.open, let camera = local.camera else {
            post(.stillFailed(captureID: request.captureID, message: "camera not available", at: clock.now()))
            return
        }
        // The level is read before each still as well as every 30 s: an empty battery rests the camera before its
        // shutter, not after the stills of the 30 s since the last reading.
        if !local.unusable.contains(.batteryEmpty) { pollBattery(local) }
        if local.unusable.contains(.batteryEmpty) {
            post(.stillFailed(captureID: request.captureID, message: "the camera's battery is empty", at: clock.now()))
            return
        }
        // Once the shutter fired, its file is waited for a while past the machine's deadline (see lateFileGraceMilliseconds).
        let deadline = (request.deadline ?? clock.now().adding(milliseconds: 60_000)).adding(milliseconds: lateFileGraceMilliseconds)
        var focusTries = 0
        while true {
            do {
                let (files, shutterAt, fileAt) = try release(camera, until: deadline, local)
                guard let path = files.jpeg else {
                    let what = files.rawOnly
                        ? "the camera saved only RAW files (\(files.files.map(\.name).joined(separator: ", "))): set its image quality to JPEG or RAW+JPEG"
                        : "the camera reported no file within the capture timeout and \(lateFileGraceMilliseconds / 1000) s more"
                    log.error("camera: capture \(request.captureID): \(what)")
                    post(.stillFailed(captureID: request.captureID, message: what, at: clock.now()))
                    if files.rawOnly {
                        deleteFromCamera(files.files, camera, local)
                        local.unusable.insert(.other)
                        worker.statusBox.withLock { $0.lastError = what }
                        post(.fault("camera not usable: \(what)"))
                    }
                    return
                }
                let downloadStart = clock.now()
                let bytes = try camera.download(path)
                let downloadedAt = clock.now()
                finishStill(request, bytes, path: path, shutterAt: shutterAt, fileAt: fileAt, downloadStart: downloadStart,
                            downloadedAt: downloadedAt, local)
                // After the still is on its way (off its critical path): the pair's other file (a RAW that comes
                // after its JPEG), then, with RAW+JPEG in the camera's RAM, both go, or the buffer would fill.
                var all = files
                for _ in 0..<20 {
                    let event = try camera.waitForEvent(timeoutMilliseconds: 100)
                    if event == .timeout { break }
                    _ = all.take(event)
                }
                deleteFromCamera(all.files, camera, local)
                return
            } catch let error as GPhoto2Error where error.kind == .focusFailed && focusTries == 0 {
                focusTries += 1
                log.warning("camera: capture \(request.captureID): \(error); focusing once more")
            } catch let error as GPhoto2Error where !error.kind.needsReopen {
                let advice = GPhoto2Advice.text(for: error.kind)
                log.error("camera: capture \(request.captureID): \(error): \(advice)")
                post(.stillFailed(captureID: request.captureID, message: "\(advice) (\(error))", at: clock.now()))
                if error.kind == .cardFull || error.kind == .noCard {
                    local.unusable.insert(error.kind)
                    worker.statusBox.withLock { $0.lastError = "\(advice) (\(error))" }
                    post(.fault("camera not usable: \(advice)"))
                }
                return
            } catch {
                post(.stillFailed(captureID: request.captureID, message: "camera lost", at: clock.now()))
                lost(error, local)
                return
            }
        }
    }

    /// Deletes a capture's files from the camera (`gp_camera_file_delete`) while `capture_target = ram` is in
    /// force there; on the card they stay.
    private func deleteFromCamera(_ files: [GPhoto2FilePath], _ camera: GPhoto2Camera, _ local: Local) {
        guard local.ramTarget else { return }
        for path in files {
            do {
                try camera.delete(path)
                log.debug("camera: \(path) deleted from the camera (capture target RAM)")
            } catch {
                log.warning("camera: deleting \(path) on the camera: \(error)")
            }
        }
    }

    /// `gp_camera_trigger_capture`, then the events drained until the capture's files are known or `deadline`.
    private func release(_ camera: GPhoto2Camera, until deadline: MonotonicInstant, _ local: Local) throws
        -> (files: StillFiles, shutterAt: MonotonicInstant, fileAt: MonotonicInstant) {
        // Events left from before (a file of a capture given up at its deadline, the RAW of the last pair)
        // are not this still's.
        let started = clock.now()
        for _ in 0..<100 {
            let event = try camera.waitForEvent(timeoutMilliseconds: 0)
            if event == .timeout { break }
            if case let .fileAdded(late) = event {
                log.warning("camera: \(late) is an earlier capture's file (the RAW of a RAW+JPEG pair, or a still that came after its capture was given up); not used")
                deleteFromCamera([late], camera, local)
            }
        }
        let drained = clock.now()
        heartbeat.turn(at: drained)
        try camera.trigger()
        let shutterAt = clock.now()
        log.debug("camera: earlier events drained in \(Int(drained.milliseconds(since: started))) ms, gp_camera_trigger_capture \(Int(shutterAt.milliseconds(since: drained))) ms")
        var files = StillFiles()
        var fileAt = shutterAt
        var quietRounds = 0
        while clock.now() < deadline {
            heartbeat.turn(at: clock.now())
            let asked = clock.now()
            let event = try camera.waitForEvent(timeoutMilliseconds: 200)
            if case .fileAdded = event, files.jpeg == nil { fileAt = clock.now() }
            let more = files.take(event)
            if event == .timeout {
                // A driver that answers "timeout" at once must not make this a busy loop.
                let waited = clock.now().milliseconds(since: asked)
                if waited < 200 { Monotonic.sleep(nanoseconds: UInt64((200 - waited) * 1_000_000)) }
                if files.jpeg != nil || files.rawOnly { quietRounds += 1 }
                if quietRounds >= 2 { break }
                continue
            }
            if !more { break }
        }
        return (files, shutterAt, fileAt)
    }

    private func finishStill(_ request: StillRequest, _ bytes: [UInt8], path: GPhoto2FilePath, shutterAt: MonotonicInstant,
                             fileAt: MonotonicInstant, downloadStart: MonotonicInstant, downloadedAt: MonotonicInstant, _ local: Local) {
        if let defect = FrameCheck.defect(of: bytes, format: .mjpeg) {
            worker.statusBox.withLock { $0.droppedByKind["still-" + defect.rawValue, default: 0] += 1 }
            log.error("camera: capture \(request.captureID): \(path) is not a whole JPEG (\(defect)); not kept")
            post(.stillFailed(captureID: request.captureID, message: "the camera sent a broken file (\(defect))", at: clock.now()))
            return
        }
        do {
            let rotator = try local.rotator ?? JPEGRotator()
            local.rotator = rotator
            let upright = try rotator.upright(bytes, quality: request.jpegQuality)
            let (jpeg, turn) = try turned(upright.bytes, request.rotation, quality: request.jpegQuality, local)
            let decoder = try local.decoder ?? JPEGDecoder()
            local.decoder = decoder
            let size = try decoder.header(jpeg).size
            let ready = clock.now()
            var still = CameraStill(captureID: request.captureID, jpeg: jpeg, trigger: request.trigger, frameTimestamp: shutterAt,
                                    readyAt: ready, size: size, format: .mjpeg,
                                    passedThrough: upright.method == .unchanged && turn == .unchanged,
                                    turn: upright.method == .unchanged ? turn : (upright.method == .lossless ? .lossless : .reencoded))
            let timings = StillTimings(triggerToShutter: max(0, shutterAt.milliseconds(since: request.trigger)),
                                       shutterToFile: fileAt.milliseconds(since: shutterAt),
                                       download: downloadedAt.milliseconds(since: downloadStart),
                                       prepare: ready.milliseconds(since: downloadedAt), bytes: bytes.count)
            lastTimings.withLock { $0 = timings }
            // Late (after its deadline): the machine gave this capture up and asked again. Its retry, waiting in the
            // queue, gets this still (taken for it; no second shutter) and this capture no answer (nothing saved twice).
            var answer = still
            if let deadline = request.deadline, ready > deadline, let retry = takeQueuedRetry(of: deadline) {
                // The trigger stays this still's own (the countdown's zero the guests posed for): the still
                // shows the scene then, not at the retry's.
                answer.captureID = retry.captureID
                log.info("camera: capture \(request.captureID)'s still came after its deadline: it answers capture \(retry.captureID), "
                         + "asked for while it was on its way (no second shutter)")
            }
            still = answer
            log.info("camera: capture \(request.captureID): \(path) \(size), \(bytes.count) bytes; trigger→shutter "
                     + "\(Int(timings.triggerToShutter)) ms, shutter→file \(Int(timings.shutterToFile)) ms, download "
                     + "\(Int(timings.download)) ms, upright/turn \(Int(timings.prepare)) ms"
                     + (upright.orientation != .topLeft ? " (EXIF orientation \(upright.orientation.rawValue) made upright, \(upright.method.rawValue))" : ""))
            post(.still(still))
        } catch {
            worker.statusBox.withLock { $0.droppedByKind["still-garbage", default: 0] += 1 }
            log.error("camera: capture \(request.captureID): \(path) does not decode (\(error)); not kept")
            post(.stillFailed(captureID: request.captureID, message: "the camera sent a file that does not decode", at: clock.now()))
        }
    }

    private func turned(_ jpeg: [UInt8], _ rotation: Rotation, quality: Int, _ local: Local) throws -> (bytes: [UInt8], turn: StillTurn) {
        guard rotation != .r0 else { return (jpeg, .unchanged) }
        let rotator = try local.rotator ?? JPEGRotator()
        local.rotator = rotator
        let (bytes, method) = try rotator.rotate(jpeg, by: rotation, quality: quality)
        return (bytes, method == .lossless ? .lossless : (method == .unchanged ? .unchanged : .reencoded))
    }

    // MARK: Words

    /// The machine's retry of a capture given up at `deadline`, if it waits in the queue: the first still
    /// request there whose trigger is within ``retryWindowMilliseconds`` of that deadline (the machine asks
    /// again when its capture timer fires), taken out of the queue. A later request (the next guest's) is no retry.
    private func takeQueuedRetry(of deadline: MonotonicInstant) -> StillRequest? {
        worker.requests.withLock { queue in
            guard let i = queue.firstIndex(where: { if case .still = $0 { true } else { false } }),
                  case let .still(request) = queue[i],
                  abs(request.trigger.milliseconds(since: deadline)) <= Double(Self.retryWindowMilliseconds) else { return nil }
            queue.remove(at: i)
            return request
        }
    }

    /// How near a capture's deadline its retry's trigger is (ms).
    static let retryWindowMilliseconds = 2_000
}
