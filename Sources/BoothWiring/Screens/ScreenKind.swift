import BoothControl
import BoothCore
import BoothDeviceListing
import BoothDisplay
import BoothPorts
import BoothRaster

// Screens as descriptors: each kind of screen (a DRM/KMS card, an fbdev device, the file preview, a
// test's own) is one ``ScreenKind`` in a file of its own, saying how `display.device` names it or
// whether it is wanted beside that screen, what `auto` finds of it, how its display is made and its
// section of `devices`. ``ScreenRegistry`` only walks them; adding a kind is a new file plus one line
// in ``ScreenRegistry/builtIn`` (a test adds its own kind to a copy of it).

/// What a screen kind is asked to make.
public struct ScreenRequest: Sendable {
    /// The device `display.device` resolved to for this kind (`/dev/dri/card1`, `/dev/fb0`, or as the kind
    /// names its own); empty for a kind shown beside that screen (``ScreenKind/Role/alongside(wanted:)``).
    public var device: String
    /// The settings in force (`display.*`, `preview.*`, `text.*`).
    public var settings: Settings
    /// The runtime's clock and log.
    public var clock: any MonotonicClock
    public var log: Logger
    /// The booth's one orientation source (the one the camera turns by).
    public var orientation: any OrientationSource
    /// `--simulate`: take the screen only when it is the booth's to take (no fight over a desktop's
    /// screen), and wait for nothing.
    public var simulate: Bool

    /// Each field as described above.
    public init(device: String, settings: Settings, clock: any MonotonicClock, log: Logger, orientation: any OrientationSource,
                simulate: Bool) {
        self.device = device
        self.settings = settings
        self.clock = clock
        self.log = log
        self.orientation = orientation
        self.simulate = simulate
    }
}

/// A screen `display.device = auto` could pick, as a kind's detection offers it.
public struct ScreenCandidate: Sendable, Equatable {
    /// The device, as `display.device` would name it.
    public var device: String
    /// How much it is preferred, lower first (equal: the registry's order, then the kind's own):
    /// ``ScreenCandidate/connected`` (10) a screen known to be plugged in, ``ScreenCandidate/present`` (20)
    /// one that is there but not known to be, ``ScreenCandidate/later`` (30) a device whose screen may be
    /// plugged in later, ``ScreenCandidate/lastResort`` (40).
    public var preference: Int

    /// The preferences as above.
    public static let connected = 10, present = 20, later = 30, lastResort = 40

    /// Each field as described above.
    public init(device: String, preference: Int) {
        self.device = device
        self.preference = preference
    }
}

/// What a kind found for `auto`: its candidates, and what it saw, for the sentence when no kind
/// offered one (`"no /dev/fb0"`).
public struct ScreenDetection: Sendable, Equatable {
    /// What it offers, in its own order of preference among equals.
    public var candidates: [ScreenCandidate]
    /// What it saw when it offers nothing (`"no /dev/fb0"`, each card and why not); empty otherwise.
    public var seen: String

    /// Each field as described above.
    public init(candidates: [ScreenCandidate], seen: String) {
        self.candidates = candidates
        self.seen = seen
    }
}

/// Which screen `display.device` names: a kind and its device, or none (with why).
public enum ScreenChoice: Sendable, Equatable {
    /// The kind (``ScreenKind/name``) and the device it is to open.
    case screen(kind: String, device: String)
    /// No screen, and why (the sentence the log says).
    case none(String)

    /// A DRM/KMS card (``ScreenKind/kms``).
    public static func kms(_ device: String) -> ScreenChoice { .screen(kind: ScreenKind.kmsName, device: device) }
    /// An fbdev device (``ScreenKind/fbdev``).
    public static func fbdev(_ device: String) -> ScreenChoice { .screen(kind: ScreenKind.fbdevName, device: device) }
}

/// One kind of screen.
public struct ScreenKind: Sendable {
    /// How a kind takes part.
    public enum Role: Sendable {
        /// Named by `display.device`: `claims` says whether a value names this kind (nil: every value no
        /// other kind claims, as any path not under /dev/dri is an fbdev); `detect` offers `auto`'s
        /// candidates (nil: `auto` never picks this kind).
        case device(claims: (@Sendable (String) -> Bool)?, detect: (@Sendable () -> ScreenDetection)?)
        /// Shown beside the `display.device` screen when `wanted` says so for the settings (the file preview).
        case alongside(wanted: @Sendable (Settings) -> Bool)
    }

    /// The kind's name (`kms`, `fbdev`, `file`), as ``ScreenChoice`` names it.
    public var name: String
    /// How `display.device` names it, or when it is wanted beside that screen.
    public var role: Role
    /// Its displays for a request: started, or none when it cannot be opened (said in the log, the booth runs without it).
    public var make: @Sendable (ScreenRequest) -> [any DisplaySink]
    /// Its section of `devices` (nil: none).
    public var devices: DeviceSection?

    /// Each field as described above.
    public init(name: String, role: Role, make: @escaping @Sendable (ScreenRequest) -> [any DisplaySink], devices: DeviceSection? = nil) {
        self.name = name
        self.role = role
        self.make = make
        self.devices = devices
    }

    /// The detection of a `display.device` kind (nil for the others and for those `auto` never picks).
    public var detect: (@Sendable () -> ScreenDetection)? {
        if case let .device(_, detect) = role { return detect }
        return nil
    }
}

