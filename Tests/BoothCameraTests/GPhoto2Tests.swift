import BoothClock
import BoothCore
import BoothJPEG
import BoothPorts
import BoothTestSupport
import Foundation
import Synchronization
import Testing

@testable import BoothCamera

// The gphoto2 backend against libgphoto2's own virtual camera: Debian 12's PTP driver (ptp2.so of the
// system libgphoto2 2.5.30) talking to the virtual USB port of a libgphoto2 2.5.31 build with
// hardware/gphoto2/vcamera.patch (hardware/gphoto2/setup; install.sh --test runs it first). The
// virtual camera is a "Nikon DSC D750" whose card holds the shared real photos, whose live view serves
// the shared camera-sized captures, and whose faults come from a control file.

extension VirtualCamera {
    /// The upright sizes of the card's photos (``VirtualCamera/turnedPhoto`` is stored turned, EXIF Orientation 6).
    func uprightSizes() throws -> Set<FrameSize> {
        let decoder = try JPEGDecoder()
        var sizes: Set<FrameSize> = []
        for name in photoNames {
            sizes.insert(try decoder.header(try SharedImages.bytes(card.appendingPathComponent(name))).size)
        }
        let stored = try decoder.header(try SharedImages.bytes(card.appendingPathComponent(VirtualCamera.turnedPhoto))).size
        sizes.insert(FrameSize(width: stored.height, height: stored.width))
        return sizes
    }
}

/// A handler that records what a source reports.
final class SourceEvents: Sendable {
    let events = Mutex<[CameraSourceEvent]>([])
    let frames = Mutex<[Frame]>([])
    var handlers: CameraSourceHandlers {
        CameraSourceHandlers(event: { e in self.events.withLock { $0.append(e) } },
                             liveFrame: { f in self.frames.withLock { $0.append(f) } })
    }

    /// Waits up to `seconds` for `condition` on the events; true when it held.
    func wait(_ seconds: Double, _ condition: ([CameraSourceEvent]) -> Bool) -> Bool {
        waitUntil(seconds) { condition(events.withLock { $0 }) }
    }

    func waitFrames(_ n: Int, _ seconds: Double) -> Bool {
        waitUntil(seconds) { frames.withLock { $0.count } >= n }
    }

    var stills: [CameraStill] { events.withLock { $0.compactMap { if case let .still(s) = $0 { s } else { nil } } } }
    func failure(_ id: UInt64) -> String? {
        events.withLock { $0.compactMap { if case let .stillFailed(i, m, _) = $0, i == id { m } else { nil } }.first }
    }
    var faults: [String] { events.withLock { $0.compactMap { if case let .fault(m) = $0 { m } else { nil } } } }
    var recovered: Bool { events.withLock { $0.contains(.recovered) } }
}

@Suite(.serialized) struct GPhoto2VirtualCameraTests {
    let vcam: VirtualCamera

    init() throws {
        vcam = try VirtualCamera.shared.get()
    }

    private func settings(_ edit: (inout Settings.Camera) -> Void = { _ in }) -> Settings.Camera {
        var c = Settings.defaults.camera
        c.backend = .gphoto2
        c.device = ""
        c.liveViewRate = 25
        c.captureTimeoutMilliseconds = 15_000
        edit(&c)
        return c
    }

    /// A gphoto2 source on the virtual camera, launched, with what it reports and logs kept.
    private func launched(_ s: Settings.Camera, lateFileGraceMilliseconds: Int64 = 10_000, batteryPollMilliseconds: Int64 = 30_000)
        -> (GPhoto2CameraSource, SourceEvents, LogLines) {
        let events = SourceEvents(), log = LogLines()
        let source = GPhoto2CameraSource(settings: s, clock: SystemClock(), log: log.logger(),
                                         lateFileGraceMilliseconds: lateFileGraceMilliseconds, batteryPollMilliseconds: batteryPollMilliseconds)
        source.launch(events.handlers)
        return (source, events, log)
    }

    private func request(_ id: UInt64, deadlineMilliseconds: Int64 = 15_000, rotation: Rotation = .r0) -> StillRequest {
        let now = SystemClock().now()
        return StillRequest(captureID: id, trigger: now, deadline: now.adding(milliseconds: deadlineMilliseconds), rotation: rotation)
    }

