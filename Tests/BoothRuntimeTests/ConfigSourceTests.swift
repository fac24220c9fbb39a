import BoothCore
import BoothLayout
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

/// Runs the built photoboothd (`.build/debug`, built with the tests) in `cwd` with stdin from /dev/null;
/// its exit status and stderr + stdout.
func runDaemon(_ args: [String], cwd: String) throws -> (status: Int32, output: String) {
    let r = runProgram(try builtProgram("photoboothd"), args, in: cwd)
    return (r.status ?? -1, r.output)
}

/// A problem a `--set` override causes is located at that flag, never in a config file that did not set it.
@Suite("Config sources")
struct ConfigSourceTests {
    /// Loads `file` (written to a temp dir when not nil; else a path that does not exist) with `overrides`.
    func load(_ file: String?, _ overrides: [(key: String, value: String)]) throws -> Result<Settings, ConfigLoadError> {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let path = "\(dir)/booth.conf"
        if let file { try AtomicFile.write(Array(file.utf8), to: path, replace: true) }
        do { return .success(try loadSettings(path: path, required: false, overrides: overrides).settings) } catch {
            return .failure(error)
        }
    }

    @Test("overrides alone that cannot work together are refused, located as --set, not in the default config file")
    func overridesOnlyCombination() throws {
        guard case let .failure(.invalid(error)) = try load(nil, [(key: "session.shots", value: "4"), (key: "picture.layout", value: "single")]) else {
            Issue.record("--set session.shots=4 --set picture.layout=single was accepted")
            return
        }
        #expect(error.description.hasPrefix("--set picture.layout=single: picture.layout = single (--set picture.layout=single) holds 1 capture, "
                                            + "but session.shots = 4 (--set session.shots=4) takes 4"), "\(error)")
        #expect(!error.description.contains(".conf"), "no file set either key: \(error)")
    }

    @Test("a file key and an override: the file's line and the flag are both named; an override can also fix the file")
    func fileAndOverride() throws {
        let file = "[picture]\nlayout = single\n"
        guard case let .failure(.invalid(error)) = try load(file, [(key: "session.shots", value: "2")]) else {
            Issue.record("layout = single with --set session.shots=2 was accepted")
            return
        }
        let d = try #require(error.errors.first)
        #expect(d.file.hasSuffix("/booth.conf") && d.line == 2, "\(d)")
        #expect(d.message.contains("session.shots = 2 (--set session.shots=2)"), "\(d)")

        let broken = "[session]\nshots = 4\n[picture]\nlayout = single\n"
        guard case let .success(fixed) = try load(broken, [(key: "picture.layout", value: "2x2")]) else {
            Issue.record("--set picture.layout=2x2 did not fix the file's combination")
            return
        }
        #expect(fixed.picture.layout == .grid2x2)
    }

    // The reported fault, end to end: photoboothd named its config file for a --set override.
    @Test("photoboothd: a missing picture.background_image given with --set names the flag, not the config file")
    func daemonNamesTheSetFlag() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write(Array("[session]\ncountdown = 1s\n".utf8), to: "\(dir)/booth.conf", replace: true)
        let (status, output) = try runDaemon(["--simulate", "--check", "--config", "\(dir)/booth.conf", "--set", "session.shots=2",
                                              "--set", "picture.background_image=\(dir)/none.png"], cwd: dir)
        #expect(status == ExitCode.config, "\(output)")
        #expect(output.contains("--set picture.background_image=\(dir)/none.png: picture.background_image:"), "\(output)")
        #expect(!output.contains("booth.conf: picture.background_image"), "\(output)")
    }

    @Test("photoboothd: a reload refused for a [picture] file given with --set names the flag")
    func reloadNamesTheSetFlag() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let daemon = "\(packageRoot())/.build/debug/photoboothd", ctl = "\(packageRoot())/.build/debug/photoboothctl"
        try #require(access(daemon, X_OK) == 0 && access(ctl, X_OK) == 0, "photoboothd and photoboothctl not built (swift build)")
        try AtomicFile.write(Array("[session]\nshots = 1\n".utf8), to: "\(dir)/booth.conf", replace: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: daemon)
        p.arguments = ["--simulate", "--config", "\(dir)/booth.conf", "--set", "picture.overlay=\(dir)/none.png", "--socket", "\(dir)/ctl"]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { p.terminate(); p.waitUntilExit() }
        try #require(await eventually(timeoutSeconds: 20) { access("\(dir)/ctl", F_OK) == 0 }, "no control socket")
        // Two shots need the composer, and its overlay (from --set) is missing: the reload is refused.
        try AtomicFile.write(Array("[session]\nshots = 2\n".utf8), to: "\(dir)/booth.conf", replace: true)
        let reload = Process()
        reload.executableURL = URL(fileURLWithPath: ctl)
        reload.arguments = ["reload", "--socket", "\(dir)/ctl"]
        let pipe = Pipe()
        reload.standardOutput = pipe
        reload.standardError = pipe
        try reload.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reload.waitUntilExit()
        #expect(reload.terminationStatus == ExitCode.config, "\(output)")
        #expect(output.contains("--set picture.overlay=\(dir)/none.png: picture.overlay: \(dir)/none.png"), "\(output)")
    }

    @Test("a sheet too large through print.dpi (picture.dpi = print) names print.dpi at its line")
    func sheetTooLargeNamesPrintDPI() throws {
        let text = "[session]\nshots = 2\n[print]\nmedia = na_5x7_5x7in\ndpi = 1200\n"
        let settings = try Settings.parse(text: text, file: "booth.conf").get()
        let found = pictureDiagnostics(settings, file: "booth.conf", text: text)
        #expect(found.map(\.key) == ["print.dpi"])
        #expect(found.first?.description.hasPrefix("booth.conf:5: print.dpi: picture.size and picture.dpi make a 6000x8400 picture") == true,
                "\(found)")
    }

    @Test("photoboothd: a combination error stops the start (78) naming both keys; a warning is logged and the daemon goes on")
    func daemonCombination() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write(Array("[picture]\nlayout = single\n".utf8), to: "\(dir)/booth.conf", replace: true)
        let refused = try runDaemon(["--simulate", "--check", "--config", "\(dir)/booth.conf", "--set", "session.shots=4"], cwd: dir)
        #expect(refused.status == ExitCode.config, "\(refused.output)")
        #expect(refused.output.contains("\(dir)/booth.conf:2: picture.layout = single (\(dir)/booth.conf:2) holds 1 capture, "
                                        + "but session.shots = 4 (--set session.shots=4)"), "\(refused.output)")
        let warned = try runDaemon(["--simulate", "--check", "--config", "\(dir)/booth.conf", "--set", "picture.layout=3up",
                                    "--set", "session.shots=2"], cwd: dir)
        #expect(warned.status == ExitCode.ok, "\(warned.output)")
        #expect(warned.output.contains("<4>--set picture.layout=3up: warning: picture.layout = 3up"), "\(warned.output)")
    }
}

