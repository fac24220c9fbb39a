import BoothCamera
import BoothClock
import BoothCore
import BoothPorts
import BoothJPEG
import FoundationEssentials
import Glibc
import Synchronization

/// Runs a ``CameraDevice`` on a thread of its own: opening, streaming, the newest frame for the
/// preview, and captures (the first good frame at or after the trigger). Opening and starting a
/// stream can block for seconds, so none of it runs on the loop that handles the button.
///
/// Results go back to the main loop as events: `captureSucceeded`/`captureFailed`,
/// `deviceFault(.camera)` on loss, `deviceRecovered(.camera)` after a successful probe.
public final class CameraWorker: Sendable {
    /// What the worker is asked to do.
    enum Request: Sendable {
        case start, stop, probe
        case capture(id: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant?)
        case snapshot(@Sendable ([UInt8]?) -> Void)
        case reconfigure(StreamRequest, captureSize: FrameSize, jpegQuality: Int)
        case shutdown
    }

    /// Figures for `status`.
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
    }

    private let requests = Mutex<[Request]>([])
    private let wake = MonotonicCondition()
    private let statusBox = Mutex(Status())
    private let deviceFactory: @Sendable () -> any CameraDevice
    private let settings: Mutex<(stream: StreamRequest, captureSize: FrameSize, jpegQuality: Int)>
    private let post: @Sendable (BoothEvent) -> Void
    private let captures: CaptureBox
    private let clock: any MonotonicClock
    private let log: Logger
    private let onFrame: @Sendable (Frame) -> Void
    private let rotation: @Sendable () -> Rotation
    private let finished = Mutex(false)
    private let done = MonotonicCondition()

    /// - Parameters:
    ///   - device: makes the camera (a ``V4L2Camera`` or a ``SimulatedCamera``); called on the worker's thread.
    ///   - stream: the preview stream request (device selector, format, preview size, fps, controls).
    ///   - captureSize: the capture size; when it differs from the preview size the stream is switched
    ///     for the capture and back.
    ///   - jpegQuality: TurboJPEG quality for YUYV/RGB captures (1–100).
    ///   - post: delivers events to the main loop.
    ///   - onFrame: sees every good preview frame, on the worker's thread (the preview sink).
    ///   - rotation: the clockwise turn for captures (`camera.rotation`), asked once per capture.
    public init(rotation: @escaping @Sendable () -> Rotation = { .r0 }, device: @escaping @Sendable () -> any CameraDevice, stream: StreamRequest, captureSize: FrameSize,
                jpegQuality: Int, captures: CaptureBox, clock: any MonotonicClock, log: Logger,
                post: @escaping @Sendable (BoothEvent) -> Void, onFrame: @escaping @Sendable (Frame) -> Void) {
        self.deviceFactory = device
        self.settings = Mutex((stream, captureSize, jpegQuality))
        self.post = post
        self.captures = captures
        self.clock = clock
        self.log = log
        self.onFrame = onFrame
        self.rotation = rotation
    }

    /// Starts the worker's thread; without one (`pthread_create` failed) the camera is a fault.
    public func launch() {
        guard OSThread.start(name: "camera", { [self] in self.run() }) else {
            log.error("camera: no thread for the camera worker (pthread_create failed: the thread limit)")
            post(.deviceFault(.camera, message: "camera not available: no thread for it (pthread_create failed)"))
            return
        }
    }

    /// Opens the camera and starts the preview stream on the worker's thread; a failure is posted
    /// as `deviceFault(.camera)`.
    public func startStream() { send(.start) }
    /// Stops the stream and releases the camera (VIDIOC_STREAMOFF, munmap, close); a capture waiting
    /// for its frame is answered with `captureFailed`.
    public func stopStream() { send(.stop) }
    /// Opens and streams briefly to see whether the camera works again; answers with
    /// `deviceRecovered(.camera)` or `deviceFault(.camera)`.
    public func probe() { send(.probe) }
    /// Takes capture `id`: the first good frame at or after `trigger`, waiting until `deadline`
    /// (the machine's `camera.capture_timeout`; the caller fails the capture then). While a capture
    /// with a deadline waits, a stream without frames is not a camera fault: the deadline decides,
    /// and the no-frames time (``stallMilliseconds``) counts again from it. Without a deadline the
    /// capture waits until taken, superseded or the stream stops.
    public func capture(id: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant? = nil) {
        send(.capture(id: id, trigger: trigger, deadline: deadline))
    }
    /// The newest frame as JPEG (nil when not streaming), handed to `reply` on the worker's thread.
    public func snapshot(_ reply: @escaping @Sendable ([UInt8]?) -> Void) { send(.snapshot(reply)) }
    /// New settings, used from the next start.
    public func reconfigure(stream: StreamRequest, captureSize: FrameSize, jpegQuality: Int) {
        send(.reconfigure(stream, captureSize: captureSize, jpegQuality: jpegQuality))
    }

    /// Stops the stream, releases the camera and ends the thread; waits up to `timeoutSeconds`.
    public func shutdown(timeoutSeconds: Double = 3) {
        send(.shutdown)
        let deadline = Monotonic.now().adding(milliseconds: Int64(timeoutSeconds * 1000))
        done.lock()
        while !finished.withLock({ $0 }) {
            if !done.wait(until: deadline) { break }
        }
        done.unlock()
    }

    /// The figures for `status`.
    public var status: Status { statusBox.withLock { $0 } }
    /// The worker thread's sign of life, for the watchdog's liveness check.
    public let heartbeat = Heartbeat()

    private func send(_ r: Request) {
        requests.withLock { $0.append(r) }
        wake.lock(); wake.signal(); wake.unlock()
    }

    // MARK: The worker's thread

    /// State owned by the worker's thread only.
    private final class Local {
        var device: (any CameraDevice)?
        var streaming = false
        /// The capture waiting for its frame (the machine asks for one at a time) and its deadline.
        var pending: (id: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant?)?
        var selector = CaptureFrameSelector()
        /// Changes whenever the stream restarts (start, stop, size switch): a frame dequeued
        /// before the change belongs to the old stream.
        var generation = 0
        var latest: Frame?
        /// The last few frames of this stream, oldest first (see ``CameraWorker/recentFrameLimit``):
        /// a press is known only after its debounce, so the first frame at or after its edge
        /// has often been dequeued (as preview) before the capture is asked for.
        var recent: [Frame] = []
        /// When the stream started or last delivered a frame (the worker's clock).
        var lastFrameAt: MonotonicInstant?
        /// Where the no-frames time counts from: ``lastFrameAt``, or the end of a capture's wait
        /// (its deadline) when that is later.
        var quietSince: MonotonicInstant?
        /// Bad frames dropped on arrival, cumulative, and their rate-limited log.
        var drops = DroppedFrameTally()
        /// Frames rejected at capture for the pending capture (only the first is logged).
        var rejected = 0
        var encoder: JPEGEncoder?
        var decoder: JPEGDecoder?
        var rotator: JPEGRotator?
    }

    private func run() {
        let local = Local()
        defer {
            stopDevice(local)
            finished.withLock { $0 = true }
            done.lock(); done.broadcast(); done.unlock()
        }
        while true {
            heartbeat.turn(at: clock.now())
            if !handleRequests(local) { return }
            if local.streaming {
                if !pump(local) { return }
            } else {
                wake.lock()
                if requests.withLock({ $0.isEmpty }) { heartbeat.waiting(); wake.wait() }
                wake.unlock()
            }
        }
    }

    /// Handles the queued requests; false ends the thread.
    private func handleRequests(_ local: Local) -> Bool {
        let batch: [Request] = requests.withLock { r in defer { r.removeAll() }; return r }
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
        case let .capture(id, trigger, deadline):
            guard local.streaming else {
                post(.captureFailed(id: id, message: "camera not streaming", at: clock.now()))
                return true
            }
            beginCapture(id: id, trigger: trigger, deadline: deadline, local)
        case let .snapshot(reply):
            reply(local.latest.flatMap { try? jpeg(for: $0, local).bytes })
        case let .reconfigure(stream, captureSize, quality):
            settings.withLock { $0 = (stream, captureSize, quality) }
        case .shutdown:
            return false
        }
        return true
    }

    private func startDevice(_ local: Local, reportFault: Bool) {
        let request = settings.withLock { $0.stream }
        let device = local.device ?? deviceFactory()
        local.device = device
        do {
            let info = try device.start(request)
            local.streaming = true
            local.lastFrameAt = clock.now()
            local.quietSince = local.lastFrameAt
            local.drops.streamStarted()
            let captureSize = settings.withLock { $0.captureSize }
            let warnings = info.warnings + [captureSizeWarning(asked: captureSize, previewRequest: request.size, preview: info, device: device)].compactMap { $0 }
            statusBox.withLock { $0.streaming = true; $0.info = info; $0.lastError = nil; $0.warnings = warnings }
            log.info("camera: streaming \(info)")
            for w in warnings { log.warning("camera: \(w)") }
        } catch {
            device.stop()
            local.device = nil
            local.streaming = false
            statusBox.withLock { $0.streaming = false; $0.lastError = "\(error)" }
            if reportFault { post(.deviceFault(.camera, message: "camera not available: \(error)")) }
        }
    }

    private func stopDevice(_ local: Local) {
        if let p = local.pending {
            post(.captureFailed(id: p.id, message: "stream stopped", at: clock.now()))
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
        local.generation += 1
        if local.streaming { log.info("camera: stream stopped") }
        local.streaming = false
        statusBox.withLock { $0.streaming = false }
    }

    private func probe(_ local: Local) {
        let wasStreaming = local.streaming
        if !wasStreaming { startDevice(local, reportFault: false) }
        guard let device = local.device, local.streaming else {
            let message = statusBox.withLock { $0.lastError } ?? "camera not available"
            post(.deviceFault(.camera, message: "camera not available: \(message)"))
            return
        }
        do {
            var frame: Frame?
            for _ in 0..<10 where frame == nil { frame = try device.nextFrame(timeoutMilliseconds: 500) }
            noteStatistics(device.statistics, local)
            if frame == nil { throw CameraWorkerError.noFrames(badFrames: local.drops.badSinceGoodFrame) }
            local.drops.goodFrame()
            if !wasStreaming { stopDevice(local) }
            post(.deviceRecovered(.camera))
        } catch {
            stopDevice(local)
            post(.deviceFault(.camera, message: "camera not available: \(error)"))
        }
    }

    private func beginCapture(id: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant?, _ local: Local) {
        guard let device = local.device else { return }
        if let old = local.pending {
            post(.captureFailed(id: old.id, message: "superseded by capture \(id)", at: clock.now()))
        }
        let (stream, captureSize, _) = settings.withLock { $0 }
        if captureSize != stream.size {
            do {
                let info = try device.reconfigure(size: captureSize)
                local.selector.streamRestarted()
                local.generation += 1
                local.recent = []
                log.info("camera: switched to \(info.size) for the capture")
            } catch {
                fail(local, error)
                return
            }
        }
        local.pending = (id, trigger, deadline)
        local.rejected = 0
        local.selector.arm(at: trigger)
        takeFromRecent(local)
    }

    /// A streaming camera that delivers no frame for this long (ms) is a camera fault; while a
    /// capture waits for its frame, its deadline decides instead, and this time counts from there.
    static let stallMilliseconds = 3000

    /// How many of the newest frames are kept for a capture asked for after its trigger.
    static let recentFrameLimit = 4

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

    /// Turns `frame` into capture `p`'s record and reports it; false when the frame is rejected
    /// (then the next frame is taken).
    private func take(_ frame: Frame, latency: Double, for p: (id: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant?),
                      _ local: Local) -> Bool {
        do {
            let (bytes, passthrough, turn, method) = try jpeg(for: frame, local)
            let slot = captures.slot(of: p.id)
            captures.put(CaptureRecord(id: p.id, session: slot.session, shot: slot.shot, jpeg: bytes,
                                       trigger: p.trigger, frameTimestamp: frame.timestamp,
                                       readyAt: clock.now(), size: turn.rotated(frame.size), format: frame.format,
                                       passedThrough: passthrough, turn: method))
            local.pending = nil
            log.info("capture \(p.id): frame #\(frame.sequence) \(frame.format.rawValue) \(frame.size)"
                     + (turn == .r0 ? ", " : " turned \(turn), ")
                     + "trigger-to-frame \(format(latency)) ms"
                     + (local.rejected > 0 ? " (\(counted(local.rejected, "frame")) before it did not decode)" : ""))
            post(.captureSucceeded(id: p.id))
            return true
        } catch {
            statusBox.withLock { $0.badFrames += 1 }
            local.rejected += 1
            // One line per capture: a camera sending undecodable frames at 30 fps would flood the log.
            if local.rejected == 1 {
                log.warning("capture \(p.id): frame #\(frame.sequence) rejected (\(error)); taking the next good one")
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
        if !handleRequests(local) { return false }
        guard local.streaming, local.generation == generation else { return true }
        if let p = local.pending, let deadline = p.deadline, clock.now() >= deadline {
            endCaptureWait(p, at: deadline, local)
            guard local.streaming else { return true }
        }
        guard let frame else {
            // A stream that delivers nothing is a lost camera too (a v4l2loopback whose writer
            // stopped keeps its node and returns no error: it just never has a frame); so is
            // one that delivers only bad frames. A capture waiting with a deadline is failed by
            // its deadline first (the machine's retry, then "Sorry, try again").
            if local.pending?.deadline != nil { return true }
            let now = clock.now()
            if let quiet = local.quietSince, now.milliseconds(since: quiet) >= Double(CameraWorker.stallMilliseconds) {
                let bad = local.drops.badSinceGoodFrame
                let silent = Int(now.milliseconds(since: local.lastFrameAt ?? quiet))
                fail(local, bad.isEmpty ? CameraWorkerError.stalled(milliseconds: silent)
                                        : CameraWorkerError.onlyBadFrames(milliseconds: silent, dropped: bad))
            }
            return true
        }
        local.lastFrameAt = clock.now()
        local.quietSince = local.lastFrameAt
        local.drops.goodFrame()
        let decision = local.selector.feed(frame)
        local.latest = frame
        local.recent.append(frame)
        if local.recent.count > CameraWorker.recentFrameLimit { local.recent.removeFirst() }
        guard let p = local.pending, case let .capture(latency) = decision else {
            onFrame(frame)
            return true
        }
        guard take(frame, latency: latency, for: p, local) else {
            local.selector.arm(at: p.trigger)
            return true
        }
        let (stream, captureSize, _) = settings.withLock { $0 }
        if captureSize != stream.size {
            do {
                _ = try device.reconfigure(size: stream.size)
                local.selector.streamRestarted()
                local.generation += 1
            } catch { fail(local, error) }
        }
        return true
    }

    /// Capture `p`'s deadline passed without a good frame: the wait ends (the machine fails the
    /// capture by its own timer), the stream goes back to the preview size, and the no-frames time
    /// counts from the deadline.
    private func endCaptureWait(_ p: (id: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant?),
                                at deadline: MonotonicInstant, _ local: Local) {
        local.pending = nil
        local.selector.disarm()
        local.quietSince = max(local.quietSince ?? deadline, deadline)
        log.info("capture \(p.id): no good frame by its deadline"
                 + (local.rejected > 0 ? " (\(counted(local.rejected, "frame")) did not decode)" : ""))
        let (stream, captureSize, _) = settings.withLock { $0 }
        guard captureSize != stream.size, let device = local.device else { return }
        do {
            _ = try device.reconfigure(size: stream.size)
            local.selector.streamRestarted()
            local.generation += 1
            local.recent = []
        } catch { fail(local, error) }
    }

    /// Publishes the stream's counters and folds its drops into the totals (logging them, rate-limited).
    private func noteStatistics(_ statistics: CameraStatistics, _ local: Local) {
        let line = local.drops.update(statistics.droppedByDefect, lostFrames: statistics.framesLost, at: clock.now())
        let (total, lost) = (local.drops.total, local.drops.lost)
        statusBox.withLock { $0.statistics = statistics; $0.droppedByDefect = total; $0.framesLost = lost }
        if let line { log.warning(line) }
    }

    private func fail(_ local: Local, _ error: any Error) {
        log.error("camera: \(error)")
        statusBox.withLock { $0.lastError = "\(error)" }
        stopDevice(local)
        post(.deviceFault(.camera, message: "camera lost: \(error)"))
    }

    /// The JPEG for a frame: an MJPEG frame as it came (validated; standard Huffman tables
    /// inserted when missing), a YUYV/RGB24 frame encoded at `storage.jpeg_quality`, 4:2:0; then
    /// turned upright in its pixels by `camera.rotation` (``JPEGRotator``: lossless when whole MCUs,
    /// else re-encoded at `storage.jpeg_quality`; no EXIF orientation left).
    private func jpeg(for frame: Frame, _ local: Local) throws
        -> (bytes: [UInt8], passthrough: Bool, rotation: Rotation, method: JPEGRotationMethod) {
        let (bytes, passthrough) = try upright(frame, local)
        let turn = rotation()
        guard turn != .r0 else { return (bytes, passthrough, turn, .unchanged) }
        let rotator = try local.rotator ?? JPEGRotator()
        local.rotator = rotator
        let (turned, method) = try rotator.rotate(bytes, by: turn, quality: settings.withLock { $0.jpegQuality })
        return (turned, passthrough, turn, method)
    }

    private func upright(_ frame: Frame, _ local: Local) throws -> (bytes: [UInt8], passthrough: Bool) {
        switch frame.format {
        case .mjpeg:
            let bytes = try JPEGMarkers.insertingStandardHuffmanTables(frame.bytes)
            let decoder = try local.decoder ?? JPEGDecoder()
            local.decoder = decoder
            guard decoder.validate(bytes) else { throw CameraWorkerError.corruptFrame }
            return (bytes, true)
        case .yuyv, .rgb24:
            let encoder = try local.encoder ?? JPEGEncoder()
            local.encoder = encoder
            let quality = settings.withLock { $0.jpegQuality }
            return (try encoder.encode(frame, quality: quality), false)
        }
    }
}

enum CameraWorkerError: Error, CustomStringConvertible {
    /// The probe saw no good frame in 5 s; `badFrames`: what it dropped meanwhile.
    case noFrames(badFrames: [FrameDefect: Int])
    case corruptFrame
    /// No frame for `milliseconds` (since the last one, or the stream's start).
    case stalled(milliseconds: Int)
    /// Frames kept coming for `milliseconds`, all of them bad.
    case onlyBadFrames(milliseconds: Int, dropped: [FrameDefect: Int])
    var description: String {
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
func captureSizeWarning(asked: FrameSize, previewRequest: FrameSize, preview: StreamInfo, device: any CameraDevice) -> String? {
    let used = asked == previewRequest ? preview.size : device.offeredSize(nearestTo: asked)
    guard let used, used != asked else { return nil }
    return "camera.capture_size \(asked) is not offered by the camera; captures will be \(used) (the nearest offered size)"
}

func format(_ ms: Double) -> String {
    let tenths = Int((ms * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}
