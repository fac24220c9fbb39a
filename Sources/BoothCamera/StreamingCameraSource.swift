import BoothClock
import BoothCore
import BoothJPEG
import BoothPorts
import Synchronization

/// A ``CameraSource`` for a camera that streams frames (a ``V4L2Camera``, the ``SimulatedCamera``): runs
/// the ``CameraDevice`` on a thread of its own (opening, streaming, the newest frame for the screens) and
/// takes a still as the first good frame at or after the trigger. Opening and starting a stream can
/// block for seconds, so none of it runs on the loop that handles the button.
///
/// A still request is answered from the last few frames kept (``recentFrameLimit``: a press is known
/// only after its debounce, so the frame at its edge has often gone by as live view) or from the next
/// ones (``CaptureFrameSelector``); when the size the camera gives for `camera.capture_size` differs from
/// the size the live view streams at (as negotiated, not as asked) the stream switches to it for the
/// still and back (dropping `camera.settle_frames`). A stream without
/// frames for ``stallMilliseconds`` is a fault (``CameraSourceEvent/fault(_:)``, `"camera lost: …"`).
public final class StreamingCameraSource: CameraSource {
    /// What the thread is asked to do.
    enum Request: Sendable {
        case start, stop, probe, prepareStill
        case still(StillRequest)
        case snapshot(rotation: Rotation, jpegQuality: Int, @Sendable ([UInt8]?) -> Void)
        case reconfigure(StreamRequest, captureSize: FrameSize)
        case shutdown
    }

    /// Figures for `status`, in the camera module's own terms (``status`` is them for the port).
    public struct Status: Sendable {
        public var streaming = false
        public var info: StreamInfo?
        /// The stream's counters (since its start).
        public var statistics: CameraStatistics?
        /// Frames that passed the arrival check but did not decode at capture (TurboJPEG error or
        /// warning), since the daemon started; each time the next good frame was taken instead.
        public var badFrames = 0
        /// Frames dropped on arrival (``FrameCheck``) since the daemon started, by kind.
        public var droppedByDefect: [FrameDefect: Int] = [:]
        /// The sum of ``droppedByDefect``.
        public var framesDropped: Int { droppedByDefect.values.reduce(0, +) }
        /// Frames the driver never handed over (sequence gaps) since the daemon started.
        public var framesLost = 0
        public var lastError: String?
        /// The stream's negotiation warnings (size, format or frame rate not offered, a control that
        /// failed) and whether `camera.capture_size` is offered, as logged at its start.
        public var warnings: [String] = []
        /// The controls the camera has, as found at the last start.
        public var controls: Set<CameraControlKind> = []
    }

    /// The "camera" thread (``run(_:)``: the requests, and between them the stream's frames), its queue, handlers and status.
    private let worker = CameraWorker<Request, Status>(status: Status())
    private let deviceFactory: @Sendable () -> any CameraDevice
    private let settings: Mutex<(stream: StreamRequest, captureSize: FrameSize)>
    private let clock: any MonotonicClock
    private let log: Logger

    /// - Parameters:
    ///   - device: makes the camera (a ``V4L2Camera`` or a ``SimulatedCamera``); called on the source's thread.
    ///   - stream: the live-view stream request (device selector, format, size, fps, controls).
    ///   - captureSize: the still size, pixels; when it differs from the live-view size the stream is
    ///     switched for the still and back.
    public init(device: @escaping @Sendable () -> any CameraDevice, stream: StreamRequest, captureSize: FrameSize,
                clock: any MonotonicClock, log: Logger) {
        self.deviceFactory = device
        self.settings = Mutex((stream, captureSize))
        self.clock = clock
        self.log = log
    }

    /// The source for `camera.*` settings `s`.
    public convenience init(device: @escaping @Sendable () -> any CameraDevice, settings s: Settings.Camera,
                            clock: any MonotonicClock, log: Logger) {
        self.init(device: device, stream: StreamRequest(s), captureSize: s.captureSize, clock: clock, log: log)
    }

