import BoothCore

/// A frame interval: seconds per frame as a fraction, as V4L2's `v4l2_fract`
/// (`numerator / denominator` seconds; 1/30 is 30 frames per second).
public struct FrameInterval: Hashable, Sendable, CustomStringConvertible {
    /// Numerator of the interval in seconds.
    public var numerator: UInt32
    /// Denominator of the interval in seconds.
    public var denominator: UInt32

    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The interval for `framesPerSecond` (e.g. 30 → 1/30, 29.97 → 1000/29970 reduced).
    public init(framesPerSecond fps: Double) {
        if fps <= 0 || !fps.isFinite {
            self.init(numerator: 1, denominator: 30)
        } else if fps == fps.rounded(), fps <= Double(UInt32.max) {
            self.init(numerator: 1, denominator: UInt32(fps))
        } else {
            let den = UInt64((fps * 1000).rounded())
            let g = FrameInterval.gcd(1000, max(den, 1))
            self.init(numerator: UInt32(1000 / g), denominator: UInt32(clamping: max(den, 1) / g))
        }
    }

    /// Seconds per frame; 0 when the denominator is 0.
    public var seconds: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }

    /// Frames per second, `denominator / numerator`; 0 when the numerator is 0.
    public var framesPerSecond: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }

    /// `"1/30 s (30 fps)"`.
    public var description: String {
        "\(numerator)/\(denominator) s (\(FrameInterval.format(framesPerSecond)) fps)"
    }

    static func format(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return max(x, 1)
    }
}

/// The frame sizes a camera offers for one pixel format (`VIDIOC_ENUM_FRAMESIZES`).
public enum FrameSizeOffer: Hashable, Sendable {
    /// A list of sizes (`V4L2_FRMSIZE_TYPE_DISCRETE`), in the order the driver listed them.
    case discrete([FrameSize])
    /// Any size from `min` to `max` in steps (`V4L2_FRMSIZE_TYPE_STEPWISE`), pixels.
    case stepwise(min: FrameSize, max: FrameSize, stepWidth: Int, stepHeight: Int)
    /// Any size from `min` to `max` (`V4L2_FRMSIZE_TYPE_CONTINUOUS`), pixels.
    case continuous(min: FrameSize, max: FrameSize)

    /// True when `size` is exactly one of the offered sizes.
    public func offers(_ size: FrameSize) -> Bool { nearest(to: size) == size }

    /// The offered size nearest to `size` (smallest `|Δwidth| + |Δheight|`, ties to the larger area);
    /// nil when nothing is offered.
    public func nearest(to size: FrameSize) -> FrameSize? {
        switch self {
        case .discrete(let sizes):
            return sizes.min { a, b in
                let da = abs(a.width - size.width) + abs(a.height - size.height)
                let db = abs(b.width - size.width) + abs(b.height - size.height)
                return da != db ? da < db : a.area > b.area
            }
        case .stepwise(let lo, let hi, let sw, let sh):
            return FrameSize(width: FrameSizeOffer.snap(size.width, lo.width, hi.width, sw),
                             height: FrameSizeOffer.snap(size.height, lo.height, hi.height, sh))
        case .continuous(let lo, let hi):
            return FrameSize(width: FrameSizeOffer.snap(size.width, lo.width, hi.width, 1),
                             height: FrameSizeOffer.snap(size.height, lo.height, hi.height, 1))
        }
    }

    /// The largest offered size, or nil when none.
    public var largest: FrameSize? {
        switch self {
        case .discrete(let sizes): return sizes.max()
        case .stepwise(_, let hi, _, _), .continuous(_, let hi): return hi
        }
    }

    /// Clamps `value` to `lo...hi` and rounds it to the nearest `lo + k*step` within the range.
    static func snap(_ value: Int, _ lo: Int, _ hi: Int, _ step: Int) -> Int {
        guard hi >= lo else { return lo }
        let clamped = min(max(value, lo), hi)
        let s = max(step, 1)
        var v = lo + ((clamped - lo + s / 2) / s) * s
        if v > hi { v -= s }
        return max(v, lo)
    }
}

