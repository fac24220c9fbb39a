import BoothCore
import Synchronization

// MARK: What the runtime asks of a camera

/// "Take a still for this capture": the trigger it belongs to, how long the camera may take, and how
/// the JPEG is to be made.
public struct StillRequest: Sendable, Hashable {
    /// The machine's capture id; the answer (``CameraSourceEvent/still(_:)`` or
    /// ``CameraSourceEvent/stillFailed(captureID:message:at:)``) carries it back.
    public var captureID: UInt64
    /// The instant the countdown reached zero (`CLOCK_MONOTONIC`): the still shows the scene at or
    /// after it, never before.
    public var trigger: MonotonicInstant
    /// Until when the camera waits for its still (the machine's `camera.capture_timeout`); the machine
    /// fails the capture by its own timer then. Nil: wait until taken, superseded or stopped.
    public var deadline: MonotonicInstant?
    /// The clockwise quarter turn to apply to the still's pixels (`camera.rotation`, resolved).
    public var rotation: Rotation
    /// TurboJPEG quality 1…100 (`storage.jpeg_quality`) for a still that is encoded or re-encoded.
    public var jpegQuality: Int

    public init(captureID: UInt64, trigger: MonotonicInstant, deadline: MonotonicInstant?, rotation: Rotation = .r0,
                jpegQuality: Int = 92) {
        self.captureID = captureID
        self.trigger = trigger
        self.deadline = deadline
        self.rotation = rotation
        self.jpegQuality = jpegQuality
    }
}

/// How a still's JPEG was turned by its rotation.
public enum StillTurn: String, Sendable, Equatable {
    /// Not turned (rotation 0): the bytes as they came.
    case unchanged
    /// Turned in the DCT domain (no generation loss).
    case lossless
    /// Decoded, turned and encoded again at the request's quality.
    case reencoded
    /// Raw pixels (YUYV, RGB24) turned before their one encode (libyuv): no second encode.
    case pixels
    /// Turned by the camera before the booth got it (libcamera's orientation, the sensor's flips): the
    /// pixels encoded once as they came.
    case camera
}

/// A still the camera took for a ``StillRequest``.
public struct CameraStill: Sendable, Equatable {
    /// The request's capture id.
    public var captureID: UInt64
    /// The JPEG file's bytes, upright (turned by the request's rotation, no EXIF orientation left).
    public var jpeg: [UInt8]
    /// The request's trigger, and when the camera exposed the still (`CLOCK_MONOTONIC`; a streaming
    /// camera: the chosen frame's timestamp; a shutter camera: when the shutter was released).
    public var trigger: MonotonicInstant
    public var frameTimestamp: MonotonicInstant
    /// When the JPEG bytes were ready (`CLOCK_MONOTONIC`).
    public var readyAt: MonotonicInstant
    /// The still's size after the turn, pixels.
    public var size: FrameSize
    /// The pixel format the camera delivered it in (MJPEG for a camera that makes JPEG files itself).
    public var format: PixelFormat
    /// True when the bytes are the camera's own JPEG (unchanged but for inserted Huffman tables and the turn).
    public var passedThrough: Bool
    /// How the rotation turned it.
    public var turn: StillTurn

    public init(captureID: UInt64, jpeg: [UInt8], trigger: MonotonicInstant, frameTimestamp: MonotonicInstant,
                readyAt: MonotonicInstant, size: FrameSize, format: PixelFormat, passedThrough: Bool, turn: StillTurn) {
        self.captureID = captureID
        self.jpeg = jpeg
        self.trigger = trigger
        self.frameTimestamp = frameTimestamp
        self.readyAt = readyAt
        self.size = size
        self.format = format
        self.passedThrough = passedThrough
        self.turn = turn
    }
}

/// What a camera source reports to the runtime, from its own thread.
public enum CameraSourceEvent: Sendable, Equatable {
    /// The still for a request.
    case still(CameraStill)
    /// The still for `captureID` cannot be taken (`"camera not streaming"`, `"stream stopped"`,
    /// `"superseded by capture 7"`); `at` is when that was known (`CLOCK_MONOTONIC`).
    case stillFailed(captureID: UInt64, message: String, at: MonotonicInstant)
    /// The camera does not work (`"camera not available: …"` when it cannot be opened, `"camera lost: …"`
    /// when it failed while in use). The source has released it; ``CameraSource/probe()`` tries again.
    case fault(String)
    /// A ``CameraSource/probe()`` found the camera working again.
    case recovered
}

