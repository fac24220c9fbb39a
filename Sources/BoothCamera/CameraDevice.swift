import BoothCore
import BoothPorts

/// A camera the runtime streams from: the real ``V4L2Camera`` or the ``SimulatedCamera``.
///
/// An instance is confined to one thread the runtime owns (all calls, including
/// `statistics`, come from it); `start` and `nextFrame` block that thread. Conformers are
/// `Sendable` so the instance can be handed to that thread.
public protocol CameraDevice: AnyObject, Sendable {
    /// A name for logs, e.g. `"/dev/video0 (vivid, platform:vivid-000)"`.
    var identity: String { get }
    /// Opens the camera, negotiates format, size and frame interval, applies the controls and
    /// starts streaming. Blocks. Throws the device's error (``V4L2Error``, e.g. `v4l2_open`, `VIDIOC_S_FMT`; ``LibcameraError``).
    func start(_ request: StreamRequest) throws -> StreamInfo
    /// Waits up to `timeoutMilliseconds` for a frame and returns the newest one, or nil on timeout.
    /// Throws ``V4L2Error`` or ``LibcameraError`` (`isDisconnect` when the camera is gone).
    func nextFrame(timeoutMilliseconds: Int) throws -> Frame?
    /// Restarts the stream at another size (same format preference and frame rate), then drops
    /// the request's `settleFrames`. Throws ``V4L2Error``.
    func reconfigure(size: FrameSize) throws -> StreamInfo
    /// Stops streaming and releases the device. Safe to call more than once.
    func stop()
    /// The frame size ``reconfigure(size:)`` would switch to for `size` (the nearest size the camera
    /// offers, as its format negotiation chooses it), without switching; nil when it cannot tell
    /// (not started). Pixels.
    func offeredSize(nearestTo size: FrameSize) -> FrameSize?
    /// The countdown of a shot began: start what the camera does before a still (an autofocus cycle,
    /// so the frame at zero is sharp). Returns at once; the outcome arrives in ``takeLogNotes()``.
    func prepareStill()
    /// What the device noted for the log since the last call (a focus cycle that failed), oldest first;
    /// the source logs each as a warning.
    func takeLogNotes() -> [String]
    /// The size of a still stream running beside the live view (pixels), as the last `start` set it up for
    /// ``StreamRequest/stillSize``; nil when the camera streams one stream (a still at another size then
    /// switches the stream's size and back, ``reconfigure(size:)``).
    var stillStreamSize: FrameSize? { get }
    /// With a still stream: a still joins the next request the camera queues (its exposure starts after
    /// this call); it arrives through ``takeStillFrame()``. Throws ``V4L2Error`` when it cannot be asked.
    func requestStill() throws
    /// The oldest still the still stream delivered and nobody took, converted as live frames are; nil when
    /// none waits (or it was not a whole frame: counted in `statistics`).
    func takeStillFrame() -> Frame?
    /// Counters since `start`.
    var statistics: CameraStatistics { get }
    /// The booth's controls (``CameraControlKind``) the camera has, as found by the last `start`;
    /// empty before it, or for a camera without controls.
    var controls: Set<CameraControlKind> { get }
}

extension CameraDevice {
    /// The default for a camera that cannot tell which size it would give for `size` (pixels) before it
    /// streams: nil, "unknown" (the V4L2 and simulated cameras answer from their listed sizes).
    public func offeredSize(nearestTo size: FrameSize) -> FrameSize? { nil }
    /// The default: no controls known.
    public var controls: Set<CameraControlKind> { [] }
    /// The default: nothing to prepare (a webcam's still is a frame it already makes).
    public func prepareStill() {}
    /// The default: nothing noted.
    public func takeLogNotes() -> [String] { [] }
    /// The default: one stream.
    public var stillStreamSize: FrameSize? { nil }
    /// The default, for one stream: nothing to ask.
    public func requestStill() throws {}
    /// The default, for one stream: no still frames of their own.
    public func takeStillFrame() -> Frame? { nil }
}

/// What to stream: the `camera.*` settings for one stream.
public struct StreamRequest: Sendable, Hashable {
    /// The `camera.device` setting: `""`/`"auto"`, a path, a `/dev/v4l/by-id` name or a card-name substring.
    public var device: String
    /// The `camera.format` setting.
    public var format: FormatPreference
    /// The frame size to ask for, pixels (the nearest offered size is used otherwise).
    public var size: FrameSize
    /// Frames per second to ask for (`VIDIOC_S_PARM`).
    public var framesPerSecond: Double
    /// Frames dropped after start and after each size switch while exposure settles.
    public var settleFrames: Int
    /// Controls to set where the camera has them.
    public var controls: CameraControlSettings
    /// The stills' size (`camera.capture_size`, pixels) when it differs from `size`: a camera that can run a
    /// still stream beside the live view (libcamera with two streams) sets one up at it; nil: stills are
    /// frames of the one stream.
    public var stillSize: FrameSize?
    /// The turn the captures and the live view need (`camera.rotation` when fixed; nil for `auto`): a camera
    /// that turns for free (libcamera, 180° with the sensor's flips) delivers its frames turned
    /// (``Frame/turned``), and the booth turns them by what is left.
    public var turn: Rotation?

