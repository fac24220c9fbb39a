import BoothCamera
import BoothClock
import BoothCore
import BoothPorts
import BoothPrint
import BoothStorage
import BoothDisplay
import BoothGPIO
import BoothJPEG
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

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

        init(_ s: OrientationTracker.Status) {
            camera = s.camera.rawValue
            display = s.display.rawValue
            source = s.source
            accelerometer = s.accelerometer
            gravity = s.lastSample.map { [$0.x, $0.y, $0.z].map { ($0 * 100).rounded() / 100 } }
        }
    }
    /// Whether the wall clock is NTP-synchronised (``ClockSync``), read when the report is made; nil when unknown.
    /// Dates (folder names, `startedAt`) may be wrong while false.
    public var clockSynchronized: Bool? = ClockSync.isSynchronized()

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
    }

    /// Counts since this start: the runtime's ``BoothCounters`` (the same six fields, one type).
    public typealias CounterStatus = BoothCounters
}

/// What the runtime keeps for the admin tool: start time, last press, the persisted totals.
public final class RuntimeAdmin: Sendable {
    /// Monotonic and wall-clock time at start.
    let startedMonotonic: MonotonicInstant
    let startedEpoch: Int
    private let lastPress = Mutex<MonotonicInstant?>(nil)
    private let nextPressID = Mutex<UInt64>(1 << 61)
    /// The totals across restarts, in `<storage.dir>/.photobooth-stats.json` (the storage port's ``StatsRecording``).
    public let stats: any StatsRecording
    private let clock: any MonotonicClock

    init(clock: any MonotonicClock, stats: any StatsRecording) {
        self.clock = clock
        startedMonotonic = clock.now()
        startedEpoch = Int(time(nil))
        self.stats = stats
    }

    func notePress(at: MonotonicInstant) { lastPress.withLock { $0 = at } }
    var lastPressAt: MonotonicInstant? { lastPress.withLock { $0 } }
    /// Ids for presses from the control socket, apart from the button's and auto-press's.
    func takePressID() -> UInt64 { nextPressID.withLock { n in defer { n += 1 }; return n } }
    /// Whether `id` is one of the control socket's press ids (``takePressID()``).
    static func isControlPress(_ id: UInt64) -> Bool { id >= 1 << 61 }

    /// What the machine did with a control-socket press: the states around it and, when it ignored or
    /// refused it, the log line that says so (`press ignored in review`).
    struct PressOutcome: Sendable, Equatable {
        var before: String
        var after: String
        var ignoredOrRefused: String?
    }
    private let pressOutcomes = Mutex<[UInt64: PressOutcome]>([:])
    /// Noted by the main loop after the machine handled control press `id` (the newest 16 are kept).
    func notePressOutcome(_ id: UInt64, _ outcome: PressOutcome) {
        pressOutcomes.withLock { o in
            o[id] = outcome
            if o.count > 16, let oldest = o.keys.min() { o[oldest] = nil }
        }
    }
    /// The outcome of control press `id`, once the main loop handled it (and forgets it); nil before.
    func takePressOutcome(_ id: UInt64) -> PressOutcome? { pressOutcomes.withLock { $0.removeValue(forKey: id) } }
}

/// How a reload request went.
public enum ReloadOutcome: Sendable, Equatable {
    /// Accepted: what changed and how each key took effect (at once in idle or fault, or when the
    /// session under way ends).
    case accepted(ReloadReply)
    /// The file (or an override) is invalid; the running settings stay. Every problem is listed.
    case refused(SettingsError)
}

