import BoothCore
import BoothIndex
import BoothPorts
import BoothTestSupport
import Foundation
import Testing
@testable import BoothRuntime
@testable import BoothWiring

@Suite("The daemon's alerts: each change of a fault, the paper or the storage, once into the index", .serialized)
struct AlertRecorderTests {
    private func printer(health: String = "ready", reasons: [String] = [], sheets: Int? = 40, message: String? = nil) -> PrinterStatus {
        PrinterStatus(mode: "auto", destination: "booth", queue: "booth", health: health, reasons: reasons, message: message,
                      sheetsRemaining: sheets, held: 0, outstanding: 0, completed: 0, lastError: nil)
    }

    @Test("the conditions: faults by kind; paper out before low before unavailable, only while printing is on; storage low below twice storage.min_free or refused")
    func conditions() {
        let calm = alertConditions(state: .idle, storageRefusal: nil, freeBytes: 10_000_000_000, minFreeBytes: 200_000_000, printMode: .auto, printer: printer())
        #expect(calm.isEmpty)
        let fault = alertConditions(state: .fault(reasons: [.camera: "camera gone", .button: "button line busy"]), storageRefusal: nil,
                                    freeBytes: nil, minFreeBytes: 0, printMode: .off, printer: printer(reasons: ["media-empty"]))
        #expect(fault == ["fault:camera": "camera gone", "fault:button": "button line busy"], "print.mode off: the printer is no one's concern")
        let out = alertConditions(state: .idle, storageRefusal: nil, freeBytes: nil, minFreeBytes: 0, printMode: .auto,
                                  printer: printer(health: "unavailable", reasons: ["media-empty", "paper-low"], sheets: 3))
        #expect(out == ["paper-out": "the printer is out of paper (3 sheets counted): load paper, then photoboothctl refill SHEETS"])
        let counted = alertConditions(state: .idle, storageRefusal: nil, freeBytes: nil, minFreeBytes: 0, printMode: .press, printer: printer(sheets: 0))
        #expect(counted.keys.sorted() == ["paper-out"])
        let low = alertConditions(state: .idle, storageRefusal: nil, freeBytes: nil, minFreeBytes: 0, printMode: .auto,
                                  printer: printer(health: "warning", reasons: ["paper-low"], sheets: 1))
        #expect(low == ["paper-low": "the printer's paper is low (1 sheet counted)"])
        let offline = alertConditions(state: .idle, storageRefusal: nil, freeBytes: nil, minFreeBytes: 0, printMode: .auto,
                                      printer: printer(health: "unavailable", reasons: ["offline"], message: "the printer is off"))
        #expect(offline == ["printer-unavailable": "the printer cannot print: the printer is off"])
        let storage = alertConditions(state: .idle, storageRefusal: nil, freeBytes: 300_000_000, minFreeBytes: 200_000_000, printMode: .off, printer: printer())
        #expect(storage == ["storage-low": "300 MB free for the photos; the booth stops taking them below 200 MB (storage.min_free)"])
        let refused = alertConditions(state: .idle, storageRefusal: "Storage full", freeBytes: 100, minFreeBytes: 200_000_000, printMode: .off, printer: printer())
        #expect(refused == ["storage-low": "the booth takes no sessions: Storage full"])
        // Below storage.min_free before the daemon's next look: it has stopped already, the words say so.
        let below = alertConditions(state: .idle, storageRefusal: nil, freeBytes: 100_000_000, minFreeBytes: 200_000_000, printMode: .off, printer: printer())
        #expect(below == ["storage-low": "100 MB free for the photos, below storage.min_free (200 MB): the booth takes no sessions until there is room"])
        let battery = alertConditions(state: .idle, storageRefusal: nil, freeBytes: nil, minFreeBytes: 0, printMode: .off, printer: printer(), batteryPercent: 18)
        #expect(battery == ["camera-battery-low": "the camera's battery is at 18%: charge it or put the mains adapter on"])
        #expect(alertConditions(state: .idle, storageRefusal: nil, freeBytes: nil, minFreeBytes: 0, printMode: .off, printer: printer(), batteryPercent: 21).isEmpty)
    }

