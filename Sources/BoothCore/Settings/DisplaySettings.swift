/// A quarter turn, clockwise, as the booth applies it to pictures: `camera.rotation` turns what the
/// camera sees, `display.rotation` turns the whole screen drawing.
public enum Rotation: Int, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    case r0 = 0, r90 = 90, r180 = 180, r270 = 270

    /// The size of a `size` picture after this turn (width and height swap for 90 and 270).
    public func rotated(_ size: FrameSize) -> FrameSize {
        swapsAxes ? FrameSize(width: size.height, height: size.width) : size
    }

    /// True for 90 and 270.
    public var swapsAxes: Bool { self == .r90 || self == .r270 }

    /// The turn that undoes this one.
    public var inverse: Rotation { Rotation(degrees: 360 - rawValue) }

    /// What is left of this turn when `done` was already applied (a camera that turned its frames):
    /// 180° after 180° is 0°, 90° after 180° is 270°.
    public func remaining(after done: Rotation) -> Rotation { Rotation(degrees: rawValue - done.rawValue) }

    /// The nearest quarter turn to `degrees` (any integer, negative allowed).
    public init(degrees: Int) {
        let d = ((degrees % 360) + 360) % 360
        self = Rotation(rawValue: (d + 45) / 90 % 4 * 90) ?? .r0
    }

    /// `"90°"`.
    public var description: String { "\(rawValue)°" }
}

/// `camera.rotation`, `display.rotation`: a fixed quarter turn, or `auto` from the accelerometer.
public enum RotationSetting: String, SettingChoice {
    case auto
    case r0 = "0", r90 = "90", r180 = "180", r270 = "270"

    /// The fixed turn; nil for `auto`.
    public var fixed: Rotation? {
        switch self {
        case .auto: nil
        case .r0: .r0
        case .r90: .r90
        case .r180: .r180
        case .r270: .r270
        }
    }

    /// The setting naming the fixed turn `rotation`.
    public init(_ rotation: Rotation) {
        switch rotation {
        case .r0: self = .r0
        case .r90: self = .r90
        case .r180: self = .r180
        case .r270: self = .r270
        }
    }
}

/// `display.fallback_rotation`: the turn `auto` uses when no accelerometer answers.
public enum FixedRotationSetting: String, SettingChoice {
    case r0 = "0", r90 = "90", r180 = "180", r270 = "270"

    public var rotation: Rotation { Rotation(rawValue: Int(rawValue) ?? 0) ?? .r0 }
}

/// `display.scaling`: how the live view and the photo fill the screen.
public enum ScalingSetting: String, SettingChoice {
    /// The whole picture, with black bars where the aspect ratios differ (letterbox; aspect-fit).
    case fit
    /// The screen filled, the picture cropped at its edges (aspect-fill).
    case fill
}

extension Settings {
    /// `[display]` settings: the framebuffer screen.
    public struct Display: Sendable, Hashable {
        /// `display.device`: a DRM card (`/dev/dri/card1`), the fbdev device (`/dev/fb0`), `auto`; empty for no screen.
        public var device = ""
        /// `display.console`: the kiosk's VT (`/dev/tty1`), switched to graphics mode while the booth runs; empty to leave it.
        public var console = ""
        /// `display.rotation`: the turn of the whole drawing, or auto from the accelerometer.
        public var rotation = RotationSetting.r0
        /// `display.fallback_rotation`: the turn `auto` uses without an accelerometer.
        public var fallbackRotation = FixedRotationSetting.r0
        /// `display.accelerometer`: the IIO device's `name` to use; empty for the first accelerometer found.
        public var accelerometer = ""
        /// `display.scaling`: fit (letterbox) or fill (crop).
        public var scaling = ScalingSetting.fit
        /// `display.mirror`: true to mirror the live view (captures and prints never are).
        public var mirror = false
        /// `display.frame_rate`: screen redraws per second at most.
        public var frameRate = 0
        /// `display.font`: a TrueType/OpenType file for the screens' text.
        public var font = ""
    }

    /// `[text]` settings: what the screens say, in the event's language.
    public struct Texts: Sendable, Hashable {
        /// `text.idle`: the invitation on the idle screen.
        public var idle = ""
        /// `text.preview`: the prompt before the countdown.
        public var preview = ""
        /// `text.countdown_shot`: with the countdown of a multi-shot session ("Photo {shot} of {shots}").
        public var countdownShot = ""
        /// `text.between_shots`: the live view between shots ("{shot} of {shots}").
        public var betweenShots = ""
        /// `text.fault_camera`, `text.fault_button`, `text.fault_storage`: the fault screen, per reason.
        public var faultCamera = ""
        /// `text.fault_camera_resting`: the camera fault of a camera whose battery is empty.
        public var faultCameraResting = ""
        public var faultButton = ""
        public var faultStorage = ""
        /// `text.scan`: beside the QR code of the picture's URL on the review.
        public var scan = ""
        /// `text.review_not_shown`: the review screen's words when the capture cannot be drawn.
        public var reviewNotShown = ""
        /// `text.wifi`: under the `WIFI:` QR code on the idle screen.
        public var wifi = ""
    }
}
