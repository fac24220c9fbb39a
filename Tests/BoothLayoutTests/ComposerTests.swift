import BoothCore
import struct BoothRaster.PixelRect
import BoothJPEG
@testable import BoothLayout
import BoothTestSupport
import Foundation
import Testing

@Suite("Picture composer")
struct ComposerTests {
    static let blue = (r: 0.0, g: 0.0, b: 255.0)
    static let red = (r: 255.0, g: 0.0, b: 0.0)

    func header(_ jpeg: [UInt8]) throws -> JPEGHeader { try JPEGDecoder().header(jpeg) }

    /// Luma at (x, y) of the composer's canvas.
    func luma(_ c: PictureComposer, _ x: Int, _ y: Int) -> Int {
        guard let p = c.canvasPlanes() else { return -1 }
        return Int(p.y[y * p.lumaStride + x])
    }

    @Test("600 dpi on 4x6 in is exactly 3600x2400 (2400x3600 for portrait captures); 300 dpi 1800x1200")
    func exactSizes() throws {
        let landscape = try (0..<4).map { try Fixture.patternJPEG(width: 640, height: 360, seed: $0) }
        let portrait = try (0..<4).map { try Fixture.patternJPEG(width: 360, height: 640, seed: $0) }
        let c600 = try PictureComposer(options: PictureOptions(dpi: 600, footerLines: ["Event", "{date}"]))
        #expect(try header(c600.compose(captures: landscape, takenAt: Date())).size == FrameSize(width: 3600, height: 2400))
        #expect(try header(c600.compose(captures: portrait, takenAt: Date())).size == FrameSize(width: 2400, height: 3600))
        let c300 = try PictureComposer(options: PictureOptions(dpi: 300))
        let jpeg = try c300.compose(captures: landscape, takenAt: Date())
        let h = try header(jpeg)
        #expect(h.size == FrameSize(width: 1800, height: 1200))
        #expect(h.chromaSubsampling == .s420)
    }