extension BoothRuntime {
    /// The `status` figures now. Thread-safe (reads the loop's state under its lock).
    /// - Parameter configPath: the config file the daemon reads.
    public func statusReport(configPath: String) -> StatusReport {
        let (machineState, refusal, counters, settings, button, buttonRunning) = state.withLock { s in
            (s.machine.state, s.machine.storageRefusal, s.counters, s.settings, s.button, s.buttonRunning)
        }
        let (shot, shots) = state.withLock { ($0.machine.shot, $0.machine.shots) }
        var faults: [String: String] = [:]
        if case let .fault(reasons) = machineState {
            for (kind, message) in reasons { faults[kind.rawValue] = message }
        }
        let now = clock.now()
        let uptime = now.milliseconds(since: admin.startedMonotonic) / 1000
        let cam = camera.status
        let pressAge = admin.lastPressAt.map { now.milliseconds(since: $0) / 1000 }
        return StatusReport(
            state: machineState.name, shot: shot > 0 && shots > 1 ? "\(shot) of \(shots)" : nil,
            faults: faults, refusal: refusal,
            uptimeSeconds: Int(uptime), startedAt: StatsStore.dateText(admin.startedEpoch),
            pid: getpid(), version: photoboothVersion, configPath: configPath,
            camera: .init(configured: settings.camera.device.isEmpty ? "auto" : settings.camera.device,
                          device: cam.devicePath, card: cam.card, streaming: cam.streaming,
                          format: cam.format, width: cam.size?.width, height: cam.size?.height,
                          framesPerSecond: cam.framesPerSecond,
                          measuredFramesPerSecond: cam.measuredFramesPerSecond,
                          framesDelivered: cam.framesDelivered,
                          framesDropped: cam.framesDropped,
                          framesDroppedByKind: cam.droppedByKind,
                          framesLost: cam.framesLost,
                          badFrames: cam.badFrames, lastError: cam.lastError, warnings: cam.warnings),
            button: .init(device: button?.identity ?? "none", chip: settings.button.chip, line: settings.button.line,
                          running: buttonRunning && (button?.isRunning ?? false) && button?.ended == nil,
                          ended: button?.ended,
                          lastPress: pressAge.map { StatsStore.dateText(Int(time(nil)) - Int($0.rounded())) },
                          secondsSinceLastPress: pressAge.map { ($0 * 10).rounded() / 10 }),
            storage: .init(dir: store.directory, freeBytes: try? store.freeBytes(),
                           minFreeBytes: settings.storage.minFreeBytes, nextSession: store.nextSession,
                           savedSinceStart: storage.saved),
            counters: counters, printer: printer.status(), stats: admin.stats.current,
            orientation: .init(orientation.status), settings: settingsReport())
    }

    /// The settings in force, read where the running components keep them: the machine's timings
    /// (`session.*`, `camera.capture_timeout`, `camera.idle_stop`, `print.mode`), the orientation
    /// tracker's rotations, the screens' `display.*`, `preview.*` and `text.*`, the photo store's
    /// directory, the print worker's destination; every other key as the last reload applied it (a
    /// restart-only key keeps its start value).
    public func settingsInForce() -> Settings {
        var s = state.withLock { $0.settings }
        let c = state.withLock { $0.machine.config }
        s.session.previewMilliseconds = c.previewMilliseconds
        s.session.previewTimeoutMilliseconds = c.previewTimeoutMilliseconds
        s.session.countdownMilliseconds = c.countdownSeconds * 1000
        s.session.reviewMilliseconds = c.reviewMilliseconds
        s.session.shots = c.shots
        s.session.betweenShotsMilliseconds = c.betweenShotsMilliseconds
        s.session.cancelledCaptures = c.cancelledCaptures
        s.camera.captureTimeoutMilliseconds = c.captureTimeoutMilliseconds
        s.camera.idleStopMilliseconds = c.idleStopMilliseconds
        s.print.mode = c.printMode
        let shown = screens.settings
        s.display = shown.display
        s.preview = shown.preview
        s.text = shown.text
        let turns = orientation.settingsInUse
        s.camera.rotation = turns.camera
        s.display.rotation = turns.display
        s.storage.dir = store.directory
        s.print.destination = printer.status().destination
        return s
    }

    /// ``StatusReport/SettingsReport``: the settings in force and the file on disk compared with them
    /// (read with ``RuntimeOptions/configReader``, else the reloader).
    func settingsReport() -> StatusReport.SettingsReport {
        let inForce = settingsInForce()
        var values: [String: String] = [:]
        for spec in Schema.settings { values[spec.key] = spec.text(in: inForce) }
        switch (options.configReader ?? reloader)() {
        case let .success(file):
            let differences = inForce.changes(to: file).map { ReloadReply.Change($0, applied: true) }
            return .init(inForce: values, fileDiffers: !differences.isEmpty, differences: differences, fileProblem: nil)
        case let .failure(error):
            return .init(inForce: values, fileDiffers: nil, differences: [], fileProblem: error.description)
        }
    }