    @Test func libgphoto2FindsTheVirtualNikonThroughDebiansPTPDriver() throws {
        try vcam.exclusively {
            let camera = try #require(GPhoto2Camera())
            let found = try camera.detect()
            #expect(found == [GPhoto2CameraInfo(model: "Nikon DSC D750", port: "usb:001,001")])
            #expect(vcam.camlibs.hasPrefix("/usr/lib"), "the tests run the system's ptp2 driver, not the private build's (\(vcam.camlibs))")
            let info = try camera.open("D750")
            #expect(info.port == "usb:001,001")
            let details = camera.details()
            #expect(details.batteryPercent == 50)
            #expect(details.captureTargets == ["Internal RAM", "Memory card"])
            #expect((details.freeBytes ?? 0) > 0)
            camera.close()
            #expect(throws: GPhoto2Error.self) { try camera.open("Canon") }
            do {
                try camera.open("Canon")
            } catch let error as GPhoto2Error {
                #expect(error.kind == .gone)
                #expect("\(error)".contains("Nikon DSC D750 at usb:001,001"), "the error lists what is attached: \(error)")
            } catch {
                Issue.record("not a GPhoto2Error: \(error)")
            }
            }
    }

    @Test func liveViewDeliversCheckedFramesAtTheRate() throws {
        try vcam.exclusively {
            let (source, events, _) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            source.startLiveView()
            #expect(events.waitFrames(12, 10), "12 live-view frames within 10 s (got \(events.frames.withLock { $0.count }))")
            let frames = events.frames.withLock { $0 }
            #expect(frames.allSatisfy { $0.format == .mjpeg && $0.size == FrameSize(width: 1280, height: 720) })
            #expect(Set(frames.map { $0.bytes.count }).count >= 2, "the frames come from the live-view folder in turn")
            let status = source.status
            #expect(status.streaming && status.card == "Nikon DSC D750" && status.devicePath == "usb:001,001")
            #expect((status.measuredFramesPerSecond ?? 0) > 2 && (status.measuredFramesPerSecond ?? 99) < 30)
            #expect(events.faults.isEmpty)
            }
    }

    @Test func cutAndEmptyLiveViewFramesAreCountedAndNeverShown() throws {
        try vcam.exclusively {
            let (source, events, _) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            try vcam.say("liveview-cut")
            source.startLiveView()
            usleep(1_000_000)
            #expect(events.frames.withLock { $0.isEmpty }, "a cut frame reaches no screen")
            // Debian 12's ptp2 itself refuses a frame without its end (no EOI): a failed preview call, counted.
            let cut = source.status.droppedByKind
            #expect((cut["no-eoi"] ?? 0) + (cut["preview-error"] ?? 0) >= 3, "\(cut)")
            try vcam.say("liveview-empty")
            usleep(1_000_000)
            #expect(events.frames.withLock { $0.isEmpty })
            #expect((source.status.droppedByKind["preview-error"] ?? 0) > (cut["preview-error"] ?? 0) + 2, "a frame without a JPEG: \(source.status.droppedByKind)")
            #expect(events.faults.isEmpty, "bad frames are no camera fault")
            try vcam.say()
            #expect(events.waitFrames(3, 5), "good frames again")
            }
    }

    /// Seven stills, the card's photos in turn: each downloaded, whole, upright (the turned one losslessly
    /// or re-encoded, its tag reset), deleted from the camera; live view goes on after each.
    @Test func stillsAreTheCardsPhotosDownloadedAndUpright() throws {
        try vcam.exclusively {
            let (source, events, log) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            source.startLiveView()
            #expect(events.waitFrames(2, 10))
            let decoder = try JPEGDecoder()
            var sizes: Set<FrameSize> = []
            for id in 1...UInt64(vcam.photoCount) {
                let before = events.frames.withLock { $0.count }
                source.takeStill(request(id))
                #expect(events.wait(20) { $0.contains { if case let .still(s) = $0 { s.captureID == id } else { false } } }, "still \(id)")
                let still = try #require(events.stills.first { $0.captureID == id })
                #expect(FrameCheck.defect(of: still.jpeg, format: .mjpeg) == nil)
                #expect(EXIFOrientation.read(still.jpeg) == .topLeft, "the tag says upright")
                #expect(try decoder.header(still.jpeg).size == still.size)
                #expect(still.frameTimestamp >= still.trigger && still.readyAt >= still.frameTimestamp)
                sizes.insert(still.size)
                #expect(events.waitFrames(before + 2, 10), "live view goes on after still \(id)")
                let t = try #require(source.lastStillTimings)
                #expect(t.bytes > 400_000 && t.download >= 0 && t.shutterToFile >= 0)
            }
            #expect(sizes == (try vcam.uprightSizes()), "every photo, upright: \(sizes)")
            // The untouched photos come as the camera sent them, each once; the turned one as the odd one out.
            let originals = try vcam.photoNames.map { try SharedImages.bytes(vcam.card.appendingPathComponent($0)) }
            let stills = events.stills.map(\.jpeg)
            #expect(originals.allSatisfy { o in stills.filter { $0 == o }.count == 1 }, "each original once, byte for byte")
            #expect(stills.filter { !originals.contains($0) }.count == 1, "and the one stored turned, made upright")
            #expect(log.contains("EXIF orientation 6 made upright"))
            #expect(log.contains("trigger→shutter"))
            #expect(events.faults.isEmpty)
            }
    }

