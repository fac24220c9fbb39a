import BoothCamera
import BoothClock
import BoothCore
import BoothPorts
import BoothJPEG
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage

// A harness that runs the real BoothRuntime on a thread of its own, with the simulated camera,
// a button the test fires, a display that records what it is shown, and a log recorder.
// Conditions are awaited by polling with a generous deadline; no test asserts on durations.

/// A button the test presses: each `press()` gets a fresh id, like a physical press.
final class FakeButton: ButtonDevice {
    let identity = "fake button (test)"
    private let handler = Mutex<(@Sendable (ButtonSignal) -> Void)?>(nil)
    private let running = Mutex(false)
    private let nextID = Mutex<UInt64>(1)
    /// How many times the runtime requested the line.
    private let starts = Mutex(0)

    func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        self.handler.withLock { $0 = handler }
        running.withLock { $0 = true }
        starts.withLock { $0 += 1 }
    }

    func stop() { running.withLock { $0 = false } }
    var isRunning: Bool { running.withLock { $0 } }
    var startCount: Int { starts.withLock { $0 } }

    /// Delivers a signal as the button's thread would.
    func fire(_ signal: ButtonSignal) {
        let h = handler.withLock { $0 }
        h?(signal)
    }

    /// A press now; returns its id (for a long press of the same physical press).
    @discardableResult
    func press() -> UInt64 {
        let id = nextID.withLock { n in defer { n += 1 }; return n }
        fire(.press(id: id, at: SystemClock.monotonicNow()))
        return id
    }

    /// A long press of press `id`.
    func longPress(id: UInt64) { fire(.longPress(id: id)) }

    /// A long press of a fresh press (a second guest holding the button).
    func longPressOfNewPress() {
        let id = nextID.withLock { n in defer { n += 1 }; return n }
        fire(.longPress(id: id))
    }
}

/// The simulated camera behind a thin wrapper that records whether a stream is running,
/// so tests can check the camera was released. The test keeps it to unplug the simulated camera.
final class TestCamera: CameraDevice {
    let simulated: SimulatedCamera
    private let streaming = Mutex(false)
    private let startCount = Mutex(0)

    init(name: String, offeredSizes: [FrameSize]? = nil) { simulated = SimulatedCamera(name: name, offeredSizes: offeredSizes) }

    var identity: String { simulated.identity }
    func start(_ request: StreamRequest) throws -> StreamInfo {
        let info = try simulated.start(request)
        streaming.withLock { $0 = true }
        startCount.withLock { $0 += 1 }
        return info
    }
    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? { try simulated.nextFrame(timeoutMilliseconds: timeoutMilliseconds) }
    func reconfigure(size: FrameSize) throws -> StreamInfo { try simulated.reconfigure(size: size) }
    func stop() {
        simulated.stop()
        streaming.withLock { $0 = false }
    }
    var statistics: CameraStatistics { simulated.statistics }
    func offeredSize(nearestTo size: FrameSize) -> FrameSize? { simulated.offeredSize(nearestTo: size) }

    /// True between a successful `start` and the next `stop`.
    var isStreaming: Bool { streaming.withLock { $0 } }
    /// Successful starts so far.
    var starts: Int { startCount.withLock { $0 } }
    func unplug() { simulated.unplug() }
    func replug() { simulated.replug() }
    /// No more frames while the stream stays up (``SimulatedCamera/stall()``).
    func stall() { simulated.stall() }
    func resume() { simulated.resume() }
}

/// A display that records the screens it is shown and the size of each live frame.
final class RecordingDisplay: DisplaySink {
    enum Entry: Equatable, Sendable {
        case screen(Screen)
        case frame(FrameSize)
    }
    private let entries = Mutex<[Entry]>([])
    private let reviewed = Mutex<[[UInt8]]>([])
    private let statuses = Mutex<[(Screen, String?)]>([])

    func show(_ screen: Screen, capture: [UInt8]?, printStatus: String?) {
        entries.withLock { $0.append(.screen(screen)) }
        statuses.withLock { $0.append((screen, printStatus)) }
        if case .review = screen { reviewed.withLock { $0.append(capture ?? []) } }
    }
    /// The JPEG bytes each review screen was given, in order (empty when it got none).
    var reviewJPEGs: [[UInt8]] { reviewed.withLock { $0 } }
    /// The print statuses each review of `pictureID` was shown with, in order.
    func printStatuses(review pictureID: UInt64) -> [String?] {
        statuses.withLock { $0.filter { $0.0 == .review(pictureID: pictureID) }.map(\.1) }
    }
    func frame(_ frame: Frame) { entries.withLock { $0.append(.frame(frame.size)) } }

    var all: [Entry] { entries.withLock { $0 } }
    var screens: [Screen] {
        all.compactMap { if case let .screen(s) = $0 { s } else { nil } }
    }
    /// Frame sizes seen after the last time `screen` was shown (nil when it never was).
    func frameSizes(afterLast screen: Screen) -> [FrameSize]? {
        let list = all
        guard let i = list.lastIndex(of: .screen(screen)) else { return nil }
        return list[(i + 1)...].compactMap { if case let .frame(f) = $0 { f } else { nil } }
    }
}


