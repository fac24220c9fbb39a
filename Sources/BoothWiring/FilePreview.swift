import BoothClock
import BoothCore
import BoothDisplay
import BoothJPEG
import BoothPorts
import BoothRaster
import BoothRuntime
import BoothStorage
import BoothSystem
import Synchronization

/// What the screen shows, as a JPEG file (`preview.file`): the same drawing as the framebuffer
/// (``ScreenRenderer``: live view, texts, countdown digit, flash, review with its print status,
/// fault) at `preview.size`, upright, encoded with TurboJPEG and rewritten at most
/// `preview.frame_rate` times a second by rename only (no fsync: it is thrown away). Drawing and
/// encoding run on a thread of its own ("preview"), so neither the camera thread nor the main loop
/// waits for them.
public final class FilePreview: DisplaySink {
    /// The file (`preview.file`).
    public let path: String
    private let file: JPEGFileFramebuffer
    private let display: FramebufferDisplay

    /// - Parameters:
    ///   - size: the picture's size in pixels (`preview.size`).
    ///   - framesPerSecond: rewrites per second at most (`preview.frame_rate`).
    ///   - quality: JPEG quality of the file.
    ///   - fontPath: the font (`display.font`); `texts` the `[text]` settings.
    ///   - options: how the live view is drawn (`display.scaling`, `display.mirror`); the camera
    ///     rotation comes from `orientation`, the booth's one source (the same the camera turns by).
    ///   - clock: where `framesPerSecond` is kept (``FramebufferDisplay``'s clock); CLOCK_MONOTONIC by default.
    /// - Throws: ``FontError`` when the font cannot be loaded.
    public init(path: String, size: FrameSize, framesPerSecond: Int, quality: Int = 80, fontPath: String,
                texts: ScreenTexts, options: LiveViewOptions, orientation: any OrientationSource,
                clock: any MonotonicClock = SystemClock(), log: Logger) throws {
        self.path = path
        try? makeDirectories(directoryName(of: path))
        let file = JPEGFileFramebuffer(path: path, size: size, quality: quality, log: log)
        self.file = file
        display = try FramebufferDisplay(framebuffer: file, fontPath: fontPath, texts: texts, options: options,
                                         orientation: orientation, framesPerSecond: framesPerSecond, console: nil,
                                         followsDisplayRotation: false, threadName: "preview", clock: clock,
                                         log: { log.warning("preview: \($0)") })
        display.start()
    }

    /// Files written so far.
    public var written: Int { file.written }

    public func show(_ content: ScreenContent) { display.show(content) }

    public func frame(_ frame: Frame) { display.frame(frame) }

    public func close() { display.close() }
}

/// A "framebuffer" that is a JPEG file: 32 bpp XRGB8888 at `size`; each presented frame is encoded
/// (`tjCompress2`, 4:2:0) and written to `path` atomically (temp file, rename; no fsync). A failed
/// write is logged once until one succeeds again.
final class JPEGFileFramebuffer: Framebuffer {
    let format: FramebufferFormat
    let path: String
    private let quality: Int
    private let log: Logger
    private struct State {
        var encoder: JPEGEncoder?
        var pixels: [UInt32] = []
        var failedOnce = false
        var written = 0
    }
    private let state = Mutex(State())

    init(path: String, size: FrameSize, quality: Int, log: Logger) {
        self.path = path
        format = .xrgb8888(size)
        self.quality = quality
        self.log = log
    }

    var written: Int { state.withLock { $0.written } }

    func present(_ packed: UnsafeRawBufferPointer) {
        let count = format.size.area * 4
        guard packed.count >= count else { return }
        write { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: packed[0..<count])) }
    }

    /// The live view's mirror on its way into the file's pixels (one `ARGBMirror` pass, no extra buffer).
    func presentMirrored(_ packed: UnsafeRawBufferPointer) {
        let format = self.format
        guard packed.count >= format.rowBytes * format.size.height else { return }
        write { copyMirrored(packed, to: $0.baseAddress, format: format) }
    }

    /// Fills the reused pixel buffer with `fill`, then encodes it and writes the file.
    private func write(_ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        let size = format.size, quality = self.quality
        state.withLock { s in
            do {
                if s.encoder == nil { s.encoder = try JPEGEncoder() }
                if s.pixels.count != size.area { s.pixels = [UInt32](repeating: 0, count: size.area) }
                s.pixels.withUnsafeMutableBytes { fill($0) }
                guard let encoder = s.encoder else { return }
                let jpeg = try encoder.encode(xrgb: s.pixels, size: size, quality: quality)
                try AtomicFile.write(jpeg, to: path, durable: false, replace: true)
                s.written += 1
                s.failedOnce = false
            } catch {
                if !s.failedOnce { log.warning("preview: \(error)") }
                s.failedOnce = true
            }
        }
    }
}
