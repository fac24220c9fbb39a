import BoothClock
import BoothCore
import BoothPorts
import FoundationEssentials

extension CameraBackendName {
    /// libgphoto2: a DSLR or mirrorless camera on USB, through PTP.
    public static let gphoto2: CameraBackendName = "gphoto2"
}

extension CameraDetection {
    /// The cameras libgphoto2 lists that take stills (``detectGPhoto2Cameras()``), listed once.
    public var gphoto2Cameras: [GPhoto2CameraInfo] { listing("gphoto2", default: detectGPhoto2Cameras) }
}

/// The cameras libgphoto2 lists that can take a still, or none when libgphoto2 cannot list them.
public func detectGPhoto2Cameras() -> [GPhoto2CameraInfo] {
    (try? GPhoto2Camera()?.detect()) ?? []
}

/// The gphoto2 backend: ``GPhoto2CameraSource``, or with `camera.live_view_device` naming a V4L2 camera a
/// ``PairedCameraSource`` of its stills and that webcam's live view. In `auto`'s order twice: a camera
/// libgphoto2 knows by model at rank 100, first of all (a DSLR beside a webcam is the camera the operator
/// brought for the photos); libgphoto2's generic "USB PTP Class Camera" at rank 300, after a UVC webcam
/// (a phone in PTP mode charging on the booth is one too).
public struct GPhoto2Backend: CameraBackendDescriptor {
    public init() {}

    public var name: CameraBackendName { .gphoto2 }

    public var summary: String { "libgphoto2 (Canon EOS, Nikon, Sony, Fujifilm bodies over PTP)" }

    public var autoSteps: [CameraAutoStep] {
        [CameraAutoStep(rank: 100) { d in d.gphoto2Cameras.contains { !$0.isGenericPTPClass } },
         CameraAutoStep(rank: 300) { d in !d.gphoto2Cameras.isEmpty }]
    }

    public func makeSource(_ settings: Settings, choice: CameraBackendChoice, clock: any MonotonicClock, log: Logger) -> any CameraSource {
        if choice.auto {
            log.info("camera: backend gphoto2 (camera.backend = auto: libgphoto2 lists \(choice.detection.gphoto2Cameras.map(\.description).joined(separator: ", ")))")
        }
        if settings.camera.captureTimeoutMilliseconds < 10_000 {
            log.warning("camera: camera.capture_timeout = \(settings.camera.captureTimeoutMilliseconds) ms is short for a gphoto2 camera "
                        + "(autofocus, shutter and a 20-45 MP download take seconds): set camera.capture_timeout = 15s or more")
        }
        let liveView = settings.camera.liveViewDevice.trimmingSpaces()
        switch liveView {
        case "":
            return GPhoto2CameraSource(settings: settings.camera, clock: clock, log: log)
        case "none":
            return PairedCameraSource(stills: GPhoto2CameraSource(settings: settings.camera, liveView: false, clock: clock, log: log),
                                      liveView: nil)
        default:
            var webcam = settings.camera
            webcam.device = liveView
            log.info("camera: live view from \(liveView) (camera.live_view_device), stills from the gphoto2 camera")
            return PairedCameraSource(stills: GPhoto2CameraSource(settings: settings.camera, liveView: false, clock: clock, log: log),
                                      liveView: StreamingCameraSource(device: { V4L2Camera() }, settings: webcam, clock: clock, log: log))
        }
    }