    /// Live view, always; the format and size of the stream in use and the controls the camera has,
    /// once it started; as still size, the one asked for (`camera.capture_size`: the stream switches to
    /// the nearest offered, and warns, when the camera lacks it).
    public var capabilities: CameraCapabilities {
        let info = worker.statusBox.withLock { $0.info }
        return CameraCapabilities(hasLiveView: true,
                                  liveViewModes: info.map { [LiveViewMode(format: $0.format, sizes: [$0.size])] } ?? [],
                                  stillSizes: [settings.withLock { $0.captureSize }],
                                  controls: worker.statusBox.withLock { $0.controls })
    }

    /// Starts the thread (`pthread_create`); without one the camera is a fault.
    public func launch(_ handlers: CameraSourceHandlers) {
        worker.launch(handlers, log: log) { [self] w in self.run(w) }
    }

    /// Opens the camera and starts the stream; a failure is a fault (`"camera not available: …"`).
    public func startLiveView() { send(.start) }
    /// Stops the stream and releases the camera (VIDIOC_STREAMOFF, munmap, close); a still waiting for
    /// its frame is answered with `stillFailed`.
    public func stopLiveView() { send(.stop) }
    /// Opens and streams briefly to see whether the camera works again (``probeForFrame(_:)``).
    public func probe() { send(.probe) }
    /// The countdown began: the streaming device prepares its still (``CameraDevice/prepareStill()``:
    /// libcamera's autofocus cycle); a failed focus is logged, the still is still taken.
    public func prepareStill() { send(.prepareStill) }
    /// Takes the still: the first good frame at or after `request.trigger`, waiting until its deadline.
    /// While a still with a deadline waits, a stream without frames is not a camera fault: the deadline
    /// decides, and the no-frames time (``stallMilliseconds``) counts again from it. Without a deadline
    /// the still waits until taken, superseded or the stream stops.
    public func takeStill(_ request: StillRequest) { send(.still(request)) }
    /// The newest frame as JPEG (nil when not streaming), handed to `reply` on the source's thread.
    public func snapshot(rotation: Rotation, jpegQuality: Int, _ reply: @escaping @Sendable ([UInt8]?) -> Void) {
        send(.snapshot(rotation: rotation, jpegQuality: jpegQuality, reply))
    }
    /// New settings, used from the next start.
    public func reconfigure(_ s: Settings.Camera) { reconfigure(stream: StreamRequest(s), captureSize: s.captureSize) }
    /// New stream request and still size, used from the next start.
    public func reconfigure(stream: StreamRequest, captureSize: FrameSize) {
        send(.reconfigure(stream, captureSize: captureSize))
    }

    /// Stops the stream, releases the camera and ends the thread; waits up to `timeoutSeconds`.
    public func shutdown(timeoutSeconds: Double = 3) {
        worker.finish(sending: .shutdown, timeoutSeconds: timeoutSeconds)
    }

    /// `--check`: opens a device of its own, waits for a good frame (``probeForFrame(_:)``), releases it.
    public func check() -> CameraCheckResult {
        let camera = deviceFactory()
        let (request, captureSize) = settings.withLock { $0 }
        do {
            let info = try camera.start(request)
            let sizeWarning = captureSizeWarning(asked: captureSize, previewRequest: request.size, preview: info, device: camera)
            let found = try StreamingCameraSource.probeForFrame(camera)
            camera.stop()
            if found == nil {
                throw StreamingCameraError.noFrames(badFrames: DroppedFrameTally.sentByTheCamera(camera.statistics.droppedByDefect))
            }
            return .works(description: "\(info)", warnings: info.warnings + [sizeWarning].compactMap { $0 })
        } catch {
            camera.stop()
            return .fails("\(error)")
        }
    }

    /// The figures for `status`, in the camera module's terms.
    public var detailedStatus: Status { worker.statusBox.withLock { $0 } }

