import BoothCore

/// The LED patterns the core asks for (declared in BoothCore), as on/off timing:
/// blink is on/off at `LEDTiming.blinkOn/OffMilliseconds` (countdown); fault is two short
/// flashes, then a pause, distinct from blink.
extension LEDPattern {

    /// The pattern as (on, milliseconds) segments repeated from elapsed 0; nil for a constant pattern.
    public func segments(_ timing: LEDTiming) -> [(on: Bool, milliseconds: Int64)]? {
        switch self {
        case .off, .steady: nil
        case .blink: [(true, timing.blinkOnMilliseconds), (false, timing.blinkOffMilliseconds)]
        case .fault:
            [(true, timing.faultFlashMilliseconds), (false, timing.faultGapMilliseconds),
             (true, timing.faultFlashMilliseconds), (false, timing.faultPauseMilliseconds)]
        }
    }

    /// Whether the LED is lit `elapsedMilliseconds` after the pattern was set (negative counts as 0).
    public func isOn(atElapsedMilliseconds elapsed: Int64, timing: LEDTiming = LEDTiming()) -> Bool {
        position(elapsed, timing).on
    }

    /// The elapsed time (ms since the pattern was set) of the next on/off switch after
    /// `elapsed`; nil when the pattern never changes.
    public func nextChange(afterElapsedMilliseconds elapsed: Int64, timing: LEDTiming = LEDTiming()) -> Int64? {
        let p = position(elapsed, timing)
        return p.changeAt
    }

    private func position(_ elapsed: Int64, _ timing: LEDTiming) -> (on: Bool, changeAt: Int64?) {
        guard let segments = segments(timing) else { return (self == .steady, nil) }
        let period = segments.reduce(0) { $0 + $1.milliseconds }
        guard period > 0 else { return (false, nil) }
        let t = max(0, elapsed)
        let cycleStart = t - t % period
        var end = cycleStart
        for segment in segments {
            end += segment.milliseconds
            if t < end { return (segment.on, end) }
        }
        return (segments[0].on, end)
    }
}

/// LED pattern timing in milliseconds.
public struct LEDTiming: Sendable, Hashable {
    public var blinkOnMilliseconds: Int64
    public var blinkOffMilliseconds: Int64
    /// Each of the fault pattern's two flashes.
    public var faultFlashMilliseconds: Int64
    /// Dark time between the two flashes.
    public var faultGapMilliseconds: Int64
    /// Dark time after the second flash.
    public var faultPauseMilliseconds: Int64

    public init(blinkOnMilliseconds: Int64 = 250, blinkOffMilliseconds: Int64 = 250,
                faultFlashMilliseconds: Int64 = 120, faultGapMilliseconds: Int64 = 120,
                faultPauseMilliseconds: Int64 = 900) {
        self.blinkOnMilliseconds = max(1, blinkOnMilliseconds)
        self.blinkOffMilliseconds = max(1, blinkOffMilliseconds)
        self.faultFlashMilliseconds = max(1, faultFlashMilliseconds)
        self.faultGapMilliseconds = max(1, faultGapMilliseconds)
        self.faultPauseMilliseconds = max(1, faultPauseMilliseconds)
    }
}
