import BoothCore
import BoothJPEG
import Synchronization

/// The live view as a JPEG file (`preview.file`), rewritten atomically at `preview.frame_rate`
/// by rename only (no fsync: it is thrown away). During review it holds the capture.
public final class FilePreview: DisplaySink {
    /// The file (`preview.file`).
    public let path: String
    private let minIntervalMilliseconds: Double
    private let quality: Int
    private let clock: any MonotonicClock
    private let log: Logger
    private struct State {
        var still = false
        var lastWrite: MonotonicInstant?
        var encoder: JPEGEncoder?
        var failedOnce = false
        var written = 0
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - framesPerSecond: rewrites per second at most (`preview.frame_rate`).
    ///   - quality: JPEG quality for YUYV/RGB frames (MJPEG frames are written as they came).
    public init(path: String, framesPerSecond: Int, quality: Int = 80, clock: any MonotonicClock, log: Logger) {
        self.path = path
        self.minIntervalMilliseconds = 1000.0 / Double(max(1, framesPerSecond))
        self.quality = quality
        self.clock = clock
        self.log = log
        try? makeDirectories(directoryName(of: path))
    }

    /// Files written so far.
    public var written: Int { state.withLock { $0.written } }

    public func show(_ screen: Screen, capture: [UInt8]?) {
        state.withLock { s in
            if case .review = screen, let capture {
                s.still = true
                write(capture, &s)
            } else {
                s.still = false
            }
        }
    }

    public func frame(_ frame: Frame) {
        let now = clock.now()
        let due: Bool = state.withLock { s in
            guard !s.still else { return false }
            if let last = s.lastWrite, now.milliseconds(since: last) < minIntervalMilliseconds { return false }
            s.lastWrite = now
            return true
        }
        guard due else { return }
        let bytes: [UInt8]?
        switch frame.format {
        case .mjpeg:
            bytes = frame.bytes
        case .yuyv, .rgb24:
            bytes = state.withLock { s -> [UInt8]? in
                if s.encoder == nil { s.encoder = try? JPEGEncoder() }
                return try? s.encoder?.encode(frame, quality: quality)
            }
        }
        guard let bytes else { return }
        // Written under the lock, and only while no capture is shown: a live frame encoded while
        // review began must not replace the capture (the camera and main-loop threads both write here).
        state.withLock { s in
            if !s.still { write(bytes, &s) }
        }
    }

    private func write(_ bytes: [UInt8], _ s: inout State) {
        do {
            try AtomicFile.write(bytes, to: path, durable: false, replace: true)
            s.written += 1
            s.failedOnce = false
        } catch {
            if !s.failedOnce { log.warning("preview: \(error)") }
            s.failedOnce = true
        }
    }
}