/// Where a camera source's results go; both are called on the source's own thread.
public struct CameraSourceHandlers: Sendable {
    /// Stills, failures, faults, recovery.
    public var event: @Sendable (CameraSourceEvent) -> Void
    /// Every good live-view frame (for the screens, which keep their own rate). A camera without live
    /// view never calls it.
    public var liveFrame: @Sendable (Frame) -> Void

    public init(event: @escaping @Sendable (CameraSourceEvent) -> Void, liveFrame: @escaping @Sendable (Frame) -> Void) {
        self.event = event
        self.liveFrame = liveFrame
    }
}

// MARK: What a camera can do, as data

/// A camera control the booth sets (`camera.power_line_frequency`, `camera.exposure`,
/// `camera.white_balance`, `camera.focus`).
public enum CameraControlKind: String, Sendable, Hashable, CaseIterable {
    case powerLineFrequency = "power_line_frequency"
    case exposure
    case whiteBalance = "white_balance"
    case focus
}

/// One live-view mode: a pixel format and the frame sizes offered in it.
public struct LiveViewMode: Sendable, Hashable {
    public var format: PixelFormat
    /// Pixels.
    public var sizes: [FrameSize]

    public init(format: PixelFormat, sizes: [FrameSize]) {
        self.format = format
        self.sizes = sizes
    }
}

/// What a camera can do. Values a camera learns only once opened (a V4L2 device's format list) are
/// empty until then; `hasLiveView` is known from the start.
public struct CameraCapabilities: Sendable, Hashable {
    /// False for a camera that only takes stills (a DSLR without a live-view mode): the screens show no
    /// live frames, a still is still taken on request.
    public var hasLiveView: Bool
    /// The live-view formats and sizes (empty: unknown yet, or no live view).
    public var liveViewModes: [LiveViewMode]
    /// The still sizes it can take, pixels (empty: unknown yet).
    public var stillSizes: [FrameSize]
    /// The controls it has (empty: unknown yet, or none).
    public var controls: Set<CameraControlKind>

    public init(hasLiveView: Bool, liveViewModes: [LiveViewMode] = [], stillSizes: [FrameSize] = [],
                controls: Set<CameraControlKind> = []) {
        self.hasLiveView = hasLiveView
        self.liveViewModes = liveViewModes
        self.stillSizes = stillSizes
        self.controls = controls
    }
}

/// The camera figures for `photoboothctl status`.
public struct CameraSourceStatus: Sendable, Equatable {
    /// True while live view runs (a still-only camera: while it is open).
    public var streaming = false
    /// The device in use (`"/dev/video0"`, `"sim"`) and its name (V4L2's card), while known.
    public var devicePath: String?
    public var card: String?
    /// The live view's pixel format (a fourcc, `"MJPG"`), size (pixels), and the frame rate set (fps).
    public var format: String?
    public var size: FrameSize?
    public var framesPerSecond: Double?
    /// Frames per second measured; nil before the first stream.
    public var measuredFramesPerSecond: Double?
    /// Frames delivered by the current (or last) stream.
    public var framesDelivered = 0
    /// Frames that passed the arrival check but did not decode at capture, since the daemon started.
    public var badFrames = 0
    /// Frames dropped on arrival since the daemon started, by kind (`"no-eoi"`, `"empty"`, …).
    public var droppedByKind: [String: Int] = [:]
    /// The sum of ``droppedByKind``.
    public var framesDropped: Int { droppedByKind.values.reduce(0, +) }
    /// Frames the driver never handed over (sequence gaps) since the daemon started.
    public var framesLost = 0
    public var lastError: String?
    /// Negotiation warnings (size, format or rate not offered, a control that failed), as logged at the start.
    public var warnings: [String] = []
    /// The camera's battery level in percent (0…100), for a body that reports one (the gphoto2 backend:
    /// read at the open, before each still and every 30 s); nil for one that does not (a V4L2 webcam,
    /// the simulated camera). `photoboothctl status` shows it; the operator's `camera-battery-low`
    /// alert is raised at ``batteryLowPercent`` or below.
    public var batteryPercent: Int?
    /// The battery level the `camera-battery-low` alert is raised at, in percent.
    public static let batteryLowPercent = 20

