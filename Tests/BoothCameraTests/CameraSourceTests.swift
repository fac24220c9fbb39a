import BoothCore
import BoothPorts
import Foundation
import Synchronization
import Testing
@testable import BoothCamera

/// A camera source that records what it was asked and reports what the test tells it to.
private final class RecordingSource: CameraSource {
    let name: String
    let hasLiveView: Bool
    private let asked = Mutex<[String]>([])
    private let handlers = Mutex<CameraSourceHandlers?>(nil)
    let heartbeat = Heartbeat()

    init(_ name: String, hasLiveView: Bool, stillSizes: [FrameSize] = []) {
        self.name = name
        self.hasLiveView = hasLiveView
        self.stillSizes = stillSizes
    }
    let stillSizes: [FrameSize]

    var capabilities: CameraCapabilities {
        CameraCapabilities(hasLiveView: hasLiveView,
                           liveViewModes: hasLiveView ? [LiveViewMode(format: .mjpeg, sizes: [FrameSize(width: 640, height: 480)])] : [],
                           stillSizes: stillSizes, controls: hasLiveView ? [.focus] : [])
    }
    var calls: [String] { asked.withLock { $0 } }
    private func note(_ s: String) { asked.withLock { $0.append(s) } }

    func launch(_ handlers: CameraSourceHandlers) { self.handlers.withLock { $0 = handlers }; note("launch") }
    func startLiveView() { note("start") }
    func stopLiveView() { note("stop") }
    func takeStill(_ request: StillRequest) { note("still \(request.captureID)") }
    func probe() { note("probe") }
    func snapshot(rotation: Rotation, jpegQuality: Int, _ reply: @escaping @Sendable ([UInt8]?) -> Void) {
        note("snapshot"); reply([UInt8](name.utf8))
    }
    func reconfigure(_ settings: Settings.Camera) { note("reconfigure") }
    func shutdown(timeoutSeconds: Double) { note("shutdown") }
    func check() -> CameraCheckResult { .works(description: name, warnings: []) }
    var status: CameraSourceStatus { var s = CameraSourceStatus(); s.devicePath = name; return s }

    /// Reports as the source's thread would.
    func emit(_ event: CameraSourceEvent) { handlers.withLock { $0 }?.event(event) }
    func emitFrame(_ frame: Frame) { handlers.withLock { $0 }?.liveFrame(frame) }
}

private func frame(_ sequence: UInt32) -> Frame {
    Frame(format: .yuyv, size: FrameSize(width: 2, height: 2), bytesPerLine: 4, bytes: [UInt8](repeating: 0, count: 8),
          timestamp: MonotonicInstant(nanoseconds: UInt64(sequence)), timestampIsMonotonic: true, sequence: sequence)
}

@Suite struct PairedCameraSourceTests {
    /// A DSLR beside a webcam: stills from the one, live view from the other; a fault of either is the
    /// camera's; what the stills camera might stream is not shown.
    @Test func stillsFromOneDeviceLiveViewFromTheOther() {
        let dslr = RecordingSource("dslr", hasLiveView: false, stillSizes: [FrameSize(width: 6000, height: 4000)])
        let webcam = RecordingSource("webcam", hasLiveView: true)
        let paired = PairedCameraSource(stills: dslr, liveView: webcam)
        let events = Mutex<[CameraSourceEvent]>([]), frames = Mutex<[UInt32]>([])
        paired.launch(CameraSourceHandlers(event: { e in events.withLock { $0.append(e) } },
                                           liveFrame: { f in frames.withLock { $0.append(f.sequence) } }))
        paired.startLiveView()
        paired.takeStill(StillRequest(captureID: 7, trigger: MonotonicInstant(nanoseconds: 1), deadline: nil))
        #expect(dslr.calls == ["launch", "start", "still 7"])
        #expect(webcam.calls == ["launch", "start"])

        webcam.emitFrame(frame(1))
        dslr.emitFrame(frame(2))
        #expect(frames.withLock { $0 } == [1])

        let still = CameraStill(captureID: 7, jpeg: [0xFF, 0xD8, 0xFF, 0xD9], trigger: MonotonicInstant(nanoseconds: 1),
                                frameTimestamp: MonotonicInstant(nanoseconds: 2), readyAt: MonotonicInstant(nanoseconds: 3),
                                size: FrameSize(width: 6000, height: 4000), format: .mjpeg, passedThrough: true, turn: .unchanged)
        dslr.emit(.still(still))
        webcam.emit(.stillFailed(captureID: 7, message: "not mine", at: MonotonicInstant(nanoseconds: 4)))
        webcam.emit(.fault("camera lost: webcam unplugged"))
        #expect(events.withLock { $0 } == [.still(still), .fault("camera lost: webcam unplugged")])

        let caps = paired.capabilities
        #expect(caps.hasLiveView)
        #expect(caps.stillSizes == [FrameSize(width: 6000, height: 4000)])
        #expect(caps.liveViewModes == webcam.capabilities.liveViewModes)

        let snapshot = Mutex<[UInt8]?>(nil)
        paired.snapshot(rotation: .r0, jpegQuality: 90) { bytes in snapshot.withLock { $0 = bytes } }
        #expect(snapshot.withLock { $0 } == [UInt8]("webcam".utf8), "the snapshot is the live view's")
        #expect(paired.check() == .works(description: "dslr, live view webcam", warnings: []))
        #expect(paired.heartbeat === dslr.heartbeat)
        paired.shutdown(timeoutSeconds: 1)
        #expect(dslr.calls.last == "shutdown" && webcam.calls.last == "shutdown")
    }

