import BoothClock
import BoothCore
import BoothPorts
import FoundationEssentials
import Glibc
import Synchronization

/// Composes a session's captures into the picture a guest takes home (the print layout).
///
/// Called on the runtime's compose thread, never on the main loop or the cooperative pool;
/// one call at a time.
public protocol PictureComposing: Sendable {
    /// Composes one picture.
    /// - Parameters:
    ///   - captures: the session's captures in shot order (1 to 4), each an upright JPEG file's
    ///     bytes (camera.rotation already applied, EXIF orientation 1 or none).
    ///   - takenAt: the wall-clock time of the session (for a date in the footer).
    /// - Returns: the picture: its JPEG file's bytes and its size in pixels.
    /// - Throws: any error (a capture that does not decode, a layout that cannot be drawn, an output
    ///   that is not a JPEG); the session then ends as failed and its captures stay on disk.
    func composePicture(captures: [[UInt8]], takenAt: Date) throws -> ComposedPicture
    /// A capture of the session in progress arrived (shot `index`, 0-based, of `count`): the composer may
    /// decode it for its slot now, during the next countdown, so the picture is ready soon after the last
    /// shot. ``composePicture(captures:takenAt:)`` uses what was prepared for captures with the same bytes,
    /// and decodes the others itself. A failure here is not an error: the capture is decoded again then.
    func prepare(capture: [UInt8], index: Int, count: Int)
}

extension PictureComposing {
    /// Nothing prepared ahead: every capture is decoded at compose.
    public func prepare(capture: [UInt8], index: Int, count: Int) {}
}

/// What a ``PictureComposing`` made: the picture as a JPEG file, and its size.
public struct ComposedPicture: Sendable, Equatable {
    /// The JPEG file's bytes.
    public var jpeg: [UInt8]
    /// Its width and height in pixels (the JPEG's frame header's).
    public var size: FrameSize

    public init(jpeg: [UInt8], size: FrameSize) {
        self.jpeg = jpeg
        self.size = size
    }
}

/// Runs ``PictureComposing`` on a thread of its own, so composing (tens of milliseconds at print
/// resolution) never stalls the main loop, the camera or a save. A composed picture is put in the
/// ``CaptureBox`` as a record of shot 0 (saved by the storage worker like a capture: atomically,
/// held in memory and retried when the disk is full) and announced with `composed`; a failure
/// with `composeFailed`.
final class ComposeWorker: Sendable {
    struct Job: Sendable {
        var pictureID: UInt64
        var session: Int
        var captures: [[UInt8]]
        var takenAt: Date
        /// The last capture's frame timestamp (CLOCK_MONOTONIC): the picture's "trigger" in logs.
        var lastFrameAt: MonotonicInstant
    }

    /// The composer in use; nil when the settings need none (one shot, the capture is the picture).
    /// Swapped by a reload (``setComposer(_:)``) while the booth is idle.
    private let composer: Mutex<(any PictureComposing)?>
    private let captures: CaptureBox
    private let clock: any MonotonicClock
    private let log: Logger
    private let post: @Sendable (BoothEvent) -> Void
    /// Hands the composed picture to storage (``StorageWorker/save(captureID:)``).
    private let save: @Sendable (UInt64) -> Void
    /// The composer thread's work: a capture decoded ahead, or a picture.
    enum Work: Sendable {
        case prepare(capture: [UInt8], index: Int, count: Int)
        case compose(Job)
    }
    private let queue = WorkQueue<Work>(name: "compose")

    init(composer: (any PictureComposing)?, captures: CaptureBox, clock: any MonotonicClock, log: Logger,
         post: @escaping @Sendable (BoothEvent) -> Void, save: @escaping @Sendable (UInt64) -> Void) {
        self.composer = Mutex(composer)
        self.captures = captures
        self.clock = clock
        self.log = log
        self.post = post
        self.save = save
    }

    /// True when a composer is set.
    var hasComposer: Bool { composer.withLock { $0 != nil } }

    /// Uses `composer` from the next picture on (a reload of the `[picture]` or session settings).
    func setComposer(_ composer: (any PictureComposing)?) { self.composer.withLock { $0 = composer } }

    func launch() {
        if !queue.start({ [self] work in
            switch work {
            case let .prepare(capture, index, count):
                guard let composer = self.composer.withLock({ $0 }) else { return }
                let start = clock.now()
                composer.prepare(capture: capture, index: index, count: count)
                log.debug("compose: capture \(index + 1) of \(count) decoded ahead in \(format(clock.now().milliseconds(since: start))) ms")
            case let .compose(job):
                composeOne(job)
            }
        }) {
            log.error("compose: no thread for composing pictures (pthread_create failed: the thread limit)")
        }
    }

    /// Queues a picture; answered by `composed` or `composeFailed` with `job.pictureID`.
    func compose(_ job: Job) { queue.send(.compose(job)) }

    /// Queues the decoding ahead of a session's capture (shot `index`, 0-based, of `count`) for its picture.
    func prepare(capture: [UInt8], index: Int, count: Int) { queue.send(.prepare(capture: capture, index: index, count: count)) }

    /// Finishes the queued pictures (at most `timeoutSeconds`), then stops the thread.
    /// Returns false when one was still being composed at the deadline.
    @discardableResult
    func finish(timeoutSeconds: Double) -> Bool {
        queue.finish(timeoutMilliseconds: Int64(max(0, timeoutSeconds) * 1000))
    }

    private func composeOne(_ job: Job) {
        let start = clock.now()
        guard let composer = self.composer.withLock({ $0 }) else {
            post(.composeFailed(pictureID: job.pictureID,
                                message: "no picture composer: \(job.captures.count) captures cannot be made one picture"))
            return
        }
        let picture: ComposedPicture
        do {
            picture = try composer.composePicture(captures: job.captures, takenAt: job.takenAt)
        } catch {
            log.error("session \(job.session)'s picture: composing \(job.captures.count) capture(s) failed: \(error)")
            post(.composeFailed(pictureID: job.pictureID, message: "\(error)"))
            return
        }
        let done = clock.now()
        let jpeg = picture.jpeg
        guard !jpeg.isEmpty, picture.size.width > 0, picture.size.height > 0 else {
            log.error("session \(job.session)'s picture: the composer returned \(jpeg.count) bytes of \(picture.size), not a picture")
            post(.composeFailed(pictureID: job.pictureID, message: "the composer's output is not a picture"))
            return
        }
        captures.assign(id: job.pictureID, session: job.session, shot: 0)
        captures.put(CaptureRecord(id: job.pictureID, session: job.session, shot: 0, jpeg: jpeg,
                                   trigger: job.lastFrameAt, frameTimestamp: job.lastFrameAt, readyAt: done,
                                   size: picture.size, format: .mjpeg, passedThrough: false))
        captures.shelve(pictureID: job.pictureID, jpeg: jpeg)
        log.info("session \(job.session)'s picture composed: \(picture.size) from \(job.captures.count) capture(s), "
                 + "\(jpeg.count) bytes in \(format(done.milliseconds(since: start))) ms; "
                 + "last frame to composed \(format(done.milliseconds(since: job.lastFrameAt))) ms")
        post(.composed(pictureID: job.pictureID))
        save(job.pictureID)
    }
}
