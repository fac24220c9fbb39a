import BoothCamera
import BoothClock
import BoothCore
import BoothPorts
import BoothJPEG
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

// A harness that runs the real BoothRuntime on a thread of its own, with the simulated camera,
// a button the test fires, a display that records what it is shown, and a log recorder.
// Conditions are awaited by polling with a generous deadline; no test asserts on durations.
//
// A booth made with `clock: ManualClock.startingNow()` runs its own timers (preview, countdown, review,
// capture and compose deadlines, fault retries, idle stop, the LED retry and watchdog tick, the
// auto-press delay) on that clock: they fire only when the test calls `advance(milliseconds:)`,
// which returns once the loop has handled everything due. What stays real time is what a real
// thread produces: the simulated camera's frames (rendered on the camera thread, stamped on the
// booth's clock, at most one `nextFrame` timeout ahead of it), JPEG encoding, the storage thread's
// writes and fsyncs, the composer, the screens' drawing; tests wait for those with `eventually`,
// while the booth's clock stands still, so no timer can run out because the machine is busy.

/// A button the test presses: each `press()` gets a fresh id, like a physical press.
final class FakeButton: ButtonDevice {
    let identity = "fake button (test)"
    /// Where a press's instant comes from: the booth's clock (a ``TestBooth`` on a manual clock sets it).
    let clock: any MonotonicClock
    init(clock: any MonotonicClock = SystemClock()) { self.clock = clock }
    private let handler = Mutex<(@Sendable (ButtonSignal) -> Void)?>(nil)
    private let running = Mutex(false)
    private let nextID = Mutex<UInt64>(1)
    /// How many times the runtime requested the line.
    private let starts = Mutex(0)

    /// Set: the next requests of the line fail with this message (a line that cannot be requested).
    let startFailure = Mutex<String?>(nil)
    struct LineRefused: Error, CustomStringConvertible { let description: String }

    func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        starts.withLock { $0 += 1 }
        if let refused = startFailure.withLock({ $0 }) { throw LineRefused(description: refused) }
        self.handler.withLock { $0 = handler }
        running.withLock { $0 = true }
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
        fire(.press(id: id, at: clock.now()))
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
    /// The booth's clock at the start of the newest `nextFrame` (nil before the first).
    private let polled = Mutex<MonotonicInstant?>(nil)
    private let pollClock: any MonotonicClock

    init(name: String, offeredSizes: [FrameSize]? = nil) {
        simulated = SimulatedCamera(name: name, offeredSizes: offeredSizes)
        pollClock = SystemClock()
    }

    /// The simulated camera on a test's manual clock: frames are stamped on `clock` and rendered in real
    /// time, at most one `nextFrame` timeout (the camera thread's 200 ms) ahead of it; while it stands
    /// still the camera answers "no frame" every 5 ms of real time, as a camera with nothing new.
    init(name: String, offeredSizes: [FrameSize]? = nil, clock: ManualClock) {
        let simulatedClock = SimulatedClock(now: { clock.now() }, sleep: { ns in
            // Never longer than 5 ms of real time: the wait is for the booth's clock, which a test moves.
            usleep(useconds_t(min(ns, 5_000_000) / 1000))
        })
        simulated = SimulatedCamera(name: name, clock: simulatedClock, offeredSizes: offeredSizes)
        pollClock = clock
    }

