import BoothCamera
import BoothCore
import BoothJPEG
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothControl
@testable import BoothRuntime
@testable import BoothWiring

// A reload on a running booth (simulated camera, fake button, recording screens), for each group of
// keys: the change reaches the component that uses it, and the reply says exactly what each key did.
// The booth runs on a ManualClock: no booth timer fires (idle stop, review) unless a test advances it
// (``ReloadBooth/advance(until:)``), so only the real threads (loop, camera, storage) are waited for.

/// A screen the factory made for one set of settings: what it would draw (the text of each screen it
/// was shown) and whether it was closed.
final class ReloadScreen: DisplaySink {
    let settings: Settings
    private let shown = Mutex<[String]>([])
    private let closedFlag = Mutex(false)
    private let frames = Mutex(0)

    init(_ settings: Settings) { self.settings = settings }

    func show(_ content: ScreenContent) {
        let text: String
        switch content.screen {
        case .idle: text = settings.text.idle
        case .preview: text = settings.text.preview
        case let .fault(reasons): text = reasons.keys.sorted().map { kind -> String in
            switch kind {
            case .camera: settings.text.faultCamera
            case .button: settings.text.faultButton
            case .storage: settings.text.faultStorage
            }
        }.joined(separator: " / ")
        default: text = "\(content.screen)"
        }
        shown.withLock { $0.append(text) }
    }
    func frame(_ frame: Frame) { frames.withLock { $0 += 1 } }
    func close() { closedFlag.withLock { $0 = true } }

    var texts: [String] { shown.withLock { $0 } }
    var closed: Bool { closedFlag.withLock { $0 } }
    var frameCount: Int { frames.withLock { $0 } }
}

/// A running booth whose reload reads `file` (the config file's stand-in).
final class ReloadBooth: Sendable {
    let runtime: BoothRuntime
    let logs = LogRecorder()
    let button = FakeButton()
    let camera = TestCamera(name: "sim-reload")
    let file: ReloadSource
    let started: Settings
    let clock = ManualClock()
    private let made = Box<[ReloadScreen]>([])
    /// LED lines asked of the factory (it opens none).
    let ledOpens = Box(0)
    private let exitCode = Box<Int32?>(nil)
    let dir: String

    init(_ edits: [(key: String, value: String)] = []) throws {
        let dir = makeTempDir("reload")
        self.dir = dir
        let settings = try Settings.defaults.with(overrides: [
            ("storage.dir", "\(dir)/photos"), ("storage.session_file", "\(dir)/session-number"), ("storage.min_free", "0B"), ("preview.file", ""),
            ("print.journal", "\(dir)/journal.json"), ("print.spool", "\(dir)/spool"),
            ("session.preview", "off"), ("session.preview_timeout", "10min"), ("session.countdown", "0s"),
            ("camera.preview_size", "640x480"), ("camera.capture_size", "640x480"), ("camera.rotation", "0"),
        ] + edits).get()
        started = settings
        let file = ReloadSource(settings)
        self.file = file
        let camera = self.camera, button = self.button, made = self.made, ledOpens = self.ledOpens
        let factory = DeviceFactory(
            camera: { _ in camera }, button: { _ in button },
            led: { _ in ledOpens.value.withLock { $0 += 1 }; return nil },
            displays: { s, _, _ in
                let screen = ReloadScreen(s)
                made.value.withLock { $0.append(screen) }
                return [screen]
            })
        runtime = BoothRuntime(settings: settings, options: RuntimeOptions(), factory: factory, clock: clock,
                               log: logs.logger(threshold: .debug), reloader: { .success(file.settings.withLock { $0 }) })
        let runtime = self.runtime, exitCode = self.exitCode
        let thread = Thread { let code = runtime.run(); exitCode.value.withLock { $0 = code } }
        thread.name = "reload-test-loop"
        thread.start()
    }

    /// The screens made so far, the first at start.
    var screens: [ReloadScreen] { made.value.withLock { $0 } }