    @Test("a pixel under a 50% alpha overlay is the blend of overlay and picture; transparent parts change nothing")
    func overlayAlpha() throws {
        // Overlay: left half fully transparent, right half red at alpha 128.
        let w = 60, h = 40
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in w / 2..<w { let i = (y * w + x) * 4; rgba[i] = 255; rgba[i + 3] = 128 }
        }
        let path = Fixture.temporaryPath("overlay.png")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(Fixture.writePNG(path: path, width: w, height: h, rgba: rgba))
        let capture = try Fixture.solidJPEG(width: 640, height: 426, r: 0, g: 0, b: 255)
        let plain = try PictureComposer(options: PictureOptions(layout: .single, dpi: 100))
        let overlaid = try PictureComposer(options: PictureOptions(layout: .single, dpi: 100, overlay: path))
        let plan = try plain.render(captures: [capture], takenAt: Date())
        _ = try overlaid.render(captures: [capture], takenAt: Date())
        let slot = plan.placements[0].destination
        let a = 128.0 / 255.0
        let yBlue = Fixture.luma(0, 0, 255), yRed = Fixture.luma(255, 0, 0)
        // Right half, inside the capture.
        let xr = slot.x + slot.width * 3 / 4, yc = slot.y + slot.height / 2
        #expect(abs(Double(luma(plain, xr, yc)) - yBlue) <= 3, "capture alone")
        #expect(abs(Double(luma(overlaid, xr, yc)) - (a * yRed + (1 - a) * yBlue)) <= 3, "50% red over blue")
        // Right half, in the white margin.
        #expect(abs(Double(luma(overlaid, plan.sheet.width - 2, 1)) - (a * yRed + (1 - a) * 255)) <= 3, "50% red over white")
        // Chroma (Cr) of the blend.
        if let p = overlaid.canvasPlanes() {
            let crRed = 128 + 0.5 * 255, crBlue = 128 - 0.081312 * 255
            let cr = Double(p.cr[(yc / 2) * p.chromaStride + xr / 2])
            #expect(abs(cr - (a * crRed + (1 - a) * crBlue)) <= 3)
        }
        // Left half: the overlay is transparent there.
        let xl = slot.x + slot.width / 4
        #expect(luma(overlaid, xl, yc) == luma(plain, xl, yc))
        #expect(luma(overlaid, 1, 1) == 255)
    }

    @Test("an overlay of another aspect is scaled to cover the sheet and cropped, not stretched")
    func overlayAspectKept() throws {
        // A portrait 40x60 overlay, opaque red in its top 10 rows, on a landscape 3:2 sheet: covering
        // the sheet keeps its middle 40x26.7, so no red reaches the sheet; stretching would paint its top sixth.
        let w = 40, h = 60
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<10 { for x in 0..<w { let i = (y * w + x) * 4; rgba[i] = 255; rgba[i + 3] = 255 } }
        let path = Fixture.temporaryPath("portrait-overlay.png")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(Fixture.writePNG(path: path, width: w, height: h, rgba: rgba))
        let capture = try Fixture.solidJPEG(width: 640, height: 426, r: 0, g: 0, b: 255)
        let composer = try PictureComposer(options: PictureOptions(layout: .single, dpi: 100, overlay: path))
        let plan = try composer.render(captures: [capture], takenAt: Date())
        #expect(plan.sheet.width > plan.sheet.height)
        #expect(luma(composer, plan.sheet.width / 2, plan.sheet.height / 20) != Int(Fixture.luma(255, 0, 0).rounded()))
        #expect(luma(composer, plan.sheet.width / 2, 2) == 255, "white margin, untouched")
    }

    @Test("the footer text is drawn in the footer band, and only there")
    func footerText() throws {
        let captures = try (0..<4).map { _ in try Fixture.solidJPEG(width: 640, height: 360, r: 128, g: 128, b: 128) }
        let composer = try PictureComposer(options: PictureOptions(layout: .grid2x2, dpi: 150,
                                                                   footerLines: ["Anna & Ben", "{date}"],
                                                                   dateFormat: "%d.%m.%Y"))
        let plan = try composer.render(captures: captures, takenAt: Date(timeIntervalSince1970: 1_767_225_600))
        guard let p = composer.canvasPlanes(), let band = plan.footers.first else {
            Issue.record("no canvas or no footer band")
            return
        }
        var dark = 0, darkOutside = 0
        for y in 0..<plan.sheet.height {
            for x in 0..<plan.sheet.width where p.y[y * p.lumaStride + x] < 100 {
                let inBand = x >= band.x && x < band.maxX && y >= band.y && y < band.maxY
                if inBand { dark += 1 } else { darkOutside += 1 }
            }
        }
        #expect(dark > 200, "black text in the band: \(dark) dark pixels")
        #expect(darkOutside == 0, "no dark pixels outside the band: grey captures on white")
        #expect(composer.footerTexts(takenAt: Date(timeIntervalSince1970: 1_767_225_600)).first == "Anna & Ben")
        #expect(composer.footerTexts(takenAt: Date(timeIntervalSince1970: 1_767_225_600)).last?.count == 10)

        // A line far too long for the band is drawn smaller on one line, not wrapped: the date line
        // below it stays on the sheet, inside the band (dark pixels in the band's lower third).
        let long = try PictureComposer(options: PictureOptions(
            layout: .grid2x2, dpi: 150,
            footerLines: ["Anna & Ben's Wedding at the Old Mill, with all our friends and family — 01.01.2026", "{date}"],
            dateFormat: "%d.%m.%Y"))
        for shots in [2, 3, 4] {
            let longPlan = try long.render(captures: Array(captures.prefix(shots)), takenAt: Date(timeIntervalSince1970: 1_767_225_600))
            guard let q = long.canvasPlanes(), let longBand = longPlan.footers.first else {
                Issue.record("no canvas or no footer band")
                return
            }
            var outside = 0, lowerThird = 0
            for y in 0..<longPlan.sheet.height {
                for x in 0..<longPlan.sheet.width where q.y[y * q.lumaStride + x] < 100 {
                    let inBand = x >= longBand.x && x < longBand.maxX && y >= longBand.y && y < longBand.maxY
                    if !inBand { outside += 1 } else if y >= longBand.y + longBand.height * 2 / 3 { lowerThird += 1 }
                }
            }
            #expect(outside == 0, "\(shots) shots: the long footer stays in its band")
            #expect(lowerThird > 50, "\(shots) shots: the date line is drawn below the long line (\(lowerThird) dark pixels)")
        }

        let noFooter = try PictureComposer(options: PictureOptions(layout: .grid2x2, dpi: 150, footerLines: ["", ""]))
        #expect(try noFooter.render(captures: captures, takenAt: Date()).footers.isEmpty)
    }

    @Test("fit letterboxes with the background; fill covers the slot")
    func fitAndFill() throws {
        // A 4:3 capture on a 3:2 sheet: fit leaves bars left and right of it.
        let capture = try Fixture.solidJPEG(width: 640, height: 480, r: 0, g: 0, b: 255)
        let fit = try PictureComposer(options: PictureOptions(layout: .single, fit: true, dpi: 100))
        let fill = try PictureComposer(options: PictureOptions(layout: .single, fit: false, dpi: 100))
        let plan = try fit.render(captures: [capture], takenAt: Date())
        _ = try fill.render(captures: [capture], takenAt: Date())
        let p = plan.placements[0]
        #expect(p.destination.width < p.slot.width)
        let barX = p.slot.x + (p.destination.x - p.slot.x) / 2, midY = p.slot.y + p.slot.height / 2
        #expect(luma(fit, barX, midY) == 255, "bar is the white background")
        #expect(abs(Double(luma(fill, barX, midY)) - Fixture.luma(0, 0, 255)) <= 3, "fill covers it")
        #expect(abs(Double(luma(fit, p.destination.x + p.destination.width / 2, midY)) - Fixture.luma(0, 0, 255)) <= 3)
    }

    @Test("a reused canvas gives the same picture as a fresh composer, with and without overlay")
    func reuseMatchesFresh() throws {
        let w = 30, h = 20
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for i in 0..<(w * h) where i % 7 == 0 { rgba[4 * i + 1] = 255; rgba[4 * i + 3] = 200 }
        let path = Fixture.temporaryPath("frame.png")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(Fixture.writePNG(path: path, width: w, height: h, rgba: rgba))
        let set1 = try (0..<4).map { try Fixture.patternJPEG(width: 320, height: 180, seed: $0) }
        let set2 = try (0..<2).map { try Fixture.patternJPEG(width: 320, height: 180, seed: $0 + 4) }
        let set3 = try (0..<4).map { try Fixture.patternJPEG(width: 320, height: 180, seed: $0 + 2) }
        for overlay in ["", path] {
            let options = PictureOptions(layout: .grid2x2, fit: true, dpi: 100, overlay: overlay, footerLines: ["A", "B"])
            let reused = try PictureComposer(options: options)
            _ = try reused.compose(captures: set1, takenAt: Date())
            _ = try reused.compose(captures: set2, takenAt: Date())
            let again = try reused.compose(captures: set3, takenAt: Date())
            let fresh = try PictureComposer(options: options).compose(captures: set3, takenAt: Date())
            #expect(again == fresh, "overlay '\(overlay)'")
        }
    }

    @Test("two decoding threads give the same picture as one")
    func twoThreads() throws {
        let captures = try (0..<4).map { try Fixture.patternJPEG(width: 640, height: 360, seed: $0) }
        let one = try PictureComposer(options: PictureOptions(dpi: 150, footerLines: ["x"], threads: 1))
        let two = try PictureComposer(options: PictureOptions(dpi: 150, footerLines: ["x"], threads: 2))
        #expect(try one.compose(captures: captures, takenAt: Date()) == two.compose(captures: captures, takenAt: Date()))
    }

    @Test("bad inputs are typed errors: no captures, a broken capture, a missing font or overlay")
    func errors() throws {
        let good = try Fixture.patternJPEG(width: 320, height: 180, seed: 1)
        let composer = try PictureComposer(options: PictureOptions(dpi: 100))
        #expect(throws: PictureError.noCaptures) { try composer.compose(captures: [], takenAt: Date()) }
        do {
            _ = try composer.compose(captures: [good, good, Array(good.prefix(10))], takenAt: Date())
            Issue.record("a truncated capture composed")
        } catch {
            guard case .decode(let index, _) = error else { Issue.record("\(error)"); return }
            #expect(index == 2)
        }
        #expect {
            try PictureComposer(options: PictureOptions(footerLines: ["x"], font: "/nonexistent/font.ttf"))
        } throws: { error in
            guard case PictureError.font(let f) = error else { return false }
            return f.call == "FT_New_Face"
        }
        #expect {
            try PictureComposer(options: PictureOptions(overlay: "/nonexistent/overlay.png"))
        } throws: { error in
            guard case PictureError.png(let path, _) = error else { return false }
            return path == "/nonexistent/overlay.png"
        }
        // The composer still works after an error.
        #expect(try !composer.compose(captures: [good], takenAt: Date()).isEmpty)
    }

    @Test("options from [picture]: defaults take print.media's 4x6 in and print.dpi")
    func optionsFromSettings() throws {
        let o = try PictureOptions(settings: .defaults)
        #expect(o.sheetShortInches == 4 && o.sheetLongInches == 6)
        #expect(o.dpi == 300)
        #expect(o.quality == 92)
        #expect(o.activeFooterLines == ["{date}"])
        #expect(o.layout == .auto && !o.fit)
        guard case .success(let s) = Settings.defaults.with(overrides: [
            (key: "picture.dpi", value: "600"), (key: "picture.size", value: "5x7in"),
            (key: "picture.background", value: "#FF8000"), (key: "picture.fit", value: "fit"),
        ]) else {
            Issue.record("overrides rejected")
            return
        }
        let p = try PictureOptions(settings: s)
        #expect(p.dpi == 600 && p.sheetShortInches == 5 && p.sheetLongInches == 7 && p.fit)
        #expect(p.background == RGBColor(red: 255, green: 128, blue: 0))
    }

    @Test("the picture matches the committed golden image within a per-pixel tolerance")
    func golden() throws {
        let captures = try (0..<4).map { try Fixture.patternJPEG(width: 320, height: 180, seed: $0) }
        let composer = try PictureComposer(options: PictureOptions(layout: .grid2x2, dpi: 50, quality: 85,
                                                                   background: RGBColor(red: 250, green: 240, blue: 220),
                                                                   footerLines: ["Golden", "2026"]))
        let jpeg = try composer.compose(captures: captures, takenAt: Date())
        let goldenURL = Fixture.goldenDirectory.appendingPathComponent("grid2x2-50dpi.jpg")
        if ProcessInfo.processInfo.environment["PHOTOBOOTH_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: Fixture.goldenDirectory, withIntermediateDirectories: true)
            try Data(jpeg).write(to: goldenURL)
            Issue.record("golden rewritten at \(goldenURL.path); unset PHOTOBOOTH_UPDATE_GOLDEN and run again")
            return
        }
        guard let data = FileManager.default.contents(atPath: goldenURL.path) else {
            Issue.record("golden image missing: \(goldenURL.path)")
            return
        }
        let decoder = try JPEGDecoder()
        let ours = try decoder.decodeRGB(jpeg), reference = try decoder.decodeRGB([UInt8](data))
        #expect(ours.size == reference.size)
        guard ours.size == reference.size else { return }
        var total = 0, worst = 0, over = 0
        for i in ours.bytes.indices {
            let d = abs(Int(ours.bytes[i]) - Int(reference.bytes[i]))
            total += d
            worst = max(worst, d)
            if d > 24 { over += 1 }
        }
        let mean = Double(total) / Double(ours.bytes.count)
        #expect(mean <= 1.5, "mean difference \(mean) per channel")
        #expect(Double(over) / Double(ours.bytes.count) <= 0.002, "\(over) channel values differ by more than 24 (worst \(worst))")
    }

    @Test("real captures land in their slots: each slot's mean colour is its capture's")
    func realCaptures() throws {
        let urls = SharedImages.captures1080()
        guard urls.count == 4 else {
            Issue.record("missing prerequisite: \(SharedImages.missingMessage("_1920x1080.jpg"))")
            return
        }
        let captures = try urls.map { [UInt8](try Data(contentsOf: $0)) }
        let composer = try PictureComposer(options: PictureOptions(layout: .grid2x2, fit: true, dpi: 300,
                                                                   footerLines: ["Test", "{date}"]))
        let jpeg = try composer.compose(captures: captures, takenAt: Date())
        let plan = composer.plan(captureSizes: Array(repeating: FrameSize(width: 1920, height: 1080), count: 4))
        let decoder = try JPEGDecoder()
        let picture = try decoder.decodeRGB(jpeg)
        #expect(picture.size == FrameSize(width: 1800, height: 1200))
        func meanLuma(_ image: RGBImage, _ r: PixelRect) -> Double {
            var sum = 0.0
            for y in r.y..<r.maxY {
                for x in r.x..<r.maxX {
                    let i = (y * image.size.width + x) * 3
                    sum += Fixture.luma(Double(image.bytes[i]), Double(image.bytes[i + 1]), Double(image.bytes[i + 2]))
                }
            }
            return sum / Double(r.width * r.height)
        }
        for p in plan.placements {
            let source = try decoder.decodeRGB(captures[p.capture], scale: .eighth)
            let inset = PixelRect(x: p.destination.x + 4, y: p.destination.y + 4,
                                  width: p.destination.width - 8, height: p.destination.height - 8)
            let expected = meanLuma(source, PixelRect(x: 1, y: 1, width: source.size.width - 2, height: source.size.height - 2))
            #expect(abs(meanLuma(picture, inset) - expected) <= 4, "capture \(p.capture) in \(p.destination)")
        }
    }
}

