// libcamera's cameras as listed (LibcameraCameraInfo, listLibcameraCameras), its pixel formats, its version,
// its log lines and the error of a failed shim call. The camera itself is in LibcameraCamera.swift.
import BoothCore
import BoothPorts
import CLibcameraShim
import CYUV
import Glibc

/// One camera libcamera lists: what `photoboothctl devices` shows and `camera.device` matches.
public struct LibcameraCameraInfo: Sendable, Hashable, CustomStringConvertible {
    /// libcamera's camera id (`Camera::id()`): `"platform/vimc.0 Sensor B"`, `"/base/soc/i2c0mux/i2c@1/imx708@1a"`.
    public var id: String
    /// `properties::Model` (`"imx708"`, `"Sensor B"`); empty when the camera does not say.
    public var model: String
    /// `properties::Location`: `"front"`, `"back"`, `"external"`, nil when absent.
    public var location: String?
    /// `properties::PixelArraySize`, pixels; nil when absent.
    public var pixelArraySize: FrameSize?
    /// True when the camera has `controls::AfTrigger` (Camera Module 3, not the HQ camera).
    public var hasAutofocus: Bool
    /// The names of its controls (`Camera::controls()`: `"AeEnable"`, `"AfMode"`, …).
    public var controls: [String]
    /// The viewfinder and still streams' pixel formats (libcamera's names, `"NV12"`, `"BGR888"`) with
    /// their size ranges.
    public var viewfinderFormats: [String]
    /// The still role's formats, as `viewfinderFormats` (`"YUV420 64x64-4056x3040"`).
    public var stillFormats: [String]
    /// The sensor's modes: the raw role's formats with their sizes (`"SRGGB10_CSI2P 1536x864, 2304x1296, 4608x2592"`);
    /// empty for a pipeline without a raw stream (vimc's).
    public var sensorModes: [String] = []

    /// True for a USB webcam (libcamera's UVC pipeline: its id is the USB device's path, `"\\_SB_…-1.2:1.0-046d:0825"`,
    /// ending in `vendor:product`), which the booth drives through V4L2 instead.
    public var isUVC: Bool {
        guard let last = id.split(separator: "-").last else { return false }
        let parts = last.split(separator: ":")
        return parts.count == 2 && parts.allSatisfy { $0.count == 4 && $0.allSatisfy(\.isHexDigit) }
    }

    /// True for libcamera's name of a raw sensor format: Bayer (`SRGGB10_CSI2P`, `SBGGR12`, `SGRBG8`, `SGBRG16`)
    /// or mono (`R8`, `R10_CSI2P`), as a raw stream gives them; false for processed ones (`NV12`, `BGR888`).
    public static func isRawFormat(_ name: String) -> Bool {
        let bayer = ["SRGGB", "SBGGR", "SGRBG", "SGBRG"].contains { name.hasPrefix($0) && name.dropFirst(5).first?.isNumber == true }
        let mono = name.hasPrefix("R") && name.dropFirst().first?.isNumber == true
        return bayer || mono
    }

    /// `"'Sensor B' (platform/vimc.0 Sensor B)"`.
    public var description: String { model.isEmpty ? id : "'\(model)' (\(id))" }

    /// True when `selector` (`camera.device`) names this camera: `""`/`"auto"`, its id, or a
    /// case-insensitive part of its id or model.
    public func matches(_ selector: String) -> Bool {
        let s = selector.trimmingSpaces()
        if s.isEmpty || s == "auto" { return true }
        if s == id { return true }
        let lower = s.lowercased()
        return id.lowercased().contains(lower) || (!model.isEmpty && model.lowercased().contains(lower))
    }
}

/// The pixel formats the booth takes from libcamera, by libcamera's (DRM) fourcc, and what each becomes.
public enum LibcameraFormat: UInt32, CaseIterable, Sendable {
    /// NV12: Y plane, then interleaved Cb/Cr at half size (the Raspberry Pi ISP's viewfinder format).
    case nv12 = 0x3231_564E  // 'NV12'
    /// YUV420: Y, Cb, Cr planes (I420).
    case yuv420 = 0x3231_5559  // 'YU12'
    /// YUYV 4:2:2 packed.
    case yuyv = 0x5659_5559  // 'YUYV'
    /// RGB888: B, G, R bytes in memory (DRM's little-endian naming).
    case rgb888 = 0x3432_4752  // 'RG24'
    /// BGR888: R, G, B bytes in memory.
    case bgr888 = 0x3432_4742  // 'BG24'

    /// libcamera's name for it.
    public var name: String {
        switch self {
        case .nv12: "NV12"
        case .yuv420: "YUV420"
        case .yuyv: "YUYV"
        case .rgb888: "RGB888"
        case .bgr888: "BGR888"
        }
    }

    /// The booth's frame format it is delivered as: YUV formats as YUYV, RGB ones as RGB24.
    var frameFormat: PixelFormat {
        switch self {
        case .nv12, .yuv420, .yuyv: .yuyv
        case .rgb888, .bgr888: .rgb24
        }
    }

    /// libcamera's name for `fourcc`, or the fourcc's four characters.
    static func name(of fourcc: UInt32) -> String {
        LibcameraFormat(rawValue: fourcc)?.name ?? PixelFormat.string(fromFourcc: fourcc)
    }

    /// The formats to ask for, best first, for a `camera.format` preference: YUV for the screens (NV12 is
    /// what the Raspberry Pi ISP gives without a conversion of its own), then RGB (vimc offers only RGB/BGR).
    static let preference: [LibcameraFormat] = [.nv12, .yuv420, .yuyv, .bgr888, .rgb888]
}

