import BoothControl
import BoothCore
import BoothRuntime

/// The version the pages name in their header: ``photoboothVersion``.
let photoboothVersionText = photoboothVersion

/// The man pages, generated: photoboothd(8) from ``DaemonCommandLine``, photoboothctl(1) from its command
/// table, photobooth.conf(5) from the settings schema (``Schema``). Each is roff for groff_man(7), lines
/// ending in `\n`, the same bytes for the same tables (no date, no environment): `man -l FILE` shows it.
public enum ManPages {
    /// The file names under `man/`, in the order tools/regen-man writes them.
    public static let names = ["photoboothd.8", "photoboothctl.1", "photobooth.conf.5"]

    /// photoboothd(8): NAME, SYNOPSIS, DESCRIPTION, OPTIONS, SIGNALS, ENVIRONMENT, FILES, EXIT STATUS,
    /// SEE ALSO, COPYRIGHT.
    public static func photoboothd() -> String {
        var out = Roff.header(title: "photoboothd", section: 8, manual: "System Administration")
        out += [".SH NAME", "photoboothd \\- the photobooth kiosk daemon: live view, countdown, capture, review"]
        out += [".SH SYNOPSIS", ".B photoboothd", "[\\fIoptions\\fR]"]
        out += [".SH DESCRIPTION"]
        out.append(Roff.text("photoboothd runs the booth: it shows the camera's live view, counts down when a guest presses the "
            + "button, takes the shots, shows them for review, saves them, composes the session's picture, prints it "
            + "through CUPS and hands it to photobooth-gallery for guests to take home. Its settings are read from "
            + "photobooth.conf(5); a device that fails puts the booth in a fault state it recovers from, never ends the daemon."))
        out += [".PP", Roff.text("Installed, it runs as the systemd service photoboothd.service (Type=notify, as user photobooth). "
            + "photoboothctl(1) asks it for its status, reloads its settings and drives it through its control socket. "
            + "photoboothd --simulate runs a booth on any machine: a test-pattern camera, the terminal as the button, "
            + "everything kept in the working directory.")]
        out.append(".SH OPTIONS")
        for option in DaemonCommandLine.options {
            out += Roff.tagged(optionTag(option), [option.manualText])
        }
        out += [".SH SIGNALS"]
        out += Roff.tagged(Roff.bold("SIGHUP"), ["Re-read the settings file, as photoboothctl reload does: at once when the booth is idle or in fault, "
            + "else when the session ends. Each setting's reload rule is in photobooth.conf(5)."])
        out += Roff.tagged(Roff.bold("SIGTERM") + ", " + Roff.bold("SIGINT"), ["Stop the booth and exit 0."])
        out += [".SH ENVIRONMENT"]
        out += Roff.tagged(Roff.bold("NOTIFY_SOCKET") + ", " + Roff.bold("WATCHDOG_USEC"),
                           ["Set by systemd for a Type=notify service: photoboothd sends READY=1 when the camera streams, "
                            + "STATUS= on each change of state and WATCHDOG=1 while its main loop runs (sd_notify(3))."])
        out += Roff.tagged(Roff.bold("XDG_RUNTIME_DIR"), ["Where the control socket of a photoboothd not run as root (or run with --simulate) goes: "
            + "$XDG_RUNTIME_DIR/photobooth/control, else /tmp/photobooth-UID/control."])
        out += [".SH FILES"]
        out += Roff.tagged(Roff.italic(defaultConfigPath), ["The settings, photobooth.conf(5)."])
        out += Roff.tagged(Roff.italic(ControlSocketPath.system), ["The control socket of the system booth, for root and group photobooth, and its .lock file."])
        out += Roff.tagged(Roff.italic(setting("storage.dir")), ["The photos, in a folder per day (storage.dir)."])
        out += Roff.tagged(Roff.italic(setting("print.journal")), ["The print journal (print.journal)."])
        out += Roff.tagged(Roff.italic(setting("gallery.index")), ["The gallery's index of pictures, which photobooth-gallery reads (gallery.index)."])
        out += exitStatusSection(DaemonCommandLine.exitStatuses)
        out += seeAlso(["photoboothctl(1)", "photobooth.conf(5)", "systemctl(1)", "journalctl(1)", "sd_notify(3)", "sysexits(3)"])
        out += copyright()
        return out.joined(separator: "\n") + "\n"
    }

