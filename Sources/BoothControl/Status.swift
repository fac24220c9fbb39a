import BoothClock
import BoothCore
import BoothPorts
import BoothRuntime
import BoothStorage
import FoundationEssentials
import Glibc

/// `status`: what the booth is doing and how its devices are, as figures.
public struct StatusReport: Codable, Sendable, Equatable {
    /// `idle`, `preview`, `countdown`, `capture`, `between-shots`, `composing`, `review`, `fault` or `stopped`.
    public var state: String
    /// The shot under way in a multi-shot session, `"2 of 4"`; nil outside one (and from older daemons).
    public var shot: String?
    /// In fault: the reasons by kind (`camera`, `button`, `storage`), each the operator-facing message.
    public var faults: [String: String]
    /// Why sessions are refused in idle (low free space), nil when they are not.
    public var refusal: String?
    /// Seconds since the daemon started.
    public var uptimeSeconds: Int
    /// When the daemon started, local `YYYY-MM-DD HH:MM:SS`.
    public var startedAt: String
    public var pid: Int32
    public var version: String
    /// The config file the daemon reads.
    public var configPath: String
    public var camera: CameraStatus
    public var button: ButtonStatus
    public var storage: StorageStatus
    /// Counts since this start.
    public var counters: CounterStatus
    /// Printing: mode, destination, health and its reasons, paper, held and outstanding requests.
    public var printer: PrinterStatus?
    /// Totals across restarts (`stats`).
    public var stats: BoothStats
    /// The rotations in use and where they come from (nil from a daemon without them).
    public var orientation: OrientationReport?
    /// The settings in force and how the config file on disk differs from them (nil from an older daemon).
    public var settings: SettingsReport? = nil
    /// The gallery: its settings and index (nil from an older daemon).
    public var gallery: GalleryStatus? = nil

    /// The settings the running booth uses, read from its components (the machine's timings, the
    /// orientation, the screens, the photo store; the rest as the last reload applied them), and the
    /// config file on disk (with the daemon's command-line overrides) compared with them.
    public struct SettingsReport: Codable, Sendable, Equatable {
        /// Every key → its value in force, as written in a config file.
        public var inForce: [String: String]
        /// True when the file on disk asks for other values than those in force (a reload, or for
        /// some keys a restart, would change them); nil when the file could not be read or is invalid.
        public var fileDiffers: Bool?
        /// The keys that differ, in schema order: `from` in force, `to` in the file, and how a reload
        /// would apply each (`effect`, ``ReloadRule/effect``).
        public var differences: [ReloadReply.Change]
        /// Why the file could not be compared (unreadable or invalid); nil when it was.
        public var fileProblem: String?
        /// The keys photoboothd's command line sets (`--set`, `--simulate`'s working-directory paths), which win
        /// over the file, in schema order; nil from an older daemon.
        public var commandLine: [CommandLineKey]? = nil
    }

    /// A key photoboothd's command line sets: its value in force, and the file's own value where that differs.
    public struct CommandLineKey: Codable, Sendable, Equatable {
        /// Full `section.key`.
        public var key: String
        /// The value in force (the command line's), as written in a config file.
        public var value: String
        /// The value the file sets (or its default, when the file does not set it) when it differs from `value`;
        /// nil when they agree or the file could not be read.
        public var file: String?
    }

    /// `camera.rotation` and `display.rotation` as resolved.
    public struct OrientationReport: Codable, Sendable, Equatable {
        /// Degrees clockwise: 0, 90, 180 or 270.
        public var camera: Int
        public var display: Int
        /// `fixed`, `accelerometer`, or `fallback: …` (why).
        public var source: String
        /// The IIO accelerometer in use (`name (sysfs dir)`), nil without one.
        public var accelerometer: String?
        /// The last sample in m/s², x y z after the mount matrix.
        public var gravity: [Double]?