    /// The operator's words for a battery at `level` percent, at or below ``batteryLowPercent``: the log's
    /// warning and `photoboothctl status`'s.
    public static func batteryLowText(_ level: Int) -> String {
        "battery \(level)%: charge or swap it soon (a mains adapter keeps the body going all night)"
    }

    public init() {}
}

/// What `photoboothd --check` learnt of the camera by opening it once.
public enum CameraCheckResult: Sendable, Equatable {
    /// It delivered a good frame: `description` names the stream (`"/dev/video0 (vivid) YUYV 1280x720
    /// at 30 fps"`), `warnings` what negotiation could not give.
    case works(description: String, warnings: [String])
    /// It did not: why (`"no frames within 5 s"`, the failed call).
    case fails(String)
}

// MARK: The port

/// A camera as the runtime sees it: live view for the screens and stills on request. Implemented by
/// the V4L2 and simulated cameras (`StreamingCameraSource` in BoothCamera), by a test's own camera, and
/// by ``PairedCameraSource`` for a stills camera with its live view from a second device.
///
/// Every call returns at once: the work (opening a device, waiting for frames, releasing a shutter)
/// happens on a thread the source owns (started by ``launch(_:)``), and results come back through
/// the handlers. Thread-safe.
public protocol CameraSource: AnyObject, Sendable {
    /// What it can do (see ``CameraCapabilities`` for what is known when).
    var capabilities: CameraCapabilities { get }
    /// Starts the source's thread; results go to `handlers`. A source without a thread reports
    /// ``CameraSourceEvent/fault(_:)``.
    func launch(_ handlers: CameraSourceHandlers)
    /// Opens the camera and starts live view (a still-only camera: opens it). A failure is a
    /// ``CameraSourceEvent/fault(_:)`` (`"camera not available: …"`).
    func startLiveView()
    /// Stops live view and releases the camera; a still being waited for is answered with
    /// ``CameraSourceEvent/stillFailed(captureID:message:at:)`` (`"stream stopped"`).
    func stopLiveView()
    /// Takes a still (see ``StillRequest``): answered with ``CameraSourceEvent/still(_:)``, or
    /// `stillFailed` (not open, stopped, superseded by the next request). One at a time: a new
    /// request supersedes the one waiting.
    func takeStill(_ request: StillRequest)
    /// Opens (when closed) and checks that the camera delivers; answers ``CameraSourceEvent/recovered``
    /// or ``CameraSourceEvent/fault(_:)``.
    func probe()
    /// The newest live frame as JPEG, turned by `rotation` and encoded at `jpegQuality` (1…100) where it
    /// is not JPEG already; nil when there is none (live view stopped). `reply` runs on the source's thread.
    func snapshot(rotation: Rotation, jpegQuality: Int, _ reply: @escaping @Sendable ([UInt8]?) -> Void)
    /// The countdown of a shot began: a camera that focuses before its shutter (a DSLR's autofocus) does it
    /// now, so the still at zero is not late. Returns at once; a failed focus is logged, the still is still
    /// taken. A camera with nothing to prepare ignores it (the default).
    func prepareStill()
    /// New `camera.*` settings, used from the next ``startLiveView()``.
    func reconfigure(_ settings: Settings.Camera)
    /// Releases the camera and ends the thread; waits up to `timeoutSeconds` (s) for it.
    func shutdown(timeoutSeconds: Double)
    /// Blocking, on the caller's thread, before ``launch(_:)`` (for `photoboothd --check`): opens the
    /// camera, waits up to 5 s for a good frame, releases it.
    func check() -> CameraCheckResult
    /// The figures for `status`.
    var status: CameraSourceStatus { get }
    /// The source thread's sign of life, for the watchdog.
    var heartbeat: Heartbeat { get }
}

extension CameraSource {
    /// Nothing to prepare: a streaming camera's still is a frame it already makes.
    public func prepareStill() {}
}

// MARK: A stills camera with its live view from another device

/// A camera whose stills come from one device and live view from another (a DSLR beside a webcam), or
/// with no live view at all (`liveView` nil). Stills, faults and recovery come from `stills`; live
/// frames only from `liveView` (frames `stills` might deliver are not shown); a fault of either is the
/// camera's fault. ``heartbeat`` is the stills source's (the one a capture waits on).
public final class PairedCameraSource: CameraSource {
    public let stills: any CameraSource
    public let liveView: (any CameraSource)?

