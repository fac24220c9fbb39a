/// The booth's configuration, typed. Every field is declared, with its key, default, range and
/// description, in `Schema.settings`; `Settings.defaults` is built from that table.
///
/// Durations are integer milliseconds (`…Milliseconds`), sizes are `FrameSize` in pixels, space is bytes.
/// Read a file with `Settings.parse(text:file:)`; apply command-line flags with `with(overrides:)`.
public struct Settings: Sendable, Hashable {
    /// `[camera]`: which camera, its format, sizes and controls.
    public var camera = Camera()
    /// `[button]`: the push button's GPIO line and its timing.
    public var button = Button()
    /// `[led]`: the optional LED's GPIO line.
    public var led = LED()
    /// `[session]`: how long each step of a session lasts.
    public var session = Session()
    /// `[storage]`: where and how photos are saved.
    public var storage = Storage()
    /// `[preview]`: the live view written as a JPEG file.
    public var preview = Preview()
    /// `[print]`: see PrintSettings.swift.
    public var print = Print()
    /// `[display]`: the framebuffer screen, its rotation and scaling.
    public var display = Display()
    /// `[text]`: what the screens say.
    public var text = Texts()
    /// `[picture]`: see PictureSettings.swift.
    public var picture = Picture()
    /// `[gallery]`: see GallerySettings.swift.
    public var gallery = Gallery()

    /// Zero values, overwritten from the schema's defaults in `Settings.defaults`.
    init() {}

    /// `[camera]` settings.
    public struct Camera: Sendable, Hashable {
        /// `camera.device`: empty for the first usable camera; else a `/dev` path, a `/dev/v4l/by-id` name
        /// or a substring of the card name (`VIDIOC_QUERYCAP`'s `card`).
        public var device = ""
        /// `camera.format`: the pixel format to stream, or `.auto` (MJPEG, then YUYV, else RGB24 via libv4l2).
        public var format = CameraFormatSetting.auto
        /// `camera.preview_size`: the live-view size in pixels.
        public var previewSize = FrameSize(width: 0, height: 0)
        /// `camera.capture_size`: the photo size in pixels (may equal `previewSize`).
        public var captureSize = FrameSize(width: 0, height: 0)
        /// `camera.frame_rate`: frames per second asked of the camera (`VIDIOC_S_PARM`).
        public var frameRate = 0
        /// `camera.settle_frames`: frames dropped after a format or size switch while exposure settles.
        public var settleFrames = 0
        /// `camera.power_line_frequency`: the anti-flicker filter (`V4L2_CID_POWER_LINE_FREQUENCY`).
        public var powerLineFrequency = PowerLineFrequencySetting.auto
        /// `camera.exposure`: automatic, or locked at the value when streaming started.
        public var exposure = ControlMode.auto
        /// `camera.white_balance`: automatic, or locked.
        public var whiteBalance = ControlMode.auto
        /// `camera.focus`: automatic, or locked.
        public var focus = ControlMode.auto
        /// `camera.capture_timeout`: deadline in ms for a capture after the trigger.
        public var captureTimeoutMilliseconds = 0
        /// `camera.idle_stop`: ms in idle after which the stream is stopped.
        public var idleStopMilliseconds = 0
        /// `camera.rotation`: the turn applied to captures (their pixels) and the live view, or auto.
        public var rotation = RotationSetting.r0
        /// `camera.backend`: which library drives the camera (``CameraBackendSetting``).
        public var backend = CameraBackendSetting.auto
        /// `camera.live_view_device`: where live view comes from for a gphoto2 camera: empty for the camera's
        /// own, `none` for no live view, else a V4L2 camera (as `camera.device` names one) beside it.
        public var liveViewDevice = ""
        /// `camera.live_view_rate`: live-view frames per second asked of a gphoto2 camera (`gp_camera_capture_preview` calls).
        public var liveViewRate = 0
        /// `camera.capture_target`: where a gphoto2 camera stores a still before the booth downloads it.
        public var captureTarget = CaptureTargetSetting.ram
    }