/// `photoboothd --check` judges the settings that need the system: the CUPS queue and the mount point.
@Suite("photoboothd --check: print queue and mount point")
struct CheckSystemSettingsTests {
    @Test("print.mode = auto with a queue CUPS does not have (or no CUPS) fails --check, naming both keys and the fix")
    func missingPrintQueue() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let (status, output) = try runDaemon(["--simulate", "--check", "--set", "print.mode=auto",
                                              "--set", "print.destination=no-such-queue-\(getpid())"], cwd: dir)
        // 78 when CUPS answers without that queue; 69 when no CUPS server answers at all (this test machine).
        #expect(status == ExitCode.config || status == ExitCode.unavailable, "\(output)")
        #expect(output.contains("check: print: print.mode = auto (--set print.mode=auto)"), "\(output)")
        #expect(output.contains("print.mode = off"), "the fix is named: \(output)")
        if status == ExitCode.config {
            #expect(output.contains("print.destination = no-such-queue-\(getpid()) (--set print.destination=no-such-queue-\(getpid()))"), "\(output)")
        }
    }

    @Test("a storage.mount that is not a mount point fails --check (the daemon would be in fault(storage) at once)")
    func notAMountPoint() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        mkdir("\(dir)/media", 0o755)
        let (status, output) = try runDaemon(["--simulate", "--check", "--set", "storage.mount=\(dir)/media",
                                              "--set", "storage.dir=\(dir)/media/photos"], cwd: dir)
        #expect(status == ExitCode.unavailable, "\(output)")
        #expect(output.contains("check: storage: storage.mount = \(dir)/media (--set storage.mount=\(dir)/media) for "
                                + "storage.dir = \(dir)/media/photos (--set storage.dir=\(dir)/media/photos): "
                                + "removable media not mounted at \(dir)/media"), "\(output)")
    }

    @Test("photoboothctl config set camera.rotation 90 against photoboothd --simulate: the reply names the key and how it took effect, the next snapshot is turned; a restart-only key says so, and status shows the file differing")
    func configSetSaysHowEachKeyTookEffect() throws {
        let daemon = try builtProgram("photoboothd"), ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let socket = "\(dir)/control"
        try AtomicFile.write(Array("[camera]\npreview_size = 640x480\ncapture_size = 640x480\n".utf8), to: "\(dir)/booth.conf", replace: true)
        let pid = spawnProgram(daemon, ["--simulate", "--config", "\(dir)/booth.conf", "--socket", socket], in: dir, output: "\(dir)/daemon.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        try #require(waitForDaemon(socket) != nil, "\(fileText("\(dir)/daemon.log"))")

        let before = runProgram(ctl, ["snapshot", "\(dir)/before.jpg", "--socket", socket], in: dir)
        #expect(before.output.contains("640x480 JPEG"), "\(before.output)")
        let set = runProgram(ctl, ["config", "set", "camera.rotation", "90", "--socket", socket], in: dir)
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("photoboothd reloaded: 1 key changed\n  camera.rotation: 0 -> 90, applied at once\n"), "\(set.output)")
        let after = runProgram(ctl, ["snapshot", "\(dir)/after.jpg", "--socket", socket], in: dir)
        #expect(after.output.contains("480x640 JPEG"), "the reply came after the change was applied: \(after.output)")
        #expect(fileText("\(dir)/daemon.log").contains("  camera.rotation: 0 -> 90, applied at once"))

        let backend = runProgram(ctl, ["config", "set", "camera.backend", "v4l2", "--socket", socket], in: dir)
        #expect(backend.output.contains("  camera.backend: auto -> v4l2, takes effect after `systemctl restart photoboothd`"), "\(backend.output)")
        let status = runProgram(ctl, ["status", "--socket", socket], in: dir)
        #expect(status.output.contains("\(dir)/booth.conf differs from the settings in force in 1 key:"), "\(status.output)")
        #expect(status.output.contains("camera.backend: auto in force, v4l2 in the file (takes effect after `systemctl restart photoboothd`)"),
                "\(status.output)")
        #expect(status.output.contains("rotation = 90"), "\(status.output)")
        let json = runProgram(ctl, ["status", "--json", "--socket", socket], in: dir)
        let report = try JSONDecoder().decode(StatusReport.self, from: Data(json.output.utf8))
        #expect(report.settings?.inForce["camera.rotation"] == "90")
        #expect(report.settings?.fileDiffers == true)
        #expect(report.settings?.differences.map(\.key) == ["camera.backend"])

        let reload = runProgram(ctl, ["reload", "--json", "--socket", socket], in: dir)
        let reply = try JSONDecoder().decode(ReloadReply.self, from: Data(reload.output.utf8))
        #expect(reply.changes?.map(\.key) == ["camera.backend"] && reply.changes?.first?.applied == false, "\(reload.output)")
    }

    @Test("photoboothd --simulate refuses sizes that would make it hold too much: config set of 16384x16384, a reload of 8000x8000 and of 8K sizes together; the running sizes stay (#35)")
    func oversizedSettingsRefusedByTheDaemon() throws {
        let daemon = try builtProgram("photoboothd"), ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let socket = "\(dir)/control", conf = "\(dir)/booth.conf"
        let start = "[camera]\npreview_size = 640x480\ncapture_size = 640x480\n"
        try AtomicFile.write(Array(start.utf8), to: conf, replace: true)
        let pid = spawnProgram(daemon, ["--simulate", "--config", conf, "--socket", socket], in: dir, output: "\(dir)/daemon.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        try #require(waitForDaemon(socket) != nil, "\(fileText("\(dir)/daemon.log"))")

        let set = runProgram(ctl, ["config", "set", "preview.size", "16384x16384", "--socket", socket], in: dir)
        #expect(set.status != 0, "\(set.output)")
        #expect(set.output.contains("preview.size: '16384x16384' is too large; allowed WxH in pixels, like 1280x720, up to 7680x4320"), "\(set.output)")
        #expect(fileText(conf) == start, "nothing written")

        // The file edited by hand, then reloaded: the daemon's reload reads it as a config check does.
        for (text, words) in [(start + "[preview]\nsize = 8000x8000\n", "preview.size: '8000x8000' is too large"),
                              ("[camera]\npreview_size = 7680x4320\ncapture_size = 7680x4320\n[preview]\nsize = 7680x4320\n",
                               "more than its limit of 512 MB")] {
            try AtomicFile.write(Array(text.utf8), to: conf, replace: true)
            let reload = runProgram(ctl, ["reload", "--socket", socket], in: dir)
            #expect(reload.status != 0, "\(reload.output)")
            #expect(reload.output.contains(words), "\(reload.output)")
            let json = runProgram(ctl, ["status", "--json", "--socket", socket], in: dir)
            let report = try JSONDecoder().decode(StatusReport.self, from: Data(json.output.utf8))
            #expect(report.settings?.inForce["preview.size"] == "800x480", "the running size stays")
            #expect(report.settings?.inForce["camera.preview_size"] == "640x480")
        }
        #expect(fileText("\(dir)/daemon.log").contains("reload refused, keeping the running settings"))
    }
}

