import Testing
@testable import BoothCore

private func diagnostics(_ text: String, file: String = "booth.conf") -> [Diagnostic] {
    Settings.check(text: text, file: file).diagnostics
}

@Suite("Settings files")
struct SettingsFileTests {
    @Test("a valid file overrides only the keys it names")
    func validFile() throws {
        let text = """
            # a comment
            ; another comment

            [camera]
            device = /dev/video2
            capture_size = 1920x1080
            exposure = locked

            [button]
            debounce = 25ms
            line = "GPIO 17 ; quoted"

            [session]
            preview = off
            """
        let settings = try Settings.parse(text: text, file: "booth.conf").get()
        var expected = Settings.defaults
        expected.camera.device = "/dev/video2"
        expected.camera.captureSize = FrameSize(width: 1920, height: 1080)
        expected.camera.exposure = .locked
        expected.button.debounceMilliseconds = 25
        expected.button.line = "GPIO 17 ; quoted"
        expected.session.previewMilliseconds = nil
        #expect(settings == expected)
    }

    @Test("an empty file is the defaults")
    func emptyFile() throws {
        #expect(try Settings.parse(text: "", file: "x").get() == Settings.defaults)
    }

    @Test("every problem is reported, in order, with its line number")
    func manyErrors() {
        let text = """
            orphan = 1
            [camera]
            frame_rate = 500
            format = mjepg

            [buton]
            debounce = 30ms
            [button]
            active_low = ture
            debunce = 30ms
            debounce = 20
            debounce = 40ms
            this line has no equals sign
            [session]
            countdown = 2.5s
            """
        let found = diagnostics(text)
        #expect(found.map(\.description) == [
            "booth.conf:1: 'orphan' is outside any section; start a section first, like [camera]",
            "booth.conf:3: camera.frame_rate: '500' is out of range; allowed 1 to 120 frames per second",
            "booth.conf:4: camera.format: 'mjepg' is not one of auto, mjpeg, yuyv or rgb24; did you mean 'mjpeg'?",
            "booth.conf:6: unknown section '[buton]'; did you mean '[button]'?",
            "booth.conf:9: button.active_low: 'ture' is not a boolean; use true or false (also yes/no, on/off; any letter case)",
            "booth.conf:10: unknown key 'button.debunce'; did you mean 'button.debounce'?",
            "booth.conf:11: button.debounce: '20' has no unit; use one of ms, s, min, h or d, like 3s or 40ms; allowed 1ms to 1s",
            "booth.conf:12: duplicate key 'button.debounce'; first set at line 11",
            "booth.conf:13: 'this line has no equals sign' is not a setting; write 'key = value', '[section]' or a comment starting with '#'",
            "booth.conf:15: session.countdown: '2.5s' is not a whole number of seconds; allowed 0s to 10s in whole seconds",
        ])
        #expect(found.allSatisfy { $0.severity == .error })
        #expect(found[1].key == "camera.frame_rate")
        #expect(found[1].line == 3)
        #expect(found[1].file == "booth.conf")
        if case .failure(let error) = Settings.parse(text: text, file: "booth.conf") {
            #expect(error.diagnostics == found)
            #expect(error.description.split(separator: "\n").count == 10)
        } else {
            Issue.record("a file with errors parsed")
        }
    }

    @Test("closest-name suggestions for keys and sections")
    func suggestions() {
        func message(_ text: String) -> String? { diagnostics(text).first?.message }
        #expect(message("[button]\nactive-low = true") == "unknown key 'button.active-low'; did you mean 'button.active_low'?")
        #expect(message("[camera]\ndebounce = 30ms") == "unknown key 'camera.debounce'; did you mean 'button.debounce' (under [button])?")
        #expect(message("[button]\nbutton.debounce = 30ms") == "unknown key 'button.button.debounce'; 'button.debounce' belongs under [button] as 'debounce = …'")
        #expect(message("[camera]\nzoom = 2") == "unknown key 'camera.zoom'; [camera] has backend, device, live_view_device, live_view_rate, capture_target, format, preview_size, capture_size, frame_rate, settle_frames, power_line_frequency, exposure, white_balance, focus, capture_timeout, idle_stop or rotation")
        #expect(message("[Camera]") == "unknown section '[Camera]'; did you mean '[camera]'?")
        #expect(message("[printer]\nmodel = x") == "unknown section '[printer]'; did you mean '[print]'?")
        #expect(message("[projector]\nmodel = x") == "unknown section '[projector]'; sections are [camera], [button], [led], [session], [storage], [preview], [print], [display], [text], [picture] or [gallery]")
        #expect(message("debounce = 30ms") == "'debounce' is outside any section; put it under [button] ('button.debounce')")
        #expect(message("storage.dir = /x") == "'storage.dir' is outside any section; write 'dir = …' under [storage]")
    }

    @Test("keys in an unknown section are reported once, by the section")
    func unknownSectionOnce() {
        let found = diagnostics("[camra]\ndevice = x\nformat = y\n")
        #expect(found.count == 1)
        #expect(found.first?.line == 1)
    }

    @Test("a value followed by ' # comment' is read without the comment; a ';' after a value gets the hint")
    func inlineComments() throws {
        let found = diagnostics("[button]\ndebounce = 30ms # was 50ms\nactive_low = true ; wiring v2\nlong_press = 2s#x\n")
        #expect(found.count == 2)
        #expect(found[0].line == 3)
        #expect(found[0].message.hasPrefix("button.active_low: 'true ; wiring v2' is not a boolean; use true or false (also yes/no, on/off; any letter case) (a ';' after a value is part of the value; a comment after a value starts with ' #')"))
        // No blank before '#': part of the value, no hint.
        #expect(found[1].line == 4)
        #expect(!found[1].message.contains("comment"))
        let settings = try Settings.parse(text: "[camera]\ndevice = C920   # the Logitech\n[picture]\nfooter_top = \"Party #1\"  # quoted\n", file: "f").get()
        #expect(settings.camera.device == "C920")
        #expect(settings.picture.footerTop == "Party #1")
    }

    @Test("text values with ' ; ' are kept but warned about")
    func semicolonWarning() throws {
        let text = "[camera]\ndevice = C920 ; the Logitech\n"
        let check = Settings.check(text: text, file: "f")
        #expect(check.diagnostics.count == 1)
        #expect(check.diagnostics.first?.severity == .warning)
        #expect(check.diagnostics.first?.description.hasPrefix("f:2: warning: camera.device: 'C920 ; the Logitech' contains a ';'") == true)
        #expect(check.settings?.camera.device == "C920 ; the Logitech")
    }

    @Test("a dotted key outside any section, as README once wrote camera.backend: validate says how to write it")
    func dottedKeyOutsideSection() {
        let found = diagnostics("camera.backend = libcamera\n")
        #expect(found.map(\.description) == ["booth.conf:1: 'camera.backend' is outside any section; write 'backend = …' under [camera]"])
    }

    @Test("a repeated section header is merged with a warning; keys in it still count as duplicates")
    func repeatedSection() {
        let found = diagnostics("[led]\nline = 5\n[camera]\n[led]\nline = 6\n")
        #expect(found.map(\.description) == [
            "booth.conf:4: warning: section '[led]' appears again (first at line 1); its keys are merged",
            "booth.conf:5: duplicate key 'led.line'; first set at line 2",
        ])
    }

    @Test("malformed headers and keys")
    func malformed() {
        let found = diagnostics("[camera\n[ ]\n= 5\n")
        #expect(found.map(\.line) == [1, 2, 3])
        #expect(found[0].message == "a section header must end with ']', like '[camera]'")
        #expect(found[1].message == "a section header needs a name, like '[camera]'")
        #expect(found[2].message == "a key is missing before '='; write 'key = value'")
    }

    @Test("CRLF line endings, a byte order mark, tabs and quotes")
    func lineEndings() throws {
        let text = "\u{FEFF}[storage]\r\n\tjpeg_quality\t=\t80\t\r\ndir = \"/srv/photos\"\r\n"
        let settings = try Settings.parse(text: text, file: "f").get()
        #expect(settings.storage.jpegQuality == 80)
        #expect(settings.storage.dir == "/srv/photos")
    }

    @Test("Diagnostic description forms")
    func diagnosticDescription() {
        #expect(Diagnostic(file: "a.conf", line: 3, key: "k", message: "m").description == "a.conf:3: m")
        #expect(Diagnostic(file: "a.conf", line: 3, message: "m", severity: .warning).description == "a.conf:3: warning: m")
        #expect(Diagnostic(file: "command line", line: nil, message: "m").description == "command line: m")
    }
}