        init(_ s: OrientationStatus) {
            camera = s.camera.rawValue
            display = s.display.rawValue
            source = s.source
            accelerometer = s.accelerometer
            gravity = s.lastSample.map { [$0.x, $0.y, $0.z].map { ($0 * 100).rounded() / 100 } }
        }
    }
    /// Whether the wall clock is NTP-synchronised (``ClockSync``), read when the report is made; nil when unknown.
    /// Dates (folder names, `startedAt`) may be wrong while false.
    public var clockSynchronized: Bool?
    /// What is wrong with the clock and how to set it when it is not synchronised
    /// (``ClockSync/warning(synchronized:)``); nil when it is, or that is unknown.
    public var clockWarning: String? = nil

    /// The clock's row of `status`'s text: `synchronised`, what is wrong and how to set it, or unknown.
    public var clockLine: String {
        switch clockSynchronized {
        case true?: "synchronised"
        case false?: clockWarning ?? ClockSync.warning(synchronized: false) ?? "not synchronised"
        case nil: "synchronisation unknown (adjtimex not readable)"
        }
    }

    /// The camera worker's figures.
    public struct CameraStatus: Codable, Sendable, Equatable {
        /// The `camera.device` setting (`auto` when empty).
        public var configured: String
        /// The node streaming (or last streamed), e.g. `/dev/video0`; nil before the first start.
        public var device: String?
        /// `VIDIOC_QUERYCAP` card name, e.g. `HD Pro Webcam C920`.
        public var card: String?
        public var streaming: Bool
        /// Fourcc, e.g. `MJPG`.
        public var format: String?
        /// Pixels.
        public var width: Int?
        public var height: Int?
        /// The frame rate set with `VIDIOC_S_PARM` (frames per second).
        public var framesPerSecond: Double?
        /// Frames per second measured over the stream.
        public var measuredFramesPerSecond: Double?
        /// Frames delivered by the stream running now (or last), since its start.
        public var framesDelivered: Int
        /// Bad frames dropped on arrival since the daemon started (empty, driver-flagged, truncated,
        /// garbage, stale): the sum of `framesDroppedByKind`. Never saved, printed or shown.
        public var framesDropped: Int
        /// `framesDropped` by kind: `empty`, `driver-error`, `oversize`, `no-soi`, `no-eoi`,
        /// `short`, `stale` (``FrameDefect``); kinds not seen are left out. Nil from an older daemon.
        public var framesDroppedByKind: [String: Int]? = nil
        /// Frames the driver never handed over (gaps in the buffer sequence numbers: the booth fell
        /// behind), since the daemon started. Nil from an older daemon.
        public var framesLost: Int? = nil
        /// Frames that passed the arrival check but did not decode at capture (the next good frame
        /// was taken), since the daemon started.
        public var badFrames: Int
        /// The last camera error, nil when the last start worked.
        public var lastError: String?
        /// Warnings from the stream's start: a size, format or frame rate the camera does not offer
        /// (`camera.capture_size` included: the size captures will have), a control that failed.
        /// Nil from an older daemon.
        public var warnings: [String]? = nil
        /// The camera's battery level in percent (0…100), as last read (a gphoto2 body: at its open, every 30 s
        /// and before each still); nil for a camera that reports none (a webcam) and from an older daemon.
        public var batteryPercent: Int? = nil
    }

    /// The button's figures.
    public struct ButtonStatus: Codable, Sendable, Equatable {
        /// The device, e.g. `gpiochip0 line 17 (GPIO17) (bias pull-up, active-low true)` or `keyboard …`.
        public var device: String
        /// `button.chip` and `button.line` as configured.
        public var chip: String
        public var line: String
        /// False when the line could not be requested or failed, or the device ended (see `ended`).
        public var running: Bool
        /// Why the button delivers no more presses although nothing failed, e.g. `"input ended"` for the
        /// keyboard (`--simulate`) after end of its input; nil otherwise.
        public var ended: String?
        /// The last press (from the button or `photoboothctl press`), local time; nil when none since start.
        public var lastPress: String?
        /// Seconds since the last press.
        public var secondsSinceLastPress: Double?
    }

