import BoothControl
import BoothCore
import BoothDeviceListing
import BoothHTTPProbe
import BoothPorts
import BoothRuntime
import BoothStorage
import BoothSystem
import FoundationEssentials
import Glibc

/// `status`.
struct Status: Subcommand {
    static let words = ["status"]
    static let synopsis = "status [--json] [--socket PATH]"
    static let summary = "What the booth is doing: state and fault reasons, uptime, camera, button, disk, counters, the settings in force."
    static let details = """
        The settings in force are read from what the running booth uses (after the last reload; a key only a
        restart applies keeps its start value), and compared with the config file on disk: each key that differs
        is listed with its value in force and in the file (--json: settings.inForce, settings.differences).
        Exit codes: 0 (also in fault: the state says so); 69 daemon not running; 77 not allowed.
        """
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        answer(ControlRequest(.status), args, as: StatusReport.self, json: { s in
            var s = s
            s.gallery = s.gallery.map(GalleryReplies.withHealth)
            return s
        }) { s in Status.text(s, gallery: s.gallery.flatMap(GalleryReplies.probe)) }
    }

    /// - Parameter gallery: what photobooth-gallery's `/health` answered (nil: not asked).
    static func text(_ s: StatusReport, gallery: GalleryProbe.Answer? = nil) -> String {
        func row(_ label: String, _ value: String) -> String {
            (label.isEmpty ? "" : label + ":").padding(toLength: 10, withPad: " ", startingAt: 0) + value
        }
        var out: [String] = []
        out.append("photoboothd \(s.version) (pid \(s.pid)), up \(formatDuration(seconds: s.uptimeSeconds)) since \(s.startedAt)")
        out.append(row("config", access(s.configPath, F_OK) == 0 ? s.configPath : "\(s.configPath) (not present: built-in defaults)"))
        out.append(row("clock", s.clockLine))
        out.append(row("state", s.state + (s.shot.map { " (shot \($0))" } ?? "")
                                  + (s.refusal.map { " (sessions refused: \($0))" } ?? "")))
        for kind in s.faults.keys.sorted() { out.append(row("fault", "\(kind): \(s.faults[kind] ?? "")")) }
        let c = s.camera
        var cam = c.device.map { "\($0)" + (c.card.map { " (\($0))" } ?? "") } ?? "not opened yet (camera.device = \(c.configured))"
        if c.streaming, let f = c.format, let w = c.width, let h = c.height {
            cam += ", streaming \(f) \(w)x\(h)"
            if let fps = c.framesPerSecond { cam += " at \(formatRate(fps)) fps" }
            if let m = c.measuredFramesPerSecond, m > 0 { cam += " (measured \(formatRate(m)))" }
        } else {
            cam += ", not streaming"
        }
        cam += "; \(c.framesDelivered) frames, \(c.framesDropped) dropped"
        let kinds = (c.framesDroppedByKind ?? [:]).filter { $0.value > 0 }.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
        if !kinds.isEmpty { cam += " (" + kinds.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ")" }
        if let lost = c.framesLost, lost > 0 { cam += ", \(lost) lost" }
        cam += ", \(c.badFrames) bad"
        if let level = c.batteryPercent { cam += "; battery \(level)%" }
        out.append(row("camera", cam))
        if let e = c.lastError { out.append(row("", "last camera error: \(e)")) }
        for w in c.warnings ?? [] { out.append(row("warning", "camera: \(w)")) }
        if let level = c.batteryPercent, level <= CameraSourceStatus.batteryLowPercent {
            out.append(row("warning", "camera: " + CameraSourceStatus.batteryLowText(level)))
        }
        let b = s.button
        var button = b.device + (b.ended.map { " (\($0): no presses from it)" } ?? (b.running ? "" : " (NOT RUNNING)"))
        if let last = b.lastPress, let ago = b.secondsSinceLastPress {
            button += "; last press \(last) (\(formatDuration(seconds: Int(ago))) ago)"
        } else {
            button += "; no press since start"
        }
        out.append(row("button", button))
        if let o = s.orientation {
            out.append(row("rotation", "camera \(o.camera)°, display \(o.display)° (\(o.source)"
                           + (o.accelerometer.map { ", \($0)" } ?? "") + ")"))
        }
        let st = s.storage
        let free = st.freeBytes.map { formatBytes($0) + " free" } ?? "free space unknown"
        out.append(row("storage", "\(st.dir): \(free) (keeps \(formatBytes(UInt64(max(0, st.minFreeBytes))))), next session \(st.nextSession), \(st.savedSinceStart) saved since start"))
        for note in st.powerCutNotes ?? [] { out.append(row("power cut", note)) }
        let n = s.counters
        out.append(row("sessions", "\(n.sessions) since start (\(n.completed) completed, \(n.cancelled) cancelled, \(n.failed) failed), "
                       + "\(counted(n.captures, "capture")), \(counted(n.faults, "fault"))"))
        if let p = s.printer { out.append(row("printer", PrintsCommand.statusLine(p))) }
        if let g = s.gallery { out.append(row("gallery", GalleryReplies.statusLine(g, gallery))) }
        out.append(row("totals", "\(counted(s.stats.sessions, "session")), \(counted(s.stats.captures, "capture")) since \(StatsStore.dateText(s.stats.since)) (photoboothctl stats)"))
        if let settings = s.settings { out += Status.settingsLines(settings, configPath: s.configPath, row: row) }
        return out.joined(separator: "\n")
    }

    /// Whether the file differs from the settings in force (a line per differing key), then every
    /// setting in force, a line per section.
    static func settingsLines(_ r: StatusReport.SettingsReport, configPath: String,
                              row: (String, String) -> String) -> [String] {
        func shown(_ v: String) -> String { v.isEmpty ? "(empty)" : v }
        var out: [String] = []
        // The command line's keys win over the file: said, with the file's value where it differs.
        let commandLine = (r.commandLine ?? []).map { k in "\(k.key) = \(shown(k.value))" + (k.file.map { " (the file: \(shown($0)))" } ?? "") }
        let keys = commandLine.count == 1 ? "the key" : "the \(commandLine.count) keys"
        switch r.fileDiffers {
        case false?:
            out.append(row("settings", "in force as \(configPath) sets them"
                            + (commandLine.isEmpty ? "" : ", except \(keys) photoboothd's command line sets, which win over the file:")))
        case true?:
            let n = r.differences.count
            out.append(row("settings", "\(configPath) differs from the settings in force in \(n == 1 ? "1 key" : "\(n) keys"):"))
            for d in r.differences {
                let how = d.rule == ReloadRule.restart.word ? d.effect : "photoboothctl reload applies it"
                out.append(row("", "\(d.key): \(shown(d.from)) in force, \(shown(d.to)) in the file (\(how))"))
            }
            if !commandLine.isEmpty { out.append(row("", "and \(keys) photoboothd's command line sets, which win over the file:")) }
        case nil:
            out.append(row("settings", "\(configPath) not compared: \(r.fileProblem ?? "unreadable")"))
        }
        if r.fileDiffers != nil { out += commandLine.map { row("", $0) } }
        out.append("in force:")
        for section in Schema.sections {
            let pairs = Schema.settings(inSection: section.name).map { "\($0.name) = \(shown(r.inForce[$0.key] ?? "?"))" }
            out.append("  [\(section.name)] " + pairs.joined(separator: ", "))
        }
        return out
    }
}

