import BoothCore
import BoothDisplay
import BoothPorts
import Glibc

extension ScreenKind {
    static let fbdevName = "fbdev"

    /// An fbdev device (`/dev/fb0`: a firmware `simplefb`, an fbdev-only driver, a DRM card's emulation):
    /// any `display.device` path no other kind claims; `auto` takes a plain `/dev/fb0` after a KMS card
    /// with a connected screen, and a DRM card's emulation only as the last resort. Not in `devices`.
    public static let fbdev = ScreenKind.fbdev()

    /// ``fbdev`` with `/dev/fb0`'s look-up replaced (tests).
    static func fbdev(fb0: @escaping @Sendable () -> FB0 = framebufferZero) -> ScreenKind {
        ScreenKind(name: fbdevName, role: .device(claims: nil, detect: { detectFramebufferZero(fb0()) }), make: makeFramebufferScreen)
    }
}

/// What `/dev/fb0` is, for `auto`.
enum FB0: Equatable {
    /// No `/dev/fb0`.
    case none
    /// A DRM card's own fbdev emulation (`/sys/class/graphics/fb0/device/drm` exists).
    case drmEmulation
    /// Any other framebuffer (a firmware `simplefb`, an fbdev-only driver).
    case plain
}

/// `/dev/fb0` on this machine: none, a DRM card's emulation (its sysfs device has a `drm` folder), or plain.
@Sendable func framebufferZero() -> FB0 {
    guard access("/dev/fb0", F_OK) == 0 else { return .none }
    return access("/sys/class/graphics/fb0/device/drm", F_OK) == 0 ? .drmEmulation : .plain
}

/// `auto`'s candidate: a plain `/dev/fb0` (``ScreenCandidate/present``), a DRM card's emulation (``ScreenCandidate/lastResort``).
func detectFramebufferZero(_ fb0: FB0) -> ScreenDetection {
    switch fb0 {
    case .none: ScreenDetection(candidates: [], seen: "no /dev/fb0")
    case .plain: ScreenDetection(candidates: [ScreenCandidate(device: "/dev/fb0", preference: ScreenCandidate.present)], seen: "")
    case .drmEmulation: ScreenDetection(candidates: [ScreenCandidate(device: "/dev/fb0", preference: ScreenCandidate.lastResort)], seen: "")
    }
}

/// The fbdev device's screen for a request (``FramebufferDevice``); under `simulate` only when it is writable.
@Sendable func makeFramebufferScreen(_ r: ScreenRequest) -> [any DisplaySink] {
    if r.simulate && access(r.device, W_OK) != 0 { return [] }
    do {
        let fb = try FramebufferDevice(path: r.device)
        return try [startScreen(fb, described: "\(fb.path) (\(fb.driver)) \(fb.format)", r.settings, r.clock, r.log, r.orientation)]
    } catch {
        r.log.warning("display: no screen, running without it: \(error)")
        return []
    }
}
