import BoothClock
import BoothCore
import BoothPorts
import BoothRaster
import FoundationEssentials
import Glibc
import Synchronization

/// Draws screens into a framebuffer, synchronously: renders onto a canvas the size of the
/// framebuffer turned by the display rotation, converts (turn + pixel format) off-screen and copies
/// the frame in. For tests, the bench and ``FramebufferDisplay``'s thread. Not thread-safe.
public final class ScreenCompositor {
    public let framebuffer: any Framebuffer
    public let renderer: ScreenRenderer
    private let converter: FramebufferConverter
    /// The last canvas drawn (logical orientation, before the display rotation; stored right to
    /// left for the mirrored live view on an unturned XRGB8888 screen, ``Canvas/storedMirrored``:
    /// read it with ``Canvas/rgb(x:y:)``).
    public private(set) var canvas = Canvas(size: FrameSize(width: 0, height: 0))
    /// The picture whose undrawable capture was last reported (``reviewFailureToReport``).
    private var reportedReview: UInt64?

    public init(framebuffer: any Framebuffer, renderer: ScreenRenderer) {
        self.framebuffer = framebuffer
        self.renderer = renderer
        converter = FramebufferConverter(format: framebuffer.format)
    }

    /// Draws one frame of `screen` and presents it; `status` is the review screen's status line
    /// (``ScreenRenderer/render(_:live:capture:status:options:into:)``).
    public func draw(_ screen: Screen, live: Frame?, capture: [UInt8]?, status: String? = nil, link: String? = nil,
                     wifi: String? = nil, options: LiveViewOptions, displayRotation: Rotation) {
        let size = converter.canvasSize(for: displayRotation)
        canvas.resize(size)
        // The mirrored live view on a screen the canvas goes to as it is: draw the screen's mirror
        // image (the camera's frame unmirrored, overlays reflected) and let the copy into
        // framebuffer memory reverse each row, which saves a full mirror pass per frame.
        canvas.storedMirrored = options.mirror && converter.presentsStraight(size, rotation: displayRotation)
            && ScreenCompositor.showsLiveView(screen)
        renderer.render(screen, live: live, capture: capture, status: status, link: link, wifi: wifi, options: options, into: &canvas)
        converter.present(canvas, rotation: displayRotation, on: framebuffer)
    }

    /// What to log after drawing `screen`: for a review whose capture could not be drawn
    /// (``ScreenRenderer/reviewFailure``), the line saying so, once per picture; nil otherwise.
    public func reviewFailureToReport(_ screen: Screen) -> String? {
        guard case let .review(pictureID) = screen, let why = renderer.reviewFailure, reportedReview != pictureID else { return nil }
        reportedReview = pictureID
        return "review of picture \(pictureID): the capture cannot be drawn (\(why)); the screen shows text.review_not_shown"
    }

    static func showsLiveView(_ screen: Screen) -> Bool {
        switch screen {
        case .idle, .preview, .countdown, .betweenShots: true
        case .capture, .review, .fault: false
        }
    }
}

/// The guest's screen on a Linux framebuffer, drawn on a thread of its own at up to `framesPerSecond`:
/// the live view under the idle, preview and countdown screens, the flash, the capture in review,
/// the fault screen. ``show(_:)`` and ``frame(_:)`` only hand over data and wake the thread,
/// so neither the main loop nor the camera thread waits for drawing. The turns come from the booth's
/// one ``OrientationSource`` (read once per drawing: the live view's camera turn and the screen's
/// turn from the same reading). Optionally owns the kiosk VT (``ConsoleOwner``) until ``close()``.
/// The frame-rate limit and a live frame's age are measured on the injected clock: the thread waits
/// on its condition for the rest of the interval (a new screen, a stop or an advance of a
/// ``ManualClock`` wakes it), never in a sleep.
public final class FramebufferDisplay: DisplaySink {
    public let format: FramebufferFormat
    private let orientation: any OrientationSource
    private let optionsBase: LiveViewOptions
    /// The least time between two drawings, in milliseconds (1000 / `framesPerSecond`).
    private let minIntervalMilliseconds: Double
    private let clock: any MonotonicClock
    private let followsDisplayRotation: Bool
    private let threadName: String
    private let log: @Sendable (String) -> Void
    private struct Shared {
        var content = ScreenContent(.idle(notice: nil))
        var live: Frame?
        var dirty = true
        var stop = false
        var frames = 0
    }
    private let shared = Mutex(Shared())
    private let worker: WorkerThread
    private let console: Mutex<ConsoleOwner?>
    // Confined to the display thread after `start`; `@unchecked` because the compositor holds
    // FreeType and TurboJPEG handles, which are used by that one thread only.
    private final class Confined: @unchecked Sendable {
        let compositor: ScreenCompositor
        init(_ c: ScreenCompositor) { compositor = c }
    }
    private let confined: Confined

