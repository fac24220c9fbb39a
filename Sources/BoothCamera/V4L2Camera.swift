import BoothClock
import BoothCore
import BoothPorts
import Glibc  // errno constants only; C calls live in V4L2Calls.swift

/// A real V4L2 camera: libv4l2, a non-blocking fd, mmap streaming.
///
/// Confined to the one thread the runtime owns for the camera (see ``CameraDevice``);
/// `@unchecked Sendable` only so it can be handed to that thread: no state is shared.
public final class V4L2Camera: CameraDevice, @unchecked Sendable {
    /// Where nodes are found for `auto` and name selectors.
    public let discovery: CameraDiscovery
    /// Buffers requested with `VIDIOC_REQBUFS` (the driver may grant more or fewer; fewer than 2 fails).
    public let bufferCount: Int

    public private(set) var identity: String = "V4L2 camera (not started)"
    public private(set) var statistics = CameraStatistics()

    private var node: V4L2Node?
    private var card = ""
    private var offers: [FormatOffer] = []
    private var mapped: [(start: UnsafeMutableRawPointer, length: Int)] = []
    private var streaming = false
    private var request = StreamRequest()
    private var stream: StreamInfo?
    private var controlNotes: [String] = []
    /// The booth's controls the camera has (found while applying them at start).
    public private(set) var controls: Set<CameraControlKind> = []
    private var controlWarnings: [String] = []
    private var settleRemaining = 0
    /// Buffers dequeued since the last `VIDIOC_STREAMON` (the first one may be stale: see
    /// ``FrameDefect/wholeBufferAfterStreamOn``).
    private var dequeuedSinceStreamOn = 0
    /// The sequence numbers of this stream's buffers: the frames lost within it.
    private var sequence = StreamSequence()
    private var recentStamps: [UInt64] = []

    public init(discovery: CameraDiscovery = CameraDiscovery(), bufferCount: Int = 4) {
        self.discovery = discovery
        self.bufferCount = bufferCount
    }

    deinit { stop() }

    /// The node path `selector` picks now (re-resolved on every call: after an unplug the camera
    /// may come back as another `/dev/videoN`). Paths (including by-id links) are followed
    /// without opening anything; `auto` and names run ``CameraDiscovery`` (`VIDIOC_QUERYCAP` per node).
    /// Throws `V4L2Error(call: "select camera", errno: ENODEV, device: selector)` when nothing matches.
    public static func resolve(_ selector: CameraSelector, discovery: CameraDiscovery) throws(V4L2Error) -> String {
        switch selector {
        case .path(let p):
            return CameraDiscovery.resolveLink(p) ?? p
        case .auto, .name:
            let found = discovery.cameras(detail: .capabilities)
            guard let camera = selector.select(from: found) else {
                let seen = found.map(\.identity).joined(separator: "; ")
                throw V4L2Error(call: "select camera", errno: ENODEV, device: selector.description,
                                detail: "no usable video capture device matches" + (seen.isEmpty ? " (no video nodes)" : " (found: \(seen))"))
            }
            return camera.path
        }
    }

    /// Resolves `request.device`, opens it (non-blocking) and checks
    /// `VIDIOC_QUERYCAP` (video capture + streaming) before handing it to libv4l2 (`v4l2_fd_open`),
    /// chooses the format (``FormatChooser``),
    /// sets it (`VIDIOC_S_FMT`) and the frame interval (`VIDIOC_S_PARM`), applies the controls
    /// the camera has, maps `bufferCount` buffers and starts streaming (`VIDIOC_STREAMON`).
    /// Stops a previous stream first. Throws ``V4L2Error`` naming the failed call.
    public func start(_ request: StreamRequest) throws -> StreamInfo {
        stop()
        statistics = CameraStatistics()
        recentStamps = []
        self.request = request
        let path = try V4L2Camera.resolve(CameraSelector(parsing: request.device), discovery: discovery)
        identity = path
        let (node, cap) = try Sys.openVideo(path)
        self.node = node
        do {
            card = cap.card
            identity = CameraInfo(path: path, driver: cap.driver, card: cap.card, busInfo: cap.busInfo).identity
            guard cap.isVideoCapture, cap.canStream else {
                throw V4L2Error(call: "VIDIOC_QUERYCAP", errno: EOPNOTSUPP, device: path,
                                detail: "not a video capture device with streaming I/O (capabilities 0x\(String(cap.capabilities, radix: 16)))")
            }
            offers = try CameraDiscovery.formats(of: node)
            (controlNotes, controlWarnings) = applyControls(request.controls, on: node)
            return try configure(size: request.size)
        } catch {
            stop()
            throw error
        }
    }