/// `devices`.
struct Devices: Subcommand {
    static let words = ["devices"]
    static let synopsis = "devices [--json] [--local] [--socket PATH]"
    static let summary = "List cameras (V4L2: formats, sizes, frame rates, controls; gphoto2: model, port, battery, card, capture target; libcamera), printer queues, screens, input devices (their keys) and GPIO chips (lines, names, consumers)."
    static let details = """
        Asks the running daemon (which has access to the devices and says which ones it uses); when no daemon
        answers, or with --local, photoboothctl lists them itself.
        Exit codes: 0; 77 not allowed.
        """
    static let options: [Option] = [.json, .socket, .local]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        var devices: DeviceReport
        if args.has(.local) {
            devices = DeviceReport.gather(source: "photoboothctl", gphoto2Cameras: true)
        } else {
            do {
                devices = try ask(.devices, socket: args.socket, as: DeviceReport.self, timeoutSeconds: 30)
            } catch ControlClientError.notRunning {
                devices = DeviceReport.gather(source: "photoboothctl (photoboothd not running)", gphoto2Cameras: true)
            } catch {
                return report(error)
            }
        }
        if args.json { printJSON(devices); return ExitCode.ok }
        print(Devices.text(devices))
        return ExitCode.ok
    }

    static func text(_ d: DeviceReport) -> String {
        var out = ["listed by \(d.source)"]
        if let use = d.inUse {
            out.append("in use: camera \(use.camera ?? "none streaming")" + (use.cameraBatteryPercent.map { ", battery \($0)%" } ?? "")
                       + ", button \(use.button ?? "none")")
        }
        out.append("")
        out.append(d.cameras.isEmpty ? "cameras: none (no /dev/video* node)" : "cameras:")
        for c in d.cameras {
            var head = "  \(c.path)"
            if let p = c.problem { out.append(head + ": \(p)"); continue }
            head += " \(c.card) (\(c.driver), \(c.busInfo))" + (c.usable ? "" : " not a capture device")
            out.append(head)
            for id in c.byId { out.append("    by-id: \(id)") }
            for f in c.formats {
                out.append("    \(f.fourcc) \(f.description)\(f.emulated ? " (converted by libv4l2)" : "")"
                           + (f.sizeRange.map { ": \($0)" } ?? ""))
                for s in f.sizes {
                    let rates = s.framesPerSecond.map(formatRate).joined(separator: f.sizeRange == nil ? ", " : " to ")
                    out.append("      \(s.width)x\(s.height)" + (rates.isEmpty ? "" : " @ \(rates) fps"))
                }
            }
            for ctl in c.controls {
                var line = "    control \"\(ctl.name)\" \(ctl.kind) \(ctl.minimum)..\(ctl.maximum) default \(ctl.defaultValue)"
                if let cur = ctl.current {
                    line += " current \(cur)"
                    if let label = ctl.menu?[String(cur)] { line += " (\(label))" }
                }
                out.append(line)
            }
        }
        for section in d.cameraBackends {
            out.append("")
            out.append(contentsOf: section.lines)
        }
        out.append("")
        if let e = d.printerError { out.append("printers: none listed, CUPS did not answer: \(e)") }
        if let printers = d.printers {
            out.append(printers.isEmpty ? "printers: none (lpadmin -p NAME -E -v URI -m everywhere adds one)" : "printers:")
            for p in printers {
                out.append("  \(p.name)\(p.isDefault ? " (default)" : "")\(p.deviceURI.map { " → \($0)" } ?? "")")
            }
            out.append("")
        }
        out.append(d.drmCards.isEmpty ? "screens (DRM/KMS): none (no /dev/dri/card*; display.device = auto uses /dev/fb0)" : "screens (DRM/KMS):")
        for c in d.drmCards {
            if let p = c.problem { out.append("  \(c.path): \(p)"); continue }
            out.append("  \(c.path) [\(c.driver)] \(c.connected) of \(c.connectors) connectors connected"
                       + (c.connector.map { ": \($0) \(c.mode ?? "")" } ?? " (no screen plugged in)"))
        }
        out.append("")
        for section in d.screens ?? [] {
            out.append("\(section.title):" + (section.entries.isEmpty ? " none" : ""))
            for e in section.entries { out.append("  \(e)") }
            out.append("")
        }
        out.append(d.inputDevices.isEmpty ? "input devices: none (no readable /dev/input/event* node)" : "input devices:")
        for i in d.inputDevices {
            out.append("  \(i.path) \"\(i.name)\" [\(i.kind)] \(i.usbID)" + (i.byId.isEmpty ? "" : " (by-id: \(i.byId.joined(separator: ", ")))"))
            if i.kind == "touch screen" {
                out.append("    tap (button.input_key = tap)")
            } else if !i.keys.isEmpty {
                out.append("    keys: \(i.keys.joined(separator: " "))\(i.keyCount > i.keys.count ? " … (\(i.keyCount) in all)" : "")")
            }
        }
        if !d.inputUnreadable.isEmpty {
            out.append("  not readable (the input group): \(d.inputUnreadable.joined(separator: ", "))")
        }
        out.append("")
        if let e = d.gpioError { out.append("gpio chips: cannot list: \(e)") }
        out.append(d.gpioChips.isEmpty ? "gpio chips: none (no /dev/gpiochip* node)" : "gpio chips:")
        for chip in d.gpioChips {
            if let e = chip.error { out.append("  \(chip.name) \(chip.path): \(e)"); continue }
            out.append("  \(chip.name) [\(chip.label)] \(chip.path), \(chip.lines.count) lines")
            for l in chip.lines {
                var row = "    \(l.offset) " + (l.name.isEmpty ? "unnamed" : "\"\(l.name)\"") + " \(l.direction)"
                if l.used { row += l.consumer.isEmpty ? " used" : " used by \"\(l.consumer)\"" }
                if l.activeLow { row += " active-low" }
                out.append(row)
            }
        }
        return out.joined(separator: "\n")
    }
}

