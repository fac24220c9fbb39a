import BoothCamera
import BoothControl
import BoothCore
import BoothDisplay
import BoothGPIO
import BoothInput
import BoothPrint
import FoundationEssentials

// The `devices` listing read from the machine: V4L2 video nodes (BoothCamera), GPIO chips (BoothGPIO), input devices (BoothInput),
// DRM cards (BoothDisplay) and
// CUPS destinations (BoothPrint), as BoothControl's DeviceReport. Used by photoboothd (its control socket's
// `devices`) and photoboothctl (`devices` without a daemon); BoothControl itself reads no device.

extension DeviceReport {
    /// Lists the machine's devices: every video node under `devRoot` with formats, sizes, frame intervals
    /// and controls (`VIDIOC_QUERYCAP`, `ENUM_FMT`, `ENUM_FRAMESIZES`, `ENUM_FRAMEINTERVALS`, `QUERYCTRL`), and
    /// every GPIO chip with its lines (libgpiod). Opens each node briefly; a node in use by the daemon
    /// still answers these queries.
    ///
    /// Then each camera backend's own section (``CameraBackends/devicesSections(_:)``: libgphoto2's, libcamera's).
    /// `gphoto2Cameras`: true when the listing may open cameras a library holds exclusively (photoboothctl,
    /// the booth not running: libgphoto2's cameras are each opened once); false in the daemon, whose camera
    /// thread alone calls libgphoto2 (another thread's `gp_camera_init` would fail to claim the booth's own
    /// camera, and libgphoto2's driver loading is not thread-safe): its section then says so.
    ///
    /// `screens`: each screen kind's section (BoothWiring's `ScreenRegistry.deviceSections`); by default the
    /// built-in kinds' (``builtInScreenSections``: the DRM cards).
    public static func gather(source: String, inUse: InUse? = nil, devRoot: String = "/dev", gphoto2Cameras: Bool = false,
                              screens: [DeviceSection] = builtInScreenSections) -> DeviceReport {
        let cameras = CameraDiscovery(devRoot: devRoot).cameras(detail: .full).map(Camera.init)
        var chips: [GPIOChip] = []
        var gpioError: String?
        do {
            chips = try GPIOChipInfo.list().map(GPIOChip.init)
        } catch {
            gpioError = "\(error)"
        }
        var report = DeviceReport(source: source, cameras: cameras, gpioChips: chips, gpioError: gpioError, inUse: inUse)
        let (inputs, unreadable) = InputDevices.list(directory: devRoot + "/input")
        report.inputDevices = inputs.map(InputDevice.init)
        report.inputUnreadable = unreadable
        for section in screens { section(&report, devRoot) }
        report.cameraBackends = CameraBackends.devicesSections(CameraDevicesContext(source: source, mayOpenCameras: gphoto2Cameras)).map {
            DeviceReport.CameraBackendSection(backend: $0.backend.rawValue, lines: $0.lines,
                                              fields: $0.json.flatMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0)) })
        }
        do {
            report.printers = try CUPSConnection.destinations().map {
                Printer(name: $0.name, isDefault: $0.isDefault, deviceURI: $0.deviceURI)
            }
        } catch {
            report.printerError = error.description
        }
        return report
    }
}

/// One kind of screen's section of `devices`: fills its part of `report` from the machine under `devRoot`
/// (`/dev`; tests give a tree of their own).
public typealias DeviceSection = @Sendable (_ report: inout DeviceReport, _ devRoot: String) -> Void

extension DeviceReport {
    /// The built-in screen kinds' sections, for a listing made without BoothWiring's registry (photoboothctl's own).
    public static let builtInScreenSections: [DeviceSection] = [drmCardsSection]

    /// The KMS screens' section: every DRM card under `devRoot/dri` asked for its connectors (libdrm,
    /// ``KMSFramebuffer/probe(_:)``), into ``drmCards``.
    public static let drmCardsSection: DeviceSection = { report, devRoot in
        report.drmCards = KMSFramebuffer.cards(directory: devRoot + "/dri").map { path in
            do {
                let i = try KMSFramebuffer.probe(path)
                return DRMCard(path: path, driver: i.driver, connectors: i.connectors, connected: i.connected, connector: i.connector,
                               mode: i.mode.map { "\($0)@\(i.refreshHz ?? 0)" })
            } catch {
                return DRMCard(path: path, driver: "", connectors: 0, connected: 0, problem: "\(error)")
            }
        }
    }
}

extension DeviceReport.InputDevice {
    public init(_ d: InputDeviceInfo) {
        func hex(_ v: UInt16) -> String { let h = String(v, radix: 16); return String(repeating: "0", count: 4 - h.count) + h }
        self.init(path: d.path, name: d.name, byId: d.byID, kind: d.kind, keys: d.keys.prefix(40).map { InputKey.name(of: $0) },
                  keyCount: d.keys.count, usbID: "\(hex(d.vendor)):\(hex(d.product))")
    }
}

extension DeviceReport.Camera {
    public init(_ c: CameraInfo) {
        self.init(path: c.path, byId: c.byIdNames, card: c.card, driver: c.driver, busInfo: c.busInfo,
                  usable: c.isUsableCapture, problem: c.problem, formats: c.formats.map(DeviceReport.Format.init),
                  controls: c.controls.map(DeviceReport.Control.init))
    }
}

extension DeviceReport.Format {
    public init(_ f: FormatOffer) {
        func rates(_ size: FrameSize) -> [Double] {
            switch f.intervals[size] {
            case nil: return []
            case let .discrete(list)?: return list.map { ($0.framesPerSecond * 100).rounded() / 100 }
            case let .stepwise(lo, hi, _)?, let .continuous(lo, hi)?:
                return [(hi.framesPerSecond * 100).rounded() / 100, (lo.framesPerSecond * 100).rounded() / 100]
            }
        }
        var sizes: [DeviceReport.Size] = []
        var range: String?
        switch f.sizes {
        case let .discrete(list):
            sizes = list.map { DeviceReport.Size(width: $0.width, height: $0.height, framesPerSecond: rates($0)) }
        case let .stepwise(lo, hi, sw, sh):
            range = "\(lo) to \(hi) step \(sw)x\(sh)"
            sizes = [DeviceReport.Size(width: hi.width, height: hi.height, framesPerSecond: rates(hi))]
        case let .continuous(lo, hi):
            range = "\(lo) to \(hi)"
            sizes = [DeviceReport.Size(width: hi.width, height: hi.height, framesPerSecond: rates(hi))]
        }
        self.init(fourcc: DeviceReport.fourccText(f.fourcc), description: f.description, emulated: f.isEmulated,
                  sizes: sizes, sizeRange: range)
    }
}

extension DeviceReport.Control {
    public init(_ c: ControlInfo) {
        var menu: [String: String]?
        if !c.menu.isEmpty {
            menu = [:]
            for (k, v) in c.menu { menu?[String(k)] = v }
        }
        self.init(name: c.name, kind: c.kind.rawValue, minimum: c.minimum, maximum: c.maximum, step: c.step,
                  defaultValue: c.defaultValue, current: c.current, menu: menu)
    }
}

extension DeviceReport.GPIOChip {
    public init(_ c: GPIOChipInfo) {
        self.init(path: c.path, name: c.name, label: c.label,
                  lines: c.lines.map { DeviceReport.GPIOLine(offset: $0.offset, name: $0.name, consumer: $0.consumer, used: $0.used,
                                                             direction: $0.isOutput ? "output" : "input", activeLow: $0.activeLow) },
                  error: c.error.map { "\($0)" })
    }
}
