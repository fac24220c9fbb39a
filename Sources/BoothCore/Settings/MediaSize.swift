/// A media size from its PWG 5101.1 self-describing name, `class_name_WxHunit`: e.g. `na_index-4x6_4x6in`
/// (4 × 6 inches) or `iso_a6_105x148mm` (105 × 148 mm). Width is the shorter side, as PWG names write it.
///
/// Pure parsing, shared by the settings schema (`print.media` is checked when the file is read) and the
/// print renderer. Sizes are finite decimals within ``MediaSize/sideRange`` millimetres, so a name such as
/// `x_y_1e999x6in` or `x_y_99999x6in` is refused before anything allocates a page for it.
public struct MediaSize: Hashable, Sendable {
    /// The PWG name.
    public var name: String
    /// Width in millimetres.
    public var widthMillimetres: Double
    /// Height in millimetres.
    public var heightMillimetres: Double

    /// The sides a media may have, in millimetres (1 mm to 1 m: every real sheet, label and roll cut).
    public static let sideRange: ClosedRange<Double> = 1...1000

    /// What a valid name looks like, for messages.
    public static let allowed = "a PWG media name with its size, class_name_WxHunit like na_index-4x6_4x6in or iso_a6_105x148mm, "
        + "each side 1 to 1000 mm (unit in or mm)"

    /// Parses a PWG self-describing media name; nil when it is not one or its size is out of ``sideRange``.
    public init?(pwg name: String) {
        guard case let .success(m) = MediaSize.parse(name) else { return nil }
        self = m
    }

    /// Parses a PWG self-describing media name.
    /// - Returns: the size, or why not (a message fragment such as `"'photo' has no size in its name"`).
    public static func parse(_ name: String) -> Result<MediaSize, MediaSizeProblem> {
        let q = "'\(name)'"
        let parts = name.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, let last = parts.last else {
            return .failure(MediaSizeProblem(message: "\(q) is not a PWG media name with a size (class_name_WxHunit)"))
        }
        let unit: Double
        var dims = Substring(last)
        if dims.hasSuffix("in") { unit = 25.4; dims = dims.dropLast(2) }
        else if dims.hasSuffix("mm") { unit = 1; dims = dims.dropLast(2) }
        else { return .failure(MediaSizeProblem(message: "\(q) has no size in in or mm at its end")) }
        let sides = dims.split(separator: "x", omittingEmptySubsequences: false)
        func number(_ s: Substring) -> Double? {
            // Plain decimals only: no exponent, sign, hex, inf or nan.
            let pieces = s.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(pieces.count), pieces.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
                  s.utf8.count <= 12, let v = Double(s), v.isFinite else { return nil }
            return v
        }
        guard sides.count == 2, let w = number(sides[0]), let h = number(sides[1]) else {
            return .failure(MediaSizeProblem(message: "\(q) has no WxH size (decimal numbers, like 4x6in)"))
        }
        let wm = w * unit, hm = h * unit
        guard sideRange.contains(wm), sideRange.contains(hm) else {
            func mm(_ v: Double) -> String {
                let tenths = (v * 10).rounded() / 10
                return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
            }
            return .failure(MediaSizeProblem(message: "\(q) is \(mm(wm))x\(mm(hm)) mm; each side must be 1 to 1000 mm"))
        }
        return .success(MediaSize(name: name, widthMillimetres: wm, heightMillimetres: hm))
    }

    private init(name: String, widthMillimetres: Double, heightMillimetres: Double) {
        self.name = name
        self.widthMillimetres = widthMillimetres
        self.heightMillimetres = heightMillimetres
    }

    /// The size in pixels at `dpi` dots per inch, rounded (4x6in at 300 dpi: 1200x1800); at least 1x1.
    /// `dpi` is clamped to 1…100 000 so the result never overflows (the schema allows 72…1200).
    public func pixels(dpi: Int) -> FrameSize {
        let d = Double(min(max(dpi, 1), 100_000))
        return FrameSize(width: max(1, Int((widthMillimetres / 25.4 * d).rounded())),
                         height: max(1, Int((heightMillimetres / 25.4 * d).rounded())))
    }
}

/// Why a text is not a usable PWG media name: the message after `key: `.
public struct MediaSizeProblem: Error, Sendable, Equatable {
    public var message: String
}