/// The frame intervals a camera offers for one pixel format and size (`VIDIOC_ENUM_FRAMEINTERVALS`).
public enum FrameIntervalOffer: Hashable, Sendable {
    /// A list of intervals (`V4L2_FRMIVAL_TYPE_DISCRETE`).
    case discrete([FrameInterval])
    /// Intervals from `min` (fastest) to `max` (slowest) in `step`s (`V4L2_FRMIVAL_TYPE_STEPWISE`).
    case stepwise(min: FrameInterval, max: FrameInterval, step: FrameInterval)
    /// Any interval from `min` to `max` (`V4L2_FRMIVAL_TYPE_CONTINUOUS`).
    case continuous(min: FrameInterval, max: FrameInterval)

    /// The offered interval nearest to `framesPerSecond` (by frames per second); nil when none is offered.
    public func nearest(toFramesPerSecond fps: Double) -> FrameInterval? {
        let wanted = FrameInterval(framesPerSecond: fps)
        switch self {
        case .discrete(let list):
            return list.filter { $0.numerator > 0 && $0.denominator > 0 }
                .min { abs($0.framesPerSecond - fps) < abs($1.framesPerSecond - fps) }
        case .stepwise(let lo, let hi, _), .continuous(let lo, let hi):
            // lo is the shortest interval (highest fps), hi the longest.
            if wanted.seconds < lo.seconds { return lo }
            if wanted.seconds > hi.seconds { return hi }
            return wanted
        }
    }
}

/// One pixel format a camera offers (`VIDIOC_ENUM_FMT`), with its sizes and, where known, intervals.
public struct FormatOffer: Hashable, Sendable {
    /// The fourcc (`v4l2_fmtdesc.pixelformat`), e.g. `PixelFormat.mjpeg.fourcc`.
    public var fourcc: UInt32
    /// The driver's description (`v4l2_fmtdesc.description`), e.g. `"Motion-JPEG"`.
    public var description: String
    /// True when libv4l2 converts to this format in software (`V4L2_FMT_FLAG_EMULATED`).
    public var isEmulated: Bool
    /// The offered frame sizes.
    public var sizes: FrameSizeOffer
    /// Offered intervals per size, as far as enumerated (discrete sizes: each; stepwise: the largest).
    public var intervals: [FrameSize: FrameIntervalOffer]

    public init(fourcc: UInt32, description: String = "", isEmulated: Bool = false,
                sizes: FrameSizeOffer, intervals: [FrameSize: FrameIntervalOffer] = [:]) {
        self.fourcc = fourcc
        self.description = description
        self.isEmulated = isEmulated
        self.sizes = sizes
        self.intervals = intervals
    }

    /// The booth's name for the format, or nil when the booth does not handle it.
    public var pixelFormat: PixelFormat? { PixelFormat(fourcc: fourcc) }

    /// The fourcc as four characters, e.g. `"MJPG"`.
    public var fourccString: String { PixelFormat.string(fromFourcc: fourcc) }
}

/// The setting `camera.format`: which pixel format to stream (auto: MJPEG when offered,
/// else YUYV, else RGB24 converted by libv4l2). Declared once, in the settings schema.
public typealias FormatPreference = CameraFormatSetting

/// A negotiated stream format: pixel format, frame size and frame interval.
public struct FormatChoice: Hashable, Sendable {
    /// The pixel format to set (`v4l2_pix_format.pixelformat`).
    public var format: PixelFormat
    /// The frame size to set, pixels.
    public var size: FrameSize
    /// The frame interval to set with `VIDIOC_S_PARM` (the requested one when the camera lists none);
    /// nil only when none can be derived.
    public var interval: FrameInterval?
    /// Human-readable warnings, e.g. a size or format that was not offered and what replaced it.
    public var warnings: [String]

    public init(format: PixelFormat, size: FrameSize, interval: FrameInterval?, warnings: [String]) {
        self.format = format
        self.size = size
        self.interval = interval
        self.warnings = warnings
    }
}

/// Why no format could be chosen.
public enum FormatChoiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The camera offers none of MJPEG, YUYV or RGB24 (the list holds the fourccs it does offer).
    case noUsableFormat(offered: [String])

    public var description: String {
        switch self {
        case .noUsableFormat(let offered):
            return "the camera offers none of MJPG, YUYV, RGB3 (it offers: \(offered.joined(separator: ", ")))"
        }
    }
}