    /// Edits the file's stand-in: `edits` over what it says now.
    func edit(_ edits: [(key: String, value: String)]) throws {
        let now = file.settings.withLock { $0 }
        let new = try now.with(overrides: edits).get()
        file.settings.withLock { $0 = new }
    }

    /// Reloads and returns the reply (a refusal fails the test).
    func reload() throws -> ReloadReply {
        switch runtime.requestReload() {
        case let .accepted(reply): return reply
        case let .refused(error):
            Issue.record("reload refused: \(error)")
            throw error
        }
    }

    func stop() {
        runtime.requestShutdown()
        let deadline = Date(timeIntervalSinceNow: 10)
        while exitCode.value.withLock({ $0 }) == nil && Date() < deadline { usleep(5_000) }
        removeTree(dir)
    }

    var logText: String { logs.all.joined(separator: "\n") }

    /// Moves the booth's clock on 250 ms at a time, giving the real threads 20 ms after each step,
    /// until `condition` holds, at most 30 s of the booth's time. - Returns: whether it held.
    func advance(until condition: () -> Bool) async -> Bool {
        for _ in 0..<120 {
            if condition() { return true }
            clock.advance(milliseconds: 250)
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// One session of one shot (preview off: a press for the preview, one for the photo), waited for
    /// until its capture is saved and the review is over (the booth back in idle).
    func takeSession() async throws {
        let saved = runtime.counters.captures
        button.press()
        try #require(await eventually { runtime.currentState.isPreview }, "\(logText)")
        button.press()
        try #require(await eventually { runtime.counters.captures == saved + 1 }, "no capture saved: \(logText)")
        try #require(await advance { runtime.currentState.isIdle }, "no idle after the review: \(logText)")
    }

    /// True once a log line containing every one of `parts` was written.
    func logged(_ parts: String...) -> Bool {
        logs.all.contains { line in parts.allSatisfy { line.contains($0) } }
    }
}

extension ReloadReply {
    /// The change of `key`, nil when the reply does not list it.
    func change(_ key: String) -> Change? { changes?.first { $0.key == key } }
}

@Suite(.serialized) struct ReloadTests {
    @Test("camera.rotation: the next snapshot is turned (640x480 -> 480x640); status shows 90 in force")
    func rotationTurnsTheNextSnapshot() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming }, "\(booth.logText)")
        let before = try #require(booth.runtime.snapshotJPEG(), "no snapshot: \(booth.logText)")
        #expect(try JPEGDecoder().header(before).size == FrameSize(width: 640, height: 480))
        let starts = booth.camera.starts

        try booth.edit([("camera.rotation", "90")])
        let reply = try booth.reload()
        #expect(reply.appliedNow && reply.state == "idle")
        #expect(reply.changes?.map(\.key) == ["camera.rotation"])
        let change = try #require(reply.change("camera.rotation"))
        #expect(change.from == "0" && change.to == "90" && change.applied && change.rule == "at-once")
        #expect(change.effect == "applied at once")
        #expect(reply.text == "reloaded: 1 key changed\n  camera.rotation: 0 -> 90, applied at once")
        #expect(booth.logged("settings reloaded: 1 key changed"))
        #expect(booth.logged("  camera.rotation: 0 -> 90, applied at once"))

