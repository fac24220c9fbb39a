import BoothCore

/// A media size from its PWG 5101.1 self-describing name, e.g. `na_index-4x6_4x6in` (4 × 6 inches)
/// or `iso_a6_105x148mm` (105 × 148 mm). Width is the shorter side, as PWG names write it.
public struct MediaSize: Equatable, Sendable {
    /// The PWG name.
    public var name: String
    /// Width in millimetres.
    public var widthMillimetres: Double
    /// Height in millimetres.
    public var heightMillimetres: Double

    /// Parses the size part (`4x6in`, `105x148mm`) of a PWG media name; nil when it has none.
    public init?(pwg name: String) {
        guard let last = name.split(separator: "_").last else { return nil }
        let unit: Double
        var dims = Substring(last)
        if dims.hasSuffix("in") { unit = 25.4; dims = dims.dropLast(2) }
        else if dims.hasSuffix("mm") { unit = 1; dims = dims.dropLast(2) }
        else { return nil }
        let parts = dims.split(separator: "x")
        guard parts.count == 2, let w = Double(parts[0]), let h = Double(parts[1]), w > 0, h > 0 else { return nil }
        self.name = name
        widthMillimetres = w * unit
        heightMillimetres = h * unit
    }

    /// The size in pixels at `dpi` dots per inch, rounded (4x6in at 300 dpi: 1200x1800).
    public func pixels(dpi: Int) -> FrameSize {
        FrameSize(width: Int((widthMillimetres / 25.4 * Double(dpi)).rounded()),
                  height: Int((heightMillimetres / 25.4 * Double(dpi)).rounded()))
    }
}