    /// Stills of the largest bodies (45, 61 and 102 MP, made at test time, served by the virtual camera's
    /// `photo=PATH`), stored portrait (EXIF Orientation 6): kept, upright and whole.
    @Test func stillsOfTheLargestBodiesAreKeptUpright() throws {
        try vcam.exclusively {
            let (source, events, log) = launched(settings { $0.captureTimeoutMilliseconds = 60_000 })
            defer { source.shutdown(timeoutSeconds: 3) }
            for (i, size) in [LargeStill.mp45, LargeStill.mp61, LargeStill.mp100].enumerated() {
                let id = UInt64(i + 1)
                try vcam.say("photo=\(try LargeStill.file(size, orientation: 6).path)")
                source.takeStill(request(id, deadlineMilliseconds: 60_000))
                #expect(events.wait(60) { _ in events.stills.contains { $0.captureID == id } || events.failure(id) != nil }, "still \(id)")
                #expect(events.failure(id) == nil, "\(size): \(events.failure(id) ?? "")")
                let still = try #require(events.stills.first { $0.captureID == id })
                #expect(still.size == FrameSize(width: size.height, height: size.width), "\(size) upright")
                #expect(EXIFOrientation.read(still.jpeg) == .topLeft)
                #expect(try JPEGDecoder().header(still.jpeg).size == still.size)
            }
            #expect(log.contains("EXIF orientation 6 made upright, reencoded"), "the 45 MP one: 5464 rows are not whole MCUs")
            #expect(log.contains("EXIF orientation 6 made upright, lossless"))
            #expect(!log.contains("not kept"))
        }
    }

    @Test func aFullCardIsAFaultWithTheOperatorsWords() throws {
        try vcam.exclusively {
            let (source, events, _) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            try vcam.say("store-full")
            source.takeStill(request(1))
            #expect(events.wait(10) { _ in events.failure(1) != nil })
            #expect(events.failure(1)?.contains("card is full") == true, "\(events.failure(1) ?? "none")")
            #expect(events.wait(2) { _ in events.faults.contains { $0.contains("camera not usable") && $0.contains("card is full") } }, "\(events.faults)")
            // The retry finds the card still full: still a fault, no flip back to idle.
            source.probe()
            #expect(events.wait(5) { _ in events.faults.count >= 2 })
            #expect(!events.recovered, "\(events.faults)")
            try vcam.say()
            source.probe()
            #expect(events.wait(5) { _ in events.recovered }, "room on the card: recovered")
            }
    }

    /// `capture_target = ram`: the still is deleted from the camera after its download; `card`: it stays there.
    @Test func theCaptureTargetDecidesWhetherTheStillStaysOnTheCamera() throws {
        try vcam.exclusively {
            func takeOne(_ target: CaptureTargetSetting) -> LogLines {
                let (source, events, log) = launched(settings { $0.captureTarget = target })
                source.takeStill(request(1))
                #expect(events.wait(20) { _ in !events.stills.isEmpty })
                source.shutdown(timeoutSeconds: 3)
                return log
            }
            let ram = takeOne(.ram)
            #expect(ram.contains("deleted from the camera (capture target RAM)"))
            #expect(ram.contains("capture target Internal RAM"))
            let card = takeOne(.card)
            #expect(!card.contains("deleted from the camera"), "kept on the card")
            #expect(card.contains("capture target Memory card"))
        }
    }

    @Test func aRawOnlyBodyIsRefusedWithWhatToChange() throws {
        try vcam.exclusively {
            let (source, events, _) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            try vcam.say("raw-only")
            source.takeStill(request(1))
            #expect(events.wait(10) { _ in events.failure(1) != nil })
            #expect(events.failure(1)?.contains("only RAW") == true, "\(events.failure(1) ?? "none")")
            #expect(events.failure(1)?.contains("JPEG or RAW+JPEG") == true)
            #expect(events.stills.isEmpty, "no RAW file reaches storage")
            }
    }

