/// Settings that are each valid alone but do not work together as the operator meant. The pure rules
/// (no device, file or service asked) live here and run with every file check, every load and every
/// `config set`; those that need the system (a CUPS queue, a mount point) are in `photoboothd --check`.
///
/// An error where the combination cannot work (guests would pose for shots the picture drops); a
/// warning where it works, but differently than the keys suggest (empty slots, a layout not used, a
/// photo smaller than the live view). Each message names both keys with where they were set
/// (file:line, `--set key=value`, or the default) and the fix.
extension Settings {
    /// The problems of this combination of settings, located with `sources` (the first key the operator set).
    public func combinationDiagnostics(sources: SettingSources) -> [Diagnostic] {
        var out: [Diagnostic] = []
        out += layoutDiagnostics(sources)
        out += captureSizeDiagnostics(sources)
        out += gphoto2Diagnostics(sources)
        out += inputButtonDiagnostics(sources)
        out += galleryDiagnostics(sources)
        out += printedCodeDiagnostics(sources)
        out += singleShotDrawingDiagnostics(sources)
        out += memoryDiagnostics(sources)
        return out
    }

    /// How many captures a `picture.layout` draws: nil for `auto` (as many as shots) and `strip`
    /// (a column of up to four, one row per shot).
    static func slots(of layout: PictureLayoutSetting) -> Int? {
        switch layout {
        case .auto, .strip: nil
        case .single: 1
        case .grid2x2: 4
        case .threeUp: 3
        }
    }

    /// The layout `auto` picks for `shots` (1 single, 2 strip, 3 3up, 4 2x2).
    static func autoLayout(shots: Int) -> PictureLayoutSetting {
        switch shots {
        case ...1: .single
        case 2: .strip
        case 3: .threeUp
        default: .grid2x2
        }
    }