    /// The figures for `status`.
    public var status: CameraSourceStatus {
        let s = detailedStatus
        var r = CameraSourceStatus()
        r.streaming = s.streaming
        r.devicePath = s.info?.devicePath
        r.card = s.info?.card
        r.format = s.info?.format.rawValue
        r.size = s.info?.size
        r.framesPerSecond = s.info?.framesPerSecond
        r.measuredFramesPerSecond = s.statistics.map { $0.measuredFramesPerSecond }
        r.framesDelivered = s.statistics?.framesDelivered ?? 0
        r.badFrames = s.badFrames
        r.droppedByKind = Dictionary(uniqueKeysWithValues: s.droppedByDefect.map { ($0.key.rawValue, $0.value) })
        r.framesLost = s.framesLost
        r.lastError = s.lastError
        r.warnings = s.warnings
        return r
    }

    /// The thread's sign of life, for the watchdog's liveness check.
    public var heartbeat: Heartbeat { worker.heartbeat }

    /// The one probe loop (the fault retry and `--check`): up to 10 waits of 500 ms for a good frame
    /// from a started `camera`; nil when none came. Throws what `nextFrame` throws.
    public static func probeForFrame(_ camera: any CameraDevice) throws -> Frame? {
        var frame: Frame?
        for _ in 0..<10 where frame == nil { frame = try camera.nextFrame(timeoutMilliseconds: 500) }
        return frame
    }

    private func send(_ r: Request) { worker.send(r) }

    private func post(_ event: CameraSourceEvent) { worker.post(event) }

    // MARK: The source's thread

    /// A still being waited for.
    typealias Pending = StillRequest

    /// State owned by the source's thread only.
    private final class Local {
        var device: (any CameraDevice)?
        var streaming = false
        /// The still waiting for its frame (the machine asks for one at a time).
        var pending: Pending?
        var selector = CaptureFrameSelector()
        /// Changes whenever the stream restarts (start, stop, size switch): a frame dequeued
        /// before the change belongs to the old stream.
        var generation = 0
        var latest: Frame?
        /// The last few frames of this stream, oldest first (see ``StreamingCameraSource/recentFrameLimit``):
        /// a press is known only after its debounce, so the first frame at or after its edge
        /// has often been dequeued (as preview) before the capture is asked for.
        var recent: [Frame] = []
        /// When the stream started or last delivered a frame (the source's clock).
        var lastFrameAt: MonotonicInstant?
        /// Where the no-frames time counts from: ``lastFrameAt``, the end of a capture's wait (its
        /// deadline), or the end of the booth's own work on a still (its encode, a size switch), whichever
        /// is latest: only time the camera was asked for frames counts.
        var quietSince: MonotonicInstant?
        /// The stream runs at the capture size for the pending still (switched for it), to be switched
        /// back to the live-view size after it.
        var atCaptureSize = false
        /// The live-view stream's size as the camera gives it (the negotiated size, not the one asked).
        var liveSize: FrameSize?
        /// Bad frames dropped on arrival, cumulative, and their rate-limited log.
        var drops = DroppedFrameTally()
        /// Frames rejected at capture for the pending capture (only the first is logged).
        var rejected = 0
        var jpeg = StillJPEG()
        /// When the last frame went to the screens (the source's clock).
        var lastLiveAt: MonotonicInstant?
        /// A still's switch of the stream size: when live view last had a frame before it, and the capture;
        /// cleared by the first live frame after the switch back, which logs the gap.
        var gap: (since: MonotonicInstant, captureID: UInt64)?
        /// The pending still comes from the camera's still stream (``CameraDevice/stillStreamSize``), not from
        /// the live frames: the live view goes on, and no size switch happens.
        var stillFromStream = false
    }

    /// The thread's loop: the queued requests, then one pump of the stream while it runs, or a wait
    /// for the next request while it does not. Ends at `shutdown` (or a finish with nothing queued).
    private func run(_ w: WorkerThread) {
        let local = Local()
        defer { stopDevice(local) }
        while true {
            heartbeat.turn(at: clock.now())
            if !handleRequests(local) { return }
            if local.streaming {
                if !pump(local) { return }
            } else {
                if !worker.hasRequests { heartbeat.waiting() }
                if w.waitForWork({ worker.hasRequests }) == .stop { return }
            }
        }
    }

    /// Handles the queued requests; false ends the thread.
    private func handleRequests(_ local: Local) -> Bool {
        let batch = worker.takeAll()
        for request in batch where !handle(request, local) { return false }
        return true
    }