    /// photoboothctl(1), from `commands` (its command table, in its order): NAME, SYNOPSIS, DESCRIPTION,
    /// COMMANDS (each with its synopsis, summary and details), OPTIONS (every option once, with the commands
    /// that take it),
    /// FILES, EXIT STATUS, SEE ALSO, COPYRIGHT.
    public static func photoboothctl(_ commands: [CommandEntry]) -> String {
        var out = Roff.header(title: "photoboothctl", section: 1, manual: "User Commands")
        out += [".SH NAME", "photoboothctl \\- the photobooth's admin tool: configure the booth, check it, drive it"]
        out += [".SH SYNOPSIS", ".B photoboothctl", "[\\fIoptions\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR]"]
        out += [".SH DESCRIPTION"]
        out.append(Roff.text("photoboothctl configures the booth (its config file, photobooth.conf(5)), checks it and drives it. "
            + "Most commands ask the running photoboothd(8) over its control socket (\(ControlSocketPath.system) for the system booth, "
            + "$XDG_RUNTIME_DIR/photobooth/control for photoboothd --simulate; --socket PATH names another); it answers root and "
            + "members of group \(ControlSocketPath.groupName). The config commands work on the file itself, and tell the daemon to reload."))
        out += [".PP", Roff.text("'photoboothctl COMMAND --help' explains each command. Data commands take --json. Options go before or "
            + "after the command (photoboothctl --socket PATH status = photoboothctl status --socket PATH).")]
        out.append(".SH COMMANDS")
        for command in commands {
            let rest = command.synopsis.split(separator: " ").dropFirst(command.words.count).joined(separator: " ")
            let tag = Roff.bold(command.words.joined(separator: " ")) + (rest.isEmpty ? "" : " " + Roff.escape(rest))
            var body = [command.summary]
            if !command.details.isEmpty { body.append(command.details) }
            out += Roff.tagged(tag, body)
        }
        // Each option once (the commands' synopses show which take it), with the commands that take it.
        out.append(".SH OPTIONS")
        out += Roff.tagged(Roff.bold("--help"), ["Show the usage and the commands; after a command, that command's help. Exit 0."])
        out += Roff.tagged(Roff.bold("--version"), ["Print the version and the licence. Exit 0."])
        var seen: [CommandLineOption] = []
        for option in commands.flatMap(\.options) where !seen.contains(option) {
            seen.append(option)
            let takers = commands.filter { $0.options.contains(option) }.map { $0.words.joined(separator: " ") }
            out += Roff.tagged(optionTag(option), [option.manualText, "Taken by: \(takers.joined(separator: ", "))."])
        }
        out += [".SH FILES"]
        out += Roff.tagged(Roff.italic(defaultConfigPath), ["The booth's settings, photobooth.conf(5): what the config commands read and edit without --file."])
        out += Roff.tagged(Roff.italic(ControlSocketPath.system), ["The system booth's control socket; then $XDG_RUNTIME_DIR/photobooth/control."])
        out += exitStatusSection(ControlToolCommandLine.exitStatuses)
        out += seeAlso(["photoboothd(8)", "photobooth.conf(5)", "sysexits(3)"])
        out += copyright()
        return out.joined(separator: "\n") + "\n"
    }