    /// The photos directory.
    public struct StorageStatus: Codable, Sendable, Equatable {
        public var dir: String
        /// Bytes available to the daemon (`statvfs`: `f_bavail * f_frsize`); nil when it cannot be read.
        public var freeBytes: UInt64?
        /// `storage.min_free`, bytes.
        public var minFreeBytes: Int
        /// The number the next session gets.
        public var nextSession: Int
        /// Captures saved since start.
        public var savedSinceStart: Int
        /// What a power cut can do on the photos' file system (vfat, exFAT: no journal), and temp files kept
        /// after one because they share a photo's data; absent when there is nothing to say (ext4).
        public var powerCutNotes: [String]?
    }

    /// Counts since this start: the runtime's ``BoothCounters`` (the same six fields, one type).
    public typealias CounterStatus = BoothCounters
}

extension BoothRuntime {
    /// The `status` figures now, from ``BoothRuntime/statusSnapshot()`` and the config file on disk
    /// (``BoothRuntime/configFileSettings()``, read each call). Thread-safe.
    /// - Parameters:
    ///   - configPath: the config file the daemon reads.
    ///   - commandLineKeys: the keys its command line sets (``DaemonInfo/overriddenKeys``).
    ///   - clockSynchronized: whether the system clock is synchronised (``ClockSync/isSynchronized()``:
    ///     `adjtimex`, read now; a seam for tests).
    public func statusReport(configPath: String, commandLineKeys: [String] = [],
                             clockSynchronized: Bool? = ClockSync.isSynchronized()) -> StatusReport {
        let s = statusSnapshot()
        var faults: [String: String] = [:]
        if case let .fault(reasons) = s.state {
            for (kind, message) in reasons { faults[kind.rawValue] = message }
        }
        let cam = s.camera
        let pressAge = s.secondsSinceLastPress
        return StatusReport(
            state: s.state.name, shot: s.shot > 0 && s.shots > 1 ? "\(s.shot) of \(s.shots)" : nil,
            faults: faults, refusal: s.storageRefusal,
            uptimeSeconds: Int(s.uptimeSeconds), startedAt: StatsStore.dateText(s.startedEpoch),
            pid: getpid(), version: photoboothVersion, configPath: configPath,
            camera: .init(configured: s.settings.camera.device.isEmpty ? "auto" : s.settings.camera.device,
                          device: cam.devicePath, card: cam.card, streaming: cam.streaming,
                          format: cam.format, width: cam.size?.width, height: cam.size?.height,
                          framesPerSecond: cam.framesPerSecond,
                          measuredFramesPerSecond: cam.measuredFramesPerSecond,
                          framesDelivered: cam.framesDelivered,
                          framesDropped: cam.framesDropped,
                          framesDroppedByKind: cam.droppedByKind,
                          framesLost: cam.framesLost,
                          badFrames: cam.badFrames, lastError: cam.lastError, warnings: cam.warnings,
                          batteryPercent: cam.batteryPercent),
            button: .init(device: s.buttonIdentity ?? "none", chip: s.settings.button.chip, line: s.settings.button.line,
                          running: s.buttonRunning, ended: s.buttonEnded,
                          lastPress: pressAge.map { StatsStore.dateText(Int(time(nil)) - Int($0.rounded())) },
                          secondsSinceLastPress: pressAge.map { ($0 * 10).rounded() / 10 }),
            storage: .init(dir: s.storageDirectory, freeBytes: s.freeBytes,
                           minFreeBytes: s.settings.storage.minFreeBytes, nextSession: s.nextSession,
                           savedSinceStart: s.savedSinceStart, powerCutNotes: s.powerCutNotes.isEmpty ? nil : s.powerCutNotes),
            counters: s.counters, printer: s.printer, stats: s.stats,
            orientation: .init(s.orientation),
            settings: settingsReport(inForce: s.settingsInForce, configPath: configPath, commandLineKeys: commandLineKeys),
            clockSynchronized: clockSynchronized, clockWarning: ClockSync.warning(synchronized: clockSynchronized))
    }