    /// Handles one request; false ends the thread.
    private func handle(_ request: Request, _ local: Local) -> Bool {
        switch request {
        case .start:
            if !local.streaming { startDevice(local, reportFault: true) }
        case .stop:
            stopDevice(local)
        case .probe:
            probe(local)
        case .prepareStill:
            if local.streaming { local.device?.prepareStill() }
        case let .still(still):
            guard local.streaming else {
                post(.stillFailed(captureID: still.captureID, message: "camera not streaming", at: clock.now()))
                return true
            }
            beginCapture(still, local)
        case let .snapshot(rotation, quality, reply):
            reply(local.latest.flatMap { try? local.jpeg.make($0, rotation: rotation, quality: quality).bytes })
        case let .reconfigure(stream, captureSize):
            settings.withLock { $0 = (stream, captureSize) }
        case .shutdown:
            return false
        }
        return true
    }

    private func startDevice(_ local: Local, reportFault: Bool) {
        var (request, captureSize) = settings.withLock { $0 }
        // A camera that can run a still stream beside the live view sets one up at the capture size.
        request.stillSize = captureSize != request.size ? captureSize : nil
        let device = local.device ?? deviceFactory()
        local.device = device
        do {
            let info = try device.start(request)
            local.streaming = true
            local.liveSize = info.size
            local.atCaptureSize = false
            local.lastFrameAt = clock.now()
            local.quietSince = local.lastFrameAt
            local.drops.streamStarted()
            let warnings = info.warnings + [captureSizeWarning(asked: captureSize, previewRequest: request.size, preview: info, device: device)].compactMap { $0 }
            let controls = device.controls
            worker.statusBox.withLock { $0.streaming = true; $0.info = info; $0.lastError = nil; $0.warnings = warnings; $0.controls = controls }
            log.info("camera: streaming \(info)")
            if !info.controlNotes.isEmpty { log.info("camera: controls: \(info.controlNotes.joined(separator: "; "))") }
            if let still = device.stillStreamSize { log.info("camera: a still stream at \(still) beside the live view (stills without a switch)") }
            for w in warnings { log.warning("camera: \(w)") }
        } catch {
            device.stop()
            local.device = nil
            local.streaming = false
            worker.statusBox.withLock { $0.streaming = false; $0.lastError = "\(error)" }
            if reportFault { post(.fault("camera not available: \(error)")) }
        }
    }

    private func stopDevice(_ local: Local) {
        if let p = local.pending {
            post(.stillFailed(captureID: p.captureID, message: "stream stopped", at: clock.now()))
        }
        local.pending = nil
        local.selector = CaptureFrameSelector()
        if let device = local.device {
            noteStatistics(device.statistics, local)
            device.stop()
        }
        local.device = nil
        local.latest = nil
        local.recent = []
        local.stillFromStream = false
        local.atCaptureSize = false
        local.liveSize = nil
        local.gap = nil  // a still's switch the stop cut short: no gap to report after a restart
        local.generation += 1
        if local.streaming { log.info("camera: stream stopped") }
        local.streaming = false
        worker.statusBox.withLock { $0.streaming = false }
    }

    private func probe(_ local: Local) {
        let wasStreaming = local.streaming
        if !wasStreaming { startDevice(local, reportFault: false) }
        guard let device = local.device, local.streaming else {
            let message = worker.statusBox.withLock { $0.lastError } ?? "camera not available"
            post(.fault("camera not available: \(message)"))
            return
        }
        do {
            let frame = try StreamingCameraSource.probeForFrame(device)
            noteStatistics(device.statistics, local)
            if frame == nil { throw StreamingCameraError.noFrames(badFrames: local.drops.badSinceGoodFrame) }
            local.drops.goodFrame()
            if !wasStreaming { stopDevice(local) }
            post(.recovered)
        } catch {
            stopDevice(local)
            post(.fault("camera not available: \(error)"))
        }
    }