/// One booth under test: the runtime on its own thread and the fakes around it.
final class TestBooth: Sendable {
    let runtime: BoothRuntime
    let logs = LogRecorder()
    let button = FakeButton()
    let camera: TestCamera
    let display = RecordingDisplay()
    let settings: Settings
    private let exitCode = Mutex<Int32?>(nil)

    /// - Parameters:
    ///   - button: the button device; the ``FakeButton`` (`self.button`) when nil.
    ///   - filePreview: also write the file preview (`settings.preview.file`).
    ///   - led: the LED factory; none (nil LED) when nil.
    ///   - opensLED: ``DeviceFactory/opensLED`` (false: as `--simulate`, which has no LED by design).
    ///   - offeredSizes: the only sizes the simulated camera offers (nil: any).
    init(_ settings: Settings, button custom: (any ButtonDevice)? = nil, filePreview: Bool = false,
         led: (@Sendable (Settings) -> (any LEDDevice)?)? = nil, opensLED: Bool = true,
         cameraName: String = "sim-test-camera", offeredSizes: [FrameSize]? = nil,
         options: RuntimeOptions = RuntimeOptions(), reloaded: ReloadSource? = nil) {
        self.settings = settings
        let camera = TestCamera(name: cameraName, offeredSizes: offeredSizes)
        self.camera = camera
        let log = logs.logger(threshold: .debug)
        let fake = self.button
        let display = self.display
        let factory = DeviceFactory(
            camera: { _ in camera },
            button: { _ in custom ?? fake },
            led: { s in led?(s) },
            displays: { s, clock, log in
                var sinks: [any DisplaySink] = [display]
                if filePreview, let preview = try? makeFilePreview(s, log: log) { sinks.append(preview) }
                return sinks
            },
            opensLED: opensLED)
        runtime = BoothRuntime(settings: settings, options: options, factory: factory, log: log,
                               reloader: { .success(reloaded?.settings.withLock { $0 } ?? settings) })
    }

    /// Starts `run()` on a thread of its own.
    func start() {
        let thread = Thread { [self] in
            let code = runtime.run()
            exitCode.withLock { $0 = code }
        }
        thread.name = "booth-test-runtime"
        thread.start()
    }

    /// The value `run()` returned, nil while it runs.
    var exited: Int32? { exitCode.withLock { $0 } }

    var state: BoothState { runtime.currentState }

    /// True once a log line containing every one of `parts` was written.
    func logged(_ parts: String...) -> Bool {
        logs.all.contains { line in parts.allSatisfy { line.contains($0) } }
    }

    /// Asks for shutdown and waits (blocking, for `defer`) until `run()` returned.
    func shutdownAndWait(timeoutSeconds: Double = 10) {
        runtime.requestShutdown()
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        while exited == nil && Date() < deadline { usleep(5_000) }
    }

    /// The log so far, for failure messages.
    var logText: String { logs.all.joined(separator: "\n") }
}

/// Polls `condition` every 10 ms until it holds or `timeoutSeconds` passed; returns whether it held.
/// The default is generous: it only runs out when something is wrong, and CI shares 2 cores.
func eventually(timeoutSeconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeoutSeconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

extension BoothState {
    var isIdle: Bool { if case .idle = self { true } else { false } }
    var isPreview: Bool { if case .preview = self { true } else { false } }
    var isCountdown: Bool { if case .countdown = self { true } else { false } }
    var isReview: Bool { if case .review = self { true } else { false } }
    /// The fault reasons, nil when not in fault.
    var faultReasons: [FaultKind: String]? { if case let .fault(r) = self { r } else { nil } }
}

/// The captures saved under `photos` (date folders), sorted by name: full paths.
func savedCaptures(in photos: String) -> [String] {
    var out: [String] = []
    for folder in listDirectory(photos).sorted() where PhotoStore.isDateFolder(folder) {
        for name in listDirectory("\(photos)/\(folder)").sorted() where name.hasSuffix(".jpg") {
            out.append("\(photos)/\(folder)/\(name)")
        }
    }
    return out
}

/// The JPEG header of a file, nil when it is missing or does not decode.
func jpegHeader(ofFile path: String) -> JPEGHeader? {
    guard let bytes = try? AtomicFile.read(path), let decoder = try? JPEGDecoder() else { return nil }
    return try? decoder.header(bytes)
}

/// Whether the file is a JPEG that fully decodes (not just a header).
func decodesFully(_ path: String) -> Bool {
    guard let bytes = try? AtomicFile.read(path), let decoder = try? JPEGDecoder() else { return false }
    return decoder.validate(bytes)
}

/// The settings a test booth's reload reads (a config file's stand-in).
final class ReloadSource: Sendable {
    let settings: Mutex<Settings>
    init(_ settings: Settings) { self.settings = Mutex(settings) }
}