    /// ``StatusReport/SettingsReport``: the settings in force and the file on disk compared with them, and the
    /// keys the command line sets with the file's own values for them (the file read without the overrides).
    func settingsReport(inForce: Settings, configPath: String, commandLineKeys: [String]) -> StatusReport.SettingsReport {
        var values: [String: String] = [:]
        for spec in Schema.settings { values[spec.key] = spec.text(in: inForce) }
        let fileAlone = commandLineKeys.isEmpty ? nil : try? loadSettings(path: configPath, required: false, overrides: []).settings
        let commandLine = Schema.settings.filter { commandLineKeys.contains($0.key) }.map { spec in
            let value = spec.text(in: inForce), file = fileAlone.map(spec.text(in:))
            return StatusReport.CommandLineKey(key: spec.key, value: value, file: file == value ? nil : file)
        }
        var report: StatusReport.SettingsReport
        switch configFileSettings() {
        case let .success(file):
            let differences = inForce.changes(to: file).map { ReloadReply.Change($0, applied: true) }
            report = .init(inForce: values, fileDiffers: !differences.isEmpty, differences: differences, fileProblem: nil)
        case let .failure(error):
            report = .init(inForce: values, fileDiffers: nil, differences: [], fileProblem: error.description)
        }
        report.commandLine = commandLine
        return report
    }

    /// The control socket's handler: answers each command, posting to the main loop what needs it
    /// (press, reload) and reading thread-safe snapshots for the rest.
    /// - Parameters:
    ///   - info: the `hello` reply.
    ///   - devices: lists the machine's devices for `devices` (photoboothd passes BoothDeviceListing's
    ///     ``DeviceReport`` gathering), called on the connection's thread; the handler adds what the
    ///     daemon uses (`inUse`).
    ///   - jpegSize: the pixel size of the snapshot's JPEG (its header), nil when it cannot be read
    ///     (the reply then says 0×0).
    ///   - gallery: `gallery` and the gallery row of `status` (BoothIndex's GalleryAdmin); nil: the
    ///     `gallery` command answers `unavailable`.
    public func controlHandler(info: DaemonInfo, devices: @escaping @Sendable (_ source: String) -> DeviceReport,
                               jpegSize: @escaping @Sendable ([UInt8]) -> FrameSize?, gallery: (any GalleryAdministration)? = nil)
        -> @Sendable (ControlRequest, PeerCredentials) -> [UInt8] {
        { [self] request, peer in
            func fail(_ code: String, _ message: String) -> [UInt8] {
                ControlReply<NoResult>(error: ControlFailure(code: code, message: message)).line()
            }
            guard let command = ControlProtocol.Command(rawValue: request.command) else {
                return fail("unknown-command", "unknown command '\(request.command)'")
            }
            switch command {
            case .hello:
                var reply = info
                reply.stopping = isStopping
                return ControlReply(result: reply).line()
            case .status:
                var report = statusReport(configPath: info.configPath, commandLineKeys: info.overriddenKeys ?? [])
                report.gallery = gallery?.status
                return ControlReply(result: report).line()
            case .devices:
                let status = cameraStatus
                let o = orientationStatus
                let inUse = DeviceReport.InUse(camera: status.devicePath.map { "\($0) (\(status.card ?? ""))" },
                                               button: buttonIdentity,
                                               accelerometer: o.accelerometer,
                                               rotation: "camera \(o.camera.rawValue), display \(o.display.rawValue) (\(o.source))",
                                               cameraBatteryPercent: status.batteryPercent)
                var report = devices("photoboothd (pid \(getpid()))")
                report.inUse = inUse
                return ControlReply(result: report).line()
            case .press:
                log.notice("control: press from uid \(peer.uid) (pid \(peer.pid))")
                let o = pressWithOutcome()
                return ControlReply(result: PressReply(stateBefore: o.stateBefore, stateAfter: o.stateAfter,
                                                       ignored: o.ignored)).line()
            case .snapshot:
                guard let jpeg = snapshotJPEG() else {
                    let now = currentState
                    let why = if case .fault = now { "the camera is stopped while the booth is in fault" }
                              else { "no camera frame within 5 s" }
                    return fail("unavailable", "\(why) (state \(now.name)"
                                + (cameraStatus.lastError.map { "; last camera error: \($0)" } ?? "") + ")")
                }
                let size = jpegSize(jpeg) ?? FrameSize(width: 0, height: 0)
                return ControlReply(result: SnapshotReply(jpegBase64: Data(jpeg).base64EncodedString(),
                                                          width: size.width, height: size.height)).line()
            case .reload:
                log.notice("control: reload from uid \(peer.uid) (pid \(peer.pid))")
                // Well within the client's 10 s wait for the reply.
                switch requestReload(timeoutSeconds: 5) {
                case let .accepted(reply):
                    return ControlReply(result: reply).line()
                case let .refused(error):
                    return fail("reload-refused", "reload refused, the running settings stay:\n\(error)")
                }
            case .testPrint, .refill, .prints:
                return printCommand(command, request, peer)
            case .gallery:
                guard let gallery else { return fail("unavailable", "this daemon has no gallery") }
                switch gallery.answer(action: request.action ?? "status", picture: request.picture, deleteFile: request.deleteFile ?? false,
                                      uid: peer.uid) {
                case let .success(answer): return ControlReply(result: answer).line()
                case let .failure(f): return fail(f.code, f.message)
                }
            case .stats:
                if request.reset == true {
                    log.notice("control: stats reset by uid \(peer.uid)")
                    stats.reset()
                }
                return ControlReply(result: stats.current).line()
            }
        }
    }
}

