import BoothCore

/// What a button reports to the runtime.
public enum ButtonSignal: Sendable, Equatable {
    /// A debounced press; `at` is its time on CLOCK_MONOTONIC (the kernel's edge timestamp).
    case press(id: UInt64, at: MonotonicInstant)
    /// Press `id` held for `button.long_press`.
    case longPress(id: UInt64)
    /// Held longer than `button.stuck_limit`: a fault reason until released.
    case stuck(String)
    /// A stuck button was released.
    case unstuck
    /// The line failed while in use (the thread ended and released it); the message says why.
    case failed(String)
}

/// A button: the GPIO line of the real booth, or the terminal under `--simulate`.
public protocol ButtonDevice: AnyObject, Sendable {
    /// For logs and status: "gpiochip0 line 17 (GPIO17)", "keyboard".
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
}

extension ButtonDevice {
    public var ended: String? { nil }
}

/// The LED by the button.
public protocol LEDDevice: AnyObject, Sendable {
    func set(_ pattern: LEDPattern)
    /// Turns the LED off and releases the line.
    func stop()
}

/// Where the guest's screen goes: the framebuffer and the file preview.
public protocol DisplaySink: AnyObject, Sendable {
    /// Shows a screen; `capture` holds the JPEG of the capture for `.review`, `printStatus` what
    /// the review screen says about printing it (``PrintWorker/reviewText(captureID:)``; nil: nothing).
    /// The runtime shows the review again, with the same capture, when its print status changes.
    func show(_ screen: Screen, capture: [UInt8]?, printStatus: String?)
    /// A live frame from the camera thread (the sink keeps its own rate).
    func frame(_ frame: Frame)
    /// The daemon stops: release the device (the framebuffer display gives the console back).
    func close()
}

extension DisplaySink {
    public func close() {}
}
