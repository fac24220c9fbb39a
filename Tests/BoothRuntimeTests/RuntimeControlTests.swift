import BoothCamera
import BoothCore
import BoothDeviceListing
import BoothJPEG
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothControl
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

extension BoothRuntime {
    /// The control handler as photoboothd wires it: the machine's devices from BoothDeviceListing, the
    /// snapshot's size from its JPEG header.
    func daemonControlHandler(info: DaemonInfo) -> @Sendable (ControlRequest, PeerCredentials) -> [UInt8] {
        controlHandler(info: info, devices: { DeviceReport.gather(source: $0) },
                       jpegSize: { try? JPEGDecoder().header($0).size })
    }
}

/// What the test booth's reloader returns.
final class ReloadBox: Sendable {
    let value: Mutex<Result<Settings, SettingsError>>
    init(_ r: Result<Settings, SettingsError>) { value = Mutex(r) }
}

/// A booth on the simulated camera with no button, its control socket, and a client.
final class SimulatedBooth: Sendable {
    let dir = makeTempDir()
    let runtime: BoothRuntime
    let server: ControlServer
    let client: ControlClient
    let reloadResult: ReloadBox
    let exited = DispatchSemaphore(value: 0)
    /// The booth's clock: its timers (review, idle stop) run only as the waits below move it.
    let clock: ManualClock

    init(review: String = "1s") throws {
        let settings = try Settings.defaults.with(overrides: [
            ("storage.dir", "\(dir)/photos"), ("storage.session_file", "\(dir)/session-number"), ("preview.file", ""), ("session.preview", "0s"),
            ("session.countdown", "0s"), ("session.review", review), ("storage.min_free", "0B"),
            ("camera.preview_size", "640x480"), ("camera.capture_size", "640x480"), ("camera.frame_rate", "30"),
        ]).get()
        let reload = ReloadBox(.success(settings))
        reloadResult = reload
        let clock = ManualClock.startingNow()
        self.clock = clock
        let factory = DeviceFactory(camera: { _ in TestCamera(name: "sim", clock: clock) }, button: { _ in NoButton() },
                                    led: { _ in nil }, displays: { _, _, _ in [] })
        runtime = BoothRuntime(settings: settings, options: RuntimeOptions(), factory: factory, clock: clock,
                               log: LogRecorder().logger(), reloader: { reload.value.withLock { $0 } })
        server = ControlServer(path: "\(dir)/control", log: LogRecorder().logger(),
                               handler: runtime.daemonControlHandler(info: DaemonInfo(version: photoboothVersion, protocolVersion: 1,
                                                                                pid: getpid(), configPath: "\(dir)/photobooth.conf",
                                                                                simulated: true)))
        try server.start()
        client = try ControlClient(socket: "\(dir)/control")
        let runtime = self.runtime, exited = self.exited
        let t = Thread { _ = runtime.run(); exited.signal() }
        t.name = "test-booth-loop"
        t.start()
    }

    func ask<R: Codable & Sendable>(_ c: ControlProtocol.Command, reset: Bool? = nil, _ type: R.Type) throws -> R {
        try client.send(ControlRequest(c, reset: reset), expecting: type)
    }

    /// Polls status until `condition` holds or `seconds` of real time pass (the booth's real threads:
    /// camera, storage, loop), moving the booth's clock `step` ms after each poll, at most
    /// `maxBoothMilliseconds` in all, so its own timers (the review) end when the test says.
    func waitForStatus(seconds: Double = 20, step: Int = 50, maxBoothMilliseconds: Int = 10_000,
                       _ condition: (StatusReport) -> Bool) throws -> StatusReport {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var moved = 0
        var last = try ask(.status, StatusReport.self)
        while !condition(last), Date() < deadline {
            usleep(20_000)
            if step > 0, moved < maxBoothMilliseconds {
                clock.advance(milliseconds: step)
                moved += step
            }
            last = try ask(.status, StatusReport.self)
        }
        return last
    }

