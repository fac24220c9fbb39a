import BoothCore
import struct BoothRaster.PixelRect
@testable import BoothLayout
import Testing

@Suite("Picture layout geometry")
struct GeometryTests {
    static let landscape = FrameSize(width: 1920, height: 1080)
    static let portrait = FrameSize(width: 1080, height: 1920)

    static func plans() -> [(String, PicturePlan)] {
        var out: [(String, PicturePlan)] = []
        for layout in PictureLayout.allCases {
            for count in 1...4 {
                for capture in [landscape, portrait, FrameSize(width: 1280, height: 960)] {
                    for fit in [false, true] {
                        for footer in [0, 2] {
                            let plan = PicturePlan(layout: layout, captureSizes: Array(repeating: capture, count: count),
                                                   sheetInches: (4, 6), dpi: 300, marginMillimetres: 3,
                                                   footerLines: footer, fit: fit)
                            out.append(("\(layout) x\(count) \(capture) fit=\(fit) footer=\(footer)", plan))
                        }
                    }
                }
            }
        }
        return out
    }

    @Test("slots and footers lie inside the sheet's margins and never overlap")
    func slotsInsideAndDisjoint() {
        for (name, plan) in GeometryTests.plans() {
            let m = plan.margin
            #expect(m == 36, "3 mm at 300 dpi is 35.4 px, rounded to even")
            let inner = PixelRect(x: m, y: m, width: plan.sheet.width - 2 * m, height: plan.sheet.height - 2 * m)
            let areas = plan.slots + plan.footers
            for area in areas {
                #expect(inner.contains(area), "\(name): \(area) outside \(inner)")
            }
            for i in areas.indices {
                for j in areas.indices where j > i {
                    #expect(!areas[i].intersects(areas[j]), "\(name): \(areas[i]) overlaps \(areas[j])")
                }
            }
            // Neighbouring slots are at least a margin apart.
            for i in plan.slots.indices {
                for j in plan.slots.indices where j > i {
                    let a = plan.slots[i], b = plan.slots[j]
                    let gapX = max(b.x - a.maxX, a.x - b.maxX), gapY = max(b.y - a.maxY, a.y - b.maxY)
                    #expect(max(gapX, gapY) >= m, "\(name): slots \(a) and \(b) closer than the margin")
                }
            }
            for area in areas {
                #expect(area.x % 2 == 0 && area.y % 2 == 0 && area.width % 2 == 0 && area.height % 2 == 0,
                        "\(name): \(area) not on even pixels (4:2:0 chroma)")
            }
        }
    }

    @Test("no capture is stretched: crop and destination keep the aspect within 1%")
    func aspectKept() {
        for (name, plan) in GeometryTests.plans() {
            #expect(!plan.placements.isEmpty, "\(name)")
            for p in plan.placements {
                let ratio = p.crop.aspect / p.destination.aspect
                #expect(abs(ratio - 1) <= 0.01, "\(name): crop \(p.crop) → \(p.destination) stretches by \(ratio)")
                #expect(p.slot.contains(p.destination), "\(name)")
            }
        }
    }

    @Test("fill crops the capture to the slot; fit shows all of it letterboxed in the slot")
    func fillVersusFit() {
        let capture = FrameSize(width: 1920, height: 1080)
        let fill = PicturePlan(layout: .single, captureSizes: [capture], sheetInches: (4, 6), dpi: 300,
                               marginMillimetres: 3, footerLines: 2, fit: false)
        let fit = PicturePlan(layout: .single, captureSizes: [capture], sheetInches: (4, 6), dpi: 300,
                              marginMillimetres: 3, footerLines: 2, fit: true)
        let f = fill.placements[0], l = fit.placements[0]
        #expect(f.destination == f.slot)
        #expect(f.crop.width < capture.width || f.crop.height < capture.height, "fill crops")
        #expect(PixelRect(x: 0, y: 0, width: 1920, height: 1080).contains(f.crop))
        #expect(l.crop == PixelRect(x: 0, y: 0, width: 1920, height: 1080), "fit shows the whole capture")
        #expect(l.destination.width < l.slot.width || l.destination.height < l.slot.height, "fit leaves bars")
        #expect(l.destination.width == l.slot.width || l.destination.height == l.slot.height,
                "fit touches the slot on one axis")
    }

    @Test("portrait captures get portrait sheets, landscape captures landscape sheets")
    func orientationFollowsCaptures() {
        for layout in [PictureLayout.single, .grid2x2] {
            let l = PicturePlan(layout: layout, captureSizes: Array(repeating: GeometryTests.landscape, count: 4),
                                sheetInches: (4, 6), dpi: 300, marginMillimetres: 3, footerLines: 2, fit: false)
            let p = PicturePlan(layout: layout, captureSizes: Array(repeating: GeometryTests.portrait, count: 4),
                                sheetInches: (4, 6), dpi: 300, marginMillimetres: 3, footerLines: 2, fit: false)
            #expect(l.sheet == FrameSize(width: 1800, height: 1200), "\(layout)")
            #expect(p.sheet == FrameSize(width: 1200, height: 1800), "\(layout)")
        }
        let threeLandscape = PicturePlan(layout: .threeUp, captureSizes: Array(repeating: GeometryTests.landscape, count: 3),
                                         sheetInches: (4, 6), dpi: 300, marginMillimetres: 3, footerLines: 0, fit: false)
        #expect(threeLandscape.sheet.height > threeLandscape.sheet.width, "three landscape shots stack in a column")
        #expect(Set(threeLandscape.slots.map(\.x)).count == 1)
        let threePortrait = PicturePlan(layout: .threeUp, captureSizes: Array(repeating: GeometryTests.portrait, count: 3),
                                        sheetInches: (4, 6), dpi: 300, marginMillimetres: 3, footerLines: 0, fit: false)
        #expect(threePortrait.sheet.width > threePortrait.sheet.height, "three portrait shots stand in a row")
        #expect(Set(threePortrait.slots.map(\.y)).count == 1)
    }

    @Test("a strip is printed twice side by side on a portrait sheet, each copy with its footer")
    func stripTwice() {
        let plan = PicturePlan(layout: .strip, captureSizes: Array(repeating: GeometryTests.landscape, count: 4),
                               sheetInches: (4, 6), dpi: 300, marginMillimetres: 3, footerLines: 2, fit: false)
        #expect(plan.sheet == FrameSize(width: 1200, height: 1800))
        #expect(plan.slots.count == 8)
        #expect(plan.placements.map(\.capture) == [0, 1, 2, 3, 0, 1, 2, 3])
        #expect(plan.footers.count == 2)
        let half = plan.sheet.width / 2
        #expect(plan.slots[0..<4].allSatisfy { $0.maxX <= half } && plan.slots[4...].allSatisfy { $0.x >= half })
        #expect(plan.footers[0].maxX <= half && plan.footers[1].x >= half)
        // Each capture's two copies are the same size: the strips are identical.
        for i in 0..<4 { #expect(plan.slots[i].width == plan.slots[i + 4].width && plan.slots[i].height == plan.slots[i + 4].height) }
    }

    @Test("auto picks by the number of shots")
    func autoLayout() {
        #expect(PictureLayout(.auto, shotCount: 1) == .single)
        #expect(PictureLayout(.auto, shotCount: 2) == .strip)
        #expect(PictureLayout(.auto, shotCount: 3) == .threeUp)
        #expect(PictureLayout(.auto, shotCount: 4) == .grid2x2)
        #expect(PictureLayout(.strip, shotCount: 4) == .strip)
        #expect(PictureLayout(.single, shotCount: 4) == .single)
    }

    @Test("slots beyond the captures stay empty")
    func fewerCapturesThanSlots() {
        let plan = PicturePlan(layout: .grid2x2, captureSizes: [GeometryTests.landscape, GeometryTests.landscape],
                               sheetInches: (4, 6), dpi: 300, marginMillimetres: 3, footerLines: 0, fit: false)
        #expect(plan.slots.count == 4)
        #expect(plan.placements.map(\.capture) == [0, 1])
    }

    @Test("600 dpi on 4x6 in is 3600x2400 pixels; 300 dpi 1800x1200")
    func sheetSizes() {
        let p600 = PicturePlan(layout: .grid2x2, captureSizes: Array(repeating: GeometryTests.landscape, count: 4),
                               sheetInches: (4, 6), dpi: 600, marginMillimetres: 3, footerLines: 2, fit: false)
        #expect(p600.sheet == FrameSize(width: 3600, height: 2400))
        let p600p = PicturePlan(layout: .grid2x2, captureSizes: Array(repeating: GeometryTests.portrait, count: 4),
                                sheetInches: (4, 6), dpi: 600, marginMillimetres: 3, footerLines: 2, fit: false)
        #expect(p600p.sheet == FrameSize(width: 2400, height: 3600))
    }

    @Test("the decode scale is the smallest of 1/8…1/1 that stays at or above the slot")
    func decodeScale() {
        let crop = PixelRect(x: 0, y: 0, width: 1920, height: 1080)
        #expect(PictureComposer.decodeScale(crop: crop, destination: PixelRect(x: 0, y: 0, width: 240, height: 134)) == .eighth)
        #expect(PictureComposer.decodeScale(crop: crop, destination: PixelRect(x: 0, y: 0, width: 241, height: 134)) == .quarter)
        #expect(PictureComposer.decodeScale(crop: crop, destination: PixelRect(x: 0, y: 0, width: 900, height: 500)) == .half)
        #expect(PictureComposer.decodeScale(crop: crop, destination: PixelRect(x: 0, y: 0, width: 961, height: 500)) == .full)
        #expect(PictureComposer.decodeScale(crop: crop, destination: PixelRect(x: 0, y: 0, width: 3000, height: 2000)) == .full)
    }
}