    private func layoutDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        let layout = picture.layout, shots = session.shots
        let layoutKey = "picture.layout", shotsKey = "session.shots", composeKey = "picture.compose_single_shot"
        let composed = shots > 1 || picture.composeSingleShot
        let autoFix = "picture.layout = auto (\(Settings.autoLayout(shots: shots).rawValue) for \(shots) shot\(shots == 1 ? "" : "s"))"
        if !composed {
            guard layout != .auto, layout != .single else { return [] }
            let wants = Settings.slots(of: layout).map { "session.shots = \($0)" } ?? "session.shots = 2 to 4"
            return [sources.diagnostic(keys: [layoutKey, shotsKey, composeKey], message:
                "\(sources.cite(layoutKey, in: self)) is not used: with \(sources.cite(shotsKey, in: self)) and "
                + "\(sources.cite(composeKey, in: self)) the capture itself is the picture; set \(composeKey) = true "
                + "to compose it as \(layout.rawValue), or \(wants)", severity: .warning)]
        }
        guard let slots = Settings.slots(of: layout), slots != shots else { return [] }
        let shotsCited = sources.cite(shotsKey, in: self)
            + (shots == 1 ? " with \(sources.cite(composeKey, in: self))" : "")
        if slots < shots {
            let dropped = slots + 1 == shots ? "shot \(shots) is" : "shots \(slots + 1) to \(shots) are"
            return [sources.diagnostic(keys: [layoutKey, shotsKey, composeKey], message:
                "\(sources.cite(layoutKey, in: self)) holds \(slots) capture\(slots == 1 ? "" : "s"), but "
                + "\(shotsCited) takes \(shots): guests would pose for \(shots) shots and \(dropped) not in the picture; "
                + "set \(autoFix), or session.shots = \(slots)")]
        }
        let empty = slots - shots
        return [sources.diagnostic(keys: [layoutKey, shotsKey, composeKey], message:
            "\(sources.cite(layoutKey, in: self)) has \(slots) slots, but \(shotsCited) fills \(shots): "
            + "every picture has \(empty) empty slot\(empty == 1 ? "" : "s"); set \(autoFix), or session.shots = \(slots)",
            severity: .warning)]
    }

    /// With one shot not composed the capture itself is the picture: a footer line, an overlay or a
    /// background image the operator set is not drawn.
    private func singleShotDrawingDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        guard session.shots == 1, !picture.composeSingleShot else { return [] }
        let drawn: [(key: String, value: String)] = [("picture.footer_top", picture.footerTop), ("picture.footer_bottom", picture.footerBottom),
                                                     ("picture.overlay", picture.overlay), ("picture.background_image", picture.backgroundImage)]
        let unused = drawn.filter { !$0.value.isEmpty && $0.value != Schema.spec(for: $0.key)?.defaultText }.map(\.key)
        guard !unused.isEmpty else { return [] }
        let composeKey = "picture.compose_single_shot"
        let cited = unused.map { sources.cite($0, in: self) }
        return [sources.diagnostic(keys: unused, message:
            "\(cited.joined(separator: " and ")) \(unused.count == 1 ? "is" : "are") not drawn: with \(sources.cite("session.shots", in: self)) "
            + "and \(sources.cite(composeKey, in: self)) the capture itself is the picture, without footer, overlay or background; "
            + "set \(composeKey) = true to compose it with them, or leave \(unused.joined(separator: " and ")) empty", severity: .warning)]
    }

    /// `button.input_key` is `tap` or a key name's shape (`KEY_` or `BTN_`, then capitals, digits and
    /// `_`; whether libevdev knows the name is checked by `photoboothd --check` and at open), and fits
    /// `button.input_device`: a tap needs a touch screen, a touch screen sends taps. Checked only
    /// with `button.source` including input.
    private func inputButtonDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        let reviewKeys = [("button.print_key", button.printKey), ("button.skip_key", button.skipKey)].filter { !$0.1.isEmpty }
        guard button.sources.contains(.input) else {
            return reviewKeys.map { key, _ in
                sources.diagnostic(keys: [key, "button.source"], message:
                    "\(sources.cite(key, in: self)) is not used: \(sources.cite("button.source", in: self)) has no input; "
                    + "add it (button.source = \(button.sources.map(\.rawValue).joined(separator: ", ")), input) or leave \(key) empty",
                    severity: .warning)
            }
        }
        let keyKey = "button.input_key", deviceKey = "button.input_device", sourceKey = "button.source"
        let key = button.inputKey, device = button.inputDevice.lowercased()
        let isTap = key.lowercased() == "tap"
        func shaped(_ key: String) -> Bool {
            let upper = key.uppercased()
            return (upper.hasPrefix("KEY_") || upper.hasPrefix("BTN_")) && upper.count > 4
                && upper.unicodeScalars.allSatisfy { ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "_" }
        }
        for (reviewKey, value) in reviewKeys where !shaped(value) || value.uppercased() == key.uppercased() {
            return [sources.diagnostic(key: reviewKey, message: shaped(value)
                ? "\(sources.cite(reviewKey, in: self)) is also \(sources.cite(keyKey, in: self)): one key cannot both start sessions and act in review; use another key"
                : "\(sources.cite(reviewKey, in: self)) is not a key name; use a Linux input key name such as KEY_P or KEY_S, or leave it empty")]
        }
        if !button.printKey.isEmpty && button.printKey.uppercased() == button.skipKey.uppercased() {
            return [sources.diagnostic(keys: ["button.print_key", "button.skip_key"], message:
                "\(sources.cite("button.print_key", in: self)) and \(sources.cite("button.skip_key", in: self)) are the same key; use two keys")]
        }
        if !isTap && !shaped(key) {
            return [sources.diagnostic(key: keyKey, message:
                "\(sources.cite(keyKey, in: self)) is not a key name; use tap (a touch screen) or a Linux input key name "
                + "such as KEY_SPACE, KEY_ENTER, KEY_F13 or BTN_LEFT ('photoboothctl devices' lists a device's keys)")]
        }
        if isTap && device == "any keyboard" {
            return [sources.diagnostic(keys: [keyKey, deviceKey, sourceKey], message:
                "\(sources.cite(keyKey, in: self)) is a touch on a touch screen, but \(sources.cite(deviceKey, in: self)) "
                + "has none; set \(deviceKey) = any touch screen (or name the touch screen), or \(keyKey) = KEY_SPACE")]
        }
        if !isTap && (device == "any touch screen" || device == "any touchscreen") {
            return [sources.diagnostic(keys: [keyKey, deviceKey, sourceKey], message:
                "\(sources.cite(deviceKey, in: self)) sends taps, not \(sources.cite(keyKey, in: self)); set \(keyKey) = tap")]
        }
        return []
    }

    private func captureSizeDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        let capture = camera.captureSize, preview = camera.previewSize
        guard capture.width < preview.width || capture.height < preview.height else { return [] }
        let captureKey = "camera.capture_size", previewKey = "camera.preview_size"
        return [sources.diagnostic(keys: [captureKey, previewKey], message:
            "\(sources.cite(captureKey, in: self)) is smaller than \(sources.cite(previewKey, in: self)): "
            + "photos would have fewer pixels than the live view, and every capture switches the camera to the "
            + "smaller size and back; set \(captureKey) to \(preview) or larger (or preview_size smaller)",
            severity: .warning)]
    }

    /// A gphoto2 camera's still takes autofocus, the shutter and a download of up to 25 MB: a webcam's
    /// 3 s deadline fails good captures. And a live view from a second device is only for gphoto2.
    private func gphoto2Diagnostics(_ sources: SettingSources) -> [Diagnostic] {
        var out: [Diagnostic] = []
        let backendKey = "camera.backend", timeoutKey = "camera.capture_timeout", liveKey = "camera.live_view_device"
        if camera.backend == .gphoto2, camera.captureTimeoutMilliseconds < 10_000 {
            out.append(sources.diagnostic(keys: [timeoutKey, backendKey], message:
                "\(sources.cite(timeoutKey, in: self)) is short for \(sources.cite(backendKey, in: self)): autofocus, the "
                + "shutter and the download of a 20-45 MP JPEG take seconds; set \(timeoutKey) = 15s or more", severity: .warning))
        }
        if camera.backend == .v4l2, !camera.liveViewDevice.isEmpty {
            out.append(sources.diagnostic(keys: [liveKey, backendKey], message:
                "\(sources.cite(liveKey, in: self)) is not used with \(sources.cite(backendKey, in: self)): a V4L2 camera "
                + "shows its own live view; it is for a gphoto2 camera (camera.backend = gphoto2 or auto)", severity: .warning))
        }
        return out
    }

    /// `picture.qr` needs a URL to carry and a print to carry it.
    private func printedCodeDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        let key = "picture.qr"
        guard picture.qr != .off else { return [] }
        let missing: String? = !gallery.enabled ? "\(sources.cite("gallery.enabled", in: self)): the pictures have no URL"
            : gallery.urlRoot.isEmpty && gallery.publicURL.isEmpty ? "gallery.url_base and gallery.public_url empty: the booth does not know the URL guests' phones reach"
            : print.mode == .off ? "\(sources.cite("print.mode", in: self)): nothing is printed"
            : nil
        guard let missing else { return [] }
        return [sources.diagnostic(keys: [key, "gallery.enabled", "gallery.url_base", "print.mode"], message:
            "\(sources.cite(key, in: self)) prints no code with \(missing); set it, or picture.qr = off", severity: .warning)]
    }

    /// `gallery.public_url`, `gallery.alert_url` and `gallery.sync_remote` as their words say they are written.
    private func galleryAddressDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        var out: [Diagnostic] = []
        func isWeb(_ url: String) -> Bool {
            (url.hasPrefix("http://") || url.hasPrefix("https://")) && !url.contains(where: { $0 == " " || $0.isNewline })
        }
        let publicURL = gallery.publicURL
        if !publicURL.isEmpty && (!isWeb(publicURL) || !publicURL.contains("{token}")) {
            out.append(sources.diagnostic(keys: ["gallery.public_url"], message:
                "gallery.public_url '\(publicURL)' is not an http:// or https:// URL with {token} in it (what stands for the "
                + "picture's name at the remote: https://photos.example.org/wedding/{token}.jpg), or empty", severity: .error))
        } else if !publicURL.isEmpty && gallery.syncRemote.isEmpty {
            out.append(sources.diagnostic(keys: ["gallery.public_url", "gallery.sync_remote"], message:
                "gallery.public_url is set but \(sources.cite("gallery.sync_remote", in: self)): no picture is copied there, so its "
                + "QR codes lead nowhere; set gallery.sync_remote, or leave gallery.public_url empty", severity: .warning))
        }
        let alertURL = gallery.alertURL
        if !alertURL.isEmpty && !isWeb(alertURL) {
            out.append(sources.diagnostic(keys: ["gallery.alert_url"], message:
                "gallery.alert_url '\(alertURL)' is not an http:// or https:// URL (the operator's webhook), or empty", severity: .error))
        }
        let remote = gallery.syncRemote
        if !remote.isEmpty && !remote.hasPrefix("/") {
            // rclone's remote names: letters, digits, _ - . and spaces, not starting with - or a space.
            let name = remote.firstIndex(of: ":").map { remote[..<$0] }
            let allowed = name.map { n in
                !n.isEmpty && n.first != "-" && n.first != " "
                    && n.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-. ".contains($0)) }
            } ?? false
            if !allowed {
                out.append(sources.diagnostic(keys: ["gallery.sync_remote"], message:
                    "gallery.sync_remote '\(remote)' is neither REMOTE:path (a remote of gallery.sync_config, its name letters, digits, "
                    + "_ - . and spaces, not starting with - or a space) nor an absolute folder, or empty", severity: .error))
            }
        }
        return out
    }

    private func galleryDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        var out = galleryAddressDiagnostics(sources)
        out += pinDiagnostics(sources)
        return out
    }

    private func pinDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        let pinKey = "gallery.pin"
        guard !gallery.pin.isEmpty else { return [] }
        let n = gallery.pin.count
        if !(4...32).contains(n) || gallery.pin.contains(where: { $0.isWhitespace || $0.isNewline }) {
            return [sources.diagnostic(keys: [pinKey], message:
                "\(pinKey) has \(n) character\(n == 1 ? "" : "s")\(gallery.pin.contains(where: \.isWhitespace) ? " with spaces" : ""): "
                + "a PIN is 4 to 32 characters without spaces (digits are easiest on a phone), or empty for none", severity: .error)]
        }
        if !gallery.list && !gallery.slideshow {
            return [sources.diagnostic(keys: [pinKey, "gallery.list", "gallery.slideshow"], message:
                "\(pinKey) guards nothing with \(sources.cite("gallery.list", in: self)) and "
                + "\(sources.cite("gallery.slideshow", in: self)): a picture's own URL never asks for it. Set gallery.list = true or "
                + "gallery.slideshow = true, or leave gallery.pin empty", severity: .warning)]
        }
        return []
    }
}