/// `devices`: the cameras and GPIO chips of the machine.
public struct DeviceReport: Codable, Sendable, Equatable {
    /// Who listed them: `photoboothd (pid N)` or `photoboothctl`.
    public var source: String
    public var cameras: [Camera]
    public var gpioChips: [GPIOChip]
    /// Why the GPIO chips could not be listed at all (e.g. /dev unreadable).
    public var gpioError: String?
    /// What the daemon uses, when the daemon listed them.
    public var inUse: InUse?
    /// The CUPS destinations (nil when CUPS was not asked or did not answer).
    public var printers: [Printer]? = nil
    /// Why CUPS could not be asked.
    public var printerError: String? = nil
    /// The kernel's input devices (`/dev/input/event*`, libevdev): buttons for `button.source = input`.
    public var inputDevices: [InputDevice] = []
    /// Event nodes that could not be opened (permission: the input group).
    public var inputUnreadable: [String] = []
    /// The DRM cards (`/dev/dri/card*`, libdrm): screens for `display.device`.
    public var drmCards: [DRMCard] = []
    /// Each camera backend's section (libgphoto2's, libcamera's, a test's; none for V4L2, whose nodes are
    /// `cameras`), in the backends' order: the lines `devices` prints and the backend's own data.
    public var cameraBackends: [CameraBackendSection] = []
    /// The sections of screen kinds beyond the built-in ones (BoothWiring's `ScreenKind.devices`); nil: none.
    public var screens: [ScreenSection]? = nil

    /// A camera backend's section of `devices`, as the backend made it (BoothCamera's `CameraBackendDescriptor`).
    public struct CameraBackendSection: Codable, Sendable, Equatable {
        /// The backend's `camera.backend` name: `gphoto2`, `libcamera`.
        public var backend: String
        /// What `photoboothctl devices` prints of it, heading first.
        public var lines: [String]
        /// The backend's data for `devices --json` (e.g. libcamera's `libcameraCameras`, `libcameraVersion`); nil for none.
        public var fields: JSONValue?

        public init(backend: String, lines: [String], fields: JSONValue? = nil) {
            self.backend = backend
            self.lines = lines
            self.fields = fields
        }
    }

    /// A screen kind's own section of `devices`: its title (`screens (test)`) and one line per screen it found.
    public struct ScreenSection: Codable, Sendable, Equatable {
        /// The kind's name (`ScreenKind.name`).
        public var kind: String
        public var title: String
        public var entries: [String]