    private func beginCapture(_ still: StillRequest, _ local: Local) {
        guard let device = local.device else { return }
        if let old = local.pending {
            post(.stillFailed(captureID: old.captureID, message: "superseded by capture \(still.captureID)", at: clock.now()))
            local.pending = nil
        }
        let (stream, captureSize) = settings.withLock { $0 }
        local.stillFromStream = false
        if captureSize != stream.size, device.stillStreamSize != nil {
            // The still stream answers: a still buffer joins the next request; the live view goes on.
            local.pending = still  // a failure below stops the stream, which fails this capture
            do { try device.requestStill() } catch {
                fail(local, error)
                return
            }
            local.rejected = 0
            local.stillFromStream = true
            return
        }
        if !local.atCaptureSize, switchSize(for: captureSize, device: device, local) {
            do {
                let since = local.lastLiveAt ?? clock.now()
                local.pending = still  // a failed switch stops the stream, which fails this capture
                let info = try device.reconfigure(size: captureSize)
                local.pending = nil
                local.atCaptureSize = true
                local.selector.streamRestarted()
                local.generation += 1
                local.recent = []
                local.gap = (since, still.captureID)
                local.quietSince = clock.now()  // the switch was the booth's own time, not the camera's silence
                log.info("camera: switched to \(info.size) for the capture")
            } catch {
                fail(local, error)
                return
            }
        }
        local.pending = still
        local.rejected = 0
        local.selector.arm(at: still.trigger)
        takeFromRecent(local)
    }

    /// Whether a still at `captureSize` needs the stream switched: the size the camera would give for it
    /// (``CameraDevice/offeredSize(nearestTo:)``, as negotiated) differs from the size the live view streams
    /// at. A camera that offers one size (a v4l2loopback fed 1920x1080 only) never switches, whatever the
    /// settings ask. When the device cannot tell, the sizes asked are compared (`camera.capture_size` and
    /// `camera.preview_size`): the asked capture size against the negotiated live size would switch a camera
    /// that streams another size than asked even with the two settings equal.
    private func switchSize(for captureSize: FrameSize, device: any CameraDevice, _ local: Local) -> Bool {
        guard let live = local.liveSize, let offered = device.offeredSize(nearestTo: captureSize) else {
            return captureSize != settings.withLock { $0.stream.size }
        }
        return offered != live
    }

    /// Back to the live-view size after a still that switched (``Local/atCaptureSize``); a failure is a fault.
    /// The no-frames time counts from the end of the switch.
    private func switchBack(_ device: any CameraDevice, _ local: Local) {
        guard local.atCaptureSize else { return }
        local.atCaptureSize = false
        do {
            _ = try device.reconfigure(size: settings.withLock { $0.stream.size })
            local.selector.streamRestarted()
            local.generation += 1
            local.recent = []
            local.quietSince = clock.now()
        } catch { fail(local, error) }
    }

    /// A streaming camera that delivers no frame for this long (ms) is a camera fault; while a
    /// capture waits for its frame, its deadline decides instead, and this time counts from there.
    public static let stallMilliseconds = 3000

    /// How many of the newest frames are kept for a capture asked for after its trigger.
    public static let recentFrameLimit = 4

    /// Takes the pending capture from the kept frames when one of them is at or after the
    /// trigger (the oldest such frame: the first frame after the trigger). Only frames with
    /// the driver's monotonic capture timestamp qualify; otherwise the live frames decide.
    private func takeFromRecent(_ local: Local) {
        var index = 0
        while index < local.recent.count, let p = local.pending {
            let frame = local.recent[index]
            index += 1
            guard frame.timestampIsMonotonic else { continue }
            var probe = local.selector
            guard case let .capture(latency) = probe.feed(frame) else { continue }
            local.selector.disarm()
            if !take(frame, latency: latency, for: p, local) { local.selector.arm(at: p.trigger) }
        }
    }

