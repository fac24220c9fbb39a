import BoothClock
import BoothCore
import BoothPorts
import FoundationEssentials

extension CameraBackendName {
    /// libcamera: a Raspberry Pi camera module behind its ISP; any sensor with a libcamera pipeline.
    public static let libcamera: CameraBackendName = "libcamera"
}

extension CameraDetection {
    /// The cameras libcamera lists that `camera.device` names (all of them when it names none), listed once.
    public var libcameraCameras: [LibcameraCameraInfo] {
        listing("libcamera", default: detectLibcameraCameras).filter { $0.matches(settings.camera.device) }
    }
}

/// The cameras libcamera lists, or none when libcamera cannot start.
public func detectLibcameraCameras() -> [LibcameraCameraInfo] {
    (try? listLibcameraCameras()) ?? []
}

/// The libcamera backend: ``LibcameraCamera`` in a ``StreamingCameraSource``. In `auto`'s order at rank 400,
/// after every gphoto2 camera and a UVC webcam (libcamera's `CameraManager` opens every media device, so it
/// is asked only when those are not there): a camera libcamera lists that is not a UVC webcam (its UVC
/// pipeline lists webcams too; they stay on V4L2) and that `camera.device` names (a V4L2 node named there,
/// vivid or /dev/video2, keeps auto off the libcamera cameras).
public struct LibcameraBackend: CameraBackendDescriptor {
    public init() {}

    public var name: CameraBackendName { .libcamera }

    public var summary: String { "libcamera (Raspberry Pi Camera Module 3, HQ camera)" }

    public var autoSteps: [CameraAutoStep] {
        [CameraAutoStep(rank: 400) { d in d.libcameraCameras.contains { !$0.isUVC } }]
    }

    public func makeSource(_ settings: Settings, choice: CameraBackendChoice, clock: any MonotonicClock, log: Logger) -> any CameraSource {
        if choice.auto {
            log.info("camera: backend libcamera (camera.backend = auto: libcamera \(libcameraVersion()) lists \(choice.detection.libcameraCameras.map(\.description).joined(separator: ", ")))")
        }
        return StreamingCameraSource(device: { LibcameraCamera() }, settings: settings.camera, clock: clock, log: log)
    }

    /// `libcamera cameras`, in the daemon as in photoboothctl (``listLibcameraCameras()``: the process's one
    /// `CameraManager`, shared with the camera thread's when it streams from one; none acquired): id, model,
    /// sensor size, controls and stream formats. JSON: `libcameraCameras` (``LibcameraDevicesEntry``s),
    /// `libcameraVersion`, `libcameraNote` (why none were listed).
    public func devicesSection(_ context: CameraDevicesContext) -> CameraDevicesSection? {
        let version = libcameraVersion()
        var cameras: [LibcameraDevicesEntry] = []
        var note: String?
        do {
            cameras = try listLibcameraCameras().map {
                LibcameraDevicesEntry(id: $0.id, model: $0.model, location: $0.location, pixelArraySize: $0.pixelArraySize?.description,
                                      hasAutofocus: $0.hasAutofocus, controls: $0.controls, viewfinderFormats: $0.viewfinderFormats,
                                      stillFormats: $0.stillFormats, sensorModes: $0.sensorModes, isUVC: $0.isUVC)
            }
        } catch {
            note = "libcamera could not start: \(error)"
        }
        var out: [String] = []
        if let note {
            out.append("libcamera cameras: \(note)")
        } else {
            out.append(cameras.isEmpty ? "libcamera cameras (libcamera \(version)): none (no camera module or other sensor libcamera finds)"
                                       : "libcamera cameras (libcamera \(version)) (camera.backend = libcamera):")
        }
        for c in cameras {
            var line = "  \(c.id)" + (c.model.isEmpty ? "" : " '\(c.model)'")
            line += c.location.map { ", \($0)" } ?? ""
            line += c.pixelArraySize.map { ", sensor \($0)" } ?? ""
            line += c.hasAutofocus ? ", autofocus" : ""
            line += c.isUVC ? " (a USB webcam: the booth drives it through V4L2)" : ""
            out.append(line)
            if !c.viewfinderFormats.isEmpty { out.append("    viewfinder: \(c.viewfinderFormats.joined(separator: ", "))") }
            if !c.stillFormats.isEmpty { out.append("    still: \(c.stillFormats.joined(separator: ", "))") }
            out.append("    sensor modes (raw): " + (c.sensorModes.isEmpty ? "none listed (the pipeline has no raw stream)" : c.sensorModes.joined(separator: "; ")))
            if !c.controls.isEmpty { out.append("    controls: \(c.controls.joined(separator: ", "))") }
        }
        struct Fields: Encodable { var libcameraCameras: [LibcameraDevicesEntry]; var libcameraVersion: String; var libcameraNote: String? }
        let json = try? JSONEncoder().encode(Fields(libcameraCameras: cameras, libcameraVersion: version, libcameraNote: note))
        return CameraDevicesSection(backend: name, lines: out, json: json.map { [UInt8]($0) })
    }
}

/// A camera libcamera lists, as its `CameraManager` enumerates it (not acquired for the listing), for `devices`.
public struct LibcameraDevicesEntry: Codable, Sendable, Equatable {
    /// libcamera's id (`platform/vimc.0 Sensor B`) and model (`imx708`, empty when absent): either names it in `camera.device`.
    public var id: String
    public var model: String
    /// `front`, `back`, `external`; nil when the camera does not say.
    public var location: String?
    /// The sensor's pixel array (`4608x2592`), nil when absent.
    public var pixelArraySize: String?
    public var hasAutofocus: Bool
    /// Its controls' names (`AeEnable`, `AfMode`, …).
    public var controls: [String]
    /// Each stream role's pixel formats with their size ranges (`NV12 64x64-4608x2592`).
    public var viewfinderFormats: [String]
    /// The still role's formats, as `viewfinderFormats`.
    public var stillFormats: [String]
    /// The sensor's modes: the raw role's formats with their sizes (`SRGGB10_CSI2P 1536x864, 2304x1296, 4608x2592`);
    /// empty for a pipeline without a raw stream.
    public var sensorModes: [String]
    /// True for a USB webcam through libcamera's UVC pipeline (the booth drives those through V4L2).
    public var isUVC: Bool
}