    /// Presses the button, as the control socket does: a `.press` event for the main loop, stamped now.
    /// - Returns: the state when the press was posted.
    @discardableResult
    public func press() -> String { pressWithOutcome().stateBefore }

    /// Presses as the button would and waits (up to `timeoutSeconds`, on the monotonic clock) for the main
    /// loop to handle it, so the reply says what the press did: the state it led to, or why it was
    /// ignored or refused. `stateAfter` is nil when the loop did not handle it in time.
    public func pressWithOutcome(timeoutSeconds: Double = 2) -> PressReply {
        let id = admin.takePressID()
        let before = currentState.name
        loop.post(.press(id: id, at: clock.now()))
        let deadline = DispatchTime.now() + timeoutSeconds
        while DispatchTime.now() < deadline {
            if let o = admin.takePressOutcome(id) {
                return PressReply(stateBefore: o.before, stateAfter: o.after, ignored: o.ignoredOrRefused)
            }
            usleep(10_000)
        }
        return PressReply(stateBefore: before, stateAfter: nil, ignored: nil)
    }

    /// The newest camera frame as JPEG, waiting up to `timeoutSeconds` for it; nil when none came (in
    /// fault, or a camera that does not deliver). In idle the stream is started for it when
    /// `camera.idle_stop` had stopped it, and the idle stop counts again from now (``BoothEvent/liveViewWanted``).
    public func snapshotJPEG(timeoutSeconds: Double = 5) -> [UInt8]? {
        loop.post(.liveViewWanted)
        let deadline = DispatchTime.now() + timeoutSeconds   // DispatchTime: CLOCK_MONOTONIC, not the wall clock
        while true {
            let box = Mutex<[UInt8]?>(nil)
            let done = DispatchSemaphore(value: 0)
            let quality = state.withLock { $0.settings.storage.jpegQuality }
            camera.snapshot(rotation: orientation.camera, jpegQuality: quality) { bytes in
                box.withLock { $0 = bytes }
                done.signal()
            }
            guard done.wait(timeout: deadline) == .success else { return nil }
            if let jpeg = box.withLock({ $0 }) { return jpeg }
            // No frame yet: the stream is starting (or stopped for a fault, which no wait mends).
            if case .fault = currentState { return nil }
            guard DispatchTime.now() < deadline else { return nil }
            usleep(50_000)
        }
    }

