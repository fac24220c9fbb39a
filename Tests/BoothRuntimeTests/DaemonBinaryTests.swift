import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing
@testable import BoothControl
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

// The built photoboothd and photoboothctl (.build/debug), run as an operator runs them (issue 13):
// one daemon per control socket, `--simulate` in its working directory, the README's
// `config set` against it, options before the command.

/// A built program in `.build/debug`; the test fails (not skips) when it is missing.
func builtProgram(_ name: String) throws -> String {
    let path = "\(packageRoot())/.build/debug/\(name)"
    try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) not built: swift build first")
    return path
}

/// Starts `program` in working directory `dir`, output to `output` (``spawnProcess``). Its pid, ≤ 0 on failure.
func spawnProgram(_ program: String, _ args: [String], in dir: String, output: String) -> pid_t {
    spawnProcess(program, args, cwd: dir, output: output)
}

/// Stops a daemon started here: SIGTERM, then SIGKILL after 10 s. Its exit status.
@discardableResult
func terminate(_ pid: pid_t) -> Int32? {
    kill(pid, SIGTERM)
    if let s = exitStatus(of: pid, within: 10) { return s }
    kill(pid, SIGKILL)
    return exitStatus(of: pid, within: 5)
}

/// Runs `program` in `dir` to its end: (exit status, stdout and stderr).
func runProgram(_ program: String, _ args: [String], in dir: String) -> (status: Int32?, output: String) {
    let out = "\(dir)/run-\(UInt32.random(in: 0...UInt32.max)).out"
    defer { unlink(out) }
    let pid = spawnProgram(program, args, in: dir, output: out)
    guard pid > 0 else { return (nil, "posix_spawn failed") }
    let status = exitStatus(of: pid, within: 30)
    if status == nil { terminate(pid) }
    return (status, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
}

/// `hello` on `socket`, nil when nobody answers.
func hello(_ socket: String) -> DaemonInfo? {
    try? ControlClient(socket: socket).send(ControlRequest(.hello), expecting: DaemonInfo.self, timeoutSeconds: 3)
}

/// Waits up to `seconds` for a daemon to answer on `socket`.
func waitForDaemon(_ socket: String, seconds: Double = 30) -> DaemonInfo? {
    var info: DaemonInfo?
    waitUntil(seconds) { info = hello(socket); return info != nil }
    return info
}

func fileText(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

@Suite(.serialized) struct DaemonBinaryTests {
    @Test("a second photoboothd on the same socket refuses to start (75, says why) and the first stays reachable")
    func oneDaemonPerSocket() throws {
        let daemon = try builtProgram("photoboothd")
        let dir = makeTempDir(), other = makeTempDir("second")
        defer { removeTree(dir); removeTree(other) }
        let socket = "\(dir)/control"
        let first = spawnProgram(daemon, ["--simulate", "--socket", socket], in: dir, output: "\(dir)/first.log")
        try #require(first > 0)
        defer { terminate(first) }
        let info = try #require(waitForDaemon(socket), "\(fileText("\(dir)/first.log"))")
        #expect(info.pid == first)

        let second = spawnProgram(daemon, ["--simulate", "--socket", socket], in: other, output: "\(other)/second.log")
        try #require(second > 0)
        let status = exitStatus(of: second, within: 15)
        if status == nil { terminate(second) }
        #expect(status == ExitCode.tempFail, "the second daemon: \(status.map(String.init) ?? "still running")\n\(fileText("\(other)/second.log"))")
        #expect(fileText("\(other)/second.log").contains("another photoboothd (pid \(first)) is running on the control socket \(socket)"),
                "\(fileText("\(other)/second.log"))")
        // The first is still the one answering: nobody removed its socket.
        #expect(hello(socket)?.pid == first, "the first daemon is unreachable after the second ended")
        #expect(!FileManager.default.fileExists(atPath: "\(other)/photos"), "the second opened nothing")

        // The first removes its own socket when it stops; the lock file stays (never deleted).
        #expect(terminate(first) == 0, "\(fileText("\(dir)/first.log"))")
        #expect(access(socket, F_OK) != 0)
        #expect(access("\(socket).lock", F_OK) == 0)
    }

    @Test("README: photoboothctl config set session.countdown 5s against photoboothd --simulate acts on ./photobooth.conf, names it, reloads")
    func configSetAgainstTheSimulatedBooth() throws {
        let daemon = try builtProgram("photoboothd"), ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(), elsewhere = makeTempDir("ctl-cwd")
        defer { removeTree(dir); removeTree(elsewhere) }
        let socket = "\(dir)/control"
        let pid = spawnProgram(daemon, ["--simulate", "--socket", socket], in: dir, output: "\(dir)/daemon.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        let info = try #require(waitForDaemon(socket), "\(fileText("\(dir)/daemon.log"))")
        let conf = "\(dir)/photobooth.conf"
        #expect(info.configPath == conf, "the simulated booth's file is in its working directory")
        #expect(info.overriddenKeys?.contains("print.journal") == true)

        // photoboothctl runs elsewhere: the file is the daemon's, by its absolute path.
        let set = runProgram(ctl, ["config", "set", "session.countdown", "5s", "--socket", socket], in: elsewhere)
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("session.countdown = 5s (\(conf) line "), "\(set.output)")
        #expect(set.output.contains("photoboothd reloaded"), "\(set.output)")
        #expect(fileText(conf).contains("countdown = 5s"))
        #expect(fileText("\(dir)/daemon.log").contains("settings reloaded"), "\(fileText("\(dir)/daemon.log"))")

        let get = runProgram(ctl, ["config", "get", "session.countdown", "--socket", socket], in: elsewhere)
        #expect(get.status == 0)
        #expect(get.output.hasPrefix("5s\n"), "\(get.output)")
        #expect(get.output.contains("session.countdown: \(conf) line "), "config get names the file: \(get.output)")
        let show = runProgram(ctl, ["config", "show", "--socket", socket], in: elsewhere)
        #expect(show.status == 0)
        #expect(show.output.hasPrefix("# \(conf) (read by photoboothd, pid \(pid))"), "\(show.output.prefix(200))")
        // A key the simulated booth sets itself: the file's value does not apply, and config set says so.
        let journal = runProgram(ctl, ["config", "set", "print.journal", "/tmp/elsewhere.json", "--socket", socket], in: elsewhere)
        #expect(journal.status == 0)
        #expect(journal.output.contains("sets print.journal on its command line"), "\(journal.output)")
        // ... and never claims the key is "in force now" (the reload happened; the key did not change).
        #expect(!journal.output.contains("in force now"), "\(journal.output)")
        #expect(journal.output.contains("but print.journal stays as its command line sets it"), "\(journal.output)")
    }

    @Test("a start refused for invalid settings says why at syslog priority err on every line (journalctl -p err shows it)")
    func refusalIsLoggedAtErr() throws {
        let daemon = try builtProgram("photoboothd")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let r = runProgram(daemon, ["--simulate", "--socket", "\(dir)/control", "--set", "session.countdown=soon",
                                    "--set", "session.review=never"], in: dir)
        #expect(r.status == 78, "\(r.output)")
        let lines = r.output.split(separator: "\n")
        #expect(lines.first == "<3>photoboothd: invalid settings, not starting:", "\(r.output)")
        #expect(lines.count >= 3 && lines.allSatisfy { $0.hasPrefix("<3>") }, "\(r.output)")
        // A usage error is for the terminal: no priority.
        let usage = runProgram(daemon, ["--sessions"], in: dir)
        #expect(usage.status == 64)
        #expect(usage.output.hasPrefix("photoboothd: --sessions needs a value"), "\(usage.output)")
    }

    @Test("photoboothctl takes its options before the command too: --socket PATH status, --json --socket PATH status")
    func optionsBeforeTheCommand() throws {
        let daemon = try builtProgram("photoboothd"), ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let socket = "\(dir)/control"
        let pid = spawnProgram(daemon, ["--simulate", "--socket", socket], in: dir, output: "\(dir)/daemon.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        try #require(waitForDaemon(socket) != nil, "\(fileText("\(dir)/daemon.log"))")
        let status = runProgram(ctl, ["--socket", socket, "status"], in: dir)
        #expect(status.status == 0, "\(status.output)")
        #expect(status.output.hasPrefix("photoboothd \(photoboothVersion) (pid \(pid))"), "\(status.output)")
        let json = runProgram(ctl, ["--json", "--socket=\(socket)", "status"], in: dir)
        #expect(json.status == 0, "\(json.output)")
        #expect((try? JSONDecoder().decode(StatusReport.self, from: Data(json.output.utf8)))?.pid == pid, "\(json.output)")
        let get = runProgram(ctl, ["--socket", socket, "config", "get", "session.countdown"], in: dir)
        #expect(get.status == 0, "\(get.output)")
        #expect(get.output.hasPrefix("3s\n"), "\(get.output)")
        // An option the command does not take is still refused, naming the command.
        let bad = runProgram(ctl, ["--socket", socket, "config", "init"], in: dir)
        #expect(bad.status == ExitCode.usage)
        #expect(bad.output.contains("config init: unknown option '--socket'"), "\(bad.output)")
        // Options before an incomplete command: the error is about the command, not the option.
        let partial = runProgram(ctl, ["--socket", socket, "config"], in: dir)
        #expect(partial.status == ExitCode.usage)
        #expect(partial.output.contains("config needs a command"), "\(partial.output)")
        // An option without its value says so (it was the usage text, exit 64, with no reason).
        let noValue = runProgram(ctl, ["--socket"], in: dir)
        #expect(noValue.status == ExitCode.usage)
        #expect(noValue.output.contains("--socket needs a value"), "\(noValue.output)")
    }
}

@Suite struct SimulatedPathsTests {
    @Test("--simulate keeps every file the booth writes or reads back in the working directory (--set still wins)")
    func simulatedBoothStaysInItsDirectory() throws {
        // Every path setting whose default is the system booth's state (/var, /run): what the booth keeps.
        let state = Schema.settings.filter { spec in
            if case .path = spec.type { return ["/var/", "/run/"].contains { spec.defaultText.hasPrefix($0) } }
            return false
        }
        #expect(Set(state.map(\.key)).isSuperset(of: ["storage.dir", "preview.file", "print.journal", "print.spool"]))
        let dir = makeTempDir(); defer { removeTree(dir) }
        // A --config file that names the system booth's paths does not take the simulated booth there.
        let conf = "\(dir)/system.conf"
        try AtomicFile.write(Array("[print]\njournal = /var/lib/photobooth/print-journal.json\n".utf8), to: conf, durable: false, replace: true)
        let loaded = try loadSettings(path: conf, required: true, overrides: simulatedOverrides).settings
        for spec in state {
            let value = spec.text(in: loaded)
            #expect(value.hasPrefix("./"), "\(spec.key) = \(value) under --simulate")
        }
        let set = try loadSettings(path: conf, required: true,
                                   overrides: simulatedOverrides + [("print.journal", "\(dir)/j.json")]).settings
        #expect(set.print.journal == "\(dir)/j.json", "--set wins")
        #expect(simulatedConfigPath == "./photobooth.conf")
    }
}
