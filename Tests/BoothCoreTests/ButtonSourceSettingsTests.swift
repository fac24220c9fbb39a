import Testing
@testable import BoothCore

@Suite("Button sources in settings")
struct ButtonSourceSettingsTests {
    private func check(_ text: String) -> ConfigCheck { Settings.check(text: text, file: "booth.conf") }

    @Test("button.source is a list: gpio (the default), input, or both, in the file's order, any case")
    func sourceList() throws {
        #expect(Settings.defaults.button.sources == [.gpio])
        let both = try #require(check("[button]\nsource = Input ,gpio\n").settings)
        #expect(both.button.sources == [.input, .gpio])
        let spec = try #require(Schema.settings.first { $0.key == "button.source" })
        #expect(spec.text(in: both) == "input, gpio")
        #expect(spec.allowed == "one or more of gpio, input, separated by commas")
    }

    @Test("a wrong button.source says which item, what is allowed, and the closest")
    func sourceErrors() {
        let typo = check("[button]\nsource = gpio, inptu\n")
        #expect(typo.settings == nil)
        #expect(typo.diagnostics.map(\.description) == [
            "booth.conf:2: button.source: 'inptu' in 'gpio, inptu' is not one of gpio or input; did you mean 'input'?"])
        #expect(check("[button]\nsource = gpio, gpio\n").diagnostics.map(\.message)
                == ["button.source: 'gpio, gpio' names gpio twice; use one or more of gpio, input, separated by commas"])
        #expect(check("[button]\nsource = gpio,\n").diagnostics.map(\.message)
                == ["button.source: 'gpio,' has an empty item; use one or more of gpio, input, separated by commas"])
    }

    @Test("button.input_key must be tap or a key name's shape, checked only with source input")
    func keyShape() {
        let bad = check("[button]\nsource = input\ninput_key = space\n")
        #expect(bad.settings == nil)
        #expect(bad.diagnostics.first?.description.hasPrefix(
            "booth.conf:3: button.input_key = space (booth.conf:3) is not a key name; use tap (a touch screen) or a Linux input key name") == true,
                "\(bad.diagnostics)")
        #expect(check("[button]\ninput_key = space\n").diagnostics.isEmpty, "gpio only: the input keys are not used")
        for fine in ["KEY_ENTER", "key_f13", "BTN_LEFT", "tap"] {
            let device = fine == "tap" ? "any touch screen" : "any keyboard"
            let result = check("[button]\nsource = input\ninput_key = \(fine)\ninput_device = \(device)\n")
            #expect(result.diagnostics.isEmpty, "\(fine): \(result.diagnostics)")
        }
    }

    @Test("a tap needs a touch screen, and a touch screen sends taps: errors naming both keys and the fix")
    func keyAndDevice() {
        let tapKeyboard = check("[button]\nsource = input\ninput_key = tap\n")
        #expect(tapKeyboard.settings == nil)
        #expect(tapKeyboard.diagnostics.map(\.message) == [
            "button.input_key = tap (booth.conf:3) is a touch on a touch screen, but button.input_device = any keyboard (the default) "
            + "has none; set button.input_device = any touch screen (or name the touch screen), or button.input_key = KEY_SPACE"])
        let touchKey = check("[button]\nsource = gpio, input\ninput_device = any touch screen\n")
        #expect(touchKey.settings == nil)
        #expect(touchKey.diagnostics.map(\.message) == [
            "button.input_device = any touch screen (booth.conf:3) sends taps, not button.input_key = KEY_SPACE (the default); "
            + "set button.input_key = tap"])
    }
}
