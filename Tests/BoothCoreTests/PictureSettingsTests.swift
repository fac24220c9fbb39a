import BoothCore
import Testing

@Suite("[picture] settings")
struct PictureSettingsTests {
    func error(_ key: String, _ value: String) -> String? {
        switch Settings.defaults.with(overrides: [(key: key, value: value)]) {
        case .success: return nil
        case .failure(let e): return e.errors.first?.message
        }
    }

    @Test("defaults: auto layout, fill, size and dpi from print, quality 92, a date footer in DejaVu Sans")
    func defaults() {
        let p = Settings.defaults.picture
        #expect(p.layout == .auto)
        #expect(p.fit == .fill)
        #expect(p.size == .media && p.dpi == .print)
        #expect(p.quality == 92)
        #expect(p.marginMillimetres == 3)
        #expect(p.background == RGBColor(red: 255, green: 255, blue: 255))
        #expect(p.textColor == RGBColor(red: 0, green: 0, blue: 0))
        #expect(p.footerTop == "" && p.footerBottom == "{date}")
        #expect(p.font.hasSuffix("DejaVuSans.ttf"))
        #expect(PictureDPISetting.print.dotsPerInch(printDPI: 300) == 300)
        #expect(PictureDPISetting.dpi600.dotsPerInch(printDPI: 300) == 600)
    }

    @Test("colours: #rrggbb in any case or a name; anything else is a clear error")
    func colours() {
        #expect(RGBColor(parsing: "#FFa500") == RGBColor(red: 255, green: 165, blue: 0))
        #expect(RGBColor(parsing: "Black") == RGBColor(red: 0, green: 0, blue: 0))
        #expect(RGBColor(parsing: "#FFF") == nil)
        #expect(RGBColor(parsing: "#GG0000") == nil)
        #expect(RGBColor(red: 1, green: 2, blue: 255).description == "#0102ff")
        #expect(RGBColor(red: 255, green: 255, blue: 255).description == "white")
        let message = error("picture.background", "purplish")
        #expect(message?.contains("is not a colour") == true, "\(message ?? "accepted")")
        #expect(message?.contains("#rrggbb") == true)
        #expect(error("picture.text_color", "blak")?.contains("did you mean 'black'") == true)
        #expect(error("picture.background", "#102030") == nil)
    }

    @Test("picture.margin takes mm like print.media's sizes, a bare number as before; anything else names file, line, key and what is allowed")
    func marginInMillimetres() throws {
        func margin(_ value: String) -> Int? {
            try? Settings.defaults.with(overrides: [(key: "picture.margin", value: value)]).get().picture.marginMillimetres
        }
        #expect(margin("4mm") == 4)
        #expect(margin("4 mm") == 4)
        #expect(margin("4MM") == 4)
        #expect(margin("0mm") == 0)
        #expect(margin("4") == 4, "a bare number is still millimetres")
        #expect(margin("+3") == 3, "a leading + as whole-number settings take it")
        #expect(margin("+3mm") == 3)
        let settings = try Settings.parse(text: "[picture]\nmargin = 5mm\n", file: "booth.conf").get()
        #expect(settings.picture.marginMillimetres == 5)
        for bad in ["4cm", "4.5mm", "-1mm", "mm", "4 m", "51mm", "+", "++3", "+-3"] {
            #expect(margin(bad) == nil, "'\(bad)' accepted")
        }
        #expect(error("picture.margin", "4cm")?.contains("'4cm' is not a length in whole millimetres") == true)
        #expect(error("picture.margin", "51mm")?.contains("out of range") == true)
        guard case .failure(let e) = Settings.parse(text: "[picture]\n\nmargin = 2in\n", file: "booth.conf") else {
            Issue.record("2in accepted"); return
        }
        let line = e.description
        #expect(line.hasPrefix("booth.conf:3:"), "\(line)")
        #expect(line.contains("picture.margin: '2in' is not a length in whole millimetres; use 0 to 50 mm (whole millimetres, like 3 or 3mm)"), "\(line)")
    }

    @Test("bad layout, dpi, quality and margin are refused with what is allowed")
    func badValues() {
        #expect(error("picture.layout", "2x3")?.contains("auto, single, 2x2, strip or 3up") == true)
        #expect(error("picture.dpi", "72")?.contains("print, 150, 200, 300 or 600") == true)
        #expect(error("picture.quality", "0")?.contains("out of range") == true)
        #expect(error("picture.margin", "51")?.contains("0 to 50 mm") == true)
        #expect(error("picture.size", "4x5in") != nil)
        #expect(error("picture.date_format", "") != nil)
        #expect(error("picture.layout", "STRIP") == nil)
    }
}