    @Test func aFailedFocusIsTriedOnceMoreThenTheStillFails() throws {
        try vcam.exclusively {
            let (source, events, log) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            try vcam.say("focus-fail")
            source.takeStill(request(1))
            #expect(events.wait(10) { _ in events.failure(1) != nil })
            #expect(log.contains("focusing once more"))
            #expect(events.failure(1)?.contains("could not focus") == true, "\(events.failure(1) ?? "none")")
            #expect(events.faults.isEmpty, "a failed focus is no camera fault")
            try vcam.say()
            source.takeStill(request(2))
            #expect(events.wait(20) { _ in events.stills.contains { $0.captureID == 2 } }, "the next still works")
            }
    }

    /// Unplugged mid-session: a fault naming what to check; probes fail while it is away; plugged back,
    /// a probe finds it again by enumeration and live view resumes, no restart.
    @Test func unpluggedAndBackRecoversWithoutARestart() throws {
        try vcam.exclusively {
            let (source, events, _) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            source.startLiveView()
            #expect(events.waitFrames(2, 10))
            try vcam.say("unplugged")
            #expect(events.wait(5) { _ in events.faults.contains { $0.hasPrefix("camera lost") } }, "\(events.faults)")
            #expect(events.faults.first?.contains("switched on") == true, "the operator is told what to check: \(events.faults)")
            source.probe()
            #expect(events.wait(5) { _ in events.faults.count >= 2 })
            #expect(!events.recovered)
            try vcam.say()
            let before = events.frames.withLock { $0.count }
            source.probe()
            #expect(events.wait(10) { _ in events.recovered })
            #expect(events.waitFrames(before + 3, 10), "live view after the camera came back")
            }
    }

    /// A capture whose file never comes ends at its deadline (no hung loop, the heartbeat turning); the late
    /// file is not taken for the next still.
    @Test func aCaptureThatNeverCompletesEndsAtItsDeadline() throws {
        try vcam.exclusively {
            let (source, events, log) = launched(settings(), lateFileGraceMilliseconds: 1000)
            defer { source.shutdown(timeoutSeconds: 3) }
            try vcam.say("capture-hang")
            let started = Date()
            source.takeStill(request(1, deadlineMilliseconds: 1500))
            #expect(events.wait(6) { _ in events.failure(1) != nil })
            #expect(Date().timeIntervalSince(started) < 5, "the deadline (1.5 s) and the late-file grace (1 s)")
            #expect(events.failure(1)?.contains("no file") == true, "\(events.failure(1) ?? "none")")
            #expect(source.heartbeat.stuckFor(now: SystemClock().now(), limitMilliseconds: 1000) == nil)
            try vcam.say()
            source.takeStill(request(2))
            #expect(events.wait(20) { _ in events.stills.contains { $0.captureID == 2 } })
            #expect(log.contains("is an earlier capture's file"), "the late file is set aside")
            }
    }

    /// A USB transfer that never returns: the camera thread's heartbeat stays busy and the liveness check
    /// names it (the watchdog then lets systemd restart the daemon); once the camera answers, the thread goes on.
    @Test func aHungLibgphoto2CallStopsTheHeartbeatForTheWatchdog() throws {
        try vcam.exclusively {
            let (source, events, _) = launched(settings())
            defer { try? vcam.say(); source.shutdown(timeoutSeconds: 3) }
            source.startLiveView()
            #expect(events.waitFrames(2, 10))
            try vcam.say("usb-hang")
            usleep(1_500_000)
            let stuck = source.heartbeat.stuckFor(now: SystemClock().now(), limitMilliseconds: 1000)
            #expect(stuck != nil, "the heartbeat shows the thread stuck in libgphoto2")
            try vcam.say()
            let before = events.frames.withLock { $0.count }
            #expect(events.waitFrames(before + 2, 10), "the thread goes on once the camera answers")
            #expect(source.heartbeat.stuckFor(now: SystemClock().now(), limitMilliseconds: 1000) == nil)
            }
    }

    /// An empty battery (also mid-series): a fault whose reason tells the screens the camera is resting; a
    /// still is refused before the shutter; charged, a probe finds it again.
    /// A source launched, its live view running and one still taken while the battery lasts.
    private func launchedWithAStill(batteryPollMilliseconds: Int64 = 30_000) -> (GPhoto2CameraSource, SourceEvents, LogLines) {
        let (source, events, log) = launched(settings(), batteryPollMilliseconds: batteryPollMilliseconds)
        source.startLiveView()
        #expect(events.waitFrames(2, 10))
        source.takeStill(request(1))
        #expect(events.wait(20) { _ in !events.stills.isEmpty }, "a still while the battery lasts")
        return (source, events, log)
    }