    /// - Parameters:
    ///   - framebuffer: a ``FramebufferDevice`` (or a ``MemoryFramebuffer``).
    ///   - fontPath: the font (`display.font`).
    ///   - console: the VT to switch to graphics mode (`display.console`), or nil.
    ///   - followsDisplayRotation: turn the drawing by `display.rotation` (a screen); false draws it
    ///     upright (the file preview).
    ///   - threadName: the drawing thread's name.
    ///   - clock: where the frame-rate limit (`framesPerSecond`) and a live frame's age (its
    ///     `timestamp`, on the same clock) are measured; CLOCK_MONOTONIC by default. On a
    ///     ``ManualClock``, an advance wakes the drawing thread.
    ///   - log: warnings (a console that cannot be owned).
    /// - Throws: ``FontError`` when the font cannot be loaded.
    public init(framebuffer: any Framebuffer, fontPath: String, texts: ScreenTexts, options: LiveViewOptions,
                orientation: any OrientationSource, framesPerSecond: Int, console: String?,
                followsDisplayRotation: Bool = true, threadName: String = "display",
                clock: any MonotonicClock = SystemClock(), log: @escaping @Sendable (String) -> Void) throws {
        self.followsDisplayRotation = followsDisplayRotation
        self.threadName = threadName
        worker = WorkerThread(name: threadName)
        format = framebuffer.format
        let renderer = ScreenRenderer(font: try Font(path: fontPath), texts: texts)
        confined = Confined(ScreenCompositor(framebuffer: framebuffer, renderer: renderer))
        self.orientation = orientation
        optionsBase = options
        minIntervalMilliseconds = 1000 / Double(max(1, framesPerSecond))
        self.clock = clock
        self.log = log
        var owner: ConsoleOwner?
        if let console, !console.isEmpty {
            do { owner = try ConsoleOwner(path: console) } catch { log("display: console \(console) left as it is: \(error)") }
        }
        self.console = Mutex(owner)
        if let manual = clock as? ManualClock {
            let worker = self.worker
            manual.onAdvance { worker.wake() }
        }
    }

    /// Starts the drawing thread.
    public func start() {
        // No drawing thread (the thread limit): the booth runs without its screen, as without a framebuffer.
        worker.start { [self] w in run(w) }
    }

    /// Frames drawn so far.
    public var framesDrawn: Int { shared.withLock { $0.frames } }

    /// Shows `content` (its picture and status line only on the review). Showing the review again
    /// with a new status redraws it.
    public func show(_ content: ScreenContent) {
        shared.withLock { s in
            switch content.screen {
            case .review: s.content = content
            // The last picture's code and the Wi-Fi code; no picture kept.
            case .idle: s.content = ScreenContent(content.screen, link: content.link, wifi: content.wifi)
            default: s.content = ScreenContent(content.screen)
            }
            s.dirty = true
        }
        signal()
    }

    /// A live frame (camera thread). Kept only while a screen with the live view is up.
    public func frame(_ frame: Frame) {
        let wanted: Bool = shared.withLock { s in
            switch s.content.screen {
            case .idle, .preview, .countdown, .betweenShots:
                s.live = frame
                s.dirty = true
                return true
            case .capture, .review, .fault:
                return false
            }
        }
        if wanted { signal() }
    }

    /// Stops the thread (waits up to 2 s for the frame being drawn), then gives the screen
    /// (``Framebuffer/close()``) and the console back.
    public func close() {
        shared.withLock { $0.stop = true }
        signal()
        // The drawing thread gives the screen back as it stops (run); here only when it never ran.
        // A thread still inside a frame after 2 s gives it back when that frame ends.
        if worker.finish(timeoutMilliseconds: 2000) { confined.compositor.framebuffer.close() }
        console.withLock { $0?.restore(); $0 = nil }
    }

    private func signal() { worker.wake() }

    private func run(_ worker: WorkerThread) {
        var lastDraw: MonotonicInstant?  // on `clock`
        var lastRotation: (camera: Rotation, display: Rotation)?
        /// Whether the last drawing showed a live frame: once the stream has stopped (the frame ages
        /// past 2 s) the screen is drawn again without it, not left with that frame frozen.
        var drewLive = false
        while true {
            // Wakes twice a second anyway so an auto rotation is followed on a still screen.
            _ = worker.waitForWork(until: Monotonic.now().adding(milliseconds: 500)) { shared.withLock { $0.dirty || $0.stop } }
            let turns = orientation.current
            let rotation = (camera: turns.camera, display: followsDisplayRotation ? turns.display : Rotation.r0)
            let turned = lastRotation.map { $0.camera != rotation.camera || $0.display != rotation.display } ?? true
            // The frame-rate limit: the rest of the interval since the last drawing, on the clock. A new
            // screen or frame wakes the wait (it is looked at again), a stop ends it.
            while let last = lastDraw, !shared.withLock({ $0.stop }) {
                let left = minIntervalMilliseconds - clock.now().milliseconds(since: last)
                guard left > 0 else { break }
                _ = worker.waitForWork(until: Monotonic.now().adding(milliseconds: Int64(left.rounded(.up)))) { shared.withLock { $0.stop } }
            }
            enum Job { case stop, skip, draw(Screen, Frame?, [UInt8]?, String?, String?, String?) }
            let job: Job = shared.withLock { s in
                if s.stop { return .stop }
                // A frame over 2 s old is from a stream that stopped (camera.idle_stop): not shown.
                let live = s.live.flatMap { clock.now().milliseconds(since: $0.timestamp) < 2000 ? $0 : nil }
                if live == nil { s.live = nil }
                guard s.dirty || turned || (drewLive && live == nil) else { return .skip }
                s.dirty = false
                return .draw(s.content.screen, live, s.content.picture, s.content.status, s.content.link, s.content.wifi)
            }
            guard case let .draw(screen, live, capture, status, link, wifi) = job else {
                if case .stop = job {
                    // On this thread, the screen's owner: a KMS card's CRTC back to the console.
                    confined.compositor.framebuffer.close()
                    return
                }
                continue
            }
            var options = optionsBase
            options.cameraRotation = rotation.camera
            confined.compositor.draw(screen, live: live, capture: capture, status: status, link: link, wifi: wifi, options: options,
                                     displayRotation: rotation.display)
            if let failure = confined.compositor.reviewFailureToReport(screen) { log("display: \(failure)") }
            lastRotation = rotation
            drewLive = live != nil && ScreenCompositor.showsLiveView(screen)
            lastDraw = clock.now()
            shared.withLock { $0.frames += 1 }
        }
    }
}
