import BoothClock
import BoothCore
import BoothJPEG
import Glibc  // errno constants only
import Synchronization

/// The clock a ``SimulatedCamera`` runs on: `now` on `CLOCK_MONOTONIC` and a sleep in nanoseconds.
/// Tests inject a manual clock whose `sleep` advances `now`.
public struct SimulatedClock: Sendable {
    /// The current instant.
    public var now: @Sendable () -> MonotonicInstant
    /// Blocks the calling thread for the given nanoseconds.
    public var sleep: @Sendable (_ nanoseconds: UInt64) -> Void

    public init(now: @escaping @Sendable () -> MonotonicInstant, sleep: @escaping @Sendable (UInt64) -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// `CLOCK_MONOTONIC` and `nanosleep`.
    public static let system = SimulatedClock(now: { Monotonic.now() }, sleep: { Monotonic.sleep(nanoseconds: $0) })
}

/// A built-in test-pattern camera for `--simulate` and tests: YUYV (or RGB24 or MJPEG when asked)
/// at the requested size and frame rate, paced in real time by ``nextFrame(timeoutMilliseconds:)``,
/// with monotonic timestamps and sequence numbers like a V4L2 driver's.
///
/// Like a cheap webcam it can send corrupt frames (``FrameCorruption``: every Nth frame, or
/// scripted with ``corrupt(framesDueFrom:kinds:)``); they go through the same arrival check as a
/// V4L2 buffer (``FrameCheck/defect(of:buffer:format:frameLength:)``) and the bad ones are dropped
/// and counted in ``statistics`` exactly as ``V4L2Camera`` does.
///
/// Like a real camera it can offer only some sizes (`offeredSizes`: the nearest one is used, with a
/// warning) and stop delivering frames while the stream stays up (``stall()``, as a v4l2loopback
/// whose writer stopped).
///
/// Confined to the runtime's camera thread like ``V4L2Camera``; only ``unplug()``, ``replug()``,
/// ``stall()``, ``resume()``, ``corrupt(framesDueFrom:kinds:)`` and ``corruptFramesSent`` may be
/// called from any thread (they use an atomic or a mutex), hence `@unchecked Sendable`.
public final class SimulatedCamera: CameraDevice, @unchecked Sendable {
    /// The name used as device path in errors and ``StreamInfo``.
    public let name: String
    private let clock: SimulatedClock
    private let plugged = Atomic<Bool>(true)
    private let stalled = Atomic<Bool>(false)
    /// The sizes offered (any size, width rounded up to even, when nil).
    public let offeredSizes: [FrameSize]?
    /// Every Nth frame corrupt, or nil.
    public let corruption: FrameCorruption?
    /// JPEG quality of MJPEG frames (1–100).
    public let mjpegQuality: Int
    private let scripted = Mutex<(from: MonotonicInstant, kinds: [FrameCorruption.Kind])?>(nil)
    private let sent = Mutex<[FrameCorruption.Kind: Int]>([:])
    private var encoder: JPEGEncoder?

    private var request = StreamRequest()
    private var pattern: TestPattern?
    private var interval = FrameInterval(numerator: 1, denominator: 30)
    private var streamStart = MonotonicInstant(nanoseconds: 0)
    private var nextIndex: UInt64 = 0
    private var settleRemaining = 0
    private var info: StreamInfo?
    private var recentStamps: [UInt64] = []
    public private(set) var statistics = CameraStatistics()

    /// - Parameters:
    ///   - corruption: spoil every Nth frame (nil: none).
    ///   - mjpegQuality: TurboJPEG quality of the frames when MJPEG is asked for.
    ///   - offeredSizes: the only sizes offered, as a camera's discrete `VIDIOC_ENUM_FRAMESIZES` list
    ///     (nil: any size).
    public init(name: String = "sim", clock: SimulatedClock = .system, corruption: FrameCorruption? = nil,
                mjpegQuality: Int = 85, offeredSizes: [FrameSize]? = nil) {
        self.name = name
        self.offeredSizes = offeredSizes.flatMap { $0.isEmpty ? nil : $0 }
        self.clock = clock
        self.corruption = corruption
        self.mjpegQuality = min(max(mjpegQuality, 1), 100)
    }

    /// Spoils the frames due at or after `instant` (`CLOCK_MONOTONIC`, the camera's clock): the
    /// first gets `kinds[0]`, the next `kinds[1]`, …; frames after them are whole again (or follow
    /// ``corruption``). Replaces an earlier script. Any thread.
    public func corrupt(framesDueFrom instant: MonotonicInstant, kinds: [FrameCorruption.Kind]) {
        scripted.withLock { $0 = kinds.isEmpty ? nil : (instant, kinds) }
    }

    /// Corrupt frames sent so far (dropped on arrival or not), by kind. Any thread.
    public var corruptFramesSent: [FrameCorruption.Kind: Int] { sent.withLock { $0 } }

    public var identity: String { "\(name) (simulated test pattern)" }