extension pb_lc_controls {
    /// Controls that leave every control as it is (each field -1): set the ones to change.
    static var unchanged: pb_lc_controls {
        pb_lc_controls(ae_enable: -1, awb_enable: -1, af_continuous: -1, flicker_hz: -1, frame_duration_us: -1)
    }
}

/// libcamera's version (`CameraManager::version()`, `"v0.0.3"`).
public func libcameraVersion() -> String { String(cString: pb_lc_version()) }

/// Routes libcamera's log to `line` (its priority and the line, ``libcameraLogLine(_:)``'s shape), or back to
/// stderr with nil (`pb_lc_route_log`: `logSetStream`, colours off).
func routeLibcameraLog(_ line: pb_lc_log_fn?) { pb_lc_route_log(line) }

/// One line as libcamera logs it, as the booth logs it (`pb_lc_log_line`): colours stripped, its timestamp
/// and thread dropped, its severity as the priority: `"[0:00:01.2] [812] ERROR V4L2 v.cpp:19 gone"` is
/// (.error, `"libcamera: V4L2 v.cpp:19 gone"`).
public func libcameraLogLine(_ raw: String) -> (priority: LogPriority, line: String) {
    var out = [CChar](repeating: 0, count: 1024)
    let priority = pb_lc_log_line(raw, &out, out.count)
    return (LogPriority(rawValue: Int(priority)) ?? .info, String(nulTerminated: out))
}

/// The libcamera error of a failed shim call, as the camera sources understand camera errors.
func libcameraError(_ call: String, _ rc: Int32, device: String) -> LibcameraError {
    let words = String(cString: pb_lc_last_error())
    return LibcameraError(call: call, code: rc, camera: device, detail: words.isEmpty ? nil : words)
}

/// Lists the cameras libcamera finds (Debian's libcamera: the vimc, simple, uvcvideo, Raspberry Pi
/// pipelines), with their properties, controls and stream formats. Starts a `CameraManager` for the
/// listing (shared with any camera open in this process) and stops it after.
/// - Throws: ``LibcameraError`` (call `libcamera CameraManager::start`) when libcamera cannot start.
public func listLibcameraCameras() throws -> [LibcameraCameraInfo] {
    var error: Int32 = 0
    guard let manager = pb_lc_manager_new(&error) else {
        throw libcameraError("CameraManager::start", error, device: "libcamera")
    }
    defer { pb_lc_manager_free(manager) }
    return libcameraCameras(manager, details: true).map(\.info)
}

/// The cameras `manager` lists, by index, with what `pb_lc_camera_get_info` said of each; with `details`,
/// their controls' names and stream formats too (else empty: what choosing a camera needs is id and model).
func libcameraCameras(_ manager: OpaquePointer, details: Bool) -> [(index: Int32, info: LibcameraCameraInfo, raw: pb_lc_camera_info)] {
    var cameras: [(index: Int32, info: LibcameraCameraInfo, raw: pb_lc_camera_info)] = []
    for index in 0..<pb_lc_camera_count(manager) {
        var info = pb_lc_camera_info()
        guard pb_lc_camera_get_info(manager, index, &info) == 0 else { continue }
        let id = String(cArray: info.id), model = String(cArray: info.model)
        let location: String? = switch info.location {
        case Int32(PB_LC_LOCATION_FRONT): "front"
        case Int32(PB_LC_LOCATION_BACK): "back"
        case Int32(PB_LC_LOCATION_EXTERNAL): "external"
        default: nil
        }
        var controls: [String] = []
        var name = [CChar](repeating: 0, count: 128)
        for c in 0..<(details ? info.control_count : 0) where pb_lc_camera_control_name(manager, index, c, &name, name.count) == 0 {
            controls.append(String(nulTerminated: name))
        }
        func formats(_ role: Int32) -> [pb_lc_stream_format] {
            guard details else { return [] }
            var out = [pb_lc_stream_format](repeating: pb_lc_stream_format(), count: 32)
            let n = pb_lc_camera_stream_formats(manager, index, role, &out, Int32(out.count))
            return Array(out.prefix(max(0, Int(n))))
        }
        func ranges(_ role: Int32) -> [String] {
            formats(role).map { "\(String(cArray: $0.name)) \($0.min_width)x\($0.min_height)-\($0.max_width)x\($0.max_height)" }
        }
        // The raw role's raw formats with their discrete sizes: the sensor's modes (a pipeline without a raw
        // stream, as vimc's, answers the raw role with its processed formats: not modes).
        let modes = formats(Int32(PB_LC_ROLE_RAW)).filter { LibcameraCameraInfo.isRawFormat(String(cArray: $0.name)) }.map { f -> String in
            var sizes = [pb_lc_size](repeating: pb_lc_size(), count: 32)
            let n = pb_lc_camera_stream_sizes(manager, index, Int32(PB_LC_ROLE_RAW), f.fourcc, &sizes, Int32(sizes.count))
            let listed = sizes.prefix(max(0, Int(n))).map { "\($0.width)x\($0.height)" }
            return "\(String(cArray: f.name)) " + (listed.isEmpty ? "\(f.min_width)x\(f.min_height)-\(f.max_width)x\(f.max_height)" : listed.joined(separator: ", "))
        }
        cameras.append((index, LibcameraCameraInfo(
            id: id, model: model, location: location,
            pixelArraySize: info.pixel_array_width > 0 ? FrameSize(width: Int(info.pixel_array_width), height: Int(info.pixel_array_height)) : nil,
            hasAutofocus: info.has_autofocus != 0, controls: controls,
            viewfinderFormats: ranges(Int32(PB_LC_ROLE_VIEWFINDER)), stillFormats: ranges(Int32(PB_LC_ROLE_STILL)), sensorModes: modes), info))
    }
    return cameras
}