    /// Stops the stream, frees the buffers and restarts at `size` (format preference and frame rate
    /// as requested at start), then drops `settleFrames` frames. Throws ``V4L2Error``; after a
    /// failure the camera is stopped.
    public func reconfigure(size: FrameSize) throws -> StreamInfo {
        guard node != nil else {
            throw V4L2Error(call: "VIDIOC_S_FMT", errno: EBADF, device: identity, detail: "camera not started")
        }
        do {
            try releaseBuffers()
            return try configure(size: size)
        } catch {
            stop()
            throw error
        }
    }

    /// The size ``reconfigure(size:)`` would set for `size`: ``FormatChooser`` on the formats and
    /// sizes listed at start (`VIDIOC_ENUM_FMT`, `VIDIOC_ENUM_FRAMESIZES`), no ioctl; nil when not
    /// started or no format is usable.
    public func offeredSize(nearestTo size: FrameSize) -> FrameSize? {
        guard node != nil else { return nil }
        let choice = try? FormatChooser.choose(offers: offers, preference: request.format, size: size,
                                               framesPerSecond: request.framesPerSecond) { _, _ in nil }
        return choice?.size
    }

    /// Waits up to `timeoutMilliseconds` (poll) and returns the newest good frame, or nil on timeout.
    ///
    /// Dequeues (`VIDIOC_DQBUF`) until EAGAIN, keeps the newest buffer and re-queues older ones at
    /// once (counted as skipped); drops bad buffers (``FrameCheck/defect(of:buffer:format:frameLength:)``:
    /// empty, error-flagged, `bytesused` over the buffer, MJPEG without SOI/EOI, short YUYV/RGB24;
    /// counted by kind in ``CameraStatistics/droppedByDefect``) and the settle frames after a start or switch. The frame's bytes are
    /// copied out before the buffer is re-queued. Throws ``V4L2Error``: `POLLERR`/`POLLHUP` as
    /// `poll`/EIO, a vanished device as `VIDIOC_DQBUF`/ENODEV (both ``V4L2Error/isDisconnect``).
    public func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        guard let node, streaming, let stream else {
            throw V4L2Error(call: "VIDIOC_DQBUF", errno: EBADF, device: identity, detail: "stream not started")
        }
        let deadline = Monotonic.now().adding(milliseconds: Int64(max(timeoutMilliseconds, 0)))
        while true {
            let now = Monotonic.now()
            let remaining = max(0, Int32(clamping: Int64(deadline.milliseconds(since: now).rounded(.up))))
            switch Sys.pollReadable(node.fd, timeoutMilliseconds: remaining) {
            case .timeout:
                return nil
            case .interrupted:
                if Monotonic.now() >= deadline { return nil }
                continue
            case .failed(let code):
                throw V4L2Error(call: "poll", errno: code, device: identity)
            case .error(let revents):
                // A gone device usually reports its errno on DQBUF; a frame still there is delivered;
                // otherwise POLLERR/POLLHUP is the fault.
                if let frame = try drain(node, stream: stream) { return frame }
                throw V4L2Error(call: "poll", errno: EIO, device: identity,
                                detail: "POLLERR/POLLHUP (revents 0x\(String(UInt16(bitPattern: revents), radix: 16)))")
            case .readable:
                if let frame = try drain(node, stream: stream) { return frame }
                if Monotonic.now() >= deadline { return nil }
            }
        }
    }

    /// Stops streaming (`VIDIOC_STREAMOFF`), unmaps the buffers, frees them (`VIDIOC_REQBUFS` 0)
    /// and closes the fd. Errors are ignored (the device may be gone). Safe to call twice.
    public func stop() {
        if let node {
            try? releaseBuffers()
            if !mapped.isEmpty {  // releaseBuffers failed part way: unmap anyway
                for m in mapped { node.unmap(m.start, length: m.length) }
                mapped = []
            }
            node.close()
        }
        node = nil
        streaming = false
        stream = nil
    }

    // MARK: - Streaming

    /// Dequeues the buffers that are done; returns the newest good frame (re-queued after copying) or nil.
    ///
    /// The first `VIDIOC_DQBUF` follows the caller's poll; each further one only when a zero-timeout
    /// poll says another buffer is done. Dequeuing until EAGAIN would work too, but libv4l2 prints
    /// "libv4l2: error dequeuing buf: Resource temporarily unavailable" to stderr for every EAGAIN
    /// (one line per frame in the daemon's log).
    private func drain(_ node: V4L2Node, stream: StreamInfo) throws(V4L2Error) -> Frame? {
        var newest: (buffer: V4L2DequeuedBuffer, dequeuedAt: MonotonicInstant)?
        var first = true
        while first || Sys.pollReadable(node.fd, timeoutMilliseconds: 0) == .readable,
              let buffer = try node.dequeueBuffer() {
            first = false
            let dequeuedAt = Monotonic.now()
            noteTimestamp(V4L2Camera.captureInstant(buffer, dequeuedAt: dequeuedAt) ?? dequeuedAt)
            dequeuedSinceStreamOn += 1
            let defect = defect(of: buffer, stream: stream, firstAfterStreamOn: dequeuedSinceStreamOn == 1)
            statistics.framesLost += sequence.lost(before: buffer.sequence)
            if let defect {
                statistics.noteDropped(defect)
                try node.queueBuffer(index: buffer.index)
                continue
            }
            if let older = newest {
                statistics.framesSkipped += 1
                try node.queueBuffer(index: older.buffer.index)
            }
            newest = (buffer, dequeuedAt)
        }
        guard let (buffer, dequeuedAt) = newest else { return nil }
        if settleRemaining > 0 {
            settleRemaining -= 1
            statistics.framesSettling += 1
            try node.queueBuffer(index: buffer.index)
            return nil
        }
        let m = mapped[buffer.index]
        let bytes = [UInt8](UnsafeRawBufferPointer(start: m.start, count: min(buffer.bytesUsed, m.length)))
        try node.queueBuffer(index: buffer.index)
        statistics.framesDelivered += 1
        let captured = V4L2Camera.captureInstant(buffer, dequeuedAt: dequeuedAt)
        return Frame(format: stream.format, size: stream.size, bytesPerLine: stream.bytesPerLine, bytes: bytes,
                     timestamp: captured ?? dequeuedAt, timestampIsMonotonic: captured != nil, sequence: buffer.sequence)
    }

    /// Frames lost within one stream: gaps in its buffers' sequence numbers from the second buffer
    /// dequeued after `VIDIOC_STREAMON` on. The first may be left over from before the start: v4l2loopback
    /// hands out its last buffer again (sequence 0, while its writer is at frame N), and the gap after it
    /// counts the frames sent while the booth was not streaming, none of them lost.
    struct StreamSequence: Sendable, Equatable {
        private var last: UInt32?
        private var dequeued = 0

        /// A stream started (`VIDIOC_STREAMON`): the next buffer may be left over.
        mutating func streamOn() {
            last = nil
            dequeued = 0
        }

        /// Takes the next buffer's `sequence`; returns the frames lost right before it.
        mutating func lost(before sequence: UInt32) -> Int {
            dequeued += 1
            guard dequeued > 1 else { return 0 }
            defer { last = sequence }
            return V4L2Camera.lostFrames(after: last, sequence: sequence)
        }
    }

    /// Frames missing between a buffer with sequence `last` and the next with `sequence`
    /// (serial-number arithmetic: wrap-around is fine; a sequence going back counts none).
    static func lostFrames(after last: UInt32?, sequence: UInt32) -> Int {
        guard let last else { return 0 }
        let step = Int(Int32(bitPattern: sequence &- last))
        return step > 1 ? step - 1 : 0
    }

    /// The capture instant (`CLOCK_MONOTONIC`) of a buffer dequeued at `dequeuedAt`: the driver's
    /// timestamp when it is flagged `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`; also when the type is
    /// `V4L2_BUF_FLAG_TIMESTAMP_UNKNOWN` but the value lies within `window` ms before the dequeue
    /// on the monotonic clock (v4l2loopback 0.12.7 stamps with `ktime_get_ts64`, the monotonic
    /// clock, without the flag; a realtime stamp is decades away from it). Nil otherwise: then
    /// the dequeue time stands in and the sequence number decides the capture.
    static func captureInstant(monotonic: MonotonicInstant?, raw: MonotonicInstant?, typeUnknown: Bool,
                               dequeuedAt: MonotonicInstant, window: Double = 1000) -> MonotonicInstant? {
        if let monotonic { return monotonic }
        guard typeUnknown, let raw, raw <= dequeuedAt, dequeuedAt.milliseconds(since: raw) <= window else { return nil }
        return raw
    }

    private static func captureInstant(_ b: V4L2DequeuedBuffer, dequeuedAt: MonotonicInstant) -> MonotonicInstant? {
        captureInstant(monotonic: b.monotonicTimestamp, raw: b.rawTimestamp, typeUnknown: b.timestampTypeUnknown,
                       dequeuedAt: dequeuedAt)
    }

    /// ``FrameCheck/defect(of:buffer:format:frameLength:)`` on a dequeued buffer: flags, `bytesused`
    /// against the mapped length, MJPEG markers, packed frames against `bytesPerLine` × height.
    private func defect(of buffer: V4L2DequeuedBuffer, stream: StreamInfo, firstAfterStreamOn: Bool) -> FrameDefect? {
        if buffer.hasError { return .flaggedError }
        guard buffer.index >= 0, buffer.index < mapped.count else { return .flaggedError }
        let m = mapped[buffer.index]
        let facts = BufferFacts(bytesUsed: buffer.bytesUsed, bufferLength: m.length, flaggedError: buffer.hasError,
                                firstAfterStreamOn: firstAfterStreamOn)
        return FrameCheck.defect(of: UnsafeRawBufferPointer(start: m.start, count: min(max(buffer.bytesUsed, 0), m.length)),
                                 buffer: facts, format: stream.format,
                                 frameLength: stream.bytesPerLine * stream.size.height)
    }

    private func noteTimestamp(_ t: MonotonicInstant) {
        recentStamps.append(t.nanoseconds)
        if recentStamps.count > 30 { recentStamps.removeFirst(recentStamps.count - 30) }
        if let first = recentStamps.first, let last = recentStamps.last, last > first, recentStamps.count >= 2 {
            statistics.measuredFramesPerSecond = Double(recentStamps.count - 1) / (Double(last - first) / 1e9)
        }
    }

    // MARK: - Negotiation

    /// Chooses and sets format, size and interval, maps and queues the buffers, starts streaming.
    private func configure(size: FrameSize) throws(V4L2Error) -> StreamInfo {
        guard let node else {
            throw V4L2Error(call: "VIDIOC_S_FMT", errno: EBADF, device: identity, detail: "camera not open")
        }
        let choice: FormatChoice
        do {
            choice = try FormatChooser.choose(offers: offers, preference: request.format, size: size,
                                              framesPerSecond: request.framesPerSecond) { offer, size in
                offer.intervals[size] ?? (try? node.enumFrameIntervals(fourcc: offer.fourcc, size: size))
            }
        } catch {
            throw V4L2Error(call: "VIDIOC_ENUM_FMT", errno: EINVAL, device: identity, detail: error.description)
        }
        var warnings = choice.warnings
        let set = try node.setFormat(fourcc: choice.format.fourcc, size: choice.size)
        guard let format = PixelFormat(fourcc: set.fourcc) else {
            throw V4L2Error(call: "VIDIOC_S_FMT", errno: EINVAL, device: identity,
                            detail: "asked for \(choice.format.rawValue), the driver set \(PixelFormat.string(fromFourcc: set.fourcc))")
        }
        if format != choice.format {
            warnings.append("asked for \(choice.format.rawValue), the driver set \(format.rawValue)")
        }
        if set.size != choice.size {
            warnings.append("asked for \(choice.size), the driver set \(set.size)")
        }
        var interval: FrameInterval? = nil
        if let wanted = choice.interval {
            do {
                let params = try node.streamParameters()
                if params.canSetInterval {
                    let actual = try node.setFrameInterval(wanted)
                    interval = actual
                    if abs(actual.framesPerSecond - wanted.framesPerSecond) > 0.01 {
                        warnings.append("asked for \(wanted), the driver set \(actual)")
                    }
                } else {
                    interval = params.interval
                    warnings.append("the driver does not support setting the frame interval; it runs at \(params.interval)")
                }
            } catch {
                warnings.append("frame interval not set: \(error)")
            }
        }
        let bytesPerPixel = format == .yuyv ? 2 : (format == .rgb24 ? 3 : 0)
        let bytesPerLine = bytesPerPixel == 0 ? 0 : max(set.bytesPerLine, set.size.width * bytesPerPixel)

        let granted = try node.requestBuffers(count: bufferCount)
        guard granted >= 2 else {
            throw V4L2Error(call: "VIDIOC_REQBUFS", errno: ENOMEM, device: identity,
                            detail: "the driver granted \(granted) buffers, at least 2 are needed")
        }
        for index in 0..<granted {
            let b = try node.queryBuffer(index: index)
            let start = try node.map(length: b.length, offset: b.offset)
            mapped.append((start, b.length))
        }
        for index in 0..<granted { try node.queueBuffer(index: index) }
        try node.streamOn()
        streaming = true
        dequeuedSinceStreamOn = 0
        sequence.streamOn()
        settleRemaining = max(request.settleFrames, 0)
        let info = StreamInfo(devicePath: node.path, card: card, format: format, size: set.size,
                              bytesPerLine: bytesPerLine, frameInterval: interval,
                              warnings: warnings + controlWarnings, controlNotes: controlNotes)
        stream = info
        return info
    }

    /// STREAMOFF, munmap, REQBUFS 0. libv4l2 refuses REQBUFS (EBUSY) while it sees a buffer mapped, and
    /// v4l2loopback's buffers are mapped by its writer too: that error says so (a size switch then fails,
    /// and the fault's probe opens the camera afresh).
    private func releaseBuffers() throws(V4L2Error) {
        guard let node else { return }
        if streaming {
            streaming = false
            try node.streamOff()
        }
        for m in mapped { node.unmap(m.start, length: m.length) }
        let hadBuffers = !mapped.isEmpty
        mapped = []
        guard hadBuffers else { return }
        do throws(V4L2Error) {
            _ = try node.requestBuffers(count: 0)
        } catch {
            guard error.errno == EBUSY else { throw error }
            var busy = error
            busy.detail = "the buffers are still mapped elsewhere (v4l2loopback shares them with its writer), "
                + "so the stream's size cannot be switched on this open"
            throw busy
        }
    }

    // MARK: - Controls

    /// Sets the requested controls the camera has. Returns (notes, warnings): a missing control is
    /// a note, a control that exists but cannot be set is a warning; neither stops the stream.
    private func applyControls(_ settings: CameraControlSettings, on node: V4L2Node) -> ([String], [String]) {
        controls = []
        var notes: [String] = []
        var warnings: [String] = []
        func present(_ id: UInt32) -> V4L2ControlDescription? {
            guard let q = try? node.queryControl(id: id), q.id == id,
                  q.flags & V4L2ControlID.flagDisabled == 0 else { return nil }
            return q
        }
        func hasMenuItem(_ q: V4L2ControlDescription, _ value: Int32) -> Bool {
            value >= q.minimum && value <= q.maximum && node.menuItem(id: q.id, index: UInt32(value), integerMenu: false) != nil
        }
        func set(_ id: UInt32, _ value: Int32, _ what: String) -> Bool {
            do {
                try node.setControl(id: id, value: value)
                return true
            } catch {
                warnings.append("\(what): \(error)")
                return false
            }
        }
        let lock = present(V4L2ControlID.lock3A)
        func setLockBit(_ bit: Int32, _ on: Bool, _ what: String) -> Bool {
            guard lock != nil, let current = try? node.control(id: V4L2ControlID.lock3A) else { return false }
            return set(V4L2ControlID.lock3A, on ? current | bit : current & ~bit, what)
        }
        /// Locks an auto/manual pair by reading the absolute value, switching auto off, writing it back.
        func lockByManual(autoID: UInt32, manualValue: Int32, absoluteID: UInt32, what: String) {
            let value = present(absoluteID) != nil ? try? node.control(id: absoluteID) : nil
            guard set(autoID, manualValue, what) else { return }
            if let value { _ = set(absoluteID, value, what) }
            notes.append("\(what) locked" + (value.map { " at \($0)" } ?? ""))
        }

        if let plf = settings.powerLineFrequency {
            if let q = present(V4L2ControlID.powerLineFrequency) {
                controls.insert(.powerLineFrequency)
                let value: Int32
                switch plf {
                case .off: value = V4L2ControlID.powerLineOff
                case .hz50: value = V4L2ControlID.powerLine50Hz
                case .hz60: value = V4L2ControlID.powerLine60Hz
                case .auto: value = V4L2ControlID.powerLineAuto
                }
                if hasMenuItem(q, value) {
                    if set(q.id, value, "power line frequency") { notes.append("power line frequency set to \(plf.rawValue)") }
                } else {
                    notes.append("power line frequency \(plf.rawValue) not offered by the camera; skipped")
                }
            } else {
                notes.append("camera has no power line frequency control; skipped")
            }
        }

        for row in V4L2Camera.automaticControls {
            guard let mode = settings[keyPath: row.setting] else { continue }
            let q = present(row.autoID)
            if q != nil { controls.insert(row.kind) }
            switch mode {
            case .auto:
                _ = setLockBit(row.lockBit, false, "\(row.what) unlock")
                if let q {
                    let value = row.autoValues.first { !row.isMenu || hasMenuItem(q, $0) }
                    if let value, set(q.id, value, "\(row.what) auto") { notes.append("\(row.what) auto") }
                } else {
                    notes.append("camera has no \(row.autoName) control; skipped")
                }
            case .locked:
                if setLockBit(row.lockBit, true, "\(row.what) lock") {
                    notes.append("\(row.what) locked (3A lock)")
                } else if let q, !row.isMenu || hasMenuItem(q, row.manualValue) {
                    lockByManual(autoID: q.id, manualValue: row.manualValue, absoluteID: row.absoluteID, what: row.what)
                } else {
                    notes.append("camera has no way to lock \(row.what); skipped")
                }
            }
        }
        return (notes, warnings)
    }

    /// One row of the auto/locked controls (exposure, white balance, focus), as ustreamer's device.c
    /// lists its controls: the auto control and its values, the 3A lock bit, the manual value and the
    /// absolute control that locking by hand reads and writes back.
    struct AutomaticControl: Sendable {
        var kind: CameraControlKind
        /// The setting's field, and its name in logs (`"white balance"`).
        var setting: KeyPath<CameraControlSettings, ControlMode?> & Sendable
        var what: String
        /// How a missing auto control is named (`"auto exposure"`, `"autofocus"`).
        var autoName: String
        var autoID: UInt32
        /// The auto control's values for `auto`, the first one offered wins (a menu: checked against
        /// its items; a boolean: set as is).
        var autoValues: [Int32]
        var isMenu: Bool
        /// The `V4L2_CID_3A_LOCK` bit.
        var lockBit: Int32
        /// The auto control's value that switches to manual, and the absolute control kept at its value.
        var manualValue: Int32
        var absoluteID: UInt32
    }

    /// The auto/locked controls, in the order they are applied.
    static let automaticControls: [AutomaticControl] = [
        AutomaticControl(kind: .exposure, setting: \.exposure, what: "exposure", autoName: "auto exposure",
                         autoID: V4L2ControlID.exposureAuto,
                         autoValues: [V4L2ControlID.exposureModeAuto, V4L2ControlID.exposureModeAperturePriority], isMenu: true,
                         lockBit: V4L2ControlID.lockExposure, manualValue: V4L2ControlID.exposureModeManual,
                         absoluteID: V4L2ControlID.exposureAbsolute),
        AutomaticControl(kind: .whiteBalance, setting: \.whiteBalance, what: "white balance", autoName: "auto white balance",
                         autoID: V4L2ControlID.autoWhiteBalance, autoValues: [1], isMenu: false,
                         lockBit: V4L2ControlID.lockWhiteBalance, manualValue: 0,
                         absoluteID: V4L2ControlID.whiteBalanceTemperature),
        AutomaticControl(kind: .focus, setting: \.focus, what: "focus", autoName: "autofocus",
                         autoID: V4L2ControlID.focusAuto, autoValues: [1], isMenu: false,
                         lockBit: V4L2ControlID.lockFocus, manualValue: 0, absoluteID: V4L2ControlID.focusAbsolute),
    ]
}