/// The screen kinds the booth knows, in order: the order `display.device` values are claimed in and
/// `auto`'s ties are broken by.
public struct ScreenRegistry: Sendable {
    /// The kinds, in order.
    public var kinds: [ScreenKind]

    /// A registry of `kinds`, in that order (a test's: ``builtIn``'s kinds and its own).
    public init(kinds: [ScreenKind]) { self.kinds = kinds }

    /// The booth's screen kinds. A new kind: its file, and its line here.
    public static let builtIn = ScreenRegistry(kinds: [
        .kms,
        .fbdev,
        .filePreview,
    ])

    /// The kind named `name`, if registered.
    public func kind(_ name: String) -> ScreenKind? { kinds.first { $0.name == name } }

    /// Every kind's section of `devices`, in order (for ``DeviceReport/gather(source:inUse:devRoot:gphoto2Cameras:screens:)``).
    public var deviceSections: [DeviceSection] { kinds.compactMap(\.devices) }

    /// `display.device` resolved: empty is no screen; `auto` the candidate with the lowest preference
    /// among what each kind that has a detection offers (`detecting`: by default its own; tests replace the machine), else no screen with what
    /// each saw; any other value the first kind that claims it, else the kind that takes every other value.
    public func resolve(_ device: String, detecting: (ScreenKind) -> ScreenDetection? = { $0.detect?() }) -> ScreenChoice {
        if device.isEmpty { return .none("display.device is empty") }
        let named = kinds.compactMap { kind -> (kind: ScreenKind, claims: (@Sendable (String) -> Bool)?)? in
            guard case let .device(claims, _) = kind.role else { return nil }
            return (kind, claims)
        }
        guard device.lowercased() == "auto" else {
            if let claimer = named.first(where: { $0.claims?(device) == true }) ?? named.first(where: { $0.claims == nil }) {
                return .screen(kind: claimer.kind.name, device: device)
            }
            return .none("display.device = \(device): no screen kind takes it (kinds: \(named.map { $0.kind.name }.joined(separator: ", ")))")
        }
        var best: (kind: String, candidate: ScreenCandidate)?
        var seen: [String] = []
        for (kind, _) in named {
            guard kind.detect != nil, let found = detecting(kind) else { continue }
            seen.append(found.seen)
            for c in found.candidates where c.preference < (best?.candidate.preference ?? Int.max) {
                best = (kind.name, c)
            }
            // Nothing is preferred to a connected screen: the kinds after it are not asked.
            if let best, best.candidate.preference <= ScreenCandidate.connected { break }
        }
        if let best { return .screen(kind: best.kind, device: best.candidate.device) }
        return .none("display.device = auto found no screen (" + seen.joined(separator: ", ") + ")")
    }

    /// The booth's screens for a set of settings: the one `display.device` names (``resolve(_:detecting:)``;
    /// none: said in the log, except under `simulate` or when it is empty) and each kind wanted beside it
    /// (the file preview). Under `simulate` those come first, as `--simulate` has always listed them.
    public func screens(_ s: Settings, _ clock: any MonotonicClock, _ log: Logger, _ orientation: any OrientationSource,
                        simulate: Bool) -> [any DisplaySink] {
        let request = ScreenRequest(device: "", settings: s, clock: clock, log: log, orientation: orientation, simulate: simulate)
        let beside = besideScreens(request)
        let main = deviceScreens(request)
        return simulate ? beside + main : main + beside
    }

    /// The screen `display.device` names, made; none when it names none.
    public func deviceScreens(_ request: ScreenRequest) -> [any DisplaySink] {
        let s = request.settings
        switch resolve(s.display.device) {
        case let .none(why):
            if !s.display.device.isEmpty && !request.simulate { request.log.warning("display: no screen, running without it: \(why)") }
            return []
        case let .screen(name, device):
            guard let kind = kind(name) else { return [] }
            var r = request
            r.device = device
            return kind.make(r)
        }
    }

    /// The kinds wanted beside the `display.device` screen (``ScreenKind/Role/alongside(wanted:)``), made.
    public func besideScreens(_ request: ScreenRequest) -> [any DisplaySink] {
        kinds.flatMap { kind -> [any DisplaySink] in
            guard case let .alongside(wanted) = kind.role, wanted(request.settings) else { return [] }
            return kind.make(request)
        }
    }
}

/// A ``FramebufferDisplay`` on `framebuffer`, its thread started, and `display: <described>` logged
/// (a KMS card's and an fbdev device's screen alike).
/// - Throws: the font's error (``FramebufferDisplay`` init).
func startScreen(_ framebuffer: any Framebuffer, described: String, _ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                 _ orientation: any OrientationSource) throws -> any DisplaySink {
    let display = try FramebufferDisplay(
        framebuffer: framebuffer, fontPath: s.display.font, texts: ScreenTexts(s.text),
        options: LiveViewOptions(cameraRotation: .r0, scaling: Scaling(s.display.scaling), mirror: s.display.mirror),
        orientation: orientation, framesPerSecond: s.display.frameRate,
        console: s.display.console.isEmpty ? nil : s.display.console, clock: clock, log: { log.warning($0) })
    display.start()
    log.info("display: \(described)")
    return display
}