    /// Polls stats until `condition` holds or `seconds` pass.
    func waitForStats(seconds: Double = 20, _ condition: (BoothStats) -> Bool) throws -> BoothStats {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var last = try ask(.stats, BoothStats.self)
        while !condition(last), Date() < deadline {
            usleep(20_000)
            last = try ask(.stats, BoothStats.self)
        }
        return last
    }

    func stop() {
        runtime.requestShutdown()
        _ = exited.wait(timeout: .now() + 10)
        server.stop()
    }
}

@Suite(.serialized) struct RuntimeControlTests {
    @Test func statusPressSnapshotStatsAndReloadAgainstTheSimulatedBooth() throws {
        let booth = try SimulatedBooth()
        defer { booth.stop() }
        let hello = try booth.ask(.hello, DaemonInfo.self)
        #expect(hello.pid == getpid())
        #expect(hello.simulated)

        let idle = try booth.waitForStatus { $0.camera.streaming && $0.camera.framesDelivered > 5 }
        #expect(idle.state == "idle")
        #expect(idle.faults.isEmpty)
        #expect(idle.camera.device == "sim")
        #expect(idle.camera.card == "Photobooth test pattern")
        #expect(idle.camera.width == 640)
        #expect(idle.camera.height == 480)
        #expect(idle.camera.framesPerSecond.map { abs($0 - 30) < 0.01 } == true)
        #expect(idle.camera.framesDropped == 0)
        #expect(idle.camera.format != nil)
        #expect(idle.button.device == "none")
        #expect(idle.button.lastPress == nil)
        #expect(idle.storage.dir == booth.runtime.store.directory)
        #expect(idle.storage.freeBytes.map { $0 > 0 } == true)
        #expect(idle.storage.nextSession == 1)
        #expect(idle.counters.sessions == 0)

        let snap = try booth.ask(.snapshot, SnapshotReply.self)
        #expect(snap.width == 640 && snap.height == 480)
        let jpeg = try #require(Data(base64Encoded: snap.jpegBase64))
        #expect(Array(jpeg.prefix(2)) == [0xFF, 0xD8])

        let press = try booth.ask(.press, PressReply.self)
        #expect(press.stateBefore == "idle")
        #expect(press.stateAfter.map { $0 != "idle" } == true, "the reply says what the press did: \(press)")
        #expect(press.ignored == nil)
        // The review (1 s on the booth's clock) ends as the wait moves the clock 100 ms a poll.
        let done = try booth.waitForStatus(step: 100) { $0.counters.completed == 1 && $0.state == "idle" }
        #expect(done.counters.sessions == 1)
        #expect(done.button.lastPress != nil)
        #expect(done.storage.nextSession == 2)
        // The storage thread counts the save, then posts it; the loop counts the capture when it
        // handles that event, and records the totals after: each is awaited, not assumed.
        let saved = try booth.waitForStatus { $0.storage.savedSinceStart == 1 && $0.counters.captures == 1 }
        #expect(saved.storage.savedSinceStart == 1)
        #expect(saved.counters.captures == 1)

        let stats = try booth.waitForStats { $0.captures == 1 }
        #expect(stats.sessions == 1 && stats.completed == 1 && stats.captures == 1)

        // Reload: an invalid file keeps the running settings and says why.
        let bad = SettingsError(diagnostics: [Diagnostic(file: "x.conf", line: 3, key: "session.review", message: "session.review: 'soon' is not a duration")])
        booth.reloadResult.value.withLock { $0 = .failure(bad) }
        #expect(throws: ControlClientError.failed(ControlFailure(code: "reload-refused",
                                                                message: "reload refused, the running settings stay:\nx.conf:3: session.review: 'soon' is not a duration"))) {
            try booth.ask(.reload, ReloadReply.self)
        }
        var good = Settings.defaults
        good.storage.dir = booth.runtime.store.directory
        good.storage.sessionFile = "\(booth.dir)/session-number"
        booth.reloadResult.value.withLock { $0 = .success(good) }
        let reloaded = try booth.ask(.reload, ReloadReply.self)
        #expect(reloaded.appliedNow)
        #expect(reloaded.state == "idle")
        // Over the socket too, each changed key with how it took effect.
        #expect(reloaded.changes?.first { $0.key == "session.review" }
                == ReloadReply.Change(SettingChange(key: "session.review", from: "1s", to: "5s", rule: .nextSession), applied: true),
                "\(reloaded)")
        #expect(reloaded.changes?.contains { $0.key == "storage.dir" } == false)
        let inForce = try booth.ask(.status, StatusReport.self)
        #expect(inForce.settings?.inForce["session.review"] == "5s")
        #expect(inForce.settings?.fileDiffers == false, "\(String(describing: inForce.settings?.differences))")
        #expect(try booth.ask(.reload, ReloadReply.self).text == "reloaded: nothing changed")

        let devices = try booth.ask(.devices, DeviceReport.self)
        #expect(devices.source.hasPrefix("photoboothd"))
        #expect(devices.inUse?.camera?.hasPrefix("sim") == true)
        #expect(devices.inUse?.button == "none")

        let reset = try booth.ask(.stats, reset: true, BoothStats.self)
        #expect(reset.sessions == 0 && reset.captures == 0)
    }

    /// `photoboothctl press` in review said "pressed (the booth was review)" while the booth ignored it.
    @Test func aPressTheBoothIgnoresIsAnsweredAsIgnored() throws {
        let booth = try SimulatedBooth(review: "5min")
        defer { booth.stop() }
        _ = try booth.waitForStatus { $0.camera.streaming }
        _ = try booth.ask(.press, PressReply.self)
        _ = try booth.waitForStatus { $0.state == "review" }
        let again = try booth.ask(.press, PressReply.self)
        #expect(again.stateBefore == "review" && again.stateAfter == "review", "\(again)")
        #expect(again.ignored == "press ignored in review", "\(again)")
    }

    @Test func totalsSurviveARestart() throws {
        let booth = try SimulatedBooth()
        _ = try booth.waitForStatus { $0.camera.streaming }
        _ = try booth.ask(.press, PressReply.self)
        // The loop counts the capture when it handles the storage thread's saved event, after savedSinceStart.
        _ = try booth.waitForStatus(step: 100) {
            $0.counters.completed == 1 && $0.storage.savedSinceStart == 1 && $0.counters.captures == 1
        }
        let dir = booth.runtime.store.directory
        booth.stop()
        let stats = StatsStore(directory: dir, log: LogRecorder().logger())
        stats.open(scanning: dir)
        stats.finish()
        #expect(stats.current.sessions == 1)
        #expect(stats.current.captures == 1)
        #expect(stats.current.lastSession == 1)
    }
}