@Suite("Settings overrides")
struct SettingsOverrideTests {
    @Test("overrides apply in order over the base settings")
    func apply() throws {
        var base = Settings.defaults
        base.storage.jpegQuality = 70
        let result = try base.with(overrides: [
            (key: "storage.dir", value: "./photos"),
            (key: "session.countdown", value: " 0s "),
            (key: "camera.frame_rate", value: "15"),
            (key: "camera.frame_rate", value: "25"),
        ]).get()
        #expect(result.storage.dir == "./photos")
        #expect(result.storage.jpegQuality == 70)
        #expect(result.session.countdownMilliseconds == 0)
        #expect(result.camera.frameRate == 25)
    }

    @Test("overrides are validated like the file, every problem reported, located as the --set flag (not a file)")
    func errors() {
        guard case .failure(let error) = Settings.defaults.with(overrides: [
            (key: "button.debunce", value: "30ms"),
            (key: "button.active_low", value: "ture"),
            (key: "storage.jpeg_quality", value: "101"),
            (key: "nonsense", value: "1"),
        ]) else {
            Issue.record("invalid overrides accepted")
            return
        }
        #expect(error.diagnostics.map(\.description) == [
            "--set button.debunce=30ms: unknown key 'button.debunce'; did you mean 'button.debounce'?",
            "--set button.active_low=ture: button.active_low: 'ture' is not a boolean; use true or false (also yes/no, on/off; any letter case)",
            "--set storage.jpeg_quality=101: storage.jpeg_quality: '101' is out of range; allowed 1 to 100",
            "--set nonsense=1: unknown key 'nonsense'; keys are written section.key, like button.debounce",
        ])
        #expect(error.diagnostics.allSatisfy { $0.file.hasPrefix("--set ") && $0.line == nil })
    }
}