/// `press`.
struct Press: Subcommand {
    static let words = ["press"]
    static let synopsis = "press [--json] [--socket PATH]"
    static let summary = "Press the button, as a guest would (starts a session from idle)."
    static let details = "Exit codes: 0; 69 daemon not running; 75 the booth ignored or refused the press (the reply says why); 77 not allowed."
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        answer(ControlRequest(.press), args, as: PressReply.self, text: { r in
            if let why = r.ignored { return "\(why): the press did nothing" }
            guard let after = r.stateAfter else { return "pressed in \(r.stateBefore); not handled yet (photoboothctl status shows the state)" }
            // The one press review acts on: print.mode press asks for the picture's print (any other is ignored).
            if r.stateBefore == "review" && after == "review" { return "pressed in review: the picture's print requested" }
            return after == r.stateBefore ? "pressed in \(r.stateBefore) (the state stays \(after))" : "pressed: \(r.stateBefore) -> \(after)"
        }, code: { $0.ignored == nil ? ExitCode.ok : ExitCode.tempFail })
    }
}

/// `snapshot FILE`.
struct Snapshot: Subcommand {
    static let words = ["snapshot"]
    static let synopsis = "snapshot FILE [--socket PATH]"
    static let summary = "Save the camera's current frame as a JPEG file, to check the framing ('-' writes to stdout)."
    static let details = """
        In idle the daemon starts the stream for it when camera.idle_stop had stopped it (the idle stop
        then counts again from the snapshot); in fault there is no frame.
        Exit codes: 0; 69 daemon not running; 73 FILE cannot be written; 75 no frame now; 77 not allowed.
        """
    static let options: [Option] = [.socket]
    static let positionals = 1...1
    let args: ParsedArguments

