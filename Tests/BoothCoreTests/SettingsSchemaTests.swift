import Testing
@testable import BoothCore

@Suite("Settings schema")
struct SettingsSchemaTests {
    @Test("every default in the table parses and lies within its own range")
    func defaultsParse() {
        for spec in Schema.settings {
            guard case .success(let value) = spec.type.parse(spec.defaultText) else {
                Issue.record("\(spec.key): default '\(spec.defaultText)' does not parse")
                continue
            }
            // Writing it and reading it back gives the same text: the binding is to the right field.
            var s = Settings.defaults
            spec.write(&s, value)
            #expect(spec.text(in: s) == spec.defaultText || (spec.defaultText.isEmpty && spec.text(in: s).isEmpty), "\(spec.key)")
            #expect(spec.text(in: Settings.defaults) == spec.defaultText, "\(spec.key)")
        }
    }

    @Test("keys are unique, lowercase, unit-free, in a declared section, with a description")
    func tableShape() {
        let keys = Schema.settings.map(\.key)
        #expect(Set(keys).count == keys.count)
        let sections = Set(Schema.sections.map(\.name))
        for spec in Schema.settings {
            #expect(sections.contains(spec.section), "\(spec.key)")
            #expect(spec.key == "\(spec.section).\(spec.name)")
            #expect(spec.name.allSatisfy { $0.isLowercase || $0 == "_" }, "\(spec.key)")
            for unit in ["_ms", "_s", "_seconds", "_mb", "_bytes", "_px"] {
                #expect(!spec.name.hasSuffix(unit), "\(spec.key) carries a unit")
            }
            #expect(spec.description.count > 10, "\(spec.key)")
        }
        // Every section has keys and the table is grouped by section in section order.
        let order = Schema.sections.map(\.name)
        let seen = Schema.settings.map(\.section).reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
        #expect(seen == order)
    }

    @Test("each key writes its own field: setting one key changes exactly that key's text")
    func bindingsAreDistinct() {
        for spec in Schema.settings {
            let alternative: String
            switch spec.type {
            case .bool: alternative = spec.defaultText == "true" ? "false" : "true"
            case .int(let range, _): alternative = String(range.lowerBound == Int(spec.defaultText) ? range.upperBound : range.lowerBound)
            case .millimetres(let range): alternative = "\(range.lowerBound == Int(spec.defaultText) ? range.upperBound : range.lowerBound)mm"
            case .duration(let range, _), .durationOrOff(let range):
                alternative = Units.formatDuration(Units.formatDuration(range.upperBound) == spec.defaultText ? range.lowerBound : range.upperBound)
            case .size: alternative = "2x2"
            case .bytes(let range): alternative = Units.formatBytes(range.upperBound)
            // camera.backend's choices are the names BoothCamera installs, maybe not yet in this process: v4l2 is taken either way.
            case .choice(let choices): alternative = spec.key == "camera.backend" ? "v4l2" : choices.first { $0 != spec.defaultText } ?? spec.defaultText
            case .choiceList(let choices): alternative = choices.reversed().joined(separator: ", ")
            case .string, .path: alternative = "other"
            case .media: alternative = "iso_a6_105x148mm"
            case .color: alternative = "#123456"
            }
            guard case .success(let changed) = Settings.defaults.with(overrides: [(key: spec.key, value: alternative)]) else {
                Issue.record("\(spec.key): '\(alternative)' rejected")
                continue
            }
            for other in Schema.settings {
                let same = other.text(in: changed) == other.text(in: Settings.defaults)
                #expect(same == (other.key != spec.key), "setting \(spec.key) changed \(other.key)?")
            }
        }
    }

    @Test("the typed defaults are the ones the operator documentation promises")
    func typedDefaults() {
        let d = Settings.defaults
        #expect(d.camera.device == "")
        #expect(d.camera.format == .auto)
        #expect(d.camera.previewSize == FrameSize(width: 1280, height: 720))
        #expect(d.camera.captureSize == FrameSize(width: 1280, height: 720))
        #expect(d.camera.frameRate == 30)
        #expect(d.camera.settleFrames == 3)
        #expect(d.camera.powerLineFrequency == .hz50)
        #expect(d.camera.captureTimeoutMilliseconds == 3000)
        #expect(d.camera.idleStopMilliseconds == 300_000)
        #expect(d.button.chip == "gpiochip0")
        #expect(d.button.line == "GPIO17")
        #expect(d.button.activeLow)
        #expect(d.button.bias == .pullUp)
        #expect(d.button.debounceMilliseconds == 30)
        #expect(d.button.longPressMilliseconds == 1500)
        #expect(d.button.stuckLimitMilliseconds == 30_000)
        #expect(d.button.sources == [.gpio])
        #expect(d.button.inputDevice == "any keyboard")
        #expect(d.button.inputKey == "KEY_SPACE")
        #expect(!d.led.isConfigured)
        #expect(d.led.resolvedChip(buttonChip: d.button.chip) == "gpiochip0")
        #expect(!d.led.activeLow)
        #expect(d.session.previewMilliseconds == 3000)
        #expect(d.session.previewTimeoutMilliseconds == 30_000)
        #expect(d.session.countdownSeconds == 3)
        #expect(d.session.reviewMilliseconds == 5000)
        #expect(d.storage.dir == "/var/lib/photobooth/photos")
        #expect(d.storage.jpegQuality == 92)
        #expect(d.storage.minFreeBytes == 500_000_000)
        #expect(d.preview.file == "/run/photobooth/preview.jpg")
        #expect(d.preview.frameRate == 5)
    }

    @Test("the generated default config parses back to the defaults with no diagnostics")
    func generatedConfigRoundTrip() {
        let text = Schema.defaultConfigText()
        let check = Settings.check(text: text, file: "photobooth.conf")
        #expect(check.diagnostics == [])
        #expect(check.settings == Settings.defaults)
        // Every key appears once, as an entry under its section.
        for spec in Schema.settings {
            let entries = check.document.entries(section: spec.section, key: spec.name)
            #expect(entries.count == 1, "\(spec.key)")
        }
        // Comments only on their own lines, no trailing blanks, at most 80 columns except unbreakable words.
        for line in check.document.lines {
            #expect(!line.text.hasSuffix(" "), "line \(line.number)")
            if case .comment = line.kind { #expect(line.text.count <= 80 || !line.text.dropFirst(2).contains(" "), "line \(line.number)") }
        }
        #expect(text.hasSuffix("\n"))
        #expect(text.contains("[button]\n"))
        #expect(text.contains("# Allowed: 1ms to 1s.\ndebounce = 30ms\n"))
        #expect(text.contains("# Allowed: auto, mjpeg, yuyv or rgb24.\nformat = auto\n"))
    }

    @Test("a changed default config still validates and the changed key takes effect")
    func editedGeneratedConfig() throws {
        let document = ConfigDocument(parsing: Schema.defaultConfigText())
        let line = try #require(document.entries(section: "session", key: "countdown").first)
        let edited = try #require(document.replacingValue(onLine: line.number, with: "5s"))
        let settings = try Settings.parse(text: edited.text, file: "f").get()
        #expect(settings.session.countdownSeconds == 5)
    }
}