    @Test func anEmptyBatteryRestsTheCameraUntilItIsCharged() throws {
        try vcam.exclusively {
            let (source, events, _) = launchedWithAStill(batteryPollMilliseconds: 300)
            defer { source.shutdown(timeoutSeconds: 3) }
            try vcam.say("battery=0")
            #expect(events.wait(5) { _ in events.faults.contains { $0.hasPrefix(FaultKind.cameraRestingPrefix) } }, "\(events.faults)")
            #expect(events.faults.first?.contains("battery is empty (0%)") == true)
            source.takeStill(request(2))
            #expect(events.wait(5) { _ in events.failure(2) != nil })
            #expect(events.failure(2)?.contains("battery is empty") == true)
            source.probe()
            #expect(events.wait(5) { _ in events.faults.count >= 2 })
            #expect(events.faults.last?.hasPrefix(FaultKind.cameraRestingPrefix) == true, "still resting: \(events.faults)")
            #expect(!events.recovered)
            try vcam.say("battery=80")
            // libgphoto2's ptp2 keeps a property's value for a second or two: the next retry (the machine's
            // come at least a second apart) reads the new level.
            usleep(2_500_000)
            let before = events.frames.withLock { $0.count }
            source.probe()
            #expect(events.wait(5) { _ in events.recovered })
            #expect(events.waitFrames(before + 2, 10), "live view again")
        }
    }

    /// A late still answers only the machine's retry (asked at its deadline), not a request asked later (the
    /// next guest's, after the session was given up): that one fires its own shutter.
    @Test func aLateStillDoesNotGoToTheNextGuest() throws {
        try vcam.exclusively {
            let (source, events, log) = launched(settings())
            defer { try? vcam.say(); source.shutdown(timeoutSeconds: 3) }
            try vcam.say("capture-hang")
            source.takeStill(request(1, deadlineMilliseconds: 100))
            usleep(2_600_000)
            source.takeStill(request(2))
            usleep(300_000)
            try vcam.say()
            #expect(events.wait(20) { _ in events.stills.count == 2 }, "\(events.events.withLock { $0 })")
            let stills = events.stills
            #expect(stills.map(\.captureID) == [1, 2], "the late still is its own capture's, the later request gets its own")
            #expect(stills.count == 2 && stills[0].jpeg != stills[1].jpeg)
            #expect(!log.contains("it answers capture"))
        }
    }

    /// The countdown's start drives the body's autofocus (Nikon AfDrive through libgphoto2's autofocusdrive);
    /// a focus that fails is logged and the still is still taken.
    @Test func theCountdownStartsTheAutofocus() throws {
        try vcam.exclusively {
            let (source, events, log) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            source.startLiveView()
            #expect(events.waitFrames(2, 10))
            source.prepareStill()
            source.takeStill(request(1))
            #expect(events.wait(20) { _ in events.stills.count == 1 })
            #expect(log.contains("camera: autofocus before the shutter (autofocusdrive)"), "\(log.all)")
            try vcam.say("afdrive-fail")
            source.prepareStill()
            source.takeStill(request(2))
            #expect(events.wait(20) { _ in events.stills.count == 2 }, "the still is taken anyway")
            #expect(log.contains("autofocus before the shutter failed"))
            #expect(log.contains("Out of Focus") || log.contains("0xa002"), "the driver's words: \(log.all.filter { $0.contains("autofocus") })")
        }
    }

    /// The level is read before each still, not only every 30 s: a battery that emptied since the last reading
    /// rests the camera before its shutter (no still taken, the camera-resting fault).
    @Test func anEmptyBatteryIsReadBeforeTheShutter() throws {
        try vcam.exclusively {
            let (source, events, log) = launchedWithAStill()
            defer { source.shutdown(timeoutSeconds: 3) }
            try vcam.say("battery=0")
            // libgphoto2's ptp2 keeps a property's value for a second or two.
            usleep(2_500_000)
            source.takeStill(request(2))
            #expect(events.wait(20) { _ in events.failure(2) != nil || events.stills.count > 1 })
            #expect(events.failure(2)?.contains("battery is empty") == true, "\(events.events.withLock { $0 })")
            #expect(events.stills.count == 1, "no shutter on an empty battery")
            #expect(events.faults.first?.hasPrefix(FaultKind.cameraRestingPrefix) == true, "\(events.faults)")
            #expect(log.all.filter { $0.contains("trigger→shutter") }.count == 1)
        }
    }