        /// Each field as described above.
        public init(kind: String, title: String, entries: [String]) {
            self.kind = kind
            self.title = title
            self.entries = entries
        }
    }

    /// A DRM card.
    public struct DRMCard: Codable, Sendable, Equatable {
        public var path: String
        /// The kernel driver: `vc4`, `bochs-drm`; empty when it could not be asked.
        public var driver: String
        public var connectors: Int
        public var connected: Int
        /// The first connected connector (`HDMI-A-1`) and its preferred mode (`1920x1080@60`); nil when none.
        public var connector: String?
        public var mode: String?
        /// Why it could not be asked (not a KMS device, permission).
        public var problem: String?

        /// Each field as described above.
        public init(path: String, driver: String, connectors: Int, connected: Int, connector: String? = nil, mode: String? = nil,
                    problem: String? = nil) {
            self.path = path
            self.driver = driver
            self.connectors = connectors
            self.connected = connected
            self.connector = connector
            self.mode = mode
            self.problem = problem
        }
    }

    /// An input device.
    public struct InputDevice: Codable, Sendable, Equatable {
        /// `/dev/input/event3`.
        public var path: String
        /// The kernel's name for it (`button.input_device` may name it so).
        public var name: String
        /// Names under /dev/input/by-id linking to it.
        public var byId: [String]
        /// `keyboard`, `touch screen`, `keys` (no auto-repeat) or `no keys`.
        public var kind: String
        /// The `EV_KEY` names it reports (`KEY_SPACE`, `BTN_LEFT`), at most 40; `keyCount` says how many in all.
        public var keys: [String]
        public var keyCount: Int
        /// USB (or other bus) vendor and product ids, `046d:c52b`.
        public var usbID: String

        /// Each field as described above.
        public init(path: String, name: String, byId: [String], kind: String, keys: [String], keyCount: Int, usbID: String) {
            self.path = path
            self.name = name
            self.byId = byId
            self.kind = kind
            self.keys = keys
            self.keyCount = keyCount
            self.usbID = usbID
        }
    }

    /// A CUPS destination.
    public struct Printer: Codable, Sendable, Equatable {
        /// The queue name (`print.destination`).
        public var name: String
        /// The CUPS default destination.
        public var isDefault: Bool
        /// Where the queue sends jobs, e.g. `ipp://printer.local/ipp/print`.
        public var deviceURI: String?

        /// Each field as described above.
        public init(name: String, isDefault: Bool, deviceURI: String? = nil) {
            self.name = name
            self.isDefault = isDefault
            self.deviceURI = deviceURI
        }
    }

    /// The daemon's devices.
    public struct InUse: Codable, Sendable, Equatable {
        public var camera: String?
        public var button: String?
        /// The IIO accelerometer for auto rotation, nil without one.
        public var accelerometer: String? = nil
        /// `"camera 90, display 0 (accelerometer)"`.
        public var rotation: String? = nil
        /// The battery level of the camera in use (%), as the camera thread last read it; nil for a camera that
        /// reports none and from an older daemon.
        public var cameraBatteryPercent: Int? = nil

        /// Each field as described above.
        public init(camera: String? = nil, button: String? = nil, accelerometer: String? = nil,
                    rotation: String? = nil, cameraBatteryPercent: Int? = nil) {
            self.cameraBatteryPercent = cameraBatteryPercent
            self.camera = camera
            self.button = button
            self.accelerometer = accelerometer
            self.rotation = rotation
        }
    }

    /// A video node.
    public struct Camera: Codable, Sendable, Equatable {
        public var path: String
        /// Names under /dev/v4l/by-id linking to it.
        public var byId: [String]
        public var card: String
        public var driver: String
        public var busInfo: String
        /// Captures video and streams (a camera the booth can use).
        public var usable: Bool
        /// Why it could not be queried.
        public var problem: String?
        public var formats: [Format]
        public var controls: [Control]

