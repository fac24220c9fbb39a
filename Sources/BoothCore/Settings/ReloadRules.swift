/// A device a reload closes and opens again when one of its settings changed.
public enum ReloadDevice: String, Sendable, Hashable, CaseIterable, Codable {
    /// Every screen: the framebuffer and the file preview (made again through `DeviceFactory.displays`).
    case screen
    /// The button's GPIO line.
    case button
    /// The LED's GPIO line.
    case led
    /// The CUPS destination: reconnected, its options checked again.
    case printer
}

/// How a changed setting takes effect when the daemon reloads (`photoboothctl reload`, SIGHUP).
/// Every key of ``Schema/settings`` declares one in its own declaration (``SettingSpec/reload``).
///
/// A reload is applied in idle or fault (else when the session under way ends); the rule says what
/// the booth then does with the new value.
public enum ReloadRule: Sendable, Hashable {
    /// Used from the moment the reload is applied (the next capture, screen, check or print).
    case atOnce
    /// Used from the next session on (the state machine's timings, the picture composer).
    case nextSession
    /// The camera stream is stopped and started again with the new request.
    case cameraStream
    /// The device is closed and opened again with the new settings.
    case reopen(ReloadDevice)
    /// Read only when the daemon starts: the running value stays until `systemctl restart photoboothd`.
    case restart
    /// A key of photobooth-gallery only (the daemon does not use it): read when that service starts.
    case galleryRestart

    /// A stable word for programs (`--json`): `at-once`, `next-session`, `camera-stream`,
    /// `reopen-screen`, `reopen-button`, `reopen-led`, `reopen-printer`, `restart`.
    public var word: String {
        switch self {
        case .atOnce: "at-once"
        case .nextSession: "next-session"
        case .cameraStream: "camera-stream"
        case let .reopen(device): "reopen-\(device.rawValue)"
        case .restart: "restart"
        case .galleryRestart: "gallery-restart"
        }
    }

    /// What happened to a change under this rule once the reload was applied, for a person:
    /// `"applied at once"`, `"takes effect after `systemctl restart photoboothd`"`.
    public var effect: String {
        switch self {
        case .atOnce: "applied at once"
        case .nextSession: "applies from the next session"
        case .cameraStream: "camera stream restarting"
        case .reopen(.screen): "screens reopened"
        case .reopen(.button): "button reopened"
        case .reopen(.led): "LED line reopened"
        case .reopen(.printer): "print worker reconfigured"
        case .restart: ReloadRule.restartEffect
        case .galleryRestart: ReloadRule.galleryRestartEffect
        }
    }

    /// What a reload does with a change under this rule, for the key's description
    /// (`config describe`): `"applied at once"`, `"the button (its line or input device) is reopened"`.
    public var onReload: String {
        switch self {
        case .atOnce: "applied at once"
        case .nextSession: "applies from the next session"
        case .cameraStream: "the camera stream is restarted"
        case .reopen(.screen): "the screens are reopened"
        case .reopen(.button): "the button (its line or input device) is reopened"
        case .reopen(.led): "the LED line is reopened"
        case .reopen(.printer): "the printer is reconnected"
        case .restart: "not applied; takes effect after `systemctl restart photoboothd`"
        case .galleryRestart: "not the daemon's; takes effect after `systemctl restart photobooth-gallery`"
        }
    }

    /// A few words for the settings table (docs/settings.md): `at once`, `next session`, `camera stream restarted`,
    /// `screens reopened`, `button reopened`, `LED line reopened`, `printer reconnected`, `restart only`.
    public var tableText: String {
        switch self {
        case .atOnce: "at once"
        case .nextSession: "next session"
        case .restart: "restart only"
        case .galleryRestart: "gallery restart"
        case .cameraStream: "camera stream restarted"
        case .reopen(.screen): "screens reopened"
        case .reopen(.button): "button reopened"
        case .reopen(.led): "LED line reopened"
        case .reopen(.printer): "printer reconnected"
        }
    }

    /// The words for a key that only a daemon restart applies.
    public static let restartEffect = "takes effect after `systemctl restart photoboothd`"
    /// The words for a key only photobooth-gallery reads.
    public static let galleryRestartEffect = "takes effect after `systemctl restart photobooth-gallery`"
    /// The words for a change accepted while a session is under way.
    public static let deferredEffect = "applies when the session under way ends"

    /// True when a reload puts the change in force in the daemon (every rule but ``restart``; a
    /// ``galleryRestart`` key is taken into the daemon's settings, which do not use it, and its effect
    /// says that photobooth-gallery reads it at its start).
    public var appliesWithoutRestart: Bool { self != .restart }
}

/// One key whose value differs between two `Settings`, with how a reload applies it.
public struct SettingChange: Sendable, Hashable {
    /// Full `section.key`.
    public var key: String
    /// The value before, as written in a config file (`"0"`, `"1500ms"`).
    public var from: String
    /// The value after.
    public var to: String
    /// How the change takes effect (``SettingSpec/reload``).
    public var rule: ReloadRule

    public init(key: String, from: String, to: String, rule: ReloadRule) {
        self.key = key
        self.from = from
        self.to = to
        self.rule = rule
    }
}

extension Settings {
    /// The keys whose value differs from `self` in `new`, in schema order, each with its reload rule.
    /// Pure: compares the values as written in a config file (``SettingSpec/text(in:)``).
    public func changes(to new: Settings) -> [SettingChange] {
        Schema.settings.compactMap { spec in
            let from = spec.text(in: self), to = spec.text(in: new)
            return from == to ? nil : SettingChange(key: spec.key, from: from, to: to, rule: spec.reload)
        }
    }

    /// `self` with the values of `changes` taken from `new`, every other key kept: the settings in
    /// force after a reload that applies those changes (the ``ReloadRule/restart`` ones left out).
    public func applying(_ changes: [SettingChange], from new: Settings) -> Settings {
        var out = self
        for change in changes {
            guard let spec = Schema.spec(for: change.key) else { continue }
            spec.write(&out, spec.read(new))
        }
        return out
    }
}