    public init(stills: any CameraSource, liveView: (any CameraSource)?) {
        self.stills = stills
        self.liveView = liveView
    }

    public var capabilities: CameraCapabilities {
        var c = stills.capabilities
        c.hasLiveView = liveView?.capabilities.hasLiveView ?? false
        c.liveViewModes = liveView?.capabilities.liveViewModes ?? []
        return c
    }

    public func launch(_ handlers: CameraSourceHandlers) {
        stills.launch(CameraSourceHandlers(event: handlers.event, liveFrame: { _ in }))
        // The live-view device answers no still requests; its faults and recoveries are the camera's.
        liveView?.launch(CameraSourceHandlers(event: { event in
            switch event {
            case .fault, .recovered: handlers.event(event)
            case .still, .stillFailed: break
            }
        }, liveFrame: handlers.liveFrame))
    }

    public func startLiveView() { stills.startLiveView(); liveView?.startLiveView() }
    public func stopLiveView() { stills.stopLiveView(); liveView?.stopLiveView() }
    public func takeStill(_ request: StillRequest) { stills.takeStill(request) }
    public func probe() { stills.probe(); liveView?.probe() }

    public func snapshot(rotation: Rotation, jpegQuality: Int, _ reply: @escaping @Sendable ([UInt8]?) -> Void) {
        (liveView ?? stills).snapshot(rotation: rotation, jpegQuality: jpegQuality, reply)
    }

    public func reconfigure(_ settings: Settings.Camera) { stills.reconfigure(settings); liveView?.reconfigure(settings) }
    /// The stills camera prepares (it takes the still).
    public func prepareStill() { stills.prepareStill() }

    public func shutdown(timeoutSeconds: Double) {
        stills.shutdown(timeoutSeconds: timeoutSeconds)
        liveView?.shutdown(timeoutSeconds: timeoutSeconds)
    }

    public func check() -> CameraCheckResult {
        let first = stills.check()
        guard case .works = first, let liveView else { return first }
        switch liveView.check() {
        case let .fails(why): return .fails("live view: \(why)")
        case let .works(description, warnings):
            guard case let .works(d, w) = first else { return first }
            return .works(description: "\(d), live view \(description)", warnings: w + warnings)
        }
    }

    /// The stills camera's figures, with the live view's stream and frame counts when there is one.
    public var status: CameraSourceStatus {
        var s = stills.status
        guard let live = liveView?.status else { return s }
        s.streaming = s.streaming && live.streaming
        (s.format, s.size, s.framesPerSecond, s.measuredFramesPerSecond) = (live.format, live.size, live.framesPerSecond,
                                                                             live.measuredFramesPerSecond)
        s.framesDelivered = live.framesDelivered
        s.droppedByKind.merge(live.droppedByKind, uniquingKeysWith: +)
        s.framesLost += live.framesLost
        s.lastError = s.lastError ?? live.lastError
        s.warnings += live.warnings
        return s
    }

    public var heartbeat: Heartbeat { stills.heartbeat }
}

// MARK: A worker thread's sign of life

/// A worker thread's sign of life: the thread calls ``turn(at:)`` each time round its loop and
/// ``waiting()`` just before it blocks with nothing to do. A thread that is neither waiting nor
/// turned recently is stuck (in an ioctl, an fsync, a lock). Thread-safe.
public final class Heartbeat: Sendable {
    /// The last turn and whether the thread is now blocked waiting for work.
    public struct Beat: Sendable, Equatable {
        public var lastTurn: MonotonicInstant?
        public var waiting: Bool
    }
    private let beat = Mutex(Beat(lastTurn: nil, waiting: true))

    public init() {}

    /// The thread went round its loop at `now`.
    public func turn(at now: MonotonicInstant) { beat.withLock { $0 = Beat(lastTurn: now, waiting: false) } }
    /// The thread is about to block until work arrives (deliberately idle).
    public func waiting() { beat.withLock { $0.waiting = true } }
    public var current: Beat { beat.withLock { $0 } }

    /// nil when waiting or turned within `limitMilliseconds` of `now`, else how long it has been stuck (ms).
    public func stuckFor(now: MonotonicInstant, limitMilliseconds: Int) -> Double? {
        let b = current
        guard !b.waiting, let last = b.lastTurn else { return nil }
        let ms = now.milliseconds(since: last)
        return ms > Double(limitMilliseconds) ? ms : nil
    }
}