    /// A camera with no live view at all: the screens get no frames, stills are taken all the same.
    @Test func aStillsCameraWithoutLiveView() {
        let dslr = RecordingSource("dslr", hasLiveView: false)
        let paired = PairedCameraSource(stills: dslr, liveView: nil)
        let frames = Mutex(0)
        paired.launch(CameraSourceHandlers(event: { _ in }, liveFrame: { _ in frames.withLock { $0 += 1 } }))
        paired.startLiveView()
        dslr.emitFrame(frame(1))
        paired.takeStill(StillRequest(captureID: 3, trigger: MonotonicInstant(nanoseconds: 1), deadline: nil))
        #expect(!paired.capabilities.hasLiveView)
        #expect(paired.capabilities.liveViewModes.isEmpty)
        #expect(frames.withLock { $0 } == 0)
        #expect(dslr.calls == ["launch", "start", "still 3"])
    }
}

@Suite struct CameraBackendTests {
    private func device(_ path: String, driver: String, card: String, usable: Bool = true) -> CameraInfo {
        CameraInfo(path: path, driver: driver, card: card, busInfo: "usb-0000:00:14.0-1", isUsableCapture: usable)
    }

    /// A UVC webcam stays on V4L2 under auto, even beside other devices.
    @Test func aUVCWebcamIsDrivenThroughV4L2() {
        let webcam = device("/dev/video0", driver: "uvcvideo", card: "HD Pro Webcam C920")
        #expect(resolveCameraBackend(.auto, devices: [webcam]) == .v4l2)
        let unicam = device("/dev/video2", driver: "unicam", card: "unicam")
        #expect(resolveCameraBackend(.auto, devices: [unicam, webcam]) == .v4l2)
    }

    @Test func autoWithoutAnyDeviceAndAnExplicitBackendAreV4L2() {
        #expect(resolveCameraBackend(.auto, devices: []) == .v4l2)
        #expect(resolveCameraBackend(.auto, devices: [device("/dev/video9", driver: "v4l2 loopback", card: "Dummy")]) == .v4l2)
        #expect(resolveCameraBackend(.v4l2, devices: [device("/dev/video0", driver: "uvcvideo", card: "C920")]) == .v4l2)
    }

    /// `camera.backend` is in the schema with its choices, and auto is the default; once the backends' names
    /// are installed (as photoboothd and photoboothctl do at start), an unknown one is refused in the words
    /// of any choice.
    @Test func theSettingParsesItsChoices() {
        CameraBackends.installNames()
        #expect(Settings.defaults.camera.backend == .auto)
        let parsed = Settings.check(text: "[camera]\nbackend = v4l2\n", file: "test.conf")
        #expect(parsed.settings?.camera.backend == .v4l2)
        #expect(Settings.check(text: "[camera]\nbackend = LibCamera\n", file: "test.conf").settings?.camera.backend == .libcamera)
        let wrong = Settings.check(text: "[camera]\nbackend = gphoto3\n", file: "test.conf")
        #expect(wrong.settings == nil, "an unknown backend is an error")
        // The words of any choice (CameraBackendSettingTests has them exactly; a backend a test in this
        // process registered is listed after the built-in ones).
        let message = wrong.diagnostics.map(\.description).joined()
        #expect(message.hasPrefix("test.conf:2: camera.backend: 'gphoto3' is not one of auto, v4l2, gphoto2"), "\(message)")
        #expect(message.contains("libcamera") && message.hasSuffix("; did you mean 'gphoto2'?"), "\(message)")
    }