    /// `[button]` settings.
    public struct Button: Sendable, Hashable {
        /// `button.source`: where presses come from, each once, in the file's order.
        public var sources: [ButtonSourceSetting] = [.gpio]
        /// `button.input_device`: the input device (a path, a by-id name, a device name, `any keyboard`, `any touch screen`).
        public var inputDevice = ""
        /// `button.input_key`: the `EV_KEY` name (`KEY_SPACE`) or `tap`.
        public var inputKey = ""
        /// `button.print_key`, `button.skip_key`: review keys on the input device (`KEY_P`); empty for none.
        public var printKey = ""
        public var skipKey = ""
        /// `button.chip`: the GPIO chip by label, name (`gpiochip0`) or `/dev` path.
        public var chip = ""
        /// `button.line`: the line by offset (`17`) or line name (`GPIO17`).
        public var line = ""
        /// `button.active_low`: true when a press pulls the line low.
        public var activeLow = false
        /// `button.bias`: the line's bias.
        public var bias = LineBiasSetting.asIs
        /// `button.debounce`: ms the line must be stable before a press counts.
        public var debounceMilliseconds = 0
        /// `button.long_press`: ms held before a long press fires (once, while held).
        public var longPressMilliseconds = 0
        /// `button.stuck_limit`: ms held after which the button is reported stuck (a fault reason).
        public var stuckLimitMilliseconds = 0
    }

    /// `[led]` settings.
    public struct LED: Sendable, Hashable {
        /// `led.chip`: the GPIO chip; empty for the button's chip (see `resolvedChip(buttonChip:)`).
        public var chip = ""
        /// `led.line`: offset or line name; empty for no LED.
        public var line = ""
        /// `led.active_low`: true when the LED lights with the line low.
        public var activeLow = false

        /// The chip to use: `chip`, or `buttonChip` when `chip` is empty.
        public func resolvedChip(buttonChip: String) -> String { chip.isEmpty ? buttonChip : chip }
        /// True when an LED is configured (`line` is not empty).
        public var isConfigured: Bool { !line.isEmpty }
    }

    /// `[session]` settings.
    public struct Session: Sendable, Hashable {
        /// `session.preview`: ms of preview before the countdown starts on its own; nil (`off`) to stay in
        /// preview until a press, up to `previewTimeoutMilliseconds`.
        public var previewMilliseconds: Int? = nil
        /// `session.preview_timeout`: ms in preview without a press before going back to idle
        /// (used when `previewMilliseconds` is nil).
        public var previewTimeoutMilliseconds = 0
        /// `session.countdown`: countdown length in ms, a multiple of 1000 (one tick per second); 0 means the
        /// press itself is the trigger.
        public var countdownMilliseconds = 0
        /// `session.review`: ms the photo is shown after a capture.
        public var reviewMilliseconds = 0
        /// `session.shots`: shots per session, 1 to 4, each after its own countdown.
        public var shots = 1
        /// `session.between_shots`: ms of live view between two shots (announcing the next), before its countdown.
        public var betweenShotsMilliseconds = 0
        /// `session.cancelled_captures`: what a long press during a series does with the captures taken.
        public var cancelledCaptures = CancelledCaptures.keep

        /// The countdown in whole seconds (`countdownMilliseconds / 1000`).
        public var countdownSeconds: Int { countdownMilliseconds / 1000 }
    }

    /// `[storage]` settings.
    public struct Storage: Sendable, Hashable {
        /// `storage.dir`: the photos directory (date folders are made under it).
        public var dir = ""
        /// `storage.jpeg_quality`: TurboJPEG quality 1–100 for encoded (non-MJPEG) captures.
        public var jpegQuality = 0
        /// `storage.min_free`: bytes that must stay free in `dir`; below it, sessions are refused.
        public var minFreeBytes = 0
        /// `storage.session_file`: the booth's record of the highest session number handed out, in any folder.
        public var sessionFile = ""
        /// `storage.mount`: the mount point of removable media holding `dir`; empty for no check.
        public var mount = ""
    }

    /// `[preview]` settings.
    public struct Preview: Sendable, Hashable {
        /// `preview.file`: the live-view JPEG path; empty for no file preview.
        public var file = ""
        /// `preview.frame_rate`: file rewrites per second.
        public var frameRate = 0
        /// `preview.size`: the preview file's picture size in pixels.
        public var size = FrameSize(width: 0, height: 0)
    }
}

/// A setting chosen from a fixed list: an enum whose raw values are the words in the config file.
public protocol SettingChoice: RawRepresentable, CaseIterable, Sendable, Hashable where RawValue == String {}

/// `camera.format`.
public enum CameraFormatSetting: String, SettingChoice {
    /// MJPEG, then YUYV, else RGB24 converted by libv4l2.
    case auto
    case mjpeg
    case yuyv
    case rgb24

    /// The V4L2 pixel format; nil for `.auto`.
    public var pixelFormat: PixelFormat? {
        switch self {
        case .auto: nil
        case .mjpeg: .mjpeg
        case .yuyv: .yuyv
        case .rgb24: .rgb24
        }
    }
}

/// `camera.power_line_frequency`: the values of `V4L2_CID_POWER_LINE_FREQUENCY` the booth sets.
public enum PowerLineFrequencySetting: String, SettingChoice {
    /// 50 Hz mains (Europe, most of Asia and Africa).
    case hz50 = "50"
    /// 60 Hz mains (the Americas, parts of Asia).
    case hz60 = "60"
    /// Filter disabled.
    case off
    /// The camera detects the frequency itself (where it can).
    case auto
}

/// `camera.backend`: which library drives the camera, by name: `auto`, or a camera backend's name. `auto`
/// picks by what is attached (the order is documented at `resolveCameraBackend` in BoothCamera).
///
/// Not an enum: the names are the camera backends' own (BoothCamera's `CameraBackends`, which installs them
/// in ``CameraBackendNames`` at start-up), so adding a backend changes nothing here. A program that installs
/// none (photobooth-gallery, which does not link the camera libraries) accepts any well-formed name.
public struct CameraBackendSetting: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The word in the config file, lowercase: `"auto"`, `"v4l2"`.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    /// Picked by what is attached.
    public static let auto: CameraBackendSetting = "auto"
    // The built-in backends' names, for the settings checks that know what those backends need
    // (Combinations.swift, MemoryEstimate.swift, BoothLayout's picture setup); a new backend needs none.
    /// Video4Linux2 (a UVC webcam, a capture card, v4l2loopback, vivid).
    public static let v4l2: CameraBackendSetting = "v4l2"
    /// libgphoto2 (a DSLR or mirrorless camera on USB, through PTP).
    public static let gphoto2: CameraBackendSetting = "gphoto2"
    /// libcamera (a Raspberry Pi camera module behind its ISP; any sensor with a libcamera pipeline).
    public static let libcamera: CameraBackendSetting = "libcamera"
}

/// `camera.capture_target`: where a gphoto2 camera puts a still (libgphoto2's `capturetarget`).
public enum CaptureTargetSetting: String, SettingChoice {
    /// The camera's internal RAM (SDRAM): downloaded, then gone from the camera.
    case ram
    /// The memory card: downloaded, and kept on the card as well.
    case card
}

/// `camera.exposure`, `camera.white_balance`, `camera.focus`.
public enum ControlMode: String, SettingChoice {
    /// The camera adjusts continuously.
    case auto
    /// Automatic until streaming starts, then held at that value.
    case locked
}

/// `button.source`: one source of presses.
public enum ButtonSourceSetting: String, SettingChoice {
    /// The GPIO line (`button.chip`, `button.line`) through libgpiod.
    case gpio
    /// An input device's key or a touch screen's tap (`button.input_device`, `button.input_key`) through libevdev.
    case input
}

/// `button.bias`: the GPIO line bias libgpiod requests.
public enum LineBiasSetting: String, SettingChoice {
    case pullUp = "pull-up"
    case pullDown = "pull-down"
    case disabled
    /// Leave the bias as the board has it.
    case asIs = "as-is"
}
