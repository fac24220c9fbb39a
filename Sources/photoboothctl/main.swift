import BoothRuntime
import Glibc

// photoboothctl: the operator's admin CLI. Its subcommands arrive with the admin issue;
// for now it answers --help and --version.

let usage = """
    Usage: photoboothctl [--help] [--version]

    The photobooth's admin tool. Subcommands (config, status, devices, press,
    snapshot, reload, stats) come with the control socket; until then, configure
    the booth in /etc/photobooth/photobooth.conf and check it with
    `photoboothd --check`.
    """

let argv = CommandLine.arguments.dropFirst()
switch argv.first {
case "--help", "-h":
    print(usage)
case "--version":
    print("photoboothctl \(photoboothVersion)")
case nil:
    print(usage)
    exit(ExitCode.usage)
case let other?:
    var line = Array("photoboothctl: unknown command '\(other)'; see --help\n".utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    exit(ExitCode.usage)
}
