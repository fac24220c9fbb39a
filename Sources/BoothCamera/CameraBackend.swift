import BoothClock
import BoothCore
import BoothPorts
import Synchronization

/// A camera backend's name: the `camera.backend` value that picks it (`"v4l2"`, `"gphoto2"`, `"libcamera"`),
/// in the log's "camera: backend NAME" line and on its `devices` section. Each backend's file declares its own
/// constant (`CameraBackendName.v4l2` in V4L2Backend.swift).
public struct CameraBackendName: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }
}

/// One camera backend, described in one file: its name and its words in `camera.backend`'s description
/// (``summary``), how it is detected and where in `auto`'s order (``autoSteps``), how its source is made from the settings (``makeSource(_:choice:clock:log:)``) and its
/// section of `devices` (``devicesSection(_:)``). ``CameraBackends`` lists them; the generic code
/// (``makeCameraSource(_:clock:log:detection:)``, the `devices` listing) only walks that list.
///
/// Adding a backend: a file with a type conforming to this, and one line in ``CameraBackends/builtIn``
/// (or, for a backend a test defines, one ``CameraBackends/register(_:)`` call). Its name is then a value
/// of `camera.backend` (``CameraBackends/installNames()``); nothing outside its file names it.
public protocol CameraBackendDescriptor: Sendable {
    /// The `camera.backend` value naming it.
    var name: CameraBackendName { get }
    /// What it drives, in a few words: `camera.backend`'s description (the settings table, the default
    /// config, photobooth.conf(5)) says `NAME: SUMMARY` for each built-in backend. No final period.
    var summary: String { get }
    /// Its places in `auto`'s order (none: only chosen by name). Every backend's steps are tried together,
    /// lowest ``CameraAutoStep/rank`` first; the first that matches picks its backend.
    var autoSteps: [CameraAutoStep] { get }
    /// Its camera source for `settings`. `choice` says whether `auto` picked it (its detection then holds
    /// what was listed, for the log line that says why). Logs the choice when `auto` made it. Never throws:
    /// a camera that cannot be opened is a fault of the source, retried by it.
    func makeSource(_ settings: Settings, choice: CameraBackendChoice, clock: any MonotonicClock, log: Logger) -> any CameraSource
    /// Its section of `photoboothctl devices` (the lines printed, and its data for `--json`); nil when
    /// it has nothing to list beyond the V4L2 nodes every listing shows.
    func devicesSection(_ context: CameraDevicesContext) -> CameraDevicesSection?
}

/// One place in `auto`'s order: a rank (lower is tried first) and the test that claims the camera for
/// its backend from what is attached (``CameraDetection``: each listing is made once, when a step first asks).
public struct CameraAutoStep: Sendable {
    /// The place in `auto`'s order: lower first. The built-in backends use 100 (a camera libgphoto2 knows
    /// by model), 200 (a UVC webcam), 300 (libgphoto2's generic PTP camera), 400 (a camera only libcamera
    /// drives) and 1000 (anything else: V4L2).
    public var rank: Int
    /// True when this backend takes the camera: called at most once per resolution.
    public var matches: @Sendable (CameraDetection) -> Bool

    public init(rank: Int, matches: @escaping @Sendable (CameraDetection) -> Bool) {
        self.rank = rank
        self.matches = matches
    }
}

/// How a backend came to be chosen: named by `camera.backend`, or picked by `auto` from ``detection``.
public struct CameraBackendChoice {
    /// True when `camera.backend = auto` picked it.
    public var auto: Bool
    /// What was detected (with `auto`; otherwise a detection that has listed nothing).
    public var detection: CameraDetection
}

/// What is attached, listed lazily for `auto`: each backend's listing is made once, when one of the
/// steps first asks for it (libgphoto2's and libcamera's listings open devices, so they are asked only
/// when `auto`'s order reaches them). A test replaces a listing with ``list(_:with:)``.
/// Used on the thread that makes the camera source; not shared.
public final class CameraDetection {
    /// The settings the source is made for (`camera.device` narrows some listings).
    public let settings: Settings
    private var listers: [String: () -> Any] = [:]
    private var found: [String: Any] = [:]

    public init(settings: Settings) { self.settings = settings }

    /// Replaces how the listing `key` is made (tests: a fixed list, a counter).
    public func list<T>(_ key: String, with lister: @escaping () -> T) {
        listers[key] = lister
        found[key] = nil
    }

    /// The listing `key` (a backend's own, e.g. `"gphoto2"`), made once by `lister` unless replaced.
    public func listing<T>(_ key: String, default lister: () -> T) -> T {
        if let done = found[key] as? T { return done }
        let made = (listers[key]?() as? T) ?? lister()
        found[key] = made
        return made
    }
}

/// Who asks for the `devices` listing, for the sections that depend on it.
public struct CameraDevicesContext: Sendable {
    /// `photoboothd (pid N)` or `photoboothctl`.
    public var source: String
    /// True when the listing may open cameras a library holds exclusively (photoboothctl with the booth
    /// stopped); false in the daemon, whose camera thread alone opens them.
    public var mayOpenCameras: Bool

    public init(source: String, mayOpenCameras: Bool) {
        self.source = source
        self.mayOpenCameras = mayOpenCameras
    }
}

/// A backend's section of `devices`: the lines `photoboothctl devices` prints (heading first, in order)
/// and its data for `devices --json` (a JSON object's UTF-8 text; its keys become the section's `fields`).
public struct CameraDevicesSection: Sendable, Equatable {
    public var backend: CameraBackendName
    public var lines: [String]
    /// A JSON object (UTF-8), or nil for none.
    public var json: [UInt8]?