    /// Turns `frame` into still `p` and reports it; false when the frame is rejected (then the next
    /// frame is taken).
    private func take(_ frame: Frame, latency: Double, for p: Pending, _ local: Local) -> Bool {
        // The encode is the booth's own time, not the camera's silence: the no-frames time starts after it.
        defer { local.quietSince = clock.now() }
        do {
            let made = try local.jpeg.make(frame, rotation: p.rotation, quality: p.jpegQuality)
            local.pending = nil
            let turns = (frame.turned == .r0 ? "" : " turned \(frame.turned) by the camera")
                + (made.rotation == .r0 ? "" : " turned \(made.rotation)")
            log.info("capture \(p.captureID): frame #\(frame.sequence) \(frame.format.rawValue) \(frame.size)"
                     + turns + ", "
                     + "trigger-to-frame \(tenths(latency)) ms"
                     + (local.rejected > 0 ? " (\(counted(local.rejected, "frame")) before it did not decode)" : ""))
            post(.still(CameraStill(captureID: p.captureID, jpeg: made.bytes, trigger: p.trigger,
                                    frameTimestamp: frame.timestamp, readyAt: clock.now(),
                                    size: made.rotation.rotated(frame.size), format: frame.format,
                                    passedThrough: made.passedThrough, turn: made.turn)))
            return true
        } catch {
            worker.statusBox.withLock { $0.badFrames += 1 }
            local.rejected += 1
            // One line per capture: a camera sending undecodable frames at 30 fps would flood the log.
            if local.rejected == 1 {
                log.warning("capture \(p.captureID): frame #\(frame.sequence) rejected (\(error)); taking the next good one")
            }
            return false
        }
    }

    /// Reads the next frame; false ends the thread (shutdown requested meanwhile).
    ///
    /// Requests that arrived while waiting for the frame are handled before the frame is
    /// judged: a capture armed at trigger T while the poll waited takes this frame when its
    /// timestamp is at or after T, instead of letting it pass as preview.
    private func pump(_ local: Local) -> Bool {
        guard let device = local.device else { local.streaming = false; return true }
        let generation = local.generation
        let frame: Frame?
        do {
            frame = try device.nextFrame(timeoutMilliseconds: 200)
        } catch {
            fail(local, error)
            return true
        }
        noteStatistics(device.statistics, local)
        for note in device.takeLogNotes() { log.warning("camera: \(note)") }
        if !handleRequests(local) { return false }
        guard local.streaming, local.generation == generation else { return true }
        if let p = local.pending, let deadline = p.deadline, clock.now() >= deadline {
            endCaptureWait(p, at: deadline, local)
            guard local.streaming else { return true }
        }
        takeStills(device, local)
        guard local.streaming, local.generation == generation else { return true }  // a still's failure stopped it
        guard let frame else {
            // A stream that delivers nothing is a lost camera too (a v4l2loopback whose writer
            // stopped keeps its node and returns no error: it just never has a frame); so is
            // one that delivers only bad frames. A capture waiting with a deadline is failed by
            // its deadline first (the machine's retry, then "Sorry, try again").
            if local.pending?.deadline != nil { return true }
            let now = clock.now()
            if let quiet = local.quietSince, now.milliseconds(since: quiet) >= Double(StreamingCameraSource.stallMilliseconds) {
                let bad = local.drops.badSinceGoodFrame
                let silent = Int(now.milliseconds(since: local.lastFrameAt ?? quiet))
                fail(local, bad.isEmpty ? StreamingCameraError.stalled(milliseconds: silent)
                                        : StreamingCameraError.onlyBadFrames(milliseconds: silent, dropped: bad))
            }
            return true
        }
        local.lastFrameAt = clock.now()
        local.quietSince = local.lastFrameAt
        local.drops.goodFrame()
        let decision = local.selector.feed(frame)
        local.latest = frame
        local.recent.append(frame)
        if local.recent.count > StreamingCameraSource.recentFrameLimit { local.recent.removeFirst() }
        guard let p = local.pending, case let .capture(latency) = decision else {
            worker.liveFrame(frame)
            let now = clock.now()
            local.lastLiveAt = now
            if let gap = local.gap, local.pending == nil {
                local.gap = nil
                log.info("camera: live view back at \(frame.size) after capture \(gap.captureID): live-view gap \(tenths(now.milliseconds(since: gap.since))) ms (switch to the capture size and back)")
            }
            return true
        }
        guard take(frame, latency: latency, for: p, local) else {
            local.selector.arm(at: p.trigger)
            return true
        }
        switchBack(device, local)
        return true
    }