    /// Simulates pulling the USB cable: `nextFrame` then throws `V4L2Error(call: "VIDIOC_DQBUF",
    /// errno: ENODEV)` and `start` throws `V4L2Error(call: "open", errno: ENOENT)`. Any thread.
    public func unplug() { plugged.store(false, ordering: .sequentiallyConsistent) }

    /// Plugs the camera back in; streaming needs a new `start`. Any thread.
    public func replug() { plugged.store(true, ordering: .sequentiallyConsistent) }

    /// Stops delivering frames while the stream stays up: ``nextFrame(timeoutMilliseconds:)`` waits
    /// out its timeout and returns nil, with no error (a v4l2loopback whose writer stopped). Any thread.
    public func stall() { stalled.store(true, ordering: .sequentiallyConsistent) }

    /// Delivers frames again after ``stall()`` (the newest one due; those missed count as skipped). Any thread.
    public func resume() { stalled.store(false, ordering: .sequentiallyConsistent) }

    /// Whether the simulated cable is in.
    public var isPlugged: Bool { plugged.load(ordering: .sequentiallyConsistent) }

    /// Starts the pattern: YUYV, or RGB24 / MJPEG (TurboJPEG-encoded YUYV, 4:2:0, ``mjpegQuality``)
    /// when `request.format` is `.rgb24` / `.mjpeg`. Width is rounded up to even; frame rate clamped to 1…240 fps.
    /// Throws `V4L2Error(call: "open", errno: ENOENT)` while unplugged.
    public func start(_ request: StreamRequest) throws -> StreamInfo {
        stop()
        guard isPlugged else {
            throw V4L2Error(call: "open", errno: ENOENT, device: name, detail: "simulated camera unplugged")
        }
        self.request = request
        statistics = CameraStatistics()
        var warnings: [String] = []
        let fps = min(max(request.framesPerSecond, 1), 240)
        if fps != request.framesPerSecond {
            warnings.append("\(request.framesPerSecond) fps is not offered by the simulated camera; using \(fps) fps")
        }
        interval = FrameInterval(framesPerSecond: fps)
        return configure(size: request.size, warnings: warnings)
    }

    /// Restarts the pattern at `size` (sequence numbers start again at 0, like a V4L2 STREAMON),
    /// then drops `settleFrames`. Throws `V4L2Error(call: "VIDIOC_S_FMT", errno: ENODEV)` while
    /// unplugged and `EBADF` when not started.
    public func reconfigure(size: FrameSize) throws -> StreamInfo {
        guard pattern != nil else {
            throw V4L2Error(call: "VIDIOC_S_FMT", errno: EBADF, device: name, detail: "camera not started")
        }
        guard isPlugged else {
            throw V4L2Error(call: "VIDIOC_S_FMT", errno: ENODEV, device: name, detail: "simulated camera unplugged")
        }
        return configure(size: size, warnings: [])
    }

    private func configure(size: FrameSize, warnings: [String]) -> StreamInfo {
        var warnings = warnings
        let format: PixelFormat = request.format == .rgb24 ? .rgb24 : request.format == .mjpeg ? .mjpeg : .yuyv
        let actual = streamSize(for: size, format: format)
        if actual != size {
            warnings.append("size \(size) is not offered; using " + (offeredSizes == nil ? "\(actual)" : "the nearest offered size \(actual)"))
        }
        // MJPEG frames are the YUYV pattern, encoded.
        let pattern = TestPattern(format: format == .rgb24 ? .rgb24 : .yuyv, size: actual)
        self.pattern = pattern
        streamStart = clock.now()
        nextIndex = 0
        settleRemaining = max(request.settleFrames, 0)
        let info = StreamInfo(devicePath: name, card: "Photobooth test pattern", format: format, size: actual,
                              bytesPerLine: format == .mjpeg ? 0 : pattern.bytesPerLine, frameInterval: interval,
                              warnings: warnings,
                              controlNotes: ["simulated camera has no controls; skipped"])
        self.info = info
        return info
    }

    /// The size streamed for `size`: the nearest of ``offeredSizes``, else `size` with its width
    /// rounded up to even (but for RGB24).
    private func streamSize(for size: FrameSize, format: PixelFormat) -> FrameSize {
        if let offered = offeredSizes, let nearest = FrameSizeOffer.discrete(offered).nearest(to: size) { return nearest }
        var actual = FrameSize(width: max(size.width, 2), height: max(size.height, 1))
        if format != .rgb24, actual.width % 2 != 0 { actual.width += 1 }
        return actual
    }

    /// The size ``reconfigure(size:)`` would stream for `size`; nil when not started.
    public func offeredSize(nearestTo size: FrameSize) -> FrameSize? {
        guard let info else { return nil }
        return streamSize(for: size, format: info.format)
    }