@Suite struct DeviceReportTests {
    @Test func formatsCarrySizesAndFrameRates() {
        let offer = FormatOffer(fourcc: PixelFormat.mjpeg.fourcc, description: "Motion-JPEG",
                                sizes: .discrete([FrameSize(width: 1280, height: 720), FrameSize(width: 640, height: 480)]),
                                intervals: [FrameSize(width: 1280, height: 720): .discrete([FrameInterval(numerator: 1, denominator: 30),
                                                                                           FrameInterval(numerator: 1001, denominator: 30000)])])
        let f = DeviceReport.Format(offer)
        #expect(f.fourcc == "MJPG")
        #expect(f.sizes == [DeviceReport.Size(width: 1280, height: 720, framesPerSecond: [30, 29.97]),
                            DeviceReport.Size(width: 640, height: 480, framesPerSecond: [])])
        #expect(f.sizeRange == nil)
        let stepwise = DeviceReport.Format(FormatOffer(fourcc: PixelFormat.yuyv.fourcc, sizes: .stepwise(
            min: FrameSize(width: 16, height: 16), max: FrameSize(width: 1920, height: 1080), stepWidth: 2, stepHeight: 2)))
        #expect(stepwise.sizeRange == "16x16 to 1920x1080 step 2x2")
        #expect(DeviceReport.fourccText(PixelFormat.rgb24.fourcc) == "RGB3")
    }

    @Test func anEmptyDevTreeListsNoCameras() {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let report = DeviceReport.gather(source: "test", devRoot: dir)
        #expect(report.cameras.isEmpty)
    }
}