    /// `gphoto2 cameras`: each camera libgphoto2 lists, opened once for its battery, card, capture target and
    /// image format when `context` allows (photoboothctl); in the daemon a note that libgphoto2 is the camera
    /// thread's alone. JSON: `gphoto2Cameras` (``GPhoto2DevicesEntry``s) and `gphoto2Note`.
    public func devicesSection(_ context: CameraDevicesContext) -> CameraDevicesSection? {
        var out: [String] = []
        var cameras: [GPhoto2DevicesEntry] = []
        var note: String?
        if context.mayOpenCameras {
            cameras = Self.listCameras()
            out.append(cameras.isEmpty ? "gphoto2 cameras: none (no DSLR or mirrorless camera libgphoto2 finds on USB)" : "gphoto2 cameras (camera.backend = gphoto2):")
        } else {
            note = "not listed by \(context.source): libgphoto2 is the camera thread's alone (the camera in use is above; 'photoboothctl devices --local' with the booth stopped lists them all)"
            out.append("gphoto2 cameras: \(note ?? "")")
        }
        for g in cameras {
            var line = "  \(g.model) at \(g.port)"
            if let p = g.problem { out.append(line + ": \(p)"); continue }
            line += g.batteryPercent.map { ", battery \($0)%" } ?? ""
            line += g.freeBytes.map { ", \($0 / 1_000_000) MB free on the card" } ?? ""
            out.append(line)
            if let t = g.captureTarget {
                out.append("    capture target \(t)" + (g.captureTargets.isEmpty ? "" : " (offers \(g.captureTargets.joined(separator: ", ")))"))
            }
            if let f = g.imageFormat { out.append("    image format \(f)") }
        }
        struct Fields: Encodable { var gphoto2Cameras: [GPhoto2DevicesEntry]; var gphoto2Note: String? }
        return CameraDevicesSection(backend: name, lines: out,
                                    json: (try? JSONEncoder().encode(Fields(gphoto2Cameras: cameras, gphoto2Note: note))).map { [UInt8]($0) })
    }

    /// Every camera libgphoto2 lists that takes stills, each opened once (`gp_camera_init`) for its battery,
    /// card, capture target and image format; those that take none, with the reason.
    static func listCameras() -> [GPhoto2DevicesEntry] {
        guard let camera = GPhoto2Camera() else { return [] }
        let (found, others) = (try? camera.detectAll()) ?? ([], [])
        let noStills = others.map {
            GPhoto2DevicesEntry(model: $0.model, port: $0.port, problem: "takes no stills (a phone or media player, or a camera in MTP or PC mode: set its USB mode to PTP or PC remote)")
        }
        return noStills + found.map { info in
            do {
                try camera.open(info.port)
                defer { camera.close() }
                let d = camera.details()
                return GPhoto2DevicesEntry(model: info.model, port: info.port, batteryPercent: d.batteryPercent, freeBytes: d.freeBytes,
                                           captureTarget: d.captureTarget, captureTargets: d.captureTargets, imageFormat: d.imageFormat)
            } catch let error as GPhoto2Error {
                let holder = error.kind == .claimedByAnother ? info.usbDeviceNode.flatMap(DeviceNodeHolder.find) : nil
                return GPhoto2DevicesEntry(model: info.model, port: info.port, problem: "\(GPhoto2Advice.text(for: error.kind, holder: holder)) (\(error))")
            } catch {
                return GPhoto2DevicesEntry(model: info.model, port: info.port, problem: "\(error)")
            }
        }
    }
}

/// A camera libgphoto2 drives, as opened once for `devices`.
public struct GPhoto2DevicesEntry: Codable, Sendable, Equatable {
    /// libgphoto2's model name (`Nikon DSC D750`) and port (`usb:001,004`): either names it in `camera.device`.
    public var model: String
    public var port: String
    /// Battery in percent, free bytes on the card, the capture target and those offered, the image format; nil when unknown.
    public var batteryPercent: Int?
    public var freeBytes: Int64?
    public var captureTarget: String?
    public var captureTargets: [String] = []
    public var imageFormat: String?
    /// Why it could not be opened (another process holds it; the daemon uses it).
    public var problem: String?

    public init(model: String, port: String, batteryPercent: Int? = nil, freeBytes: Int64? = nil, captureTarget: String? = nil,
                captureTargets: [String] = [], imageFormat: String? = nil, problem: String? = nil) {
        self.model = model
        self.port = port
        self.batteryPercent = batteryPercent
        self.freeBytes = freeBytes
        self.captureTarget = captureTarget
        self.captureTargets = captureTargets
        self.imageFormat = imageFormat
        self.problem = problem
    }
}
