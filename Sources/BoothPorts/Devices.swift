import BoothCore

/// What a button reports to the runtime.
public enum ButtonSignal: Sendable, Equatable {
    /// A debounced press; `at` is its time on CLOCK_MONOTONIC (the kernel's edge timestamp).
    case press(id: UInt64, at: MonotonicInstant)
    /// Press `id` held for `button.long_press`.
    case longPress(id: UInt64)
    /// A review key (`button.print_key`, `button.skip_key`) went down.
    case reviewAction(ReviewAction)
    /// Held longer than `button.stuck_limit`: a fault reason until released.
    case stuck(String)
    /// A stuck button was released.
    case unstuck
    /// The line failed while in use (the thread ended and released it); the message says why.
    case failed(String)
}

/// A button: the GPIO line of the real booth, or the terminal under `--simulate`.
public protocol ButtonDevice: AnyObject, Sendable {
    /// For logs and status: "gpiochip0 line 17 (GPIO17)", "keyboard"; read again for each `status` (a device
    /// of several sources says there which one failed).
    var identity: String { get }
    /// Requests the line and starts delivering signals from a thread the device owns.
    /// - Throws: an error naming the chip and line when the line cannot be requested.
    func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws
    /// Stops delivering and releases the line. Safe to call twice.
    func stop()
    /// False once the device stopped by itself (line failed) or was stopped.
    var isRunning: Bool { get }
    /// Why the device delivers no more presses although nothing failed (the keyboard at end of its
    /// input: `"input ended"`), for `status`; nil while it delivers (the default). Such a device stays
    /// ``isRunning`` (it is no fault and nothing to retry: the booth runs on with its other presses).
    var ended: String? { get }
    /// A device of several sources: the ones that failed while others work, with why (`status` and
    /// `--check` say it); nil when all work (the default).
    var degraded: String? { get }
    /// From the runtime's tick (its loop's thread), with the runtime's clock: a device of several
    /// sources opens a failed one again when its retry is due. The default does nothing.
    func tick(now: MonotonicInstant)
}

extension ButtonDevice {
    public var ended: String? { nil }
    public var degraded: String? { nil }
    public func tick(now: MonotonicInstant) {}
}

/// The LED by the button.
public protocol LEDDevice: AnyObject, Sendable {
    func set(_ pattern: LEDPattern)
    /// Turns the LED off and releases the line.
    func stop()
}

/// What a screen shows: the screen, and for the review the picture and a line of status as data
/// (the runtime words it: today the print status of the picture under review; any other
/// output could say something there too). A screen sink knows nothing of printers.
public struct ScreenContent: Sendable, Equatable {
    public var screen: Screen
    /// The JPEG the review shows (the session's picture, or its one capture); nil on other screens
    /// (and ignored there).
    public var picture: [UInt8]?
    /// The review's status line, drawn in a band at the bottom; nil or empty: none. Ignored on other screens.
    public var status: String?
    /// The picture's URL for guests (the gallery), drawn as a QR code beside it on the review, and
    /// on the idle screen the last picture's (`gallery.idle_code`); nil: none. Ignored on other screens.
    public var link: String?
    /// A `WIFI:` code to join the booth's network (`gallery.wifi_ssid`), drawn on the idle screen;
    /// nil: none. Ignored on other screens.
    public var wifi: String?

    public init(_ screen: Screen, picture: [UInt8]? = nil, status: String? = nil, link: String? = nil, wifi: String? = nil) {
        self.screen = screen
        self.picture = picture
        self.status = status
        self.link = link
        self.wifi = wifi
    }
}

/// Where the guest's screen goes: the framebuffer and the file preview.
public protocol DisplaySink: AnyObject, Sendable {
    /// Shows `content`. The runtime shows the review again, with the same picture, when its status
    /// line changes; the sink draws it on a thread of its own (this only hands the data over).
    func show(_ content: ScreenContent)
    /// A live frame from the camera thread (the sink keeps its own rate).
    func frame(_ frame: Frame)
    /// The daemon stops: release the device (the framebuffer display gives the console back).
    func close()
}

extension DisplaySink {
    public func close() {}
}