    /// The control socket's handler: answers each command, posting to the main loop what needs it
    /// (press, reload) and reading thread-safe snapshots for the rest.
    public func controlHandler(info: DaemonInfo) -> @Sendable (ControlRequest, PeerCredentials) -> [UInt8] {
        { [self] request, peer in
            func fail(_ code: String, _ message: String) -> [UInt8] {
                ControlReply<NoResult>(error: ControlFailure(code: code, message: message)).line()
            }
            guard let command = ControlProtocol.Command(rawValue: request.command) else {
                return fail("unknown-command", "unknown command '\(request.command)'")
            }
            switch command {
            case .hello:
                return ControlReply(result: info).line()
            case .status:
                return ControlReply(result: statusReport(configPath: info.configPath)).line()
            case .devices:
                let status = camera.status
                let o = orientation.status
                let inUse = DeviceReport.InUse(camera: status.devicePath.map { "\($0) (\(status.card ?? ""))" },
                                               button: state.withLock { $0.button?.identity },
                                               accelerometer: o.accelerometer,
                                               rotation: "camera \(o.camera.rawValue), display \(o.display.rawValue) (\(o.source))")
                return ControlReply(result: DeviceReport.gather(source: "photoboothd (pid \(getpid()))", inUse: inUse)).line()
            case .press:
                log.notice("control: press from uid \(peer.uid) (pid \(peer.pid))")
                return ControlReply(result: pressWithOutcome()).line()
            case .snapshot:
                guard let jpeg = snapshotJPEG() else {
                    let now = currentState
                    let why = if case .fault = now { "the camera is stopped while the booth is in fault" }
                              else { "no camera frame within 5 s" }
                    return fail("unavailable", "\(why) (state \(now.name)"
                                + (camera.status.lastError.map { "; last camera error: \($0)" } ?? "") + ")")
                }
                let size = (try? JPEGDecoder().header(jpeg).size) ?? FrameSize(width: 0, height: 0)
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
            case .stats:
                if request.reset == true {
                    log.notice("control: stats reset by uid \(peer.uid)")
                    admin.stats.reset()
                }
                return ControlReply(result: admin.stats.current).line()
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

    /// A CUPS destination.
    public struct Printer: Codable, Sendable, Equatable {
        /// The queue name (`print.destination`).
        public var name: String
        /// The CUPS default destination.
        public var isDefault: Bool
        /// Where the queue sends jobs, e.g. `ipp://printer.local/ipp/print`.
        public var deviceURI: String?
    }

    /// The daemon's devices.
    public struct InUse: Codable, Sendable, Equatable {
        public var camera: String?
        public var button: String?
        /// The IIO accelerometer for auto rotation, nil without one.
        public var accelerometer: String? = nil
        /// `"camera 90, display 0 (accelerometer)"`.
        public var rotation: String? = nil
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
    }

    /// One size and its frame rates (frames per second; for a range of intervals, its ends).
    public struct Size: Codable, Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var framesPerSecond: [Double]
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
    }

    /// A GPIO chip.
    public struct GPIOChip: Codable, Sendable, Equatable {
        public var path: String
        public var name: String
        public var label: String
        public var lines: [GPIOLine]
        public var error: String?
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
    }

    /// Lists the machine's devices: every video node under `devRoot` with formats, sizes, frame intervals
    /// and controls (`VIDIOC_QUERYCAP`, `ENUM_FMT`, `ENUM_FRAMESIZES`, `ENUM_FRAMEINTERVALS`, `QUERYCTRL`), and
    /// every GPIO chip with its lines (libgpiod). Opens each node briefly; a node in use by the daemon
    /// still answers these queries.
    public static func gather(source: String, inUse: InUse? = nil, devRoot: String = "/dev") -> DeviceReport {
        let cameras = CameraDiscovery(devRoot: devRoot).cameras(detail: .full).map(Camera.init)
        var chips: [GPIOChip] = []
        var gpioError: String?
        do {
            chips = try GPIOChipInfo.list().map(GPIOChip.init)
        } catch {
            gpioError = "\(error)"
        }
        var report = DeviceReport(source: source, cameras: cameras, gpioChips: chips, gpioError: gpioError, inUse: inUse)
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

extension DeviceReport.Camera {
    init(_ c: CameraInfo) {
        self.init(path: c.path, byId: c.byIdNames, card: c.card, driver: c.driver, busInfo: c.busInfo,
                  usable: c.isUsableCapture, problem: c.problem, formats: c.formats.map(DeviceReport.Format.init),
                  controls: c.controls.map(DeviceReport.Control.init))
    }
}

extension DeviceReport.Format {
    init(_ f: FormatOffer) {
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
    init(_ c: ControlInfo) {
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
    init(_ c: GPIOChipInfo) {
        self.init(path: c.path, name: c.name, label: c.label,
                  lines: c.lines.map { DeviceReport.GPIOLine(offset: $0.offset, name: $0.name, consumer: $0.consumer, used: $0.used,
                                                             direction: $0.isOutput ? "output" : "input", activeLow: $0.activeLow) },
                  error: c.error.map { "\($0)" })
    }
}

extension DeviceReport {
    /// A fourcc code as its four characters (`MJPG`); unprintable bytes as `?` (``PixelFormat/string(fromFourcc:)``,
    /// the one formatter).
    public static func fourccText(_ code: UInt32) -> String { PixelFormat.string(fromFourcc: code) }
}