    var identity: String { simulated.identity }
    func start(_ request: StreamRequest) throws -> StreamInfo {
        let info = try simulated.start(request)
        streaming.withLock { $0 = true }
        startCount.withLock { $0 += 1 }
        return info
    }
    func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        let now = pollClock.now()
        polled.withLock { $0 = now }
        return try simulated.nextFrame(timeoutMilliseconds: timeoutMilliseconds)
    }
    /// True when the camera thread has asked for a frame with the clock at `instant` or later (so it has
    /// handled everything from before), or when no stream runs.
    func hasPolled(since instant: MonotonicInstant) -> Bool {
        !isStreaming || polled.withLock { $0.map { $0 >= instant } ?? false }
    }
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
    private let shown = Mutex<[ScreenContent]>([])

    func show(_ content: ScreenContent) {
        shown.withLock { $0.append(ScreenContent(content.screen, link: content.link, wifi: content.wifi)) }
        let screen = content.screen, capture = content.picture, printStatus = content.status
        entries.withLock { $0.append(.screen(screen)) }
        statuses.withLock { $0.append((screen, printStatus)) }
        if case .review = screen { reviewed.withLock { $0.append(capture ?? []) } }
    }
    /// The last content shown: its screen, link and Wi-Fi code (no picture kept).
    var lastContent: ScreenContent? { shown.withLock { $0.last } }
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
    let button: FakeButton
    let camera: TestCamera
    /// The booth's clock when it runs on a manual one (``advance(milliseconds:)``); nil: the real clock.
    let clock: ManualClock?
    let display = RecordingDisplay()
    let settings: Settings
    private let exitCode = Mutex<Int32?>(nil)

    /// - Parameters:
    ///   - button: the button device; the ``FakeButton`` (`self.button`) when nil.
    ///   - filePreview: also write the file preview (`settings.preview.file`).
    ///   - led: the LED factory; none (nil LED) when nil.
    ///   - opensLED: ``DeviceFactory/opensLED`` (false: as `--simulate`, which has no LED by design).
    ///   - offeredSizes: the only sizes the simulated camera offers (nil: any).
    ///   - clock: the booth's clock, its camera's and its button's (``ManualClock/startingNow()``); nil:
    ///     the real one.
    ///   - photoStorage: the photos directory's store (nil: the daemon's ``PhotoStore``).
    ///   - screens: screen kinds to make the booth's screens from, as the daemon does (`display.device`); nil:
    ///     only the recording display (and the file preview).
    init(_ settings: Settings, button custom: (any ButtonDevice)? = nil, filePreview: Bool = false,
         led: (@Sendable (Settings) -> (any LEDDevice)?)? = nil, opensLED: Bool = true,
         cameraName: String = "sim-test-camera", offeredSizes: [FrameSize]? = nil,
         options: RuntimeOptions = RuntimeOptions(), reloaded: ReloadSource? = nil, clock: ManualClock? = nil,
         photoStorage: (@Sendable (Settings.Storage) -> any PhotoStorage)? = nil, screens: ScreenRegistry? = nil) {
        self.settings = settings
        self.clock = clock
        button = FakeButton(clock: clock ?? SystemClock())
        let camera = clock.map { TestCamera(name: cameraName, offeredSizes: offeredSizes, clock: $0) }
            ?? TestCamera(name: cameraName, offeredSizes: offeredSizes)
        self.camera = camera
        let log = logs.logger(threshold: .debug)
        let fake = self.button
        let display = self.display
        var factory = DeviceFactory(
            camera: { _ in camera },
            button: { _ in custom ?? fake },
            led: { s in led?(s) },
            displays: { s, clock, log in
                var sinks: [any DisplaySink] = [display]
                if filePreview, let preview = try? makeFilePreview(s, log: log) { sinks.append(preview) }
                return sinks
            },
            opensLED: opensLED)
        if let photoStorage { factory.photoStorage = photoStorage }
        if let screens { factory.screens = { s, clock, log, turns in screens.screens(s, clock, log, turns, simulate: false) } }
        runtime = BoothRuntime(settings: settings, options: options, factory: factory, clock: clock ?? SystemClock(), log: log,
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

    // MARK: The booth's clock (a booth made with `clock:`)

    /// Waits (real time, up to `timeoutSeconds`) until the booth has handled everything due on its clock
    /// now: the loop waits with no event queued and no timer due, and a streaming camera has asked for
    /// its next frame since the clock last moved. Work on other threads (a save, an encode, the
    /// composer) may still be under way; ``eventually(timeoutSeconds:_:)`` waits for its outcome.
    /// - Returns: false when it did not settle in time (or the booth is on the real clock).
    @discardableResult
    func settle(timeoutSeconds: Double = 20) async -> Bool {
        guard let clock else {
            Issue.record("settle() on a booth on the real clock")
            return false
        }
        let now = clock.now()
        let deadline = ContinuousClock.now + .milliseconds(Int(timeoutSeconds * 1000))
        while ContinuousClock.now < deadline {
            if exited != nil || (runtime.loop.isIdle(at: now) && camera.hasPolled(since: now)) { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    /// Settles first (a state the test saw changes before the loop runs that change's commands, such
    /// as starting the state's timer), then moves the booth's clock forward by `milliseconds`, in steps
    /// of at most `stepMilliseconds`, and settles after each (``settle(timeoutSeconds:)``): every timer
    /// due by then has fired and been handled, in order. Steps shorter than the camera's no-frames
    /// time (3 s) keep a streaming camera from looking stalled. Records an issue and returns false
    /// when the booth did not settle.
    @discardableResult
    func advance(milliseconds: Int, stepMilliseconds: Int = 500) async -> Bool {
        guard let clock else {
            Issue.record("advance(milliseconds:) on a booth on the real clock")
            return false
        }
        guard await settle() else {
            Issue.record("the booth did not settle before advancing its clock:\n\(logText)")
            return false
        }
        var left = milliseconds
        repeat {
            let step = min(left, max(stepMilliseconds, 1))
            clock.advance(milliseconds: step)
            left -= step
            guard await settle() else {
                Issue.record("the booth did not settle after advancing its clock:\n\(logText)")
                return false
            }
        } while left > 0
        return true
    }

    /// Advances the booth's clock by `stepMilliseconds` at a time (settling after each, and giving the
    /// other threads up to `realMillisecondsPerStep` of real time to answer) until `condition` holds,
    /// at most `limitMilliseconds` of the booth's time. For what comes after timers that are not the
    /// point of the test (fault retries backing off).
    /// - Returns: whether `condition` held.
    func advance(untilMilliseconds limitMilliseconds: Int, stepMilliseconds: Int = 250, realMillisecondsPerStep: Int = 10,
                 _ condition: () -> Bool) async -> Bool {
        var moved = 0
        while true {
            if condition() { return true }
            // The threads answering (camera probe, storage) get a moment before the clock moves on.
            let until = ContinuousClock.now + .milliseconds(realMillisecondsPerStep)
            while ContinuousClock.now < until {
                if condition() { return true }
                try? await Task.sleep(for: .milliseconds(1))
            }
            guard moved < limitMilliseconds, await advance(milliseconds: stepMilliseconds, stepMilliseconds: stepMilliseconds) else {
                return condition()
            }
            moved += stepMilliseconds
        }
    }
}

extension TestBooth {
    /// On a manual clock, a one-shot session under way (`fastSettings`: no preview or countdown time):
    /// waits (real time) for its review (the capture taken and saved), lets `session.review` pass on
    /// the booth's clock, and waits for idle with `completed` sessions completed.
    /// - Parameter inReview: what must happen (real time) before the review's time passes (nil: nothing).
    /// - Returns: whether it got there.
    func finishSession(completed: Int, inReview: (() -> Bool)? = nil) async -> Bool {
        guard await eventually({ state.isReview }) else { return false }
        if let inReview, !(await eventually(inReview)) { return false }
        guard await advance(milliseconds: settings.session.reviewMilliseconds) else { return false }
        return await eventually { runtime.counters.completed == completed && state.isIdle }
    }
}

extension ManualClock {
    /// A manual clock that starts at the real `CLOCK_MONOTONIC` now, so instants from the real clock
    /// elsewhere (a screen's age check of the live frame) are near it until the test moves it.
    static func startingNow() -> ManualClock { ManualClock(start: Monotonic.now()) }
}

/// Runs `runtime.run()` on a thread of its own; the returned closure asks for shutdown and waits (up to
/// 10 s, blocking: for a `defer`) until `run()` returned.
func runOnItsOwnThread(_ runtime: BoothRuntime) -> () -> Void {
    let exited = Mutex(false)
    let thread = Thread {
        _ = runtime.run()
        exited.withLock { $0 = true }
    }
    thread.start()
    return {
        runtime.requestShutdown()
        let deadline = Date(timeIntervalSinceNow: 10)
        while !exited.withLock({ $0 }) && Date() < deadline { usleep(5_000) }
    }
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