    /// `photoboothd --check` (the source's `check`): an empty battery and, with `camera.capture_target = card`, a full
    /// card fail it in the daemon's words; a low battery is a warning.
    @Test func theCheckReportsAnEmptyBatteryAndAFullCard() throws {
        try vcam.exclusively {
            func check(_ target: CaptureTargetSetting = .ram) -> CameraCheckResult {
                GPhoto2CameraSource(settings: settings { $0.captureTarget = target }, clock: SystemClock(), log: LogLines().logger()).check()
            }
            guard case let .works(_, healthy) = check() else { Issue.record("\(check())"); return }
            #expect(!healthy.contains { $0.contains("battery") })
            try vcam.say("battery=0")
            guard case let .fails(empty) = check() else { Issue.record("--check ok at 0% battery: \(check())"); return }
            #expect(empty.contains("the camera's battery is empty (0%): charge or swap it"), "\(empty)")
            try vcam.say("battery=15")
            guard case let .works(_, low) = check() else { Issue.record("\(check())"); return }
            #expect(low.contains { $0.contains("battery 15%: charge or swap it soon") }, "\(low)")
            try vcam.say("store-full")
            guard case let .fails(full) = check(.card) else { Issue.record("--check ok with a full card: \(check(.card))"); return }
            #expect(full.contains("card is full") && full.contains("camera.capture_target = card"), "\(full)")
            guard case .works = check(.ram) else { Issue.record("a full card fails the RAM target: \(check(.ram))"); return }
        }
    }

    @Test func theBatteryLevelReachesStatus() throws {
        try vcam.exclusively {
            let events = SourceEvents(), log = LogLines()
            try vcam.say("battery=15")
            let source = GPhoto2CameraSource(settings: settings(), clock: SystemClock(), log: log.logger())
            source.launch(events.handlers)
            defer { source.shutdown(timeoutSeconds: 3) }
            source.startLiveView()
            #expect(events.waitFrames(1, 10))
            #expect(source.status.batteryPercent == 15)
            }
    }

    /// A request asked while a still is on its way (the machine's retry after its deadline) is answered by
    /// that still: the shutter is not fired twice.
    @Test func aRetryDuringADownloadGetsThatStillNotASecondShutter() throws {
        try vcam.exclusively {
            let (source, events, log) = launched(settings())
            defer { source.shutdown(timeoutSeconds: 3) }
            // Capture 1's deadline passes before its download ends (the machine gives it up and asks again).
            source.takeStill(request(1, deadlineMilliseconds: 1))
            source.takeStill(request(2))
            #expect(events.wait(20) { _ in !events.stills.isEmpty })
            usleep(500_000)
            let stills = events.stills
            #expect(stills.map(\.captureID) == [2], "the retry gets the still; the capture given up gets none (nothing saved twice)")
            #expect(log.contains("it answers capture 2"))
            #expect(log.all.filter { $0.contains("trigger→shutter") }.count == 1, "one shutter")
            // A still that came in time is not handed to the next request: that one fires the shutter.
            source.takeStill(request(3))
            source.takeStill(request(4))
            #expect(events.wait(20) { _ in events.stills.count == 3 })
            let later = events.stills
            #expect(later.map(\.captureID) == [2, 3, 4])
            #expect(later.count == 3 && later[1].jpeg != later[2].jpeg, "two shutters, two photos")
            }
    }
}

@Suite struct GPhoto2UnitTests {
    private let nef = GPhoto2FilePath(folder: "/store_00010001/DCIM/100NIKON", name: "DSC_0001.NEF")
    private let jpg = GPhoto2FilePath(folder: "/store_00010001/DCIM/100NIKON", name: "DSC_0001.JPG")

