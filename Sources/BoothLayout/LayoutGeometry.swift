import BoothCore
import BoothRaster
import FoundationEssentials
import Glibc

/// A layout as drawn, `auto` resolved.
public enum PictureLayout: String, Sendable, CaseIterable {
    case single
    case grid2x2 = "2x2"
    case strip
    case threeUp = "3up"

    /// The layout `setting` means for `shotCount` captures: `auto` is 1 single, 2 strip, 3 3up, 4 (or more) 2x2.
    public init(_ setting: PictureLayoutSetting, shotCount: Int) {
        switch setting {
        case .single: self = .single
        case .grid2x2: self = .grid2x2
        case .strip: self = .strip
        case .threeUp: self = .threeUp
        case .auto:
            switch shotCount {
            case ...1: self = .single
            case 2: self = .strip
            case 3: self = .threeUp
            default: self = .grid2x2
            }
        }
    }
}

/// Where one capture goes: the slot it belongs to, the part of the capture shown (`crop`, in the
/// capture's pixels) and where that part is drawn (`destination`, on the sheet). `crop` and
/// `destination` have the same aspect (within rounding to even pixels): nothing is stretched.
public struct CapturePlacement: Hashable, Sendable {
    /// Which capture (index into the captures), drawn here.
    public var capture: Int
    /// The slot on the sheet.
    public var slot: PixelRect
    /// The part of the capture drawn: all of it for `fit`, a centred crop of the slot's aspect for `fill`.
    public var crop: PixelRect
    /// Where it is drawn: the slot for `fill`, a centred rectangle of the capture's aspect inside it for `fit`.
    public var destination: PixelRect
}

/// The geometry of one picture: sheet size, each capture's placement, the footer bands.
/// All coordinates are even (so the 4:2:0 chroma planes line up) and in sheet pixels.
public struct PicturePlan: Hashable, Sendable {
    public var layout: PictureLayout
    /// The sheet in pixels (landscape or portrait as chosen for the captures).
    public var sheet: FrameSize
    /// One per slot that has a capture, in slot order (top to bottom, left to right; a strip's copy after it).
    public var placements: [CapturePlacement]
    /// Every slot, including those left empty when there are fewer captures than slots.
    public var slots: [PixelRect]
    /// Where footer text goes: one band per strip, else one; empty without footer lines.
    public var footers: [PixelRect]
    /// Margin in pixels.
    public var margin: Int
    /// Pixel height of each footer line's em square, first line first.
    public var lineHeights: [Int]

    /// Plans `captureSizes` (each capture's size in pixels, after its rotation) on a sheet of
    /// `sheetInches` (either orientation: the one whose slots best match the captures' aspect is
    /// taken, so portrait captures get a portrait layout) at `dpi`, with `marginMillimetres` around
    /// and between the slots and `footerLines` text lines at the bottom (0 for no footer).
    public init(layout: PictureLayout, captureSizes: [FrameSize], sheetInches: (short: Double, long: Double),
                dpi: Int, marginMillimetres: Int, footerLines: Int, fit: Bool) {
        self.layout = layout
        let short = PicturePlan.evenPixels(sheetInches.short, dpi)
        let long = PicturePlan.evenPixels(sheetInches.long, dpi)
        margin = PicturePlan.even(Double(marginMillimetres) / 25.4 * Double(dpi))
        let first = captureSizes.first ?? FrameSize(width: 3, height: 2)
        let captureAspect = first.height > 0 ? Double(first.width) / Double(first.height) : 1.5

        // Candidates: (sheet is landscape, columns, rows, regions side by side).
        let shots = max(1, min(4, captureSizes.count))
        var candidates: [(landscape: Bool, columns: Int, rows: Int, regions: Int)]
        switch layout {
        case .single: candidates = [(true, 1, 1, 1), (false, 1, 1, 1)]
        case .grid2x2: candidates = [(true, 2, 2, 1), (false, 2, 2, 1)]
        case .threeUp: candidates = [(false, 1, 3, 1), (true, 3, 1, 1)]
        case .strip: candidates = [(false, 1, shots, 2)]
        }
        var best: PicturePlan.Grid?
        for c in candidates {
            let sheet = c.landscape ? FrameSize(width: long, height: short) : FrameSize(width: short, height: long)
            let grid = PicturePlan.grid(sheet: sheet, columns: c.columns, rows: c.rows, regions: c.regions,
                                        margin: margin, footerLines: footerLines)
            let mismatch = abs(log(grid.slotAspect / captureAspect))
            if best == nil || mismatch < (best?.mismatch ?? .infinity) - 1e-9 {
                best = PicturePlan.Grid(sheet: sheet, slots: grid.slots, footers: grid.footers,
                                        lineHeights: grid.lineHeights, mismatch: mismatch)
            }
        }
        let chosen = best ?? PicturePlan.Grid(sheet: FrameSize(width: long, height: short), slots: [], footers: [],
                                              lineHeights: [], mismatch: 0)
        sheet = chosen.sheet
        slots = chosen.slots
        footers = chosen.footers
        lineHeights = chosen.lineHeights
        var placements: [CapturePlacement] = []
        let perRegion = layout == .strip ? slots.count / 2 : slots.count
        for (i, slot) in slots.enumerated() {
            let index = i % max(1, perRegion)
            guard index < captureSizes.count else { continue }
            let size = captureSizes[index]
            let (crop, destination) = PicturePlan.place(size, in: slot, fit: fit)
            placements.append(CapturePlacement(capture: index, slot: slot, crop: crop, destination: destination))
        }
        self.placements = placements
    }

