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
        if case .review = screen, let capture {
            state.withLock { $0.still = true }
            write(capture)
        } else {
            state.withLock { $0.still = false }
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
        if let bytes { write(bytes) }
    }

    private func write(_ bytes: [UInt8]) {
        do {
            try AtomicFile.write(bytes, to: path, durable: false, replace: true)
            state.withLock { $0.written += 1; $0.failedOnce = false }
        } catch {
            let first = state.withLock { s in defer { s.failedOnce = true }; return !s.failedOnce }
            if first { log.warning("preview: \(error)") }
        }
    }
}