    /// The still stream's stills: the pending capture takes the first whose exposure began at or after its
    /// trigger (an earlier one, or one that does not decode, asks for another); stills nobody waits for
    /// (their capture ended) are dropped.
    private func takeStills(_ device: any CameraDevice, _ local: Local) {
        while let still = device.takeStillFrame() {
            guard local.stillFromStream, let p = local.pending else { continue }
            guard still.timestamp >= p.trigger else {
                log.info("capture \(p.captureID): still #\(still.sequence) exposed before the trigger; asking for another")
                do { try device.requestStill() } catch { fail(local, error); return }
                continue
            }
            if take(still, latency: still.timestamp.milliseconds(since: p.trigger), for: p, local) {
                local.stillFromStream = false
            } else {
                do { try device.requestStill() } catch { fail(local, error); return }
            }
        }
    }

    /// Still `p`'s deadline passed without a good frame: the wait ends (the machine fails the
    /// capture by its own timer), the stream goes back to the preview size, and the no-frames time
    /// counts from the deadline.
    private func endCaptureWait(_ p: Pending, at deadline: MonotonicInstant, _ local: Local) {
        local.pending = nil
        let fromStream = local.stillFromStream
        local.stillFromStream = false
        local.selector.disarm()
        local.quietSince = max(local.quietSince ?? deadline, deadline)
        log.info("capture \(p.captureID): no good frame by its deadline"
                 + (local.rejected > 0 ? " (\(counted(local.rejected, "frame")) did not decode)" : ""))
        guard !fromStream, let device = local.device else { return }
        switchBack(device, local)
    }

    /// Publishes the stream's counters and folds its drops into the totals (logging them, rate-limited).
    private func noteStatistics(_ statistics: CameraStatistics, _ local: Local) {
        let line = local.drops.update(statistics.droppedByDefect, lostFrames: statistics.framesLost, at: clock.now())
        let (total, lost) = (local.drops.total, local.drops.lost)
        worker.statusBox.withLock { $0.statistics = statistics; $0.droppedByDefect = total; $0.framesLost = lost }
        if let line { log.warning(line) }
    }

    private func fail(_ local: Local, _ error: any Error) {
        log.error("camera: \(error)")
        worker.statusBox.withLock { $0.lastError = "\(error)" }
        stopDevice(local)
        post(.fault("camera lost: \(error)"))
    }
}

/// The JPEG of a still or snapshot from a frame, in one place, upright in its pixels by `rotation`
/// (no EXIF orientation left; a frame the camera turned already, ``Frame/turned``, is turned by what is
/// left, and by nothing more reports ``StillTurn/camera``): a YUYV/RGB24 frame turned by libyuv and encoded once at `quality`, 4:2:0
/// (``JPEGEncoder/encode(_:quality:turnedBy:yuvRange:)``); an MJPEG frame as it came (validated;
/// standard Huffman tables inserted when missing), turned by ``JPEGRotator`` (lossless when whole
/// MCUs, else decoded and re-encoded at `quality`). Keeps its TurboJPEG handles between calls; one
/// thread at a time.
struct StillJPEG {
    private var encoder: JPEGEncoder?
    private var decoder: JPEGDecoder?
    private var rotator: JPEGRotator?

    /// - Throws: ``StreamingCameraError/corruptFrame`` for an MJPEG frame that does not decode; TurboJPEG's
    ///   errors (``TurboJPEGError``) from encoding or turning.
    /// `rotation` is the whole turn asked (`camera.rotation`); the result's `rotation` is the part turned here.
    mutating func make(_ frame: Frame, rotation: Rotation, quality: Int) throws
        -> (bytes: [UInt8], passedThrough: Bool, rotation: Rotation, turn: StillTurn) {
        let turn = rotation.remaining(after: frame.turned)
        if turn != .r0, frame.format != .mjpeg {
            // Raw pixels are turned (libyuv) before their one encode: never encoded, decoded and encoded again.
            let encoder = try self.encoder ?? JPEGEncoder()
            self.encoder = encoder
            return (try encoder.encode(frame, quality: quality, turnedBy: turn), false, turn, .pixels)
        }
        let (bytes, passthrough) = try upright(frame, quality: quality)
        guard turn != .r0 else { return (bytes, passthrough, turn, frame.turned == .r0 ? .unchanged : .camera) }
        let rotator = try self.rotator ?? JPEGRotator()
        self.rotator = rotator
        let (turned, method) = try rotator.rotate(bytes, by: turn, quality: quality)
        let how: StillTurn = switch method {
        case .unchanged: .unchanged
        case .lossless: .lossless
        case .reencoded: .reencoded
        }
        return (turned, passthrough, turn, how)
    }