    public init(backend: CameraBackendName, lines: [String], json: [UInt8]? = nil) {
        self.backend = backend
        self.lines = lines
        self.json = json
    }
}

/// The camera backends: the built-in ones in `auto`'s order of listing, and those registered at run time.
public enum CameraBackends {
    /// The backends the booth ships: one line each.
    public static let builtIn: [any CameraBackendDescriptor] = [
        V4L2Backend(),
        GPhoto2Backend(),
        LibcameraBackend(),
    ]

    private static let registered = Mutex<[any CameraBackendDescriptor]>([])

    /// What `auto` does, in words: `camera.backend`'s description says it before the backends' summaries.
    public static let autoSummary = "a DSLR or mirrorless camera libgphoto2 finds on USB, else a USB webcam through V4L2, "
        + "else a camera only libcamera can drive (a Raspberry Pi camera module), else V4L2"

    /// Makes the built-in backends' names the values of `camera.backend` (BoothCore's ``CameraBackendNames``,
    /// with their summaries for the schema's description): called at the start of a program that drives or
    /// lists cameras (photoboothd, photoboothctl) and of a test that needs them; calling again is harmless.
    public static func installNames() {
        CameraBackendNames.installBuiltIn(builtIn.map { CameraBackendNames.Entry(name: $0.name.rawValue, summary: $0.summary) },
                                          auto: autoSummary)
    }

    /// Adds a backend (one defined outside this module: a test's). A backend of the same name replaces the earlier one.
    /// Its name becomes a value of `camera.backend` in this process (with the built-in ones: ``installNames()``);
    /// the generated files never list it.
    public static func register(_ backend: any CameraBackendDescriptor) {
        registered.withLock { list in
            list.removeAll { $0.name == backend.name }
            list.append(backend)
        }
        installNames()
        CameraBackendNames.register(CameraBackendNames.Entry(name: backend.name.rawValue, summary: backend.summary))
    }

    /// Every backend: the built-in ones, then the registered ones (a registered one of a built-in's name replaces it).
    public static var all: [any CameraBackendDescriptor] {
        let extra = registered.withLock { $0 }
        return builtIn.filter { b in !extra.contains { $0.name == b.name } } + extra
    }

    /// The backend named `name`, nil when none is.
    public static func named(_ name: CameraBackendName) -> (any CameraBackendDescriptor)? {
        all.first { $0.name == name }
    }

    /// `auto`'s choice: every backend's ``CameraAutoStep``s by rank (lower first; equal ranks in ``all``'s
    /// order), the first that matches; V4L2 when none does.
    public static func resolveAuto(_ detection: CameraDetection) -> any CameraBackendDescriptor {
        let steps = all.flatMap { backend in backend.autoSteps.map { (backend: backend, step: $0) } }
        let ordered = steps.enumerated().sorted { ($0.element.step.rank, $0.offset) < ($1.element.step.rank, $1.offset) }
        return ordered.first { $0.element.step.matches(detection) }?.element.backend ?? V4L2Backend()
    }

    /// Every backend's section of `devices`, in ``all``'s order.
    public static func devicesSections(_ context: CameraDevicesContext) -> [CameraDevicesSection] {
        all.compactMap { $0.devicesSection(context) }
    }
}

/// The backend for `camera.backend` = `setting` given what `detection` lists: the named one, or `auto`'s
/// choice (``CameraBackends/resolveAuto(_:)``). The order `auto` follows, first match wins, is each
/// backend's ``CameraBackendDescriptor/autoSteps``; for the built-in ones:
/// 1. a camera libgphoto2 knows by model → gphoto2 (a DSLR beside a webcam is the camera the operator
///    brought for the photos; the webcam can give its live view, `camera.live_view_device`);
/// 2. a UVC webcam (driver `uvcvideo`) → v4l2, always: libcamera's UVC pipeline could drive one too, but
///    V4L2 gives its MJPEG frames as they come and its controls as they are; and before libgphoto2's
///    generic "USB PTP Class Camera" (a phone in PTP mode charging on the booth is one too);
/// 3. that generic entry, with no webcam → gphoto2 (a body libgphoto2 has no model for);
/// 4. a camera libcamera lists that is not a UVC webcam and that `camera.device` names (or none named):
///    a Raspberry Pi camera module, vimc → libcamera;
/// 5. anything else (a capture card, v4l2loopback, vivid, or nothing attached yet) → v4l2.
public func resolveCameraBackend(_ setting: CameraBackendSetting, detection: CameraDetection) -> any CameraBackendDescriptor {
    setting == .auto ? CameraBackends.resolveAuto(detection)
        : CameraBackends.named(CameraBackendName(rawValue: setting.rawValue)) ?? V4L2Backend()
}

/// The camera source for `settings`: the backend ``resolveCameraBackend(_:detection:)`` picks (listing
/// attached cameras only for `auto`), then that backend's source. The choice is logged by the backend when
/// `auto` made it. `--simulate` does not come here (it keeps the ``SimulatedCamera``).
/// - Parameter detection: what is attached (nil: listed from the machine, as `auto` needs); tests pass their own.
public func makeCameraSource(_ settings: Settings, clock: any MonotonicClock, log: Logger,
                             detection: CameraDetection? = nil) -> any CameraSource {
    let detection = detection ?? CameraDetection(settings: settings)
    let backend = resolveCameraBackend(settings.camera.backend, detection: detection)
    return backend.makeSource(settings, choice: CameraBackendChoice(auto: settings.camera.backend == .auto, detection: detection),
                              clock: clock, log: log)
}