@Suite("Settings combinations")
struct SettingsCombinationTests {
    private func check(_ text: String) -> ConfigCheck { Settings.check(text: text, file: "booth.conf") }

    @Test("gallery.pin: 4 to 32 characters without spaces, else an error at its line; a PIN with nothing to guard is a warning")
    func galleryPIN() {
        let short = check("[gallery]\nlist = true\npin = 123\n")
        #expect(short.settings == nil)
        #expect(short.diagnostics.map(\.description) == [
            "booth.conf:3: gallery.pin has 3 characters: a PIN is 4 to 32 characters without spaces (digits are easiest on a phone), or empty for none",
        ])
        #expect(check("[gallery]\nlist = true\npin = 12 34\n").settings == nil)
        #expect(check("[gallery]\nlist = true\npin = \(String(repeating: "9", count: 33))\n").settings == nil)
        let fine = check("[gallery]\nslideshow = true\npin = 2468\n")
        #expect(fine.settings?.gallery.pin == "2468")
        #expect(fine.diagnostics.isEmpty)
        let idle = check("[gallery]\npin = 2468\n")
        #expect(idle.settings != nil)
        #expect(idle.diagnostics.map(\.description) == [
            "booth.conf:2: warning: gallery.pin guards nothing with gallery.list = false (the default) and gallery.slideshow = false (the default): "
                + "a picture's own URL never asks for it. Set gallery.list = true or gallery.slideshow = true, or leave gallery.pin empty",
        ])
    }

    @Test("picture.qr without a URL to carry warns, with what is missing; gallery.public_url, gallery.alert_url and gallery.sync_remote must be written as their kinds are")
    func printedCodeAndAddresses() {
        let noGallery = check("[picture]\nqr = bottom-right\n")
        #expect(noGallery.settings?.picture.qr == .bottomRight)
        #expect(noGallery.diagnostics.map(\.description) == [
            "booth.conf:2: warning: picture.qr = bottom-right (booth.conf:2) prints no code with gallery.enabled = false (the default): "
                + "the pictures have no URL; set it, or picture.qr = off",
        ])
        let noURL = check("[picture]\nqr = top-left\n[gallery]\nenabled = true\n")
        #expect(noURL.diagnostics.map(\.description) == [
            "booth.conf:2: warning: picture.qr = top-left (booth.conf:2) prints no code with gallery.url_base and gallery.public_url empty: "
                + "the booth does not know the URL guests' phones reach; set it, or picture.qr = off",
        ])
        let fine = check("[picture]\nqr = top-left\n[gallery]\nenabled = true\nurl_base = http://10.42.0.1:8080\n[print]\nmode = auto\n")
        #expect(fine.diagnostics.isEmpty)
        #expect(fine.settings?.gallery.pictureURL(token: "abc") == "http://10.42.0.1:8080/p/abc")
        let noToken = check("[gallery]\nsync_remote = s3:photos\npublic_url = https://photos.example.org/wedding/\n")
        #expect(noToken.settings == nil)
        #expect(noToken.diagnostics.map(\.description) == [
            "booth.conf:3: gallery.public_url 'https://photos.example.org/wedding/' is not an http:// or https:// URL with {token} in it "
                + "(what stands for the picture's name at the remote: https://photos.example.org/wedding/{token}.jpg), or empty",
        ])
        let synced = check("[gallery]\nsync_remote = s3:photos\npublic_url = https://photos.example.org/w/{token}.jpg\n")
        #expect(synced.diagnostics.isEmpty)
        #expect(synced.settings?.gallery.pictureURL(token: "abc") == "https://photos.example.org/w/abc.jpg")
        let unsynced = check("[gallery]\npublic_url = https://photos.example.org/w/{token}.jpg\n")
        #expect(unsynced.diagnostics.map(\.severity) == [.warning])
        #expect(check("[gallery]\nalert_url = ftp://ops.example.org/hook\n").settings == nil)
        #expect(check("[gallery]\nalert_url = https://ops.example.org/hook\n").diagnostics.isEmpty)
        #expect(check("[gallery]\nsync_remote = photos\n").settings == nil)
        #expect(check("[gallery]\nsync_remote = -x:foo\n").settings == nil, "a flag to rclone")
        #expect(check("[gallery]\nsync_remote = a/b:c\n").settings == nil, "a relative local path to rclone")
        #expect(check("[gallery]\nsync_remote = my-s3.eu:bucket/event\n").diagnostics.isEmpty)
        #expect(check("[gallery]\nsync_remote = /media/usb/photos\n").diagnostics.isEmpty)
    }

    @Test("picture.layout = single with 4 shots is an error at the layout's line, citing the shots' line, with the fix")
    func singleLayoutWithFourShots() {
        let result = check("[session]\nshots = 4\n\n[picture]\nlayout = single\n")
        #expect(result.settings == nil, "guests would pose four times for a picture of shot 1")
        #expect(result.diagnostics.map(\.description) == [
            "booth.conf:5: picture.layout = single (booth.conf:5) holds 1 capture, but session.shots = 4 (booth.conf:2) "
                + "takes 4: guests would pose for 4 shots and shots 2 to 4 are not in the picture; "
                + "set picture.layout = auto (2x2 for 4 shots), or session.shots = 1",
        ])
        #expect(result.diagnostics.first?.key == "picture.layout")
    }

    @Test("more shots than the layout holds is an error; fewer (empty slots) a warning; a layout no series uses a warning")
    func layoutAgainstShots() {
        let threeUpFour = check("[session]\nshots = 4\n[picture]\nlayout = 3up\n")
        #expect(threeUpFour.settings == nil)
        #expect(threeUpFour.diagnostics.first?.message.contains("shot 4 is not in the picture") == true, "\(threeUpFour.diagnostics)")

        let gridThree = check("[session]\nshots = 3\n[picture]\nlayout = 2x2\n")
        #expect(gridThree.isValid, "it works, with an empty slot")
        #expect(gridThree.diagnostics.map(\.severity) == [.warning])
        #expect(gridThree.diagnostics.first?.description == "booth.conf:4: warning: picture.layout = 2x2 (booth.conf:4) has 4 slots, "
                + "but session.shots = 3 (booth.conf:2) fills 3: every picture has 1 empty slot; "
                + "set picture.layout = auto (3up for 3 shots), or session.shots = 4")

        let threeUpTwo = check("[session]\nshots = 2\n[picture]\nlayout = 3up\n")
        #expect(threeUpTwo.isValid)
        #expect(threeUpTwo.diagnostics.first?.message.contains("1 empty slot") == true)

        // One shot, not composed: the layout is silently ignored today; say so.
        let stripOne = check("[picture]\nlayout = strip\n")
        #expect(stripOne.isValid)
        #expect(stripOne.diagnostics.map(\.description) == [
            "booth.conf:2: warning: picture.layout = strip (booth.conf:2) is not used: with session.shots = 1 (the default) "
                + "and picture.compose_single_shot = false (the default) the capture itself is the picture; "
                + "set picture.compose_single_shot = true to compose it as strip, or session.shots = 2 to 4",
        ])
        // Composed, one shot in a 2x2: three empty slots.
        let gridOne = check("[picture]\ncompose_single_shot = yes\nlayout = 2x2\n")
        #expect(gridOne.isValid)
        #expect(gridOne.diagnostics.first?.message.contains("session.shots = 1 (the default) with picture.compose_single_shot = true (booth.conf:2) fills 1: every picture has 3 empty slots") == true,
                "\(gridOne.diagnostics)")

        for fine in ["[picture]\nlayout = strip\ncompose_single_shot = true\n", "[session]\nshots = 3\n[picture]\nlayout = strip\n",
                     "[session]\nshots = 4\n", "[session]\nshots = 4\n[picture]\nlayout = 2x2\n", "[picture]\nlayout = single\n",
                     "[session]\nshots = 3\n[picture]\nlayout = 3up\n"] {
            #expect(check(fine).diagnostics.isEmpty, "\(fine): \(check(fine).diagnostics)")
        }
    }

    @Test("a footer, overlay or background with one shot not composed is a warning saying to set picture.compose_single_shot (#35)")
    func singleShotDrawsNoFooter() {
        let footer = check("[picture]\nfooter_top = Anna & Ben\n")
        #expect(footer.isValid, "it works: the capture is the picture")
        #expect(footer.diagnostics.map(\.description) == [
            "booth.conf:2: warning: picture.footer_top = Anna & Ben (booth.conf:2) is not drawn: with session.shots = 1 (the default) "
                + "and picture.compose_single_shot = false (the default) the capture itself is the picture, without footer, overlay "
                + "or background; set picture.compose_single_shot = true to compose it with them, or leave picture.footer_top empty",
        ])
        let more = check("[picture]\nfooter_bottom = {date} in Lyon\noverlay = /etc/photobooth/frame.png\n")
        #expect(more.diagnostics.count == 1, "one warning for the keys together: \(more.diagnostics)")
        #expect(more.diagnostics.first?.line == 2)
        #expect(more.diagnostics.first?.message.hasPrefix("picture.footer_bottom = {date} in Lyon (booth.conf:2) and "
                                                          + "picture.overlay = /etc/photobooth/frame.png (booth.conf:3) are not drawn") == true,
                "\(more.diagnostics)")
        #expect(more.diagnostics.first?.message.hasSuffix("or leave picture.footer_bottom and picture.overlay empty") == true)
        // Composed (a series, or compose_single_shot), or nothing to draw but the default date line: no warning.
        for fine in ["[picture]\nfooter_top = Anna\ncompose_single_shot = true\n", "[session]\nshots = 2\n[picture]\nfooter_top = Anna\n",
                     "[picture]\nfooter_top =\n", "[picture]\nfooter_bottom = {date}\n"] {
            #expect(check(fine).diagnostics.isEmpty, "\(fine): \(check(fine).diagnostics)")
        }
    }

    @Test("what the settings make the booth hold is estimated; over the limit is an error naming the keys, the estimate and the limit (#35)")
    func memoryEstimate() throws {
        // Defaults: well under the limit.
        let defaults = Settings.defaults.memoryEstimate
        #expect(defaults.total < MemoryEstimate.limit / 2, "\(defaults)")
        // Each size within its own bound, together too much: 8K drawings, a 100 MP still, 4x6 in at 1200 dpi printed.
        let text = "[camera]\npreview_size = 7680x4320\ncapture_size = 12288x8192\n[preview]\nsize = 7680x4320\n"
            + "[print]\nmode = auto\ndpi = 1200\n"
        let result = check(text)
        #expect(result.settings == nil, "refused: \(result.diagnostics)")
        let error = try #require(result.diagnostics.first { $0.severity == .error })
        #expect(error.line == 2, "located at the largest part's key, the live view's: \(error)")
        #expect(error.message.hasPrefix("these settings would make the booth hold about "), "\(error.message)")
        #expect(error.message.contains("more than its limit of 512 MB"), "\(error.message)")
        for part in ["preview.size = 7680x4320 (booth.conf:5)", "camera.preview_size = 7680x4320 (booth.conf:2)",
                     "camera.capture_size = 12288x8192 (booth.conf:3)", "print.dpi = 1200 (booth.conf:8)"] {
            #expect(error.message.contains(part), "\(part): \(error.message)")
        }
        // The figures a message gives are the estimate's own.
        let settings = try Settings.defaults.with(overrides: [("camera.preview_size", "7680x4320"), ("camera.capture_size", "12288x8192"),
                                                              ("preview.size", "7680x4320"), ("print.mode", "auto"), ("print.dpi", "1200")]).get()
        let estimate = settings.memoryEstimate
        #expect(estimate.total > MemoryEstimate.limit)
        #expect(error.message.contains("about \(estimate.total / 1_000_000) MB"), "\(error.message)")
        // What a booth commonly runs: a 4K screen drawing, a full-HD live view, a 24 MP still, 600 dpi prints of a 2x2.
        let common = check("[camera]\npreview_size = 1920x1080\ncapture_size = 6000x4000\n[preview]\nsize = 3840x2160\n"
                           + "[session]\nshots = 4\n[print]\nmode = auto\ndpi = 600\n")
        #expect(common.isValid, "\(common.diagnostics)")
    }

    @Test("a capture size smaller than the live view's is a warning at the key that was set, naming both")
    func captureSmallerThanPreview() {
        let small = check("[camera]\ncapture_size = 640x480\n")
        #expect(small.isValid)
        #expect(small.diagnostics.map(\.description) == [
            "booth.conf:2: warning: camera.capture_size = 640x480 (booth.conf:2) is smaller than camera.preview_size = 1280x720 (the default): "
                + "photos would have fewer pixels than the live view, and every capture switches the camera to the smaller size and back; "
                + "set camera.capture_size to 1280x720 or larger (or preview_size smaller)",
        ])
        let bigPreview = check("[camera]\n\npreview_size = 1920x1080\n")
        #expect(bigPreview.diagnostics.first?.line == 3, "located at the key that was set")
        #expect(bigPreview.diagnostics.first?.message.contains("camera.capture_size = 1280x720 (the default)") == true)
        #expect(check("[camera]\ncapture_size = 1920x1080\n").diagnostics.isEmpty)
    }

    @Test("combination diagnostics take their place in line order among the file's own")
    func combinationsInLineOrder() {
        let found = check("[camera]\ncapture_size = 640x480\n[button]\nline = GPIO17 ; the button\n").diagnostics
        #expect(found.map(\.line) == [2, 4], "\(found)")
        #expect(found.map(\.key) == ["camera.capture_size", "button.line"])
    }

    @Test("config set refuses an edit that makes a combination an error")
    func editRefusesBrokenCombination() {
        guard case .failure(.invalidFile(let error)) = Settings.edit(text: "[picture]\nlayout = single\n", file: "booth.conf",
                                                                     key: "session.shots", value: "3") else {
            Issue.record("session.shots = 3 with layout = single was written")
            return
        }
        #expect(error.description.contains("session.shots = 3 (booth.conf:"), "\(error)")
    }
}