    private mutating func upright(_ frame: Frame, quality: Int) throws -> (bytes: [UInt8], passthrough: Bool) {
        switch frame.format {
        case .mjpeg:
            let bytes = try JPEGMarkers.insertingStandardHuffmanTables(frame.bytes)
            let decoder = try self.decoder ?? JPEGDecoder()
            self.decoder = decoder
            guard decoder.validate(bytes) else { throw StreamingCameraError.corruptFrame }
            return (bytes, true)
        case .yuyv, .rgb24:
            let encoder = try self.encoder ?? JPEGEncoder()
            self.encoder = encoder
            return (try encoder.encode(frame, quality: quality), false)
        }
    }
}

/// Why a streaming camera failed.
public enum StreamingCameraError: Error, CustomStringConvertible {
    /// The probe saw no good frame in 5 s; `badFrames`: what it dropped meanwhile.
    case noFrames(badFrames: [FrameDefect: Int])
    case corruptFrame
    /// No frame for `milliseconds` (since the last one, or the stream's start).
    case stalled(milliseconds: Int)
    /// Frames kept coming for `milliseconds`, all of them bad.
    case onlyBadFrames(milliseconds: Int, dropped: [FrameDefect: Int])
    public var description: String {
        switch self {
        case let .noFrames(bad):
            bad.isEmpty ? "no frames within 5 s"
                : "no good frame within 5 s, only bad ones (\(DroppedFrameTally.summary(bad)))"
        case .corruptFrame: "MJPEG frame does not decode"
        case let .stalled(ms): "stream stalled: no frames for \(ms / 1000) s"
        case let .onlyBadFrames(ms, dropped):
            "only bad frames for \(ms / 1000) s (\(counted(dropped.values.reduce(0, +), "frame")) dropped: \(DroppedFrameTally.summary(dropped)))"
        }
    }
}

/// The warning when `camera.capture_size` (`asked`) is not the size captures will have: the preview
/// stream's size when `asked` is the preview's `previewRequest` (no switch), else the nearest size
/// the camera offers (``CameraDevice/offeredSize(nearestTo:)``). Nil when they match or the device
/// cannot tell.
public func captureSizeWarning(asked: FrameSize, previewRequest: FrameSize, preview: StreamInfo, device: any CameraDevice) -> String? {
    let used = asked == previewRequest ? preview.size : device.offeredSize(nearestTo: asked)
    guard let used, used != asked else { return nil }
    return "camera.capture_size \(asked) is not offered by the camera; captures will be \(used) (the nearest offered size)"
}

extension StreamRequest {
    /// The live-view stream request for `camera.*` settings `s` (live-view size, format, frame rate,
    /// settle frames, controls, the fixed `camera.rotation`; an empty `camera.device` is `auto`).
    public init(_ s: Settings.Camera) {
        self.init(device: s.device.isEmpty ? "auto" : s.device, format: s.format, size: s.previewSize,
                  framesPerSecond: Double(s.frameRate), settleFrames: s.settleFrames,
                  controls: CameraControlSettings(powerLineFrequency: s.powerLineFrequency, exposure: s.exposure,
                                                  whiteBalance: s.whiteBalance, focus: s.focus),
                  turn: s.rotation.fixed)
    }
}

/// `"12.3"`: milliseconds to one decimal.
private func tenths(_ ms: Double) -> String {
    let tenths = Int((ms * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}

/// `1 frame`, `3 frames`.
private func counted(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }
