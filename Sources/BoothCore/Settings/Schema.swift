/// One setting as the schema declares it: key, type, default, what is allowed and what it does.
public struct SettingSpec: Sendable {
    /// `section.key`, e.g. `"button.debounce"`.
    public let key: String
    /// The section, e.g. `"button"`.
    public let section: String
    /// The key within its section, e.g. `"debounce"`.
    public let name: String
    /// How the value is read and what is allowed (for a setting whose values are installed at start-up,
    /// `camera.backend`, what the docs list: ``CameraBackendNames``).
    public var type: SettingType { installed?.type() ?? fixedType }
    /// The default, as written in a config file (`"30ms"`, `"1280x720"`, `""`).
    public let defaultText: String
    /// One or two sentences for an operator: what it does, units.
    public var description: String { installed?.description() ?? fixedDescription }
    /// How a change of this key takes effect on reload (`photoboothctl reload`, SIGHUP, `config set`):
    /// declared with the key, so no key exists without one.
    public let reload: ReloadRule

    let read: @Sendable (Settings) -> SettingValue
    let write: @Sendable (inout Settings, SettingValue) -> Void

    private let fixedType: SettingType
    private let fixedDescription: String
    /// For a setting whose allowed values are installed at start-up (`camera.backend`): its type and
    /// description as of now, and how a value is read (which may accept more than the docs list).
    private let installed: Installed?

    struct Installed: Sendable {
        var type: @Sendable () -> SettingType
        var description: @Sendable () -> String
        var parse: @Sendable (String) -> Result<SettingValue, ValueProblem>
    }

    /// Reads `text` for this setting (``type``'s parse, or the installed values').
    func parse(_ text: String) -> Result<SettingValue, ValueProblem> { installed?.parse(text) ?? type.parse(text) }

    /// What is allowed, in words (`"1ms to 1s"`, `"auto or locked"`).
    public var allowed: String { type.allowed }

    /// This setting's value in `settings`, as written in a config file (`"1500ms"`, `"off"`, `"500MB"`).
    public func text(in settings: Settings) -> String { read(settings).text }

    init(_ key: String, _ type: SettingType, _ defaultText: String, _ reload: ReloadRule, _ description: String,
         installed: Installed? = nil,
         read: @escaping @Sendable (Settings) -> SettingValue,
         write: @escaping @Sendable (inout Settings, SettingValue) -> Void) {
        self.key = key
        let parts = key.split(separator: ".", maxSplits: 1)
        section = parts.first.map(String.init) ?? key
        name = parts.count > 1 ? String(parts[1]) : key
        fixedType = type
        self.defaultText = defaultText
        fixedDescription = description
        self.installed = installed
        self.reload = reload
        self.read = read
        self.write = write
    }

    // Constructors binding a type to a field of `Settings`; `write` ignores a value of another shape,
    // which cannot happen because values come from `type.parse`.

    static func bool(_ key: String, _ path: WritableKeyPath<Settings, Bool> & Sendable, _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .bool, d, reload, doc, read: { .bool($0[keyPath: path]) },
                    write: { s, v in if case .bool(let b) = v { s[keyPath: path] = b } })
    }

    static func int(_ key: String, _ path: WritableKeyPath<Settings, Int> & Sendable, _ range: ClosedRange<Int>,
                    unit: String? = nil, _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .int(range: range, unit: unit), d, reload, doc, read: { .int($0[keyPath: path]) },
                    write: { s, v in if case .int(let n) = v { s[keyPath: path] = n } })
    }

    static func millimetres(_ key: String, _ path: WritableKeyPath<Settings, Int> & Sendable, _ range: ClosedRange<Int>,
                            _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .millimetres(range: range), d, reload, doc, read: { .int($0[keyPath: path]) },
                    write: { s, v in if case .int(let n) = v { s[keyPath: path] = n } })
    }

    static func duration(_ key: String, _ path: WritableKeyPath<Settings, Int> & Sendable, _ range: ClosedRange<Int>,
                         wholeSeconds: Bool = false, _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .duration(range: range, wholeSeconds: wholeSeconds), d, reload, doc,
                    read: { .milliseconds($0[keyPath: path]) },
                    write: { s, v in if case .milliseconds(let ms?) = v { s[keyPath: path] = ms } })
    }

    static func durationOrOff(_ key: String, _ path: WritableKeyPath<Settings, Int?> & Sendable, _ range: ClosedRange<Int>,
                              _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .durationOrOff(range: range), d, reload, doc, read: { .milliseconds($0[keyPath: path]) },
                    write: { s, v in if case .milliseconds(let ms) = v { s[keyPath: path] = ms } })
    }

    static func size(_ key: String, _ path: WritableKeyPath<Settings, FrameSize> & Sendable, limit: SizeLimit, _ d: String,
                     reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .size(limit: limit), d, reload, doc, read: { .size($0[keyPath: path]) },
                    write: { s, v in if case .size(let z) = v { s[keyPath: path] = z } })
    }

    static func bytes(_ key: String, _ path: WritableKeyPath<Settings, Int> & Sendable, _ range: ClosedRange<Int>,
                      _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .bytes(range: range), d, reload, doc, read: { .bytes($0[keyPath: path]) },
                    write: { s, v in if case .bytes(let n) = v { s[keyPath: path] = n } })
    }

    static func choice<E: SettingChoice>(_ key: String, _ path: WritableKeyPath<Settings, E> & Sendable,
                                         _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .choice(E.allCases.map(\.rawValue)), d, reload, doc, read: { .choice($0[keyPath: path].rawValue) },
                    write: { s, v in if case .choice(let c) = v, let e = E(rawValue: c) { s[keyPath: path] = e } })
    }

    static func choiceList<E: SettingChoice>(_ key: String, _ path: WritableKeyPath<Settings, [E]> & Sendable,
                                             _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .choiceList(E.allCases.map(\.rawValue)), d, reload, doc, read: { .choices($0[keyPath: path].map(\.rawValue)) },
                    write: { s, v in if case .choices(let list) = v { s[keyPath: path] = list.compactMap(E.init(rawValue:)) } })
    }

    /// `camera.backend`: its values and their words from ``CameraBackendNames``, read when asked.
    static func cameraBackend(_ key: String, _ path: WritableKeyPath<Settings, CameraBackendSetting> & Sendable,
                              _ d: String, reload: ReloadRule) -> SettingSpec {
        let installed = Installed(type: { CameraBackendNames.documentedType }, description: { CameraBackendNames.documentedDescription },
                                 parse: { CameraBackendNames.parse($0) })
        return SettingSpec(key, .choice(["auto"]), d, reload, "", installed: installed, read: { .choice($0[keyPath: path].rawValue) },
                           write: { s, v in if case .choice(let c) = v { s[keyPath: path] = CameraBackendSetting(rawValue: c) } })
    }

    static func string(_ key: String, _ path: WritableKeyPath<Settings, String> & Sendable, allowsEmpty: Bool,
                       maxLength: Int = SettingType.textLength, _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .string(allowsEmpty: allowsEmpty, maxLength: maxLength), d, reload, doc, read: { .text($0[keyPath: path]) },
                    write: { s, v in if case .text(let t) = v { s[keyPath: path] = t } })
    }

    static func media(_ key: String, _ path: WritableKeyPath<Settings, String> & Sendable, _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .media, d, reload, doc, read: { .text($0[keyPath: path]) },
                    write: { s, v in if case .text(let t) = v { s[keyPath: path] = t } })
    }

    static func path(_ key: String, _ path: WritableKeyPath<Settings, String> & Sendable, allowsEmpty: Bool,
                     _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .path(allowsEmpty: allowsEmpty, maxLength: SettingType.pathLength), d, reload, doc, read: { .text($0[keyPath: path]) },
                    write: { s, v in if case .text(let t) = v { s[keyPath: path] = t } })
    }

    static func color(_ key: String, _ path: WritableKeyPath<Settings, RGBColor> & Sendable, _ d: String, reload: ReloadRule, _ doc: String) -> SettingSpec {
        SettingSpec(key, .color, d, reload, doc, read: { .color($0[keyPath: path]) },
                    write: { s, v in if case .color(let c) = v { s[keyPath: path] = c } })
    }
}

/// A section of the config file.
public struct SectionSpec: Sendable, Hashable {
    /// The name in `[name]`.
    public let name: String
    /// What the section is about, one sentence.
    public let description: String
}

/// The one table of every setting: keys, types, defaults, reload rules, ranges and descriptions.
/// The config parser, `Settings.defaults`, the generated default config and the admin tool all read it.
public enum Schema {
    /// The default config file path.
    public static let defaultConfigPath = "/etc/photobooth/photobooth.conf"

    /// Every section, in file order.
    public static let sections: [SectionSpec] = [
        SectionSpec(name: "camera", description: "The camera: which one, its pixel format, sizes, frame rate and controls."),
        SectionSpec(name: "button", description: "The push button: a GPIO line (libgpiod character device), a key of an input device or a tap on a touch screen (libevdev)."),
        SectionSpec(name: "led", description: "An optional LED on a GPIO line: steady when the booth invites a press, blinking during the countdown."),
        SectionSpec(name: "session", description: "A session: how many shots, how long each step lasts."),
        SectionSpec(name: "storage", description: "Where and how photos are saved."),
        SectionSpec(name: "preview", description: "The live view for a screen or a browser, as a JPEG file."),
        SectionSpec(name: "print", description: "Printing through CUPS: when, where, on what media, and what happens to prints while the printer is unavailable."),
        SectionSpec(name: "display", description: "The screen: a Linux framebuffer, its console, rotation and scaling."),
        SectionSpec(name: "text", description: "What the screens say to guests, in the event's language."),
        SectionSpec(name: "picture", description: "The picture a session makes: its captures composed on one sheet with the event's name and date, saved beside them and printed."),
        SectionSpec(name: "gallery", description: "Guests take their pictures home: photobooth-gallery, the booth's own web server (a separate service with its own sandbox), serves each picture at a URL with an unguessable token."),
    ]

    /// Every setting, in file order (grouped by section, in `sections` order).
    public static let settings: [SettingSpec] = [
        // Restart only: the camera source is made once at start (DeviceFactory.camera) and the runtime holds that
        // instance; a reload reconfigures it but cannot swap in another backend's, whose device the old one holds open.
        // Its values and their words are the camera backends' own (CameraBackendNames, installed by BoothCamera).
        .cameraBackend("camera.backend", \.camera.backend, "auto", reload: .restart),
        .string("camera.device", \.camera.device, allowsEmpty: true, "", reload: .cameraStream,
                "Which camera to use. V4L2: a /dev path (/dev/video0), a /dev/v4l/by-id name, or a part of the camera's card name. gphoto2: a part of the model name (D750) or the USB port (usb:001,004), as 'photoboothctl devices' lists them. libcamera: the camera's id or a part of it or of its model (imx708). Empty: the first usable camera."),
        // Restart only, as camera.backend: the live view's device is part of the camera source made once at start
        // (a PairedCameraSource of the gphoto2 camera and that webcam, or the camera alone).
        .string("camera.live_view_device", \.camera.liveViewDevice, allowsEmpty: true, "", reload: .restart,
                "A gphoto2 camera's live view: empty for the camera's own (gp_camera_capture_preview), none for no live view (the screens show the countdown without it), or a V4L2 camera beside it, named as camera.device names one (/dev/video0): that webcam shows the guests live while the DSLR takes the stills."),
        .int("camera.live_view_rate", \.camera.liveViewRate, 1...60, unit: "frames per second", "25", reload: .cameraStream,
             "Live-view frames per second asked of a gphoto2 camera. Some bodies answer 'Camera Not Ready' when asked faster than they make frames."),
        .choice("camera.capture_target", \.camera.captureTarget, "ram", reload: .cameraStream,
                "Where a gphoto2 camera stores a still: ram (its internal memory; the booth downloads it and it is gone from the camera) or card (the memory card; downloaded, and kept there too). Checked against the targets the camera offers."),
        .choice("camera.format", \.camera.format, "auto", reload: .cameraStream,
                "Pixel format to stream. auto prefers MJPEG, then YUYV, else RGB24 converted by libv4l2."),
        .size("camera.preview_size", \.camera.previewSize, limit: .screen, "1280x720", reload: .cameraStream,
              "Live-view size in pixels, at most a screen's 8K (7680x4320): the live view is only drawn on screens. A size the camera does not offer is replaced by the nearest one it does, with a warning."),
        .size("camera.capture_size", \.camera.captureSize, limit: .still, "1280x720", reload: .cameraStream,
              "Photo size in pixels (a V4L2 or libcamera camera's; a gphoto2 camera takes its own), at most 12288x9216, above the largest cameras' 100 MP. When the size the camera gives for it differs from the size the live view streams at (compared as the camera negotiates them: a camera that offers one size never switches), the camera switches size for the capture and back, and the no-frames time that makes a camera fault counts from the end of the switch; a libcamera camera whose pipeline gives a still stream beside the live view (a Raspberry Pi camera module) takes it there, without a switch."),
        .int("camera.frame_rate", \.camera.frameRate, 1...120, unit: "frames per second", "30", reload: .cameraStream,
             "Frames per second asked of the camera."),
        .int("camera.settle_frames", \.camera.settleFrames, 0...60, unit: "frames", "3", reload: .cameraStream,
             "Frames dropped after a format or size switch while exposure settles."),
        .choice("camera.power_line_frequency", \.camera.powerLineFrequency, "50", reload: .cameraStream,
                "Mains frequency in Hz, so the camera filters the flicker of venue lights; off disables the filter, auto lets the camera detect it."),
        .choice("camera.exposure", \.camera.exposure, "auto", reload: .cameraStream,
                "auto: the camera adjusts exposure continuously; locked: held where it settled when the stream started. Ignored if the camera has no such control."),
        .choice("camera.white_balance", \.camera.whiteBalance, "auto", reload: .cameraStream,
                "auto: the camera adjusts white balance continuously; locked: held where it settled when the stream started. Ignored if the camera has no such control."),
        .choice("camera.focus", \.camera.focus, "auto", reload: .cameraStream,
                "auto: the camera focuses continuously; locked: held where it settled when the stream started. Ignored if the camera has no such control."),
        .duration("camera.capture_timeout", \.camera.captureTimeoutMilliseconds, 100...60_000, "3s", reload: .nextSession,
                  "Deadline for a capture after the trigger; a capture not done by then fails (and is retried once). A camera that stops delivering during a capture fails it by this deadline, not as a camera fault. A gphoto2 camera needs its autofocus, shutter and download to fit: 15s or more (config check warns below 10s)."),
        .duration("camera.idle_stop", \.camera.idleStopMilliseconds, 1000...86_400_000, "5min", reload: .nextSession,
                  "Stop the camera stream after this long in idle; it starts again on the next press, or for photoboothctl snapshot (the idle time then counts again)."),
        // The captures' turn at once; the screens, which draw the live view turned, are made again too.
        .choice("camera.rotation", \.camera.rotation, "0", reload: .atOnce,
                "Clockwise turn of the captures' pixels and the live view, in degrees; auto follows the accelerometer (see display.accelerometer). Saved photos are upright, EXIF orientation 1 or none."),

        .choiceList("button.source", \.button.sources, "gpio", reload: .reopen(.button),
                    "Where presses come from: gpio (the line below), input (a key of a USB button or keyboard, or a tap on a touch screen, through libevdev), or both. With both, a source that fails while another works is a warning in status and the log, retried, and the booth runs on; only when every source fails is the button a fault."),
        .string("button.input_device", \.button.inputDevice, allowsEmpty: false, "any keyboard", reload: .reopen(.button),
                "With source input: the device, as a /dev/input path, a name in /dev/input/by-id, the device's name as 'photoboothctl devices' lists it, 'any keyboard' (the first device that reports button.input_key, a USB or Bluetooth one before a built-in keyboard) or 'any touch screen'. It is grabbed: its keys reach no console."),
        .string("button.input_key", \.button.inputKey, allowsEmpty: false, "KEY_SPACE", reload: .reopen(.button),
                "With source input: the key that presses, as a Linux input key name (KEY_SPACE, KEY_ENTER, KEY_F13, BTN_LEFT; 'photoboothctl devices' lists a device's keys), or tap for a touch anywhere on a touch screen. Held for button.long_press: a long press; auto-repeat is no press."),
        .string("button.print_key", \.button.printKey, allowsEmpty: true, "", reload: .reopen(.button),
                "With source input, a booth with more buttons: the key that prints the picture under review (print.mode auto or press; once). It acts in review only. Empty: none."),
        .string("button.skip_key", \.button.skipKey, allowsEmpty: true, "", reload: .reopen(.button),
                "With source input: the key that skips printing the picture under review, as a long press does. It acts in review only. Empty: none."),
        .string("button.chip", \.button.chip, allowsEmpty: false, "gpiochip0", reload: .reopen(.button),
                "GPIO chip of the button: its label, name (gpiochip0) or /dev path."),
        .string("button.line", \.button.line, allowsEmpty: false, "GPIO17", reload: .reopen(.button),
                "GPIO line of the button: its offset on the chip (17) or its line name (GPIO17)."),
        .bool("button.active_low", \.button.activeLow, "true", reload: .reopen(.button),
              "true when pressing the button pulls the line low (a button to ground with a pull-up)."),
        .choice("button.bias", \.button.bias, "pull-up", reload: .reopen(.button),
                "Bias of the button line; as-is leaves it as the board has it."),
        .duration("button.debounce", \.button.debounceMilliseconds, 1...1000, "30ms", reload: .reopen(.button),
                  "A press counts once the line has been stable this long."),
        .duration("button.long_press", \.button.longPressMilliseconds, 200...10_000, "1500ms", reload: .reopen(.button),
                  "Holding the button this long is a long press (cancels a preview, countdown or series of shots); it fires once, while held."),
        .duration("button.stuck_limit", \.button.stuckLimitMilliseconds, 2000...600_000, "30s", reload: .reopen(.button),
                  "A button held longer than this is reported stuck (a fault) until it is released."),

        .string("led.chip", \.led.chip, allowsEmpty: true, "", reload: .reopen(.led),
                "GPIO chip of the LED: label, name or /dev path. Empty: the button's chip."),
        .string("led.line", \.led.line, allowsEmpty: true, "", reload: .reopen(.led),
                "GPIO line of the LED: offset or line name. Empty: no LED."),
        .bool("led.active_low", \.led.activeLow, "false", reload: .reopen(.led),
              "true when the LED lights with the line low."),

        .durationOrOff("session.preview", \.session.previewMilliseconds, 0...60_000, "3s", reload: .nextSession,
                       "Preview shown after a press before the countdown starts on its own. off: stay in preview until a second press, up to preview_timeout."),
        .duration("session.preview_timeout", \.session.previewTimeoutMilliseconds, 1000...600_000, "30s", reload: .nextSession,
                  "With preview = off, go back to idle after this long in preview without a press."),
        .duration("session.countdown", \.session.countdownMilliseconds, 0...10_000, wholeSeconds: true, "3s", reload: .nextSession,
                  "Countdown before the photo, one tick per second. 0s: the press itself triggers the photo."),
        .duration("session.review", \.session.reviewMilliseconds, 1000...300_000, "5s", reload: .nextSession,
                  "How long the photo is shown after it is taken."),
        .int("session.shots", \.session.shots, 1...4, unit: "shots", "1", reload: .nextSession,
             "Photos per session, each after its own countdown. The captures are composed into one picture, which review shows and printing prints."),
        .duration("session.between_shots", \.session.betweenShotsMilliseconds, 0...30_000, "2s", reload: .nextSession,
                  "Live view between two shots, announcing the next one (text.between_shots), before its countdown. 0s: the next countdown starts at once."),
        .choice("session.cancelled_captures", \.session.cancelledCaptures, "keep", reload: .nextSession,
                "What a long press during a series of shots does with the captures already taken: keep them on disk, or delete them. A cancelled series prints nothing either way."),

        // Checked as at start, then used for the next save (a refusal keeps the old one); session numbers go on

        // from the higher of the two directories; the totals file follows (BoothRuntime.applyReload).

        .path("storage.dir", \.storage.dir, allowsEmpty: false, "/var/lib/photobooth/photos", reload: .atOnce,
              "Directory for the photos, in one folder per date. A relative path is taken from the daemon's working directory."),
        .int("storage.jpeg_quality", \.storage.jpegQuality, 1...100, "92", reload: .atOnce,
             "JPEG quality for photos the booth encodes (YUYV or RGB cameras); MJPEG frames are saved as they came."),
        .bytes("storage.min_free", \.storage.minFreeBytes, 0...1_000_000_000_000, "500MB", reload: .atOnce,
               "Free space to keep on the photos' disk; below it the booth refuses new sessions and says why."),
        // Restart only: the running booth already counts on from the highest number it has seen.
        .path("storage.session_file", \.storage.sessionFile, allowsEmpty: false, "/var/lib/photobooth/session-number", reload: .restart,
              "The booth's own record of the highest session number handed out, whichever photos folder it went to, outside them: a number is never handed out twice, also when storage.dir moves to another folder (or card) and back. Each folder keeps its own record too (.photobooth-session); the next session is one past the highest of both and of the photos."),
        // Checked at once; changed together with storage.dir, both are checked as one and kept or refused as one.
        .path("storage.mount", \.storage.mount, allowsEmpty: true, "", reload: .atOnce,
              "Mount point of removable media holding dir (e.g. /media/photobooth). When nothing is mounted there, or dir is on another file system, the booth goes to fault(storage) instead of filling the SD card. Empty: no check."),

        .path("preview.file", \.preview.file, allowsEmpty: true, "/run/photobooth/preview.jpg", reload: .reopen(.screen),
              "What the screen shows (live view, texts, countdown digit, review with its print status, fault) as a JPEG file, rewritten atomically. Empty: no file preview."),
        .int("preview.frame_rate", \.preview.frameRate, 1...30, unit: "rewrites per second", "5", reload: .reopen(.screen),
             "How often the preview file is rewritten."),
        .size("preview.size", \.preview.size, limit: .screen, "800x480", reload: .reopen(.screen),
              "Size in pixels of the preview file's picture, drawn like the screen (display.scaling, display.mirror, camera.rotation), at most a screen's 8K (7680x4320); it costs 12 bytes a pixel (800x480: 5 MB, 3840x2160: 100 MB)."),

        .choice("print.mode", \.print.mode, "off", reload: .nextSession,
                "off: never print. auto: print every picture once when its review starts. press: print when the guest presses during review (sent after button.long_press, as a long press starts with a press). In auto and press, a long press during review skips printing that picture."),
        .string("print.destination", \.print.destination, allowsEmpty: true, "", reload: .reopen(.printer),
                "CUPS queue to print to (lpstat -p lists them). Empty: the CUPS default destination."),
        .int("print.copies", \.print.copies, Settings.Print.copiesRange, unit: "copies", "1", reload: .reopen(.printer),
             "Copies of each picture."),
        .media("print.media", \.print.media, "na_index-4x6_4x6in", reload: .reopen(.printer),
                "PWG media name the printer must support (lpoptions -p QUEUE -l, or ipptool media-supported). The picture is rendered at this media's exact size and aspect, filled edge to edge, and sent with print-scaling none. With print.dpi the page may have at most 64 megapixels (4x6in at 1200 dpi is 35)."),
        .choice("print.color", \.print.color, "color", reload: .reopen(.printer),
                "print-color-mode of the jobs."),
        .int("print.dpi", \.print.dpi, 72...1200, unit: "dots per inch", "300", reload: .atOnce,
             "Resolution the picture is rendered at for the media (4x6in at 300 dpi: 1200x1800 pixels)."),
        .int("print.pending_limit", \.print.pendingLimit, 1...50, unit: "jobs", "1", reload: .atOnce,
             "Jobs out at the printer at once; further requests wait in the booth's journal, so an out-of-paper printer never swallows a queue."),
        .int("print.reprint_limit", \.print.reprintLimit, 0...20, unit: "reprints", "1", reload: .atOnce,
             "Reprints allowed per picture (photoboothctl prints reprint ID)."),
        .choice("print.backlog", \.print.backlog, "max-age", reload: .atOnce,
                "Which held requests print once the printer is ready again, oldest first. all: every one; newest: only the newest backlog_newest; max-age: those younger than backlog_max_age (the guest is gone after that). Dropped requests are reported."),
        .int("print.backlog_newest", \.print.backlogNewest, 1...1000, unit: "requests", "5", reload: .atOnce,
             "With backlog = newest: how many of the newest held requests are kept."),
        .duration("print.backlog_max_age", \.print.backlogMaxAgeMilliseconds, 1000...86_400_000, "15min", reload: .atOnce,
                  "With backlog = max-age: held requests older than this are dropped."),
        // Seeds the paper count at once when the journal has none yet; once it counts, only refill sets it (as at a restart).
        .int("print.sheets", \.print.sheets, Settings.Print.sheetsRange, unit: "sheets", "0", reload: .atOnce,
             "Sheets loaded when the journal has no paper count yet (0: not counted until photoboothctl refill SHEETS); after that the count lives in the journal and refill sets it."),
        .int("print.sheets_per_picture", \.print.sheetsPerPicture, 1...10, unit: "sheets", "1", reload: .atOnce,
             "Sheets one copy of a picture uses; completed jobs take copies x this off the paper count."),
        .int("print.paper_warning", \.print.paperWarning, 0...10_000, unit: "sheets", "10", reload: .atOnce,
             "The printer is reported as warning (paper-low) when the paper count is at or below this; prints go on."),
        .duration("print.poll_interval", \.print.pollIntervalMilliseconds, 200...60_000, "2s", reload: .atOnce,
                  "How often printer health and job states are asked of CUPS (and of the printer itself while idle)."),
        // Restart only: the journal holds the requests in flight and their ids; another file read mid-run would
        // orphan held and reprintable requests of this one, or hand out request ids that clash with that one's.
        .path("print.journal", \.print.journal, allowsEmpty: false, "/var/lib/photobooth/print-journal.json", reload: .restart,
              "The print journal: every request with its job id and final state, rewritten atomically, so a restart prints nothing twice and forgets nothing."),
        // Restart only: the pages of every request in the journal are in this directory; a new one mid-run would
        // leave them behind, so held requests could not be submitted and reprints of them would fail.
        .path("print.spool", \.print.spool, allowsEmpty: false, "/var/lib/photobooth/prints", reload: .restart,
              "Directory of the rendered pictures; they stay there for reprints while their request is in the journal (every unfinished one and the newest 100 finished), or until photoboothctl prints purge."),

        .path("display.device", \.display.device, allowsEmpty: true, "auto", reload: .reopen(.screen),
              "The screen the guest sees: a DRM/KMS card (/dev/dri/card1: its connected connector at its preferred mode, page flips on vblank, no tearing), a framebuffer (/dev/fb0, in the mode the driver gives; choose it at boot, e.g. video=1280x800), or auto: the first card with a connected screen, else /dev/fb0 (unless it is a card's own fbdev emulation), else the first card. A card with no screen connected is waited for (looked at every 5 s, drawn on once one is plugged in). Empty: no screen."),
        .path("display.console", \.display.console, allowsEmpty: true, "/dev/tty1", reload: .reopen(.screen),
              "The kiosk's virtual terminal, switched to graphics mode (no text, no cursor, no blanking) while the booth runs. Empty: leave it."),
        .choice("display.rotation", \.display.rotation, "0", reload: .reopen(.screen),
                "Clockwise turn of the whole drawing, in degrees, for a screen mounted sideways; auto follows the accelerometer."),
        .choice("display.fallback_rotation", \.display.fallbackRotation, "0", reload: .reopen(.screen),
                "The turn auto uses when no accelerometer answers."),
        .string("display.accelerometer", \.display.accelerometer, allowsEmpty: true, "", reload: .reopen(.screen),
                "The IIO accelerometer for auto rotation, by its name in sysfs. Empty: the first one found."),
        .choice("display.scaling", \.display.scaling, "fit", reload: .reopen(.screen),
                "fit: the whole picture with black bars (letterbox); fill: the screen filled, edges cropped."),
        .bool("display.mirror", \.display.mirror, "true", reload: .reopen(.screen),
              "Mirror the live view, as guests expect; captures and prints are never mirrored."),
        .int("display.frame_rate", \.display.frameRate, 1...60, unit: "frames per second", "30", reload: .reopen(.screen),
             "Screen redraws per second at most."),
        .path("display.font", \.display.font, allowsEmpty: false, "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", reload: .reopen(.screen),
              "TrueType or OpenType font for the screens' text (Debian: fonts-dejavu-core)."),

        .string("text.idle", \.text.idle, allowsEmpty: false, "Press the button", reload: .reopen(.screen),
                "The invitation on the idle screen."),
        .string("text.preview", \.text.preview, allowsEmpty: false, "Get ready!", reload: .reopen(.screen),
                "The prompt shown before the countdown."),
        .string("text.countdown_shot", \.text.countdownShot, allowsEmpty: false, "Photo {shot} of {shots}", reload: .reopen(.screen),
                "Shown with the countdown when a session has more than one shot; {shot} and {shots} are replaced by the numbers."),
        .string("text.between_shots", \.text.betweenShots, allowsEmpty: false, "{shot} of {shots}", reload: .reopen(.screen),
                "Shown over the live view between two shots; {shot} is the next shot, {shots} the shots per session."),
        .string("text.fault_camera", \.text.faultCamera, allowsEmpty: false, "Camera disconnected — back soon", reload: .reopen(.screen),
                "Shown while the camera is missing or failing."),
        .string("text.fault_camera_resting", \.text.faultCameraResting, allowsEmpty: false, "The camera is resting — back soon", reload: .reopen(.screen),
                "Shown instead while the camera's battery is empty (a DSLR or mirrorless camera that reports its battery)."),
        .string("text.fault_button", \.text.faultButton, allowsEmpty: false, "Button out of order — back soon", reload: .reopen(.screen),
                "Shown while the button fails (its line, or its input device unplugged) or is stuck."),
        .string("text.fault_storage", \.text.faultStorage, allowsEmpty: false, "Photo storage full or missing — back soon", reload: .reopen(.screen),
                "Shown while photos cannot be saved."),
        .string("text.scan", \.text.scan, allowsEmpty: false, "Scan to get your photo", reload: .reopen(.screen),
                "Under the QR code of the picture's URL on the review screen (gallery.enabled and gallery.url_base set)."),
        .string("text.review_not_shown", \.text.reviewNotShown, allowsEmpty: false, "Your photo cannot be shown here", reload: .reopen(.screen),
                "Shown on the review screen when the capture cannot be drawn there (the log says why)."),
        .string("text.wifi", \.text.wifi, allowsEmpty: false, "Join the booth's Wi-Fi", reload: .reopen(.screen),
                "Under the WIFI: QR code on the idle screen (gallery.wifi_ssid set)."),

        .bool("picture.compose_single_shot", \.picture.composeSingleShot, "false", reload: .nextSession,
              "With session.shots = 1: false keeps the capture itself as the picture (reviewed and printed as taken, filled to the media); true composes it like a series, with the layout's margins, footer and overlay. Sessions of 2 to 4 shots are always composed."),
        .choice("picture.layout", \.picture.layout, "auto", reload: .nextSession,
                "How the captures are arranged. auto: by the number of shots (1 single, 2 strip, 3 3up, 4 2x2). single: one capture; 2x2: a grid of four; strip: up to four in a column, twice side by side (cut into two strips); 3up: three in a row or a column. The sheet is turned to suit the captures' orientation."),
        .choice("picture.fit", \.picture.fit, "fill", reload: .nextSession,
                "fill: each capture fills its slot, edges cropped; fit: the whole capture, with background bars (letterbox). Captures are never stretched."),
        .choice("picture.size", \.picture.size, "media", reload: .nextSession,
                "The sheet: media takes the size of print.media; or a size in inches (turned to suit the layout)."),
        .choice("picture.dpi", \.picture.dpi, "print", reload: .nextSession,
                "Resolution of the picture in dots per inch; print takes print.dpi (4x6in at 300 dpi: 1800x1200 pixels, at 600 dpi: 3600x2400)."),
        .int("picture.quality", \.picture.quality, 1...100, "92", reload: .nextSession,
             "JPEG quality of the picture (4:2:0 chroma subsampling)."),
        .millimetres("picture.margin", \.picture.marginMillimetres, 0...50, "3", reload: .nextSession,
                     "Margin around and between the captures, in millimetres."),
        .color("picture.background", \.picture.background, "white", reload: .nextSession,
               "Colour of the sheet around the captures."),
        .path("picture.background_image", \.picture.backgroundImage, allowsEmpty: true, "", reload: .nextSession,
              "A JPEG or PNG filling the sheet (cropped to its aspect) under the captures. Empty: the background colour."),
        .path("picture.overlay", \.picture.overlay, allowsEmpty: true, "", reload: .nextSession,
              "A PNG with transparency drawn over the whole picture (a frame, a logo), scaled to cover the sheet with its aspect kept (make it the sheet's aspect and orientation). Empty: none."),
        .string("picture.footer_top", \.picture.footerTop, allowsEmpty: true, "", reload: .nextSession,
                "First footer line, e.g. the event's name; {date} is replaced by the date. Empty: no line."),
        .string("picture.footer_bottom", \.picture.footerBottom, allowsEmpty: true, "{date}", reload: .nextSession,
                "Second footer line; {date} is replaced by the date. Empty: no line. With both lines empty there is no footer."),
        .string("picture.date_format", \.picture.dateFormat, allowsEmpty: false, "%d %B %Y", reload: .nextSession,
                "How {date} is written: a strftime(3) format (%d day, %m month, %B month name, %Y year)."),
        .path("picture.font", \.picture.font, allowsEmpty: false, "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", reload: .nextSession,
              "TrueType or OpenType font of the footer (Debian: fonts-dejavu-core)."),
        .color("picture.text_color", \.picture.textColor, "black", reload: .nextSession,
               "Colour of the footer text."),
        .choice("picture.qr", \.picture.qr, "off", reload: .nextSession,
                "The corner of the printed page that carries the QR code of the picture's URL (gallery.enabled, and gallery.url_base or gallery.public_url set): top-left, top-right, bottom-left, bottom-right, or off. About 20 mm square at print.dpi, 3 mm in from the edges; only the print has it (the saved picture is the URL's own file). It works while guests' phones reach that URL: the booth's network, unless gallery.public_url points at the synced copies."),

        // The daemon opens the index and the secret once at its start; the gallery reads every key at its own start.
        .bool("gallery.enabled", \.gallery.enabled, "false", reload: .restart,
              "true: the daemon records every capture and picture in the index and photobooth-gallery serves them (start that service too: systemctl enable --now photobooth-gallery)."),
        .string("gallery.listen", \.gallery.listen, allowsEmpty: false, "0.0.0.0", reload: .galleryRestart,
                "The IPv4 address the gallery listens on: 0.0.0.0 for every interface, or the booth's Wi-Fi address only."),
        .int("gallery.port", \.gallery.port, 1...65535, "8080", reload: .galleryRestart,
             "The gallery's TCP port (below 1024 needs a capability the unit does not give)."),
        .string("gallery.url_base", \.gallery.urlBase, allowsEmpty: true, "", reload: .restart,
                "What the pictures' URLs start with, as guests' phones reach the booth: http://10.42.0.1:8080. Empty: no QR code on the review (photoboothd has no network of its own to learn the address)."),
        .path("gallery.index", \.gallery.index, allowsEmpty: false, "/var/lib/photobooth/gallery/index.sqlite", reload: .restart,
              "The SQLite index of the pictures (written by the daemon, read by the gallery); rebuilt from the photos when missing or damaged."),
        .path("gallery.secret", \.gallery.secret, allowsEmpty: false, "/var/lib/photobooth/gallery.secret", reload: .restart,
              "The key the pictures' URL tokens are made with, made at the first start (32 random bytes, the daemon's only). Keep it with the photos: another secret gives every picture another URL."),
        .int("gallery.max_connections", \.gallery.maxConnections, 1...1000, unit: "connections", "256", reload: .galleryRestart,
             "Connections the gallery keeps at once, from all guests (32 KiB each at most). Phones keep a few open between requests: at the limit a new connection closes the one that has waited longest for a request (an idle one, or one whose request still trickles in), or is refused when none waits (logged once a minute, counted in /health)."),
        .int("gallery.connections_per_client", \.gallery.connectionsPerClient, 1...100, unit: "connections", "8", reload: .galleryRestart,
             "Connections at once from one address (a phone opens a few); more are refused (logged once a minute per address, counted in /health)."),
        .duration("gallery.timeout", \.gallery.timeoutMilliseconds, 1000...600_000, "10s", reload: .galleryRestart,
                  "A connection with nothing sent or received for this long is closed (an idle one a phone keeps, a client that stalls), and so is one whose request has not arrived whole this long after it opened or after its previous answer, however slowly it trickles in (whole seconds)."),
        .durationOrOff("gallery.expiry", \.gallery.expiryMilliseconds, 3_600_000...315_360_000_000, "off", reload: .galleryRestart,
                       "How long a picture stays downloadable after it was saved (e.g. 30d, the weeks after the event), or off: for as long as it is kept. Its file stays; a URL past it shows gallery.missing_text."),
        .durationOrOff("gallery.idle_code", \.gallery.idleCodeMilliseconds, 10_000...86_400_000, "30s", reload: .atOnce,
                       "How long the last picture's QR code stays on the idle screen after its review (a guest who missed it can still scan it; gone when the next session starts, or when the picture is taken down), or off. Whoever walks up next can scan it too: keep it short (30s lets its guest scan it on the way out), or off."),
        .string("gallery.wifi_ssid", \.gallery.wifiSSID, allowsEmpty: true, maxLength: 32, "", reload: .atOnce,
                "The booth's Wi-Fi name (at most 32 characters, as Wi-Fi allows): the idle screen shows a WIFI: QR code that phones join it with (docs/gallery.md: The booth's Wi-Fi). Empty: no such code."),
        .string("gallery.wifi_password", \.gallery.wifiPassword, allowsEmpty: true, maxLength: 63, "", reload: .atOnce,
                "Its password, at most 63 characters as WPA's passphrase (anyone who sees the screen can read it from the code: use one for guests only). Empty with wifi_security = nopass."),
        .choice("gallery.wifi_security", \.gallery.wifiSecurity, "wpa", reload: .atOnce,
                "wpa (WPA2/WPA3 personal), wep, or nopass for an open network."),
        .bool("gallery.list", \.gallery.list, "false", reload: .galleryRestart,
              "true: the gallery's front page (/) lists every picture, newest first, with thumbnails, gallery.page_size a page. false: a picture is seen only at its own URL (its QR code), as a wedding's guests expect; gallery.pin can guard the list."),
        .bool("gallery.slideshow", \.gallery.slideshow, "false", reload: .galleryRestart,
              "true: /live is a slideshow for a second screen or a TV's browser: each new picture as it is saved, recent ones in between (gallery.pin guards it too)."),
        .int("gallery.page_size", \.gallery.pageSize, 10...500, unit: "pictures", "60", reload: .galleryRestart,
             "Pictures on one page of the list (thumbnails of about 12 KB each)."),
        .duration("gallery.slide_time", \.gallery.slideMilliseconds, 2000...600_000, "8s", reload: .galleryRestart,
                  "How long the slideshow shows each recent picture before the next; a new picture is shown at once, for twice as long."),
        .string("gallery.pin", \.gallery.pin, allowsEmpty: true, "", reload: .galleryRestart,
                "A PIN (4 to 32 characters) that the list and the slideshow ask for, once per browser (a cookie for 30 days, signed with a key kept in gallery.state, so it outlives a restart; a new PIN asks again); a picture's own URL never asks. 5 wrong tries within any minute per address, then that address waits until the oldest of them is a minute old. Empty: no PIN."),
        .string("gallery.pin_text", \.gallery.pinText, allowsEmpty: false, "Enter the event's PIN to see all photos", reload: .galleryRestart,
                "The words above the PIN's field."),
        .string("gallery.list_text", \.gallery.listText, allowsEmpty: false, "All photos", reload: .galleryRestart,
                "The heading of the list and the slideshow's title."),
        .path("gallery.cache", \.gallery.cache, allowsEmpty: false, "/var/cache/photobooth-gallery", reload: .galleryRestart,
              "The gallery's own folder for what it can make again: the thumbnails, rclone's HOME and cache (systemd's CacheDirectory of photobooth-gallery.service). Made when missing; safe to empty, also while the gallery runs (what must not be lost is in gallery.state)."),
        .path("gallery.state", \.gallery.state, allowsEmpty: false, "/var/lib/photobooth-gallery", reload: .galleryRestart,
              "The gallery's own folder for what must not be lost (systemd's StateDirectory of photobooth-gallery.service, mode 0700): the sync ledger, the alerts' cursor, the gallery's own alerts not sent yet and whether sync-behind was raised, the PIN cookie's key. Made when missing; keep it across restarts and upgrades."),
        .string("gallery.public_url", \.gallery.publicURL, allowsEmpty: true, "", reload: .restart,
                "With sync: the public address of a synced copy, {token} standing for its name (https://photos.example.org/wedding/{token}.jpg). The review's and the print's QR codes then carry it instead of gallery.url_base's, so they work away from the booth's network. Empty: gallery.url_base."),
        .string("gallery.sync_remote", \.gallery.syncRemote, allowsEmpty: true, "", reload: .galleryRestart,
                "Where photobooth-gallery copies each picture with rclone as it is saved, as TOKEN.jpg: REMOTE:path (a remote of gallery.sync_config: S3, WebDAV, SFTP, Google Drive…) or an absolute folder. Retried with backoff while it is away; a picture taken down is deleted there. Several booths may share one. Empty: no sync."),
        .durationOrOff("gallery.sync_alert", \.gallery.syncAlertMilliseconds, 60_000...86_400_000, "10min", reload: .galleryRestart,
                       "With sync: the alert sync-behind (gallery.alert_url) once pictures or removals have waited this long for an away remote, and its end once caught up; /health and photoboothctl status show the backlog at once. A time, not a count: one picture waiting an hour at a quiet booth matters as much as twenty at a busy one, and a busy booth's short outage alerts nobody. Or off."),
        .path("gallery.sync_config", \.gallery.syncConfig, allowsEmpty: false, "/etc/photobooth/rclone.conf", reload: .galleryRestart,
              "rclone's config file with gallery.sync_remote's remote (rclone config --config FILE; readable by the photobooth-gallery user)."),
        .string("gallery.alert_url", \.gallery.alertURL, allowsEmpty: true, "", reload: .galleryRestart,
                "A webhook photobooth-gallery POSTs the operator's alerts to, as JSON: a fault entered or left, paper low or out, storage low (photoboothctl gallery test-alert sends one). Empty: none."),
        .duration("gallery.alert_interval", \.gallery.alertIntervalMilliseconds, 5000...3_600_000, "1min", reload: .galleryRestart,
                  "At most one alert POST this often: changes in between go together in the next."),
        .string("gallery.title", \.gallery.title, allowsEmpty: false, "Your photo", reload: .galleryRestart,
                "The heading of a picture's page, in the event's language."),
        .string("gallery.download_text", \.gallery.downloadText, allowsEmpty: false, "Download", reload: .galleryRestart,
                "The words on the page's download button."),
        .string("gallery.missing_text", \.gallery.missingText, allowsEmpty: false, "This photo is not here (any more). Check the code, or ask at the booth.", reload: .galleryRestart,
                "The page for a URL that names no picture."),
    ]