    private struct Grid {
        var sheet: FrameSize
        var slots: [PixelRect]
        var footers: [PixelRect]
        var lineHeights: [Int]
        var mismatch: Double
    }

    /// Slots of a `columns` × `rows` grid in each of `regions` equal columns of the sheet, each region
    /// with its margins and its own footer band.
    private static func grid(sheet: FrameSize, columns: Int, rows: Int, regions: Int, margin: Int,
                             footerLines: Int) -> (slots: [PixelRect], footers: [PixelRect], lineHeights: [Int], slotAspect: Double) {
        let regionWidth = even(Double(sheet.width) / Double(regions))
        let base = Double(min(regionWidth, sheet.height))
        let lineHeights = (0..<max(0, footerLines)).map { even(base * ($0 == 0 ? 0.07 : 0.055)) }
        let footerHeight = footerLines > 0 ? even(Double(lineHeights.reduce(0, +)) * 1.25) + margin : 0
        var slots: [PixelRect] = [], footers: [PixelRect] = []
        var aspect = 1.0
        for r in 0..<regions {
            let left = r * regionWidth + margin
            let innerWidth = regionWidth - 2 * margin
            let innerHeight = sheet.height - 2 * margin - footerHeight
            let slotWidth = floorEven(Double(innerWidth - (columns - 1) * margin) / Double(columns))
            let slotHeight = floorEven(Double(innerHeight - (rows - 1) * margin) / Double(rows))
            // Centre the grid in the inner area (the even rounding leaves a few pixels).
            let gridWidth = columns * slotWidth + (columns - 1) * margin
            let gridHeight = rows * slotHeight + (rows - 1) * margin
            let x0 = left + floorEven(Double(innerWidth - gridWidth) / 2)
            let y0 = margin + floorEven(Double(innerHeight - gridHeight) / 2)
            for row in 0..<rows {
                for column in 0..<columns {
                    slots.append(PixelRect(x: x0 + column * (slotWidth + margin), y: y0 + row * (slotHeight + margin),
                                           width: max(2, slotWidth), height: max(2, slotHeight)))
                }
            }
            if footerLines > 0 {
                footers.append(PixelRect(x: left, y: sheet.height - margin - footerHeight + margin / 2,
                                         width: innerWidth, height: footerHeight - margin / 2))
            }
            aspect = Double(max(2, slotWidth)) / Double(max(2, slotHeight))
        }
        return (slots, footers, lineHeights, aspect)
    }

    /// The crop of a `size` capture and its destination inside `slot`, for fill or fit.
    static func place(_ size: FrameSize, in slot: PixelRect, fit: Bool) -> (crop: PixelRect, destination: PixelRect) {
        let w = max(1, size.width), h = max(1, size.height)
        let captureAspect = Double(w) / Double(h)
        if fit {
            var dw = slot.width, dh = slot.height
            if captureAspect > slot.aspect {
                dh = max(2, floorEven(Double(slot.width) / captureAspect + 1))
            } else {
                dw = max(2, floorEven(Double(slot.height) * captureAspect + 1))
            }
            dw = min(dw, slot.width); dh = min(dh, slot.height)
            let destination = PixelRect(x: slot.x + floorEven(Double(slot.width - dw) / 2),
                                        y: slot.y + floorEven(Double(slot.height - dh) / 2), width: dw, height: dh)
            return (PixelRect(x: 0, y: 0, width: w, height: h), destination)
        }
        var cw = w, ch = h
        if captureAspect > slot.aspect {
            cw = min(w, max(2, floorEven(Double(h) * slot.aspect + 1)))
        } else {
            ch = min(h, max(2, floorEven(Double(w) / slot.aspect + 1)))
        }
        let crop = PixelRect(x: floorEven(Double(w - cw) / 2), y: floorEven(Double(h - ch) / 2), width: cw, height: ch)
        return (crop, slot)
    }

    static func evenPixels(_ inches: Double, _ dpi: Int) -> Int { max(2, even(inches * Double(dpi))) }
    /// Nearest even number.
    static func even(_ x: Double) -> Int { Int((x / 2).rounded()) * 2 }
    /// Largest even number ≤ x (x ≥ 0).
    static func floorEven(_ x: Double) -> Int { Int((x / 2).rounded(.down)) * 2 }
}
