import BoothCommandLine
import BoothControl
import BoothRuntime

/// `photoboothctl --generate NAME` (not in --help; tools/regen-man runs it): prints the man page `NAME`
/// (photoboothd.8, photoboothctl.1, photobooth.conf.5) or, for `bash-completion`, the completion script,
/// generated from the command table (`commands`) and the settings schema. Returns 0, or 64 for another NAME.
@MainActor func generate(_ name: String) -> Int32 {
    let entries = commands.map { $0.entry }
    let text: String
    switch name {
    case "photoboothd.8": text = ManPages.photoboothd()
    case "photoboothctl.1": text = ManPages.photoboothctl(entries)
    case "photobooth.conf.5": text = ManPages.photoboothConf()
    case "bash-completion": text = BashCompletion.photoboothctl(entries)
    default:
        warn("--generate takes \((ManPages.names + ["bash-completion"]).joined(separator: ", ")), got '\(name)'")
        return ExitCode.usage
    }
    do { try FileHandleOutput.stdout(Array(text.utf8)) } catch { return ExitCode.ioError }
    return ExitCode.ok
}

extension Subcommand {
    /// This command as the generators take it. The per-user socket's path, which depends on who runs
    /// photoboothctl, is written as `$XDG_RUNTIME_DIR/photobooth/control`, so the pages are the same for everyone.
    static var entry: CommandEntry {
        let user = ControlSocketPath.user()
        func fixed(_ text: String) -> String { text.replacing(user, with: "$XDG_RUNTIME_DIR/photobooth/control") }
        return CommandEntry(words: words, synopsis: synopsis, summary: fixed(summary), details: fixed(details),
                            options: options.map { CommandLineOption([$0.name], argument: $0.takesValue ? $0.placeholder : nil,
                                                                     help: [fixed($0.help)]) })
    }
}