@Suite struct ComposeAheadTests {
    /// Captures decoded ahead as they arrive give the same picture, byte for byte, as composing them all at
    /// the end; a capture prepared with other bytes (a retaken shot) is decoded again, not drawn stale.
    @Test func preparedCapturesComposeTheSamePicture() throws {
        let captures = try [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)].map {
            try Fixture.solidJPEG(width: 640, height: 480, r: UInt8($0.0), g: UInt8($0.1), b: UInt8($0.2))
        }
        let options = PictureOptions(layout: .grid2x2, dpi: 100)
        let plain = try PictureComposer(options: options).compose(captures: captures, takenAt: Date(timeIntervalSince1970: 0))
        let ahead = try PictureComposer(options: options)
        for (i, c) in captures.enumerated() { ahead.prepare(capture: c, index: i, count: 4) }
        #expect(try ahead.compose(captures: captures, takenAt: Date(timeIntervalSince1970: 0)) == plain)
        // Shot 2 prepared from other bytes: compose decodes the real one.
        let stale = try PictureComposer(options: options)
        let other = try Fixture.solidJPEG(width: 640, height: 480, r: 10, g: 10, b: 10)
        for (i, c) in captures.enumerated() { stale.prepare(capture: i == 1 ? other : c, index: i, count: 4) }
        #expect(try stale.compose(captures: captures, takenAt: Date(timeIntervalSince1970: 0)) == plain)
        // A capture of another size than the plan guessed: decoded at compose at the scale it needs.
        let big = try Fixture.solidJPEG(width: 2560, height: 1920, r: 0, g: 255, b: 0)
        let mixed = [captures[0], big, captures[2], captures[3]]
        let plainMixed = try PictureComposer(options: options).compose(captures: mixed, takenAt: Date(timeIntervalSince1970: 0))
        let guessed = try PictureComposer(options: options)
        for (i, c) in mixed.enumerated() { guessed.prepare(capture: c, index: i, count: 4) }
        #expect(try guessed.compose(captures: mixed, takenAt: Date(timeIntervalSince1970: 0)) == plainMixed)
    }
}