    /// `camera.backend`'s values are the registry's backends: its type lists auto and every built-in
    /// backend's name, its description each one's summary, in the words the schema held when they were an
    /// enum in BoothCore.
    @Test func theSettingsValuesAreTheRegistrysBackends() throws {
        CameraBackends.installNames()
        let spec = try #require(Schema.spec(for: "camera.backend"))
        #expect(spec.type == .choice(["auto"] + CameraBackends.builtIn.map(\.name.rawValue)))
        #expect(spec.type == .choice(["auto", "v4l2", "gphoto2", "libcamera"]))
        #expect(spec.allowed == "auto, v4l2, gphoto2 or libcamera")
        #expect(spec.description == "Which library drives the camera. auto: a DSLR or mirrorless camera libgphoto2 finds on USB, else a USB webcam through V4L2, else a camera only libcamera can drive (a Raspberry Pi camera module), else V4L2; v4l2: Video4Linux2 (webcams, capture cards); gphoto2: libgphoto2 (Canon EOS, Nikon, Sony, Fujifilm bodies over PTP); libcamera: libcamera (Raspberry Pi Camera Module 3, HQ camera). The log says which it chose.")
        for backend in CameraBackends.builtIn {
            #expect(resolveCameraBackend(CameraBackendSetting(rawValue: backend.name.rawValue), devices: []) == backend.name)
        }
    }

    /// `auto`'s order is the backends' steps by rank, whatever the registry's order.
    @Test func autoWalksTheStepsByRank() {
        let ranks = CameraBackends.builtIn.flatMap { b in b.autoSteps.map { ($0.rank, b.name) } }.sorted { $0.0 < $1.0 }
        #expect(ranks.map(\.1) == [.gphoto2, .v4l2, .gphoto2, .libcamera, .v4l2])
    }

    /// The sections `devices` prints, in the words it printed when they were DeviceReport's own fields: the
    /// daemon's note for libgphoto2 (its camera thread's alone), libcamera's version and its empty listing here.
    @Test func theBackendsSectionsKeepTheirWords() {
        let daemon = CameraDevicesContext(source: "photoboothd (pid 7)", mayOpenCameras: false)
        #expect(GPhoto2Backend().devicesSection(daemon)?.lines == [
            "gphoto2 cameras: not listed by photoboothd (pid 7): libgphoto2 is the camera thread's alone (the camera in use is above; "
                + "'photoboothctl devices --local' with the booth stopped lists them all)"])
        let libcamera = LibcameraBackend().devicesSection(daemon)
        #expect(libcamera?.lines == ["libcamera cameras (libcamera \(libcameraVersion())): none (no camera module or other sensor libcamera finds)"])
        #expect(libcamera.flatMap { $0.json.map { String(decoding: $0, as: UTF8.self) } }?.contains("\"libcameraVersion\":\"\(libcameraVersion())\"") == true)
        #expect(V4L2Backend().devicesSection(daemon) == nil, "V4L2's nodes are every listing's own")
    }

    /// `auto` looks at the attached devices; an explicit backend does not.
    @Test func onlyAutoDiscovers() {
        var s = Settings.defaults
        let looked = Mutex(0)
        s.camera.backend = .v4l2
        let asked = Mutex(0)
        _ = makeCameraSource(s, clock: FixedClock(), log: Logger(threshold: .error) { _ in },
                             discover: { looked.withLock { $0 += 1 }; return [] },
                             discoverGPhoto2: { asked.withLock { $0 += 1 }; return [] })
        #expect(looked.withLock { $0 } == 0 && asked.withLock { $0 } == 0)
        s.camera.backend = .auto
        let source = makeCameraSource(s, clock: FixedClock(), log: Logger(threshold: .error) { _ in }, discover: {
            looked.withLock { $0 += 1 }
            return [CameraInfo(path: "/dev/video0", driver: "uvcvideo", card: "C920", isUsableCapture: true)]
        }, discoverGPhoto2: { asked.withLock { $0 += 1 }; return [] })
        #expect(looked.withLock { $0 } == 1 && asked.withLock { $0 } == 1)
        #expect(source is StreamingCameraSource)
        #expect(source.capabilities.hasLiveView)
        let dslr = makeCameraSource(s, clock: FixedClock(), log: Logger(threshold: .error) { _ in }, discover: { [] },
                                    discoverGPhoto2: { [GPhoto2CameraInfo(model: "Nikon DSC D750", port: "usb:001,004")] })
        #expect(dslr is GPhoto2CameraSource, "auto prefers a camera libgphoto2 drives over a webcam")
    }
}

private struct FixedClock: MonotonicClock {
    func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: 1) }
}