/// Chooses the stream format: a pure function of what the camera offers and what is asked.
public enum FormatChooser {
    /// The order in which formats are tried for `preference` (the preferred one first, then the `auto` order).
    public static func order(for preference: FormatPreference) -> [PixelFormat] {
        let auto: [PixelFormat] = [.mjpeg, .yuyv, .rgb24]
        switch preference {
        case .auto: return auto
        case .mjpeg: return [.mjpeg] + auto.filter { $0 != .mjpeg }
        case .yuyv: return [.yuyv] + auto.filter { $0 != .yuyv }
        case .rgb24: return [.rgb24] + auto.filter { $0 != .rgb24 }
        }
    }

    /// Chooses (format, size, interval) from `offers`.
    ///
    /// - Formats are tried in ``order(for:)``. MJPEG and YUYV count only when the camera
    ///   produces them itself; RGB24 may be libv4l2's conversion. Under `auto`, the first format
    ///   in that order that offers exactly `size` wins; if none does, the first available
    ///   format is used at its nearest offered size, with a warning naming both sizes.
    /// - An explicit preference the camera lacks falls back to the `auto` order, with a warning.
    /// - The interval is the offered one nearest to `framesPerSecond`, a warning when it differs.
    ///   `intervals(format, size)` supplies the offered intervals (default: `offer.intervals[size]`;
    ///   the camera passes a closure that runs `VIDIOC_ENUM_FRAMEINTERVALS`).
    /// - Throws ``FormatChoiceError/noUsableFormat(offered:)`` when no format is usable.
    public static func choose(offers: [FormatOffer], preference: FormatPreference, size: FrameSize,
                              framesPerSecond: Double,
                              intervals: ((FormatOffer, FrameSize) -> FrameIntervalOffer?)? = nil)
        throws(FormatChoiceError) -> FormatChoice
    {
        var warnings: [String] = []
        let usable: [(PixelFormat, FormatOffer)] = order(for: preference).compactMap { format in
            let candidates = offers.filter { $0.fourcc == format.fourcc && $0.sizes.largest != nil }
            let offer = candidates.first { !$0.isEmulated } ?? (format == .rgb24 ? candidates.first : nil)
            return offer.map { (format, $0) }
        }
        guard let first = usable.first else {
            throw .noUsableFormat(offered: offers.map(\.fourccString))
        }
        if preference != .auto, first.0.preferenceName != preference.rawValue {
            warnings.append("camera.format \(preference.rawValue) is not offered by the camera; using \(first.0.preferenceName)")
        }
        let picked: (PixelFormat, FormatOffer)
        if preference == .auto, let exact = usable.first(where: { $0.1.sizes.offers(size) }) {
            picked = exact
        } else {
            picked = first
        }
        let (format, offer) = picked
        let chosenSize = offer.sizes.nearest(to: size) ?? size
        if chosenSize != size {
            warnings.append("size \(size) is not offered in \(format.rawValue); using the nearest offered size \(chosenSize)")
        }
        let lookup = intervals ?? { offer, size in offer.intervals[size] }
        var interval: FrameInterval? = nil
        if let intervalOffer = lookup(offer, chosenSize), let nearest = intervalOffer.nearest(toFramesPerSecond: framesPerSecond) {
            interval = nearest
            if abs(nearest.framesPerSecond - framesPerSecond) > 0.01 {
                warnings.append("\(FrameInterval.format(framesPerSecond)) fps is not offered for \(format.rawValue) \(chosenSize); using \(FrameInterval.format(nearest.framesPerSecond)) fps")
            }
        } else {
            interval = FrameInterval(framesPerSecond: framesPerSecond)
        }
        return FormatChoice(format: format, size: chosenSize, interval: interval, warnings: warnings)
    }
}

extension PixelFormat {
    /// The `camera.format` value naming this format: `mjpeg`, `yuyv`, `rgb24`.
    public var preferenceName: String {
        switch self {
        case .mjpeg: return "mjpeg"
        case .yuyv: return "yuyv"
        case .rgb24: return "rgb24"
        }
    }
}