@Suite("I420 canvas scaling")
struct CanvasScalingTests {
    /// A canvas whose Cb plane rises by 5 a chroma column (0, 5, 10, …), luma and Cr flat.
    func ramp(width: Int, height: Int) -> I420Canvas {
        let c = I420Canvas(size: FrameSize(width: width, height: height))
        c.fill(PixelRect(x: 0, y: 0, width: width, height: height), YCbCr(RGBColor(red: 128, green: 128, blue: 128)))
        for row in 0..<c.chromaRows {
            for col in 0..<c.chromaStride { c.cb[row * c.chromaStride + col] = UInt8(min(255, col * 5)) }
        }
        return c
    }

    func cbRow(_ c: I420Canvas, _ rect: PixelRect, row: Int) -> [Int] {
        (rect.x / 2..<(rect.x + rect.width) / 2).map { Int(c.cb[(rect.y / 2 + row) * c.chromaStride + $0]) }
    }

    @Test("chroma shrunk by at most 2× is sampled: every value is a source value, in order, near its place")
    func chromaShrinkSampled() {
        let source = ramp(width: 96, height: 40)
        let canvas = I420Canvas(size: FrameSize(width: 100, height: 40))
        let d = PixelRect(x: 2, y: 2, width: 82, height: 34)  // 96 → 82: 0.85×
        canvas.draw(source.asSource, crop: PixelRect(x: 0, y: 0, width: 96, height: 40), into: d)
        let row = cbRow(canvas, d, row: 3)
        #expect(row.count == 41)
        #expect(row.allSatisfy { $0 % 5 == 0 }, "a sampled chroma value is one of the source's: \(row)")
        #expect(zip(row, row.dropFirst()).allSatisfy { $0 <= $1 }, "in order: \(row)")
        for (i, v) in row.enumerated() {
            let place = (Double(i) + 0.5) * 48.0 / 41.0 - 0.5  // the output column's centre in source columns
            #expect(abs(Double(v) / 5 - place) <= 1, "column \(i): \(v / 5), centre at \(place)")
        }
    }

    @Test("chroma enlarged is still filtered: values between the source's appear")
    func chromaEnlargeFiltered() {
        let source = ramp(width: 16, height: 16)
        let canvas = I420Canvas(size: FrameSize(width: 64, height: 64))
        let d = PixelRect(x: 0, y: 0, width: 64, height: 64)
        canvas.draw(source.asSource, crop: PixelRect(x: 0, y: 0, width: 16, height: 16), into: d)
        let row = cbRow(canvas, d, row: 10)
        #expect(row.contains { $0 % 5 != 0 }, "bilinear makes values between the source's: \(row)")
        #expect(zip(row, row.dropFirst()).allSatisfy { $0 <= $1 }, "in order: \(row)")
    }
}