    public init(device: String = "auto", format: FormatPreference = .auto,
                size: FrameSize = FrameSize(width: 1280, height: 720), framesPerSecond: Double = 30,
                settleFrames: Int = 0, controls: CameraControlSettings = CameraControlSettings(), stillSize: FrameSize? = nil,
                turn: Rotation? = nil) {
        self.device = device
        self.format = format
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.settleFrames = settleFrames
        self.controls = controls
        self.stillSize = stillSize
        self.turn = turn
    }
}

/// The stream a camera settled on.
public struct StreamInfo: Sendable, Hashable {
    /// The device node streamed from, e.g. `"/dev/video0"` (`"sim"` for the simulated camera).
    public var devicePath: String
    /// The card name (`v4l2_capability.card`).
    public var card: String
    /// The pixel format of the frames.
    public var format: PixelFormat
    /// The frame size, pixels.
    public var size: FrameSize
    /// Bytes per line of packed formats (0 for MJPEG).
    public var bytesPerLine: Int
    /// The frame interval the driver set (nil when it does not support `VIDIOC_S_PARM`).
    public var frameInterval: FrameInterval?
    /// Warnings from negotiation (size, format or frame rate not offered; a control that failed).
    public var warnings: [String]
    /// Information on controls: which were set, which the camera lacks.
    public var controlNotes: [String]

    public init(devicePath: String, card: String, format: PixelFormat, size: FrameSize, bytesPerLine: Int,
                frameInterval: FrameInterval?, warnings: [String], controlNotes: [String]) {
        self.devicePath = devicePath
        self.card = card
        self.format = format
        self.size = size
        self.bytesPerLine = bytesPerLine
        self.frameInterval = frameInterval
        self.warnings = warnings
        self.controlNotes = controlNotes
    }

    /// Frames per second of `frameInterval`, or nil.
    public var framesPerSecond: Double? { frameInterval?.framesPerSecond }
}

/// Counters of a camera since `start`.
public struct CameraStatistics: Sendable, Hashable {
    /// Frames returned by `nextFrame`.
    public var framesDelivered: Int = 0
    /// Frames dropped as bad on arrival (``FrameCheck``): the sum of ``droppedByDefect``.
    public private(set) var framesDropped: Int = 0
    /// Frames dropped as bad on arrival, by why (empty, driver-flagged, truncated, garbage, stale).
    public private(set) var droppedByDefect: [FrameDefect: Int] = [:]
    /// Frames the driver never handed over: gaps in the buffer sequence numbers (a reader that fell
    /// behind a driver with few buffers, e.g. v4l2loopback's ring). Their kind is unknown.
    public var framesLost: Int = 0
    /// Frames skipped because a newer one was already there (stale queued buffers).
    public var framesSkipped: Int = 0
    /// Frames dropped while exposure settled after a start or size switch.
    public var framesSettling: Int = 0
    /// Frames per second the camera produces, measured over the recent dequeued buffers; 0 until known.
    public var measuredFramesPerSecond: Double = 0

    public init() {}

    /// Counts one frame dropped for `defect`.
    public mutating func noteDropped(_ defect: FrameDefect) {
        framesDropped += 1
        droppedByDefect[defect, default: 0] += 1
    }
}

/// The `camera.power_line_frequency` setting: mains frequency against flicker
/// (`V4L2_CID_POWER_LINE_FREQUENCY`). Declared once, in the settings schema.
public typealias PowerLineFrequency = PowerLineFrequencySetting

/// Controls to set where the camera has them; nil leaves a control as it is.
public struct CameraControlSettings: Sendable, Hashable {
    public var powerLineFrequency: PowerLineFrequency?
    public var exposure: ControlMode?
    public var whiteBalance: ControlMode?
    public var focus: ControlMode?

    public init(powerLineFrequency: PowerLineFrequency? = nil, exposure: ControlMode? = nil,
                whiteBalance: ControlMode? = nil, focus: ControlMode? = nil) {
        self.powerLineFrequency = powerLineFrequency
        self.exposure = exposure
        self.whiteBalance = whiteBalance
        self.focus = focus
    }
}

extension StreamInfo: CustomStringConvertible {
    /// `"/dev/video0 (vivid) YUYV 1280x720 at 30 fps"`.
    public var description: String {
        let rate = framesPerSecond.map { " at \(($0 * 100).rounded() / 100) fps" } ?? ""
        return "\(devicePath) (\(card)) \(format.rawValue) \(size)\(rate)"
    }
}