    func run() -> Int32 {
        let r: SnapshotReply
        do { r = try ask(.snapshot, socket: args.socket, as: SnapshotReply.self) } catch { return report(error) }
        guard let data = Data(base64Encoded: r.jpegBase64) else {
            warn("the daemon's snapshot is not valid base64")
            return ExitCode.ioError
        }
        let path = args.positional[0]
        if path == "-" {
            do { try FileHandleOutput.stdout([UInt8](data)) } catch {
                warn("writing the snapshot to stdout failed: \(error.errnoText)")
                return ExitCode.ioError
            }
            return ExitCode.ok
        }
        do {
            try AtomicFile.write(Array(data), to: path, durable: false, replace: true)
        } catch {
            warn("cannot write \(path): \(error)")
            return ExitCode.cantCreate
        }
        print("\(path): \(r.width)x\(r.height) JPEG, \(data.count) bytes")
        return ExitCode.ok
    }
}

/// `reload`.
struct Reload: Subcommand {
    static let words = ["reload"]
    static let synopsis = "reload [--json] [--socket PATH]"
    static let summary = "Ask the daemon to re-read its config file (as SIGHUP does)."
    static let details = """
        Answers with every key whose value in the file differs from the settings in force, and how each took
        effect: applied at once, from the next session, camera stream restarting, screens / button / LED line
        reopened (or not opened, and why), print worker reconfigured, or "takes effect after `systemctl restart photoboothd`" for keys read only
        at start. In idle or fault the reply comes once the changes are applied; while a session is under way
        they apply when it ends, and the reply says so. An invalid file keeps the running settings, and every
        problem is printed. --json: the reply's changes with key, from, to, rule, applied and effect.
        Exit codes: 0; 69 daemon not running; 75 a new value refused (a storage.dir not writable, or its media not
        mounted: the reply says why, the running setting stays); 77 not allowed; 78 file invalid (reload refused).
        """
    static let options: [Option] = [.json, .socket]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 { answer(ControlRequest(.reload), args, as: ReloadReply.self, text: Reload.text, code: Reload.exitCode) }

    /// 75 (EX_TEMPFAIL) when the daemon refused a new value (``ReloadReply/refusedKeys``), else 0.
    static func exitCode(_ r: ReloadReply) -> Int32 { r.refusedKeys.isEmpty ? ExitCode.ok : ExitCode.tempFail }

    /// `reloaded: nothing changed`, or the changed keys a line each with how they took effect
    /// (``ReloadReply/text``; `config set` prefixes `photoboothd `).
    static func text(_ r: ReloadReply) -> String { r.text }
}

/// `stats [--reset]`.
struct Stats: Subcommand {
    static let words = ["stats"]
    static let synopsis = "stats [--reset] [--json] [--socket PATH]"
    static let summary = "Sessions, captures, cancels, failures and faults since counting started; --reset starts again."
    static let details = """
        The totals survive restarts (kept next to the photos, in storage.dir/\(StatsStore.fileName)).
        Exit codes: 0; 69 daemon not running; 77 not allowed.
        """
    static let options: [Option] = [.json, .socket, .reset]
    static let positionals = 0...0
    let args: ParsedArguments

    func run() -> Int32 {
        let reset = args.has(.reset)
        do {
            let before = reset ? try ask(.stats, socket: args.socket, as: BoothStats.self) : nil
            let s = try ask(.stats, socket: args.socket, reset: reset ? true : nil, as: BoothStats.self)
            if args.json { printJSON(s); return ExitCode.ok }
            if let before { print("before the reset:\n" + Stats.text(before) + "\nreset; counting from now.") } else { print(Stats.text(s)) }
            return ExitCode.ok
        } catch { return report(error) }
    }

    static func text(_ s: BoothStats) -> String {
        """
        since:     \(StatsStore.dateText(s.since))
        sessions:  \(s.sessions) (\(s.completed) completed, \(s.cancelled) cancelled, \(s.failed) failed)
        captures:  \(s.captures)
        faults:    \(s.faults)
        """
    }
}