    /// photobooth.conf(5), from ``Schema``: NAME, SYNOPSIS, DESCRIPTION (the syntax and units), SETTINGS
    /// (each section, then each key with its description, type, what is allowed, default and reload rule,
    /// in file order), FILES, EXIT STATUS (of the programs that read it), SEE ALSO, COPYRIGHT.
    public static func photoboothConf() -> String {
        var out = Roff.header(title: "photobooth.conf", section: 5, manual: "File Formats")
        out += [".SH NAME", "photobooth.conf \\- the photobooth's settings"]
        out += [".SH SYNOPSIS", Roff.italic(defaultConfigPath)]
        out += [".SH DESCRIPTION"]
        out.append(Roff.text("The settings of photoboothd(8) and photobooth-gallery: [section] headers and 'key = value' lines. "
            + "A key left out keeps its default; 'photoboothctl config init' writes every key at its default, with its description."))
        out += [".PP", Roff.text("Comments are lines starting with # or ;, or a # after a space at the end of a value "
            + "(line = GPIO17   # the button). A value that needs ' #' goes in double quotes (\"Party #1\"); a ; after a value is part of it.")]
        out += [".PP", Roff.text("Durations carry their unit: 40ms, 3s, 5min, 1h (decimals like 1.5s are fine). Sizes are WxH in "
            + "pixels, like 1280x720. Space is written with a decimal unit: 500MB (B, kB, MB, GB; 1 kB = 1000 B). "
            + "Booleans are true or false (also yes/no, on/off; any letter case).")]
        out += [".PP", Roff.text("Change a setting with 'photoboothctl config set KEY VALUE', which checks it and then reloads the daemon; "
            + "'photoboothctl config describe KEY' says what a key does. After an edit by hand, 'photoboothctl config validate' "
            + "checks the file and 'photoboothctl reload' (or SIGHUP) applies it. How each key takes effect on reload is given below.")]
        out.append(".SH SETTINGS")
        for section in Schema.sections {
            out += [".SS [\(Roff.escape(section.name))]", Roff.text(section.description)]
            for spec in Schema.settings(inSection: section.name) {
                let tag = Roff.bold(spec.name) + " = " + (spec.defaultText.isEmpty ? "" : Roff.italic(spec.defaultText))
                out += Roff.tagged(tag, [
                    spec.description,
                    "Type: \(spec.type.name). Allowed: \(spec.allowed). Default: \(spec.defaultText.isEmpty ? "(empty)" : spec.defaultText). "
                        + "On reload: \(spec.reload.onReload). Key: \(spec.key).",
                ])
            }
        }
        out += [".SH FILES"]
        out += Roff.tagged(Roff.italic(defaultConfigPath), ["The system booth's settings (group photobooth may edit them)."])
        out += Roff.tagged(Roff.italic(simulatedConfigPath), ["The settings of photoboothd --simulate, in its working directory."])
        out += [".SH EXIT STATUS", Roff.text("Of the programs that read the file: 'photoboothctl config validate' exits 0 when it is valid "
            + "(warnings may be printed), 66 when it is unreadable or missing, 78 (EX_CONFIG) when it is invalid, listing every problem; "
            + "photoboothd exits 78 at start when the settings are invalid, 66 when a config file named with --config is unreadable.")]
        out += seeAlso(["photoboothd(8)", "photoboothctl(1)"])
        out += copyright()
        return out.joined(separator: "\n") + "\n"
    }

    /// `\fB--config\fR \fIFILE\fR`; several names joined by `, `.
    static func optionTag(_ option: CommandLineOption) -> String {
        option.names.map(Roff.bold).joined(separator: ", ") + (option.argument.map { " " + Roff.italic($0) } ?? "")
    }

    /// A setting's default, from the schema.
    static func setting(_ key: String) -> String { Schema.spec(for: key)?.defaultText ?? key }

    static func exitStatusSection(_ statuses: [ExitStatus]) -> [String] {
        var out = [".SH EXIT STATUS", Roff.text("The codes of sysexits(3):")]
        for status in statuses { out += Roff.tagged(Roff.bold(String(status.code)), [status.meaning]) }
        return out
    }

    static func seeAlso(_ pages: [String]) -> [String] {
        var out = [".SH SEE ALSO"]
        for (i, page) in pages.enumerated() {
            guard let open = page.firstIndex(of: "(") else { continue }
            out.append(".BR \(Roff.escape(String(page[..<open]))) \(page[open...])\(i < pages.count - 1 ? "," : "")")
        }
        return out
    }

    static func copyright() -> [String] {
        [".SH COPYRIGHT",
         Roff.text("Copyright (C) 2026 the Photobooth authors."),
         Roff.text("License \(photoboothLicence): GNU GPL version 3 or later <https://www.gnu.org/licenses/gpl-3.0.html>."),
         Roff.text("This is free software: you are free to change and redistribute it. There is NO WARRANTY, to the extent permitted by law.")]
    }
}