        /// Each field as described above.
        public init(path: String, byId: [String], card: String, driver: String, busInfo: String, usable: Bool,
                    problem: String? = nil, formats: [Format], controls: [Control]) {
            self.path = path
            self.byId = byId
            self.card = card
            self.driver = driver
            self.busInfo = busInfo
            self.usable = usable
            self.problem = problem
            self.formats = formats
            self.controls = controls
        }
    }

    /// A pixel format and its sizes.
    public struct Format: Codable, Sendable, Equatable {
        /// Fourcc, e.g. `MJPG`.
        public var fourcc: String
        public var description: String
        /// Converted by libv4l2 in software.
        public var emulated: Bool
        /// Discrete sizes with their frame rates; empty for a range.
        public var sizes: [Size]
        /// A stepwise or continuous range, e.g. `48x32 to 1920x1080 step 2x2`; nil for discrete sizes.
        public var sizeRange: String?

        /// Each field as described above.
        public init(fourcc: String, description: String, emulated: Bool, sizes: [Size], sizeRange: String? = nil) {
            self.fourcc = fourcc
            self.description = description
            self.emulated = emulated
            self.sizes = sizes
            self.sizeRange = sizeRange
        }
    }

    /// One size and its frame rates (frames per second; for a range of intervals, its ends).
    public struct Size: Codable, Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var framesPerSecond: [Double]

        /// Each field as described above.
        public init(width: Int, height: Int, framesPerSecond: [Double]) {
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
        }
    }

    /// A V4L2 control.
    public struct Control: Codable, Sendable, Equatable {
        public var name: String
        public var kind: String
        public var minimum: Int32
        public var maximum: Int32
        public var step: Int32
        public var defaultValue: Int32
        public var current: Int32?
        /// Menu items by value.
        public var menu: [String: String]?

        /// Each field as described above.
        public init(name: String, kind: String, minimum: Int32, maximum: Int32, step: Int32, defaultValue: Int32,
                    current: Int32? = nil, menu: [String: String]? = nil) {
            self.name = name
            self.kind = kind
            self.minimum = minimum
            self.maximum = maximum
            self.step = step
            self.defaultValue = defaultValue
            self.current = current
            self.menu = menu
        }
    }

    /// A GPIO chip.
    public struct GPIOChip: Codable, Sendable, Equatable {
        public var path: String
        public var name: String
        public var label: String
        public var lines: [GPIOLine]
        public var error: String?

        /// Each field as described above.
        public init(path: String, name: String, label: String, lines: [GPIOLine], error: String? = nil) {
            self.path = path
            self.name = name
            self.label = label
            self.lines = lines
            self.error = error
        }
    }

    /// A GPIO line.
    public struct GPIOLine: Codable, Sendable, Equatable {
        public var offset: UInt32
        public var name: String
        public var consumer: String
        public var used: Bool
        /// `input` or `output`.
        public var direction: String
        public var activeLow: Bool

        /// Each field as described above.
        public init(offset: UInt32, name: String, consumer: String, used: Bool, direction: String, activeLow: Bool) {
            self.offset = offset
            self.name = name
            self.consumer = consumer
            self.used = used
            self.direction = direction
            self.activeLow = activeLow
        }
    }

    // The builders that read the devices (cameras, GPIO chips, CUPS destinations) are BoothDeviceListing's.

    /// Each field as described above.
    public init(source: String, cameras: [Camera], gpioChips: [GPIOChip], gpioError: String? = nil,
                inUse: InUse? = nil, printers: [Printer]? = nil, printerError: String? = nil) {
        self.source = source
        self.cameras = cameras
        self.gpioChips = gpioChips
        self.gpioError = gpioError
        self.inUse = inUse
        self.printers = printers
        self.printerError = printerError
    }
}

extension DeviceReport {
    /// A fourcc code as its four characters (`MJPG`); unprintable bytes as `?` (``PixelFormat/string(fromFourcc:)``,
    /// the one formatter).
    public static func fourccText(_ code: UInt32) -> String { PixelFormat.string(fromFourcc: code) }
}