    /// RAW+JPEG: the RAW's event first, then the JPEG's, then capture complete; the JPEG is chosen.
    @Test func theEventDrainChoosesTheJPEGOfARawPlusJPEGPair() {
        var files = StillFiles()
        do { let more = files.take(.folderAdded(GPhoto2FilePath(folder: "/store_00010001/DCIM", name: "100NIKON"))); #expect(more) }
        do { let more = files.take(.fileAdded(nef)); #expect(more) }
        do { let more = files.take(.other("PTP Property d1a2 changed")); #expect(more) }
        do { let more = files.take(.fileAdded(jpg)); #expect(!more, "a JPEG in hand: the drain stops, its download need not wait") }
        do { let more = files.take(.captureComplete); #expect(!more) }
        #expect(files.jpeg == jpg && !files.rawOnly)
        var rawOnly = StillFiles(first: nef)
        do { let more = rawOnly.take(.captureComplete); #expect(more, "complete without a JPEG: go on until quiet") }
        do { let more = rawOnly.take(.timeout); #expect(!more) }
        #expect(rawOnly.rawOnly && rawOnly.jpeg == nil)
        #expect(!StillFiles().rawOnly, "no file at all is not RAW-only")
        var twice = StillFiles(first: jpg)
        _ = twice.take(.fileAdded(jpg))
        let once = twice.files
        #expect(once == [jpg])
    }

    /// Recorded return codes and driver texts (libgphoto2 2.5.30's ptp2 and port libraries) sort into faults.
    @Test func returnCodesMapToFaults() {
        #expect(GPhoto2FaultKind(code: -53, driverMessage: "Could not claim the USB device") == .claimedByAnother)
        #expect(GPhoto2FaultKind(code: -52, driverMessage: nil) == .gone)
        #expect(GPhoto2FaultKind(code: -7, driverMessage: "Could not find the requested device on the USB port") == .gone)
        #expect(GPhoto2FaultKind(code: -105, driverMessage: nil) == .gone)
        #expect(GPhoto2FaultKind(code: -115, driverMessage: nil) == .cardFull)
        #expect(GPhoto2FaultKind(code: -1, driverMessage: "PTP Store Full") == .cardFull)
        #expect(GPhoto2FaultKind(code: -1, driverMessage: "PTP Store Not Available") == .noCard)
        #expect(GPhoto2FaultKind(code: -1, driverMessage: "Nikon Out of Focus") == .focusFailed)
        #expect(GPhoto2FaultKind(code: -110, driverMessage: nil) == .busy)
        #expect(GPhoto2FaultKind(code: -1, driverMessage: "PTP Device Busy") == .busy)
        #expect(GPhoto2FaultKind(code: -10, driverMessage: nil) == .timeout)
        #expect(GPhoto2FaultKind(code: -6, driverMessage: nil) == .unsupported)
        #expect(GPhoto2FaultKind(code: -1, driverMessage: "something else") == .other)
        #expect(GPhoto2FaultKind(code: -1, driverMessage: "Capture successfully started") == .other, "'full' in another word is no full card")
        #expect(GPhoto2FaultKind(code: -3, driverMessage: nil) == .other, "out of memory is not a full card")
        #expect(GPhoto2FaultKind.gone.needsReopen && GPhoto2FaultKind.claimedByAnother.needsReopen && !GPhoto2FaultKind.cardFull.needsReopen)
        let e = GPhoto2Error(call: "gp_camera_init", code: -53, camera: "Nikon DSC D750 at usb:001,004", driverMessage: "Could not claim the USB device")
        #expect("\(e)" == "gp_camera_init on Nikon DSC D750 at usb:001,004 failed: GP_ERROR_IO_USB_CLAIM (-53): Could not claim the USB device")
    }

    @Test func theClaimAdviceNamesTheHolderAndGvfs() {
        let gvfs = GPhoto2Advice.text(for: .claimedByAnother, holder: "gvfs-gphoto2-vo (pid 812)")
        #expect(gvfs.contains("gvfs-gphoto2-vo (pid 812) holds it") && gvfs.contains("systemctl --user mask --now gvfs-gphoto2-volume-monitor"))
        let unknown = GPhoto2Advice.text(for: .claimedByAnother)
        #expect(unknown.contains("another process holds it") && unknown.contains("gvfs"))
        #expect(GPhoto2Advice.text(for: .gone).contains("auto power off"))
    }

    @Test func camerasAreNamedByModelPartOrPort() {
        let d750 = GPhoto2CameraInfo(model: "Nikon DSC D750", port: "usb:001,004")
        #expect(d750.matches("") && d750.matches("auto") && d750.matches("d750") && d750.matches("usb:001,004"))
        #expect(!d750.matches("usb:001,005") && !d750.matches("Canon"))
        #expect(d750.usbDeviceNode == "/dev/bus/usb/001/004")
        #expect(GPhoto2CameraInfo(model: "x", port: "ptpip:10.0.0.2").usbDeviceNode == nil)
    }

    @Test func theCaptureTargetIsChosenAmongTheCamerasNames() {
        let nikon = ["Internal RAM", "Memory card"]
        #expect(GPhoto2CaptureTarget.choice(for: .ram, among: nikon) == "Internal RAM")
        #expect(GPhoto2CaptureTarget.choice(for: .card, among: nikon) == "Memory card")
        #expect(GPhoto2CaptureTarget.choice(for: .card, among: ["Internal RAM"]) == nil)
    }

    /// A process holding a file open is found through /proc (here: this test's own child holding a file).
    @Test func theHolderOfADeviceNodeIsFoundThroughProc() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("holder-\(getpid())").path
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        defer { unlink(path) }
        let pid = spawnProcess("/bin/sh", ["-c", "exec 3<\(path); exec sleep 5"], output: "/dev/null")
        try #require(pid > 0)
        defer { kill(pid, SIGKILL); _ = exitStatus(of: pid, within: 2) }
        var found: String?
        waitUntil(1) { found = DeviceNodeHolder.find(path); return found != nil }
        // The shell holds it from its `exec 3<` on, then as sleep (the same pid).
        #expect(found == "sleep (pid \(pid))" || found == "sh (pid \(pid))", "\(found ?? "none")")
    }

    /// libcamera's lock on a media device (lockf, a POSIX lock) names its holder through /proc/locks; a
    /// process that only has the node open (listing cameras) is not named by it.
    @Test func theHolderOfALockIsFoundThroughProcLocks() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lock-holder-\(getpid())").path
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        defer { unlink(path) }
        let opener = spawnProcess("/bin/sh", ["-c", "exec 3<\(path); exec sleep 5"], output: "/dev/null")
        try #require(opener > 0)
        defer { kill(opener, SIGKILL); _ = exitStatus(of: opener, within: 2) }
        usleep(100_000)
        #expect(DeviceNodeHolder.lockHolder(path) == nil, "a process with the file open but no lock")
        let locker = spawnProcess("/usr/bin/python3", ["-c", "import fcntl, sys, time; f = open(sys.argv[1], 'r+'); fcntl.lockf(f, fcntl.LOCK_EX); time.sleep(5)", path],
                                  output: "/dev/null")
        try #require(locker > 0, "missing prerequisite: python3")
        defer { kill(locker, SIGKILL); _ = exitStatus(of: locker, within: 2) }
        var found: String?
        waitUntil(2) { found = DeviceNodeHolder.lockHolder(path); return found != nil }
        #expect(found == "python3 (pid \(locker))", "\(found ?? "none")")
        #expect(DeviceNodeHolder.lockHolder("/nonexistent-\(getpid())") == nil)
    }

    @Test func settingsTakeTheGPhoto2Backend() throws {
        let parsed = Settings.check(text: "[camera]\nbackend = gphoto2\ncapture_target = card\nlive_view_rate = 10\ncapture_timeout = 20s\n", file: "t.conf")
        let s = try #require(parsed.settings)
        #expect(s.camera.backend == .gphoto2 && s.camera.captureTarget == .card && s.camera.liveViewRate == 10)
        #expect(Settings.check(text: "[camera]\ncapture_target = sd\n", file: "t.conf").settings == nil)
        #expect(Settings.check(text: "[camera]\nlive_view_rate = 0\n", file: "t.conf").settings == nil)
        let short = Settings.check(text: "[camera]\nbackend = gphoto2\n", file: "t.conf")
        #expect(short.diagnostics.contains { "\($0)".contains("camera.capture_timeout") && "\($0)".contains("15s") })
        #expect(resolveCameraBackend(.auto, devices: [], gphoto2Cameras: [GPhoto2CameraInfo(model: "Nikon DSC D750", port: "usb:001,004")]) == .gphoto2)
        #expect(resolveCameraBackend(.auto, devices: [], gphoto2Cameras: []) == .v4l2)
        let webcam = CameraInfo(path: "/dev/video0", driver: "uvcvideo", card: "C920", isUsableCapture: true)
        let phone = GPhoto2CameraInfo(model: "USB PTP Class Camera", port: "usb:001,007")
        #expect(resolveCameraBackend(.auto, devices: [webcam], gphoto2Cameras: [phone]) == .v4l2, "a phone in PTP mode does not beat the webcam")
        #expect(resolveCameraBackend(.auto, devices: [], gphoto2Cameras: [phone]) == .gphoto2, "a body libgphoto2 has no model for, alone")
        #expect(resolveCameraBackend(.auto, devices: [webcam], gphoto2Cameras: [phone, GPhoto2CameraInfo(model: "Canon EOS R6", port: "usb:001,009")]) == .gphoto2)
    }

    @Test func aLiveViewDeviceMakesAPairedSource() {
        var s = Settings.defaults
        s.camera.backend = .gphoto2
        s.camera.liveViewDevice = "/dev/video0"
        let log = Logger(threshold: .error) { _ in }
        let paired = makeCameraSource(s, clock: SystemClock(), log: log)
        #expect((paired as? PairedCameraSource)?.liveView is StreamingCameraSource)
        #expect((paired as? PairedCameraSource)?.stills is GPhoto2CameraSource)
        s.camera.liveViewDevice = "none"
        let still = makeCameraSource(s, clock: SystemClock(), log: log)
        #expect(!still.capabilities.hasLiveView)
        s.camera.liveViewDevice = ""
        #expect(makeCameraSource(s, clock: SystemClock(), log: log) is GPhoto2CameraSource)
    }
}