    @Test("the tracker: each condition once when it begins and once when it ends; a new message for the same condition is no change")
    func tracker() {
        var t = AlertTracker(active: [:])
        #expect(t.update([:]).isEmpty)
        let began = t.update(["fault:camera": "gone", "storage-low": "300 MB free"])
        #expect(began.map(\.condition) == ["fault:camera", "storage-low"])
        #expect(began.allSatisfy { $0.active })
        #expect(t.update(["fault:camera": "gone", "storage-low": "250 MB free"]).isEmpty)
        let ended = t.update(["storage-low": "250 MB free"])
        #expect(ended.map(\.condition) == ["fault:camera"])
        #expect(ended.first?.active == false)
        #expect(ended.first?.message == "cleared (it was: gone)")
    }

    @Test("a camera unplugged and back: fault:camera recorded as begun, then as ended; a restarted daemon starts from the index's active conditions and repeats nothing")
    func recorderWithARuntime() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.session.previewMilliseconds = nil
        settings.gallery.enabled = true
        settings.gallery.index = "\(dir)/state/gallery/index.sqlite"
        settings.gallery.secret = "\(dir)/state/gallery.secret"
        let log = LogRecorder()
        let made = gallery(settings, log: log.logger())
        let index = try #require(made.index, "\(log.all)")
        let booth = TestBooth(settings, cameraName: "sim-alert-camera", clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        let recorder = AlertRecorder(index: index, runtime: booth.runtime, log: log.logger(), intervalMilliseconds: 50, graceMilliseconds: 0)
        recorder.start()
        booth.camera.unplug()
        try #require(await eventually { (try? index.alerts(after: 0, limit: 10).count) == 1 }, "\(booth.logText)")
        let began = try #require(try index.alerts(after: 0, limit: 10).first)
        #expect(began.condition == "fault:camera" && began.active)
        #expect(began.message.contains("sim-alert-camera"), "the fault's own words: \(began.message)")
        // Logged just after the row is written: waited for, not raced.
        #expect(await eventually { log.all.contains { $0.contains("alert: fault:camera began") } })
        recorder.stop()
        // The daemon again (a restart) while the fault lasts: nothing new.
        let again = AlertRecorder(index: index, runtime: booth.runtime, log: log.logger(), intervalMilliseconds: 50, graceMilliseconds: 1500)
        let againStarted = Date()
        again.start()
        defer { again.stop() }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(try index.alerts(after: 0, limit: 10).count == 1, "the active fault is not recorded twice")
        // Back at once, within the restarted recorder's grace: not ended before the grace is over.
        booth.camera.replug()
        try #require(await booth.advance(untilMilliseconds: 60_000) { booth.state.isIdle }, "\(booth.logText)")
        try #require(await eventually { (try? index.alerts(after: 0, limit: 10).count) == 2 }, "\(booth.logText)")
        #expect(Date().timeIntervalSince(againStarted) >= 1.45, "not ended within the restarted recorder's grace (1.5 s here)")
        let ended = try #require(try index.alerts(after: began.id, limit: 10).first)
        #expect(ended.condition == "fault:camera" && !ended.active)
        #expect(try index.activeAlerts().isEmpty)
    }

    @Test("the grace after a restart runs on the injected clock, and an alert's time is the injected wall clock's: a carried condition ends only once the booth's clock has passed the grace")
    func graceOnTheInjectedClock() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.gallery.enabled = true
        settings.gallery.index = "\(dir)/state/gallery/index.sqlite"
        settings.gallery.secret = "\(dir)/state/gallery.secret"
        let log = LogRecorder()
        let index = try #require(gallery(settings, log: log.logger()).index, "\(log.all)")
        // The last daemon left a fault active; this one's booth has none.
        _ = try index.recordAlert("fault:button", active: true, message: "button line busy", at: 1_000)
        let clock = ManualClock.startingNow()
        let booth = TestBooth(settings, clock: clock)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await booth.settle())
        let recorder = AlertRecorder(index: index, runtime: booth.runtime, log: log.logger(), clock: clock, wallClock: { 1_234_567 },
                                     intervalMilliseconds: 10, graceMilliseconds: 60_000)
        recorder.start()
        defer { recorder.stop() }
        // Many real intervals, the booth's clock standing still: within the grace, nothing ends.
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(try index.activeAlerts() == ["fault:button": "button line busy"], "ended within the grace on the booth's clock")
        clock.advance(milliseconds: 60_001)
        // (The step may also leave the camera looking stalled: only the button's condition is the point here.)
        try #require(await eventually { (try? index.activeAlerts())?["fault:button"] == nil }, "\(log.all)")
        let ended = try #require(try index.alerts(after: 0, limit: 10).first { $0.condition == "fault:button" && !$0.active })
        #expect(ended.at == 1_234_567, "the alert's time from the injected wall clock")
    }
}
