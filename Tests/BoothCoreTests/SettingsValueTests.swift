import Testing
@testable import BoothCore

/// Parses `value` for `key` as a command-line override on the defaults.
private func override(_ key: String, _ value: String) -> Result<Settings, SettingsError> {
    Settings.defaults.with(overrides: [(key: key, value: value)])
}

/// The single diagnostic message for a rejected override; nil when it was accepted.
private func rejection(_ key: String, _ value: String) -> String? {
    switch override(key, value) {
    case .success: return nil
    case .failure(let error): return error.errors.map(\.message).joined(separator: " | ")
    }
}

private func accepted(_ key: String, _ value: String) -> Settings? {
    if case .success(let s) = override(key, value) { return s }
    return nil
}

@Suite("Settings value types")
struct SettingsValueTests {
    @Test("booleans: true/false/yes/no/on/off in any case")
    func booleans() {
        for (text, expected) in [("true", true), ("FALSE", false), ("yes", true), ("no", false), ("on", true), ("Off", false)] {
            #expect(accepted("button.active_low", text)?.button.activeLow == expected, "\(text)")
        }
        #expect(rejection("button.active_low", "ture")
                == "button.active_low: 'ture' is not a boolean; use true or false (also yes/no, on/off; any letter case)")
        #expect(rejection("button.active_low", "1") != nil)
        #expect(rejection("button.active_low", "") != nil)
    }

    @Test("every word a boolean accepts is in what the docs and messages say is allowed")
    func booleanWordsDocumented() throws {
        // Configs in the field use these; they stay accepted, so the docs must name them.
        for (text, expected) in [("yes", true), ("no", false), ("on", true), ("off", false), ("True", true),
                                 ("TRUE", true), ("false ", false), ("\tOFF", false)] {
            #expect(accepted("display.mirror", text)?.display.mirror == expected, "'\(text)'")
        }
        let spec = try #require(Schema.spec(for: "display.mirror"))
        for word in ["true", "false", "yes", "no", "on", "off", "any letter case"] {
            #expect(spec.allowed.contains(word), "allowed: \(spec.allowed)")
            #expect(Schema.describe(spec).contains(word), "config describe: \(Schema.describe(spec))")
            #expect(rejection("display.mirror", "maybe")?.contains(word) == true, "the error names '\(word)'")
        }
        #expect(Schema.markdownTable().contains("| `display.mirror` | boolean | `true` | true or false (also yes/no, on/off; any letter case) |"))
        #expect(Schema.defaultConfigText().contains("# Allowed: true or false (also yes/no, on/off; any letter case).\nmirror = true\n"))
    }

    @Test("integers: range, sign, non-numbers, overflow")
    func integers() {
        #expect(accepted("camera.frame_rate", "60")?.camera.frameRate == 60)
        #expect(accepted("camera.frame_rate", "1")?.camera.frameRate == 1)
        #expect(accepted("camera.frame_rate", "120")?.camera.frameRate == 120)
        #expect(accepted("camera.settle_frames", "0")?.camera.settleFrames == 0)
        #expect(rejection("camera.frame_rate", "121") == "camera.frame_rate: '121' is out of range; allowed 1 to 120 frames per second")
        #expect(rejection("camera.frame_rate", "0") == "camera.frame_rate: '0' is out of range; allowed 1 to 120 frames per second")
        #expect(rejection("camera.frame_rate", "-5")?.contains("out of range") == true)
        #expect(rejection("camera.frame_rate", "30fps") == "camera.frame_rate: '30fps' is not a whole number; use 1 to 120 frames per second")
        #expect(rejection("storage.jpeg_quality", "92.5")?.contains("is not a whole number") == true)
        #expect(rejection("storage.jpeg_quality", "99999999999999999999999") == "storage.jpeg_quality: '99999999999999999999999' is out of range; allowed 1 to 100")
        #expect(rejection("storage.jpeg_quality", "+") != nil)
    }

    @Test("durations: every unit, decimals, stored as milliseconds")
    func durations() {
        #expect(accepted("button.debounce", "40ms")?.button.debounceMilliseconds == 40)
        #expect(accepted("button.debounce", "1s")?.button.debounceMilliseconds == 1000)
        #expect(accepted("button.debounce", "0.5s")?.button.debounceMilliseconds == 500)
        #expect(accepted("button.debounce", "0.025s")?.button.debounceMilliseconds == 25)
        #expect(accepted("button.long_press", "1.5s")?.button.longPressMilliseconds == 1500)
        #expect(accepted("button.long_press", "1.500s")?.button.longPressMilliseconds == 1500)
        #expect(accepted("button.long_press", "2 s")?.button.longPressMilliseconds == 2000)
        #expect(accepted("camera.idle_stop", "5min")?.camera.idleStopMilliseconds == 300_000)
        #expect(accepted("camera.idle_stop", "1.5h")?.camera.idleStopMilliseconds == 5_400_000)
        #expect(accepted("camera.idle_stop", "24h")?.camera.idleStopMilliseconds == 86_400_000)
        #expect(accepted("camera.idle_stop", "2MIN")?.camera.idleStopMilliseconds == 120_000)
    }

    @Test("durations: missing, unknown and binary units, fractions finer than 1ms, ranges, overflow")
    func durationErrors() {
        #expect(rejection("button.debounce", "30") == "button.debounce: '30' has no unit; use one of ms, s, min, h or d, like 3s or 40ms; allowed 1ms to 1s")
        #expect(rejection("button.debounce", "30sec") == "button.debounce: '30sec' has an unknown unit 'sec'; use ms, s, min, h or d; allowed 1ms to 1s")
        #expect(rejection("button.debounce", "fast")?.hasPrefix("button.debounce: 'fast' is not a duration") == true)
        #expect(rejection("button.debounce", "0.5ms") == "button.debounce: '0.5ms' is finer than a millisecond; the smallest step is 1ms; allowed 1ms to 1s")
        #expect(rejection("button.debounce", "1.s")?.contains("is not a duration") == true)
        #expect(rejection("button.debounce", "1.2.3s")?.contains("is not a duration") == true)
        #expect(rejection("button.debounce", "-5ms") == "button.debounce: '-5ms' is negative; allowed 1ms to 1s")
        #expect(rejection("button.debounce", "0ms") == "button.debounce: '0ms' is out of range; allowed 1ms to 1s")
        #expect(rejection("button.debounce", "1001ms") == "button.debounce: '1001ms' is out of range; allowed 1ms to 1s")
        #expect(rejection("camera.capture_timeout", "99ms") == "camera.capture_timeout: '99ms' is out of range; allowed 100ms to 1min")
        #expect(rejection("camera.idle_stop", "99999999999999999999h")?.contains("is out of range; allowed 1s to 24h") == true)
        #expect(rejection("camera.idle_stop", "9999999999999h")?.contains("is out of range") == true)
        #expect(rejection("camera.idle_stop", "off")?.contains("is not a duration") == true)
    }

    @Test("countdown takes whole seconds only")
    func countdownWholeSeconds() {
        #expect(accepted("session.countdown", "0s")?.session.countdownMilliseconds == 0)
        #expect(accepted("session.countdown", "5s")?.session.countdownSeconds == 5)
        #expect(accepted("session.countdown", "2000ms")?.session.countdownMilliseconds == 2000)
        #expect(rejection("session.countdown", "1.5s") == "session.countdown: '1.5s' is not a whole number of seconds; allowed 0s to 10s in whole seconds")
        #expect(rejection("session.countdown", "11s")?.contains("out of range") == true)
    }

    @Test("duration-or-off: off is nil, durations in range")
    func durationOrOff() {
        #expect(Settings.defaults.session.previewMilliseconds == 3000)
        let off = accepted("session.preview", "off")
        #expect(off != nil)
        #expect(off?.session.previewMilliseconds == nil)
        #expect(accepted("session.preview", "OFF")?.session.previewMilliseconds == nil)
        #expect(accepted("session.preview", "0s")?.session.previewMilliseconds == 0)
        #expect(accepted("session.preview", "1.5s")?.session.previewMilliseconds == 1500)
        #expect(rejection("session.preview", "61s") == "session.preview: '61s' is out of range; allowed off, or 0s to 1min")
        #expect(rejection("session.preview", "never")?.contains("is not a duration") == true)
    }

    @Test("sizes: WxH, either x case, positive and bounded")
    func sizes() {
        #expect(accepted("camera.capture_size", "1920x1080")?.camera.captureSize == FrameSize(width: 1920, height: 1080))
        #expect(accepted("camera.capture_size", "640X480")?.camera.captureSize == FrameSize(width: 640, height: 480))
        #expect(rejection("camera.preview_size", "1280*720") == "camera.preview_size: '1280*720' is not a size; use WxH in pixels, like 1280x720")
        #expect(rejection("camera.preview_size", "0x720")?.contains("is not a size") == true)
        #expect(rejection("camera.preview_size", "1280x") != nil)
        #expect(rejection("camera.preview_size", "20000x10")?.contains("is too large") == true)
    }

    @Test("bytes: decimal units, decimals, binary units refused, ranges")
    func bytes() {
        #expect(accepted("storage.min_free", "500MB")?.storage.minFreeBytes == 500_000_000)
        #expect(accepted("storage.min_free", "1.5GB")?.storage.minFreeBytes == 1_500_000_000)
        #expect(accepted("storage.min_free", "250kB")?.storage.minFreeBytes == 250_000)
        #expect(accepted("storage.min_free", "0B")?.storage.minFreeBytes == 0)
        #expect(accepted("storage.min_free", "2gb")?.storage.minFreeBytes == 2_000_000_000)
        #expect(rejection("storage.min_free", "500") == "storage.min_free: '500' has no unit; use one of B, kB, MB or GB, like 500MB; allowed 0B to 1000GB")
        #expect(rejection("storage.min_free", "500MiB")?.contains("uses a binary unit") == true)
        #expect(rejection("storage.min_free", "1.5B")?.contains("is finer than a byte") == true)
        #expect(rejection("storage.min_free", "2TB")?.contains("unknown unit 'TB'") == true)
        #expect(rejection("storage.min_free", "1001GB")?.contains("is out of range; allowed 0B to 1000GB") == true)
    }

    @Test("choices: any case, canonical value stored, suggestion on a typo")
    func choices() {
        #expect(accepted("camera.format", "MJPEG")?.camera.format == .mjpeg)
        #expect(accepted("camera.format", "yuyv")?.camera.format.pixelFormat == .yuyv)
        #expect(accepted("camera.power_line_frequency", "60")?.camera.powerLineFrequency == .hz60)
        #expect(accepted("button.bias", "as-is")?.button.bias == .asIs)
        #expect(accepted("camera.focus", "locked")?.camera.focus == .locked)
        #expect(rejection("camera.format", "mjepg") == "camera.format: 'mjepg' is not one of auto, mjpeg, yuyv or rgb24; did you mean 'mjpeg'?")
        #expect(rejection("button.bias", "pullup") == "button.bias: 'pullup' is not one of pull-up, pull-down, disabled or as-is; did you mean 'pull-up'?")
        #expect(rejection("camera.power_line_frequency", "banana") == "camera.power_line_frequency: 'banana' is not one of 50, 60, off or auto")
    }

    @Test("strings and paths: empty allowed only where the schema says")
    func stringsAndPaths() {
        #expect(accepted("camera.device", "")?.camera.device == "")
        #expect(accepted("camera.device", "C920")?.camera.device == "C920")
        #expect(accepted("led.line", "GPIO27")?.led.line == "GPIO27")
        #expect(accepted("preview.file", "")?.preview.file == "")
        #expect(accepted("storage.dir", "./photos")?.storage.dir == "./photos")
        #expect(rejection("button.chip", "") == "button.chip: an empty value is not allowed; use any text of up to 500 characters, not empty")
        #expect(rejection("storage.dir", "")?.contains("an empty value is not allowed") == true)
    }

    @Test("each size setting is bounded by what it is for: a screen's 8K for the preview file and the live view, ~100 MP for a still (#35)")
    func sizesBoundedByPurpose() throws {
        // The preview file is drawn as a screen: 8K UHD, either way round.
        #expect(accepted("preview.size", "7680x4320")?.preview.size == FrameSize(width: 7680, height: 4320))
        #expect(accepted("preview.size", "4320x7680")?.preview.size == FrameSize(width: 4320, height: 7680), "a screen mounted sideways")
        for big in ["16384x16384", "8000x8000", "7681x4320", "7680x4321", "4321x7680"] {
            #expect(rejection("preview.size", big) == "preview.size: '\(big)' is too large; allowed WxH in pixels, like 1280x720, up to 7680x4320 "
                    + "(either way round: 8K UHD, the largest screen)", "\(big)")
        }
        // The live view is drawn on a screen too.
        #expect(accepted("camera.preview_size", "3840x2160") != nil)
        #expect(rejection("camera.preview_size", "8000x6000")?.contains("up to 7680x4320") == true)
        // A still: the largest cameras give about 100 MP (Fujifilm GFX100: 11648x8736).
        #expect(accepted("camera.capture_size", "12288x8192") != nil)
        #expect(accepted("camera.capture_size", "11648x8736") != nil)
        #expect(accepted("camera.capture_size", "8736x11648") != nil, "a camera on its side")
        #expect(rejection("camera.capture_size", "16384x16384")?.contains("up to 12288x9216") == true)
        // The bound is what the docs say is allowed.
        let spec = try #require(Schema.spec(for: "preview.size"))
        #expect(spec.allowed == "WxH in pixels, like 1280x720, up to 7680x4320 (either way round: 8K UHD, the largest screen)")
    }

    @Test("texts and paths are bounded too: 500 characters of text, a path PATH_MAX's 4096 bytes, a Wi-Fi name 32 and its password 63 (#35)")
    func lengthsBounded() {
        let long = String(repeating: "a", count: 500)
        #expect(accepted("text.idle", long)?.text.idle == long)
        #expect(rejection("text.idle", long + "a") == "text.idle: a value of 501 characters is too long; use any text of up to 500 characters, not empty")
        #expect(accepted("text.idle", String(repeating: "é", count: 500)) != nil, "characters, not bytes")
        #expect(rejection("picture.footer_top", long + "b")?.contains("is too long") == true)
        let path = "/" + String(repeating: "p", count: 4095)
        #expect(accepted("storage.dir", path) != nil)
        #expect(rejection("storage.dir", path + "p") == "storage.dir: a value of 4097 bytes is too long; use a path of up to 4096 bytes")
        #expect(accepted("gallery.wifi_ssid", String(repeating: "s", count: 32)) != nil)
        #expect(rejection("gallery.wifi_ssid", String(repeating: "s", count: 33))?.contains("up to 32 characters") == true)
        #expect(rejection("gallery.wifi_password", String(repeating: "w", count: 64))?.contains("up to 63 characters") == true)
    }

    @Test("print.media: a PWG name with a finite size, each side 1 to 1000 mm; infinite, huge, tiny and size-less names refused with the rule")
    func media() {
        #expect(accepted("print.media", "na_index-4x6_4x6in")?.print.media == "na_index-4x6_4x6in")
        #expect(accepted("print.media", "iso_a6_105x148mm")?.print.media == "iso_a6_105x148mm")
        #expect(accepted("print.media", "oe_photo-l_3.5x5in")?.print.media == "oe_photo-l_3.5x5in")
        #expect(accepted("print.media", "custom_max_1000x1000mm") != nil)
        let rule = "use a PWG media name with its size, class_name_WxHunit like na_index-4x6_4x6in or iso_a6_105x148mm, each side 1 to 1000 mm (unit in or mm)"
        #expect(rejection("print.media", "x_big_99999x6in") == "print.media: 'x_big_99999x6in' is 2539974.6x152.4 mm; each side must be 1 to 1000 mm; \(rule)")
        #expect(rejection("print.media", "x_wide_1001x10mm") == "print.media: 'x_wide_1001x10mm' is 1001x10 mm; each side must be 1 to 1000 mm; \(rule)")
        #expect(rejection("print.media", "x_tiny_0.5x10mm")?.contains("each side must be 1 to 1000 mm") == true)
        for infinite in ["x_inf_infx6in", "x_inf_1e999x6in", "x_nan_nanx6in", "x_hex_0x10x6in", "x_neg_-4x6in", "x_dot_4.x6in"] {
            #expect(rejection("print.media", infinite) == "print.media: '\(infinite)' has no WxH size (decimal numbers, like 4x6in); \(rule)", "\(infinite)")
        }
        #expect(rejection("print.media", "photo") == "print.media: 'photo' is not a PWG media name with a size (class_name_WxHunit); \(rule)")
        #expect(rejection("print.media", "na_index-4x6_4x6") == "print.media: 'na_index-4x6_4x6' has no size in in or mm at its end; \(rule)")
        #expect(rejection("print.media", "")?.hasPrefix("print.media: '' is not a PWG media name") == true)
        // In a file: file:line and the key.
        guard case let .failure(error) = Settings.parse(text: "[print]\nmode = auto\nmedia = na_huge_1e999x6in\n", file: "booth.conf") else {
            Issue.record("a media of infinite size was accepted")
            return
        }
        #expect(error.errors.map(\.description) == ["booth.conf:3: print.media: 'na_huge_1e999x6in' has no WxH size (decimal numbers, like 4x6in); \(rule)"])
        // The parsed size: millimetres, pixels at a resolution.
        let m = MediaSize(pwg: "na_index-4x6_4x6in")
        #expect(abs((m?.widthMillimetres ?? 0) - 101.6) < 1e-9 && abs((m?.heightMillimetres ?? 0) - 152.4) < 1e-9)
        #expect(m?.pixels(dpi: 300) == FrameSize(width: 1200, height: 1800))
    }

    @Test("canonical text: durations in the largest exact unit, bytes likewise")
    func canonicalText() {
        #expect(Units.formatDuration(1500) == "1500ms")
        #expect(Units.formatDuration(3000) == "3s")
        #expect(Units.formatDuration(300_000) == "5min")
        #expect(Units.formatDuration(3_600_000) == "1h")
        #expect(Units.formatDuration(0) == "0s")
        #expect(Units.formatBytes(500_000_000) == "500MB")
        #expect(Units.formatBytes(1_500_000) == "1500kB")
        let s = Settings.defaults
        #expect(s.text(forKey: "button.long_press") == "1500ms")
        #expect(s.text(forKey: "camera.idle_stop") == "5min")
        #expect(s.text(forKey: "storage.min_free") == "500MB")
        #expect(s.text(forKey: "camera.power_line_frequency") == "50")
        #expect(accepted("session.preview", "off")?.text(forKey: "session.preview") == "off")
        #expect(s.text(forKey: "no.such") == nil)
    }

    @Test("edit distance counts a transposition as one edit")
    func editDistance() {
        #expect(Spelling.distance("ture", "true") == 1)
        #expect(Spelling.distance("debunce", "debounce") == 1)
        #expect(Spelling.distance("", "abc") == 3)
        #expect(Spelling.distance("kitten", "sitting") == 3)
        #expect(Spelling.closest(to: "zzzzzz", among: ["debounce", "chip"]) == nil)
    }
}