        let after = try #require(booth.runtime.snapshotJPEG(), "no snapshot: \(booth.logText)")
        #expect(try JPEGDecoder().header(after).size == FrameSize(width: 480, height: 640))
        #expect(booth.camera.starts == starts, "a rotation does not restart the stream")
        let status = booth.runtime.statusReport(configPath: "test.conf")
        #expect(status.orientation?.camera == 90)
        #expect(status.settings?.inForce["camera.rotation"] == "90")
        #expect(status.settings?.fileDiffers == false)
    }

    @Test("a reload whose sizes would make the booth hold more than its memory limit is refused, the running sizes kept (#35)")
    func oversizedReloadRefused() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming }, "\(booth.logText)")
        // Values a config file could not give (the bounds refuse them as they are read): the runtime checks what it is handed.
        for side in [16384, 8000] {
            booth.file.settings.withLock {
                $0.preview.size = FrameSize(width: side, height: side)
                $0.preview.file = "\(booth.dir)/preview.jpg"
            }
            guard case let .refused(error) = booth.runtime.requestReload() else {
                Issue.record("a \(side)x\(side) preview was accepted: \(booth.logText)")
                continue
            }
            #expect(error.description.contains("preview.size = \(side)x\(side)"), "\(error)")
            #expect(error.description.contains("more than its limit of 512 MB"), "\(error)")
            #expect(booth.logged("reload refused, keeping the running settings"))
            #expect(booth.screens.count == 1, "no screen made for the refused settings")
            #expect(booth.runtime.statusReport(configPath: "test.conf").settings?.inForce["preview.size"] == "800x480")
        }
    }

    @Test("text.*: the screens are made again with the new text, and the screen on display shows it at once")
    func textShowsOnTheNextScreen() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.screens.first?.texts.contains("Press the button") == true }, "\(booth.logText)")
        try booth.edit([("text.idle", "Smile, then press"), ("text.preview", "Ready?")])
        let reply = try booth.reload()
        #expect(reply.changes?.map(\.key) == ["text.idle", "text.preview"])
        #expect(reply.changes?.allSatisfy { $0.effect == "screens reopened" && $0.rule == "reopen-screen" && $0.applied } == true)
        let screens = booth.screens
        try #require(screens.count == 2, "the factory made the screens again")
        #expect(screens[0].closed, "the old screen is closed")
        #expect(screens[1].texts.first == "Smile, then press", "the idle screen is shown again with the new text: \(screens[1].texts)")
        // The next screen too: a press goes to preview, which says the new prompt.
        booth.button.press()
        #expect(await eventually { screens[1].texts.contains("Ready?") }, "\(screens[1].texts)")
        #expect(await eventually { screens[1].frameCount > 0 }, "the camera's frames reach the new screen")
    }

    @Test("display.* and preview.*: the new screen is made with them")
    func displayChangeReachesTheScreen() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        try booth.edit([("display.mirror", "false"), ("display.scaling", "fill"), ("preview.size", "320x240")])
        let reply = try booth.reload()
        #expect(reply.changes?.map(\.key) == ["preview.size", "display.scaling", "display.mirror"])
        #expect(reply.changes?.allSatisfy { $0.effect == "screens reopened" } == true)
        let newest = try #require(booth.screens.last)
        #expect(booth.screens.count == 2)
        #expect(newest.settings.display.mirror == false)
        #expect(newest.settings.display.scaling == .fill)
        #expect(newest.settings.preview.size == FrameSize(width: 320, height: 240))
        let status = booth.runtime.statusReport(configPath: "test.conf")
        #expect(status.settings?.inForce["display.mirror"] == "false")
        #expect(status.settings?.inForce["preview.size"] == "320x240")
    }

    @Test("print.*: a new destination reaches the printer (reconnected); print.journal waits for a restart")
    func printChangeReachesThePrinter() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        try booth.edit([("print.destination", "booth-test-queue"), ("print.journal", "\(booth.dir)/other.json")])
        let reply = try booth.reload()
        #expect(reply.change("print.destination")?.effect == "print worker reconfigured")
        #expect(reply.change("print.destination")?.applied == true)
        let journal = try #require(reply.change("print.journal"))
        #expect(!journal.applied && journal.rule == "restart")
        #expect(journal.effect == "takes effect after `systemctl restart photoboothd`")
        #expect(reply.text.contains("  print.journal: \(booth.dir)/journal.json -> \(booth.dir)/other.json, takes effect after `systemctl restart photoboothd`"),
                "\(reply.text)")
        #expect(booth.runtime.printer.status().destination == "booth-test-queue")
    }

    @Test("storage.dir on a running booth: the next photo is saved there with the next session number; status and totals follow")
    func storageDirMovesTheNextPhoto() async throws {
        let booth = try ReloadBooth([("session.review", "1s")])
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        let old = "\(booth.dir)/photos", new = "\(booth.dir)/elsewhere"
        try await booth.takeSession()
        #expect(savedCaptures(in: old).map { $0.split(separator: "/").last.map(String.init) } == ["booth-000001-1.jpg"])

        try booth.edit([("storage.dir", new)])
        let reply = try booth.reload()
        let change = try #require(reply.change("storage.dir"))
        #expect(change.applied && change.rule == "at-once" && change.effect == "applied at once")
        #expect(reply.text == "reloaded: 1 key changed\n  storage.dir: \(old) -> \(new), applied at once", "\(reply.text)")
        #expect(booth.logged("storage: photos now in \(new) (were in \(old)), next session 2"), "\(booth.logText)")
        let status = booth.runtime.statusReport(configPath: "test.conf")
        #expect(status.storage.dir == new && status.storage.nextSession == 2)
        #expect(status.settings?.inForce["storage.dir"] == new)
        #expect(status.settings?.fileDiffers == false)
        // The totals follow the photos: the next start reads them from the new storage.dir.
        #expect(await eventually { access("\(new)/.photobooth-stats.json", F_OK) == 0 }, "\(booth.logText)")

        try await booth.takeSession()
        #expect(savedCaptures(in: new).map { $0.split(separator: "/").last.map(String.init) } == ["booth-000002-1.jpg"],
                "the next session's number, in the new directory: \(booth.logText)")
        #expect(savedCaptures(in: old).count == 1, "nothing more in the old directory")
        #expect(await eventually { booth.runtime.admin.stats.current.captures == 2 })
    }

    @Test("a storage.dir that cannot be used is refused: the old one stays, the reply says why and that the file differs")
    func storageDirRefused() async throws {
        let booth = try ReloadBooth([("session.review", "1s")])
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        let old = "\(booth.dir)/photos", bad = "/proc/photobooth-cannot-exist"
        try booth.edit([("storage.dir", bad)])
        let reply = try booth.reload()
        #expect(reply.appliedNow)
        let change = try #require(reply.change("storage.dir"))
        #expect(!change.applied && change.rule == "at-once")
        #expect(change.effect.hasPrefix("refused: storage.dir \(bad) not used: photos directory not writable: "), "\(change.effect)")
        #expect(change.effect.hasSuffix("photos stay in \(old); the file and the running setting now differ"), "\(change.effect)")
        #expect(reply.text.contains("  storage.dir: \(old) -> \(bad), refused: "), "\(reply.text)")
        // photoboothctl reload and config set exit 75 on it.
        #expect(reply.refusedKeys == ["storage.dir"])
        #expect(booth.logged("settings reloaded: 1 key changed"))
        let status = booth.runtime.statusReport(configPath: "test.conf")
        let settings = try #require(status.settings)
        #expect(status.storage.dir == old && settings.inForce["storage.dir"] == old)
        #expect(settings.fileDiffers == true && settings.differences.map(\.key) == ["storage.dir"])
        // Photos still go to the old directory.
        try await booth.takeSession()
        #expect(savedCaptures(in: old).count == 1, "\(booth.logText)")

        // With storage.mount: the two are checked together, and refused together.
        try booth.edit([("storage.dir", "\(booth.dir)/media/photos"), ("storage.mount", "\(booth.dir)/media")])
        let both = try booth.reload()
        #expect(both.changes?.map(\.key) == ["storage.dir", "storage.mount"])
        #expect(both.change("storage.dir")?.applied == false)
        #expect(both.change("storage.dir")?.effect.contains("not used: ") == true, "\(both.text)")
        #expect(both.change("storage.mount")?.applied == false)
        #expect(both.change("storage.mount")?.effect == "refused with storage.dir; the file and the running setting now differ")
        let after = try #require(booth.runtime.statusReport(configPath: "test.conf").settings)
        #expect(after.inForce["storage.dir"] == old && after.inForce["storage.mount"] == "")
        #expect(after.differences.map(\.key) == ["storage.dir", "storage.mount"])
        #expect(booth.runtime.currentState.isIdle, "the running directory is fine: no fault")
    }

    @Test("print.sheets seeds a paper count the journal does not have yet, at once; once counted, refill sets it")
    func printSheetsSeedsTheCount() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        #expect(booth.runtime.printer.sheetsRemaining == nil)
        try booth.edit([("print.sheets", "40")])
        let reply = try booth.reload()
        #expect(reply.change("print.sheets")?.applied == true && reply.change("print.sheets")?.effect == "applied at once")
        #expect(booth.runtime.printer.sheetsRemaining == 40)
        // Counted now: a new print.sheets no longer sets it (as at a start).
        booth.runtime.printer.refill(sheets: 12)
        try booth.edit([("print.sheets", "100")])
        _ = try booth.reload()
        #expect(booth.runtime.printer.sheetsRemaining == 12)
    }

    @Test("nothing changed says so; session.* applies from the next session; button.* reopens the line")
    func nothingSessionAndButton() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        let nothing = try booth.reload()
        #expect(nothing.changes == [] && nothing.appliedNow)
        #expect(nothing.text == "reloaded: nothing changed")
        #expect(booth.logged("settings reloaded: nothing changed"))

        let buttonStarts = booth.button.startCount
        try booth.edit([("session.review", "9s"), ("button.debounce", "50ms")])
        let reply = try booth.reload()
        #expect(reply.change("session.review")?.effect == "applies from the next session")
        #expect(reply.change("button.debounce")?.effect == "button reopened")
        #expect(booth.button.startCount == buttonStarts + 1)
        #expect(booth.runtime.statusReport(configPath: "t").settings?.inForce["session.review"] == "9s")
        #expect(booth.runtime.state.withLock { $0.machine.config.reviewMilliseconds } == 9000)
    }

    @Test("in a session the reply says the changes apply when it ends; they do then, and the log says so")
    func deferredUntilTheSessionEnds() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.press()
        try #require(await eventually { booth.runtime.currentState.isPreview }, "\(booth.logText)")
        try booth.edit([("camera.rotation", "180"), ("print.spool", "\(booth.dir)/elsewhere")])
        let reply = try booth.reload()
        #expect(!reply.appliedNow && reply.state == "preview")
        #expect(reply.change("camera.rotation")?.effect == "applies when the session under way ends")
        #expect(reply.change("camera.rotation")?.applied == false)
        #expect(reply.change("print.spool")?.effect == ReloadRule.restartEffect)
        #expect(reply.text.hasPrefix("reloaded: 2 keys changed (state preview: applies when the session under way ends)"), "\(reply.text)")
        #expect(booth.runtime.orientation.settingsInUse.camera == .r0, "not applied during the session")

        booth.button.longPressOfNewPress()   // cancels the preview: back to idle, where the reload applies
        #expect(await eventually { booth.runtime.orientation.settingsInUse.camera == .r180 }, "\(booth.logText)")
        #expect(await eventually { booth.logged("settings reloaded: 2 keys changed") && booth.logged("camera.rotation: 0 -> 180, applied at once") },
                "\(booth.logText)")
    }

    @Test("a change kept for the session's end and then reverted in the file is withdrawn: the machine's timings stay those in force")
    func revertedDuringTheSessionIsWithdrawn() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        let review = booth.runtime.state.withLock { $0.machine.config.reviewMilliseconds }
        booth.button.press()
        try #require(await eventually { booth.runtime.currentState.isPreview }, "\(booth.logText)")
        try booth.edit([("session.review", "42s")])
        let kept = try booth.reload()
        #expect(!kept.appliedNow && kept.change("session.review")?.effect == "applies when the session under way ends")
        try booth.edit([("session.review", "\(review / 1000)s")])
        let reverted = try booth.reload()
        #expect(reverted.text == "reloaded: nothing changed", "\(reverted.text)")

        booth.button.longPressOfNewPress()   // ends the session: what was kept would apply now
        try #require(await eventually { booth.runtime.currentState.isIdle }, "\(booth.logText)")
        try? await Task.sleep(for: .milliseconds(100))
        #expect(booth.runtime.state.withLock { $0.machine.config.reviewMilliseconds } == review,
                "the withdrawn 42 s must not reach the machine: \(booth.logText)")
        #expect(booth.runtime.statusReport(configPath: "t").settings?.fileDiffers == false)
    }

    @Test("a button line that does not open again after a reload: the reply says so and why, and the booth is in fault(button)")
    func buttonReopenFailureIsSaid() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        booth.button.startFailure.withLock { $0 = "gpiochip0 line 99: no such line" }
        try booth.edit([("button.debounce", "60ms")])
        let reply = try booth.reload()
        #expect(reply.change("button.debounce")?.effect == "button not opened: button not available: gpiochip0 line 99: no such line",
                "\(reply.text)")
        #expect(await eventually { if case let .fault(r) = booth.runtime.currentState { r[.button] != nil } else { false } },
                "\(booth.logText)")
    }

    @Test("the reload reply on the wire: changes with key, from, to, rule, applied, effect; an older daemon's reply still reads")
    func replyOnTheWire() throws {
        let reply = ReloadReply(appliedNow: true, state: "idle", changes: [
            ReloadReply.Change(SettingChange(key: "text.idle", from: "Press", to: "Go", rule: .reopen(.screen)), applied: true),
        ])
        let json = String(decoding: try ControlProtocol.encoder().encode(reply), as: UTF8.self)
        #expect(json == #"{"appliedNow":true,"changes":[{"applied":true,"effect":"screens reopened","from":"Press","key":"text.idle","rule":"reopen-screen","to":"Go"}],"state":"idle"}"#)
        #expect(try JSONDecoder().decode(ReloadReply.self, from: Data(json.utf8)) == reply)
        let old = try JSONDecoder().decode(ReloadReply.self, from: Data(#"{"appliedNow":false,"state":"review"}"#.utf8))
        #expect(old.changes == nil)
        #expect(old.text == "reloaded: applies when the session under way ends (state review)")
    }

    @Test("camera stream keys restart the stream; storage.min_free, picture.* and led.* say how they took effect")
    func streamStorageLEDAndPicture() async throws {
        let booth = try ReloadBooth()
        defer { booth.stop() }
        try #require(await eventually { booth.camera.isStreaming })
        let starts = booth.camera.starts, leds = booth.ledOpens.value.withLock { $0 }
        try booth.edit([("camera.frame_rate", "15"), ("storage.min_free", "1kB"), ("picture.dpi", "150"), ("led.line", "GPIO27")])
        let reply = try booth.reload()
        #expect(reply.changes?.map(\.key) == ["camera.frame_rate", "led.line", "storage.min_free", "picture.dpi"])
        #expect(reply.change("camera.frame_rate")?.effect == "camera stream restarting")
        // The test's factory opens no LED line: the reply says so, not "reopened".
        #expect(reply.change("led.line")?.effect == "LED line not opened (see the log); tried again from 1 s to every 30 s")
        #expect(reply.change("storage.min_free")?.effect == "applied at once")
        #expect(reply.change("picture.dpi")?.effect == "applies from the next session")
        #expect(await eventually { booth.camera.starts == starts + 1 && booth.camera.isStreaming }, "\(booth.logText)")
        #expect(await eventually {
            booth.runtime.statusReport(configPath: "t").camera.framesPerSecond.map { abs($0 - 15) < 0.01 } == true
        })
        #expect(booth.ledOpens.value.withLock { $0 } > leds, "the LED line is asked for again")
        #expect(booth.runtime.statusReport(configPath: "t").settings?.inForce["storage.min_free"] == "1kB")
    }
}