    /// Sleeps until the next frame is due (at most `timeoutMilliseconds`) and returns it, or nil
    /// when none is due within the timeout. A caller that falls behind gets the newest frame; the
    /// ones it missed count as skipped. Timestamps are the frames' due instants on the clock.
    /// A corrupt frame that fails the arrival check is dropped (counted by kind) and the next one
    /// waited for, like ``V4L2Camera/nextFrame(timeoutMilliseconds:)``. Throws `TurboJPEGError`
    /// when an MJPEG frame cannot be encoded.
    /// Throws `V4L2Error(call: "VIDIOC_DQBUF", errno: ENODEV)` when unplugged (``V4L2Error/isDisconnect``).
    public func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        guard let pattern, let info else {
            throw V4L2Error(call: "VIDIOC_DQBUF", errno: EBADF, device: name, detail: "stream not started")
        }
        let period = UInt64(max(interval.seconds, 1e-6) * 1e9)
        let deadline = clock.now().adding(milliseconds: Int64(max(timeoutMilliseconds, 0)))
        while true {
            guard isPlugged else {
                throw V4L2Error(call: "VIDIOC_DQBUF", errno: ENODEV, device: name, detail: "simulated camera unplugged")
            }
            let due = MonotonicInstant(nanoseconds: streamStart.nanoseconds &+ nextIndex &* period)
            var now = clock.now()
            if stalled.load(ordering: .sequentiallyConsistent) {
                if deadline > now { clock.sleep(deadline.nanoseconds - now.nanoseconds) }
                return nil
            }
            if due > deadline {
                if deadline > now { clock.sleep(deadline.nanoseconds - now.nanoseconds) }
                return nil
            }
            if due > now {
                clock.sleep(due.nanoseconds - now.nanoseconds)
                now = clock.now()
            }
            guard isPlugged else {
                throw V4L2Error(call: "VIDIOC_DQBUF", errno: ENODEV, device: name, detail: "simulated camera unplugged")
            }
            if stalled.load(ordering: .sequentiallyConsistent) { continue }
            // The newest frame due by now; frames the caller was too late for are skipped.
            let elapsed = now.nanoseconds > streamStart.nanoseconds ? now.nanoseconds - streamStart.nanoseconds : 0
            let newest = max(nextIndex, elapsed / period)
            statistics.framesSkipped += Int(newest - nextIndex)
            nextIndex = newest + 1
            let timestamp = MonotonicInstant(nanoseconds: streamStart.nanoseconds &+ newest &* period)
            noteTimestamp(timestamp)
            if settleRemaining > 0 {
                settleRemaining -= 1
                statistics.framesSettling += 1
                continue
            }
            let sequence = UInt32(truncatingIfNeeded: newest)
            let seconds = Double(newest * period) / 1e9
            var bytes = [UInt8](unsafeUninitializedCapacity: pattern.frameLength) { buffer, count in
                if let base = buffer.baseAddress {
                    pattern.render(index: sequence, seconds: seconds, into: UnsafeMutableRawPointer(base))
                }
                count = pattern.frameLength
            }
            if info.format == .mjpeg {
                let encoder = try self.encoder ?? JPEGEncoder()
                self.encoder = encoder
                bytes = try encoder.encode(Frame(format: .yuyv, size: info.size, bytesPerLine: pattern.bytesPerLine,
                                                 bytes: bytes, timestamp: timestamp, timestampIsMonotonic: true,
                                                 sequence: sequence), quality: mjpegQuality)
            }
            if let kind = corruptionKind(forFrame: newest, due: timestamp) {
                sent.withLock { $0[kind, default: 0] += 1 }
                bytes = FrameCorruption.apply(kind, to: bytes, format: info.format, seed: newest)
                // The buffer a driver would have: sizeimage of the uncompressed frame.
                let facts = BufferFacts(bytesUsed: bytes.count, bufferLength: pattern.frameLength)
                if let defect = FrameCheck.defect(of: bytes, buffer: facts, format: info.format,
                                                  frameLength: pattern.frameLength) {
                    statistics.noteDropped(defect)
                    continue
                }
            }
            statistics.framesDelivered += 1
            return Frame(format: info.format, size: info.size, bytesPerLine: info.bytesPerLine, bytes: bytes,
                         timestamp: timestamp, timestampIsMonotonic: true, sequence: sequence)
        }
    }

    /// The scripted kind for the frame due at `due`, else ``corruption``'s for frame `index`.
    private func corruptionKind(forFrame index: UInt64, due: MonotonicInstant) -> FrameCorruption.Kind? {
        let script: FrameCorruption.Kind? = scripted.withLock { s in
            guard let current = s, due >= current.from else { return nil }
            let kind = current.kinds[0]
            s = current.kinds.count > 1 ? (current.from, Array(current.kinds.dropFirst())) : nil
            return kind
        }
        return script ?? corruption?.kind(forFrame: index)
    }

    /// Stops the pattern. Safe to call twice.
    public func stop() {
        pattern = nil
        info = nil
    }

    private func noteTimestamp(_ t: MonotonicInstant) {
        recentStamps.append(t.nanoseconds)
        if recentStamps.count > 30 { recentStamps.removeFirst(recentStamps.count - 30) }
        if recentStamps.count >= 2, let first = recentStamps.first, let last = recentStamps.last, last > first {
            statistics.measuredFramesPerSecond = Double(recentStamps.count - 1) / (Double(last - first) / 1e9)
        }
    }
}