    /// The setting with this `section.key`, if there is one.
    public static func spec(for key: String) -> SettingSpec? { specsByKey[key] }

    static let specsByKey: [String: SettingSpec] = {
        var table: [String: SettingSpec] = [:]
        for spec in settings { table[spec.key] = spec }
        return table
    }()

    /// The settings of one section, in file order.
    public static func settings(inSection name: String) -> [SettingSpec] { settings.filter { $0.section == name } }

    /// The known key closest in spelling to `key` (a full `section.key`), if one is close enough to be a typo.
    /// Close enough means at most 2 edits, or a third of the key's name part for long names.
    public static func closestKey(to key: String) -> String? {
        var best: (spec: SettingSpec, distance: Int)?
        for spec in settings {
            let d = Spelling.distance(key, spec.key)
            if let current = best, current.distance <= d { continue }
            best = (spec, d)
        }
        guard let found = best, found.distance <= max(2, found.spec.name.count / 3) else { return nil }
        return found.spec.key
    }
}

extension Settings {
    /// Every setting at its schema default.
    public static let defaults: Settings = {
        var s = Settings()
        for spec in Schema.settings {
            if case .success(let v) = spec.parse(spec.defaultText) { spec.write(&s, v) }
        }
        return s
    }()

    /// The value of `key` (`section.key`) as written in a config file (`"1500ms"`, `"off"`), or nil for an unknown key.
    public func text(forKey key: String) -> String? { Schema.spec(for: key)?.text(in: self) }
}
