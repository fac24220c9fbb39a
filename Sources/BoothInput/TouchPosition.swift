import BoothCore

/// Where a touch landed, as fractions of the drawing the guest sees: `x` 0 at its left edge to 1 at
/// its right, `y` 0 at the top to 1 at the bottom. A touch screen reports positions in its panel's own
/// axes (`ABS_MT_POSITION_X`/`_Y` between their absinfo minimum and maximum); a screen mounted
/// sideways shows the drawing turned by `display.rotation`, so the panel's point is turned back.
public struct TouchPosition: Sendable, Equatable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    /// A position already in the drawing's fractions (0...1 each).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// From a panel reading: `rawX` within `xRange`, `rawY` within `yRange` (values outside are
    /// clamped; an empty range gives 0), on a screen whose drawing is turned clockwise by `rotation`
    /// (the drawing's top-left corner is at the panel's top-right for 90, bottom-right for 180,
    /// bottom-left for 270).
    public init(rawX: Int32, rawY: Int32, xRange: ClosedRange<Int32>, yRange: ClosedRange<Int32>, rotation: Rotation) {
        func fraction(_ v: Int32, _ r: ClosedRange<Int32>) -> Double {
            guard r.upperBound > r.lowerBound else { return 0 }
            return (Double(min(max(v, r.lowerBound), r.upperBound)) - Double(r.lowerBound)) / (Double(r.upperBound) - Double(r.lowerBound))
        }
        let u = fraction(rawX, xRange), v = fraction(rawY, yRange)
        switch rotation {
        case .r0: (x, y) = (u, v)
        case .r90: (x, y) = (v, 1 - u)
        case .r180: (x, y) = (1 - u, 1 - v)
        case .r270: (x, y) = (1 - v, u)
        }
    }

    /// The pixel of a drawing `size` big (0-based, within it).
    public func pixel(in size: FrameSize) -> (x: Int, y: Int) {
        (min(size.width - 1, max(0, Int(x * Double(size.width)))), min(size.height - 1, max(0, Int(y * Double(size.height)))))
    }

    /// `0.42,0.77`.
    public var description: String {
        func two(_ d: Double) -> String { let h = Int((d * 100).rounded()); return "\(h / 100).\(h % 100 < 10 ? "0" : "")\(h % 100)" }
        return "\(two(x)),\(two(y))"
    }
}
