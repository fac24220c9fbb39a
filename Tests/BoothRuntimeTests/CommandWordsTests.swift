import BoothControl
import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing
@testable import BoothStorage

// Words that must be true (issue 35): exit codes that follow the answer, status naming what the
// command line sets, a mistyped command's suggestion, singular and plural. The built programs.

@Suite(.serialized) struct CommandWordsTests {
    @Test("photoboothctl press refused (storage.min_free not free) exits 75 and says why; status names the command line's keys after config set storage.dir under --simulate")
    func refusedPressAndCommandLineKeys() throws {
        let daemon = try builtProgram("photoboothd"), ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let socket = "\(dir)/control"
        let pid = spawnProgram(daemon, ["--simulate", "--socket", socket, "--set", "storage.min_free=1000GB"], in: dir,
                               output: "\(dir)/daemon.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        try #require(waitForDaemon(socket) != nil, "\(fileText("\(dir)/daemon.log"))")

        let press = runProgram(ctl, ["press", "--socket", socket], in: dir)
        #expect(press.status == 75, "\(press.output)")
        #expect(press.output.contains("press refused: "), "\(press.output)")

        let set = runProgram(ctl, ["config", "set", "storage.dir", "\(dir)/elsewhere", "--socket", socket], in: dir)
        #expect(set.status == 0, "\(set.output)")
        let status = runProgram(ctl, ["status", "--socket", socket], in: dir)
        #expect(status.output.contains("in force as \(dir)/photobooth.conf sets them, except the 10 keys photoboothd's command line sets, "
                                       + "which win over the file:\n"), "\(status.output)")
        #expect(status.output.contains(" storage.dir = ./photos (the file: \(dir)/elsewhere)\n"), "\(status.output)")
        #expect(status.output.contains(" storage.min_free = 1000GB (the file: 500MB)\n"), "\(status.output)")
    }

    @Test("photoboothctl --help gives every command's line whole: its full name, two spaces or more, then its summary")
    func helpLinesAreWhole() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let help = runProgram(ctl, ["--help"], in: dir)
        #expect(help.status == 0)
        let lines = help.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let names = ["config show", "config get", "config set", "config validate", "config describe", "config init",
                     "status", "devices", "press", "snapshot", "reload", "stats", "test-print", "refill", "prints",
                     "prints list", "prints reprint", "prints cancel", "prints purge", "prints resume",
                     "gallery", "gallery status", "gallery url", "gallery remove", "gallery rebuild", "gallery test-alert"]
        for name in names {
            let line = lines.first { $0.hasPrefix("  \(name)  ") }
            #expect(line != nil, "no whole line for '\(name)' in:\n\(help.output)")
            if let line {
                let summary = line.dropFirst(2 + name.count).drop { $0 == " " }
                #expect(summary.first?.isUppercase == true, "'\(name)': its summary starts whole: \(line)")
            }
        }
    }

    /// The JSON object in a command's output, decoded.
    private func decodeJSON<T: Decodable>(_ type: T.Type, _ output: String) -> T? {
        guard let start = output.firstIndex(of: "{"), let end = output.lastIndex(of: "}") else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(output[start...end].utf8))
    }

    @Test("status, status --json and gallery status --json carry what photobooth-gallery's /health says: the sync's backlog while its remote is away")
    func statusCarriesTheSyncBacklog() throws {
        let daemon = try builtProgram("photoboothd"), ctl = try builtProgram("photoboothctl"), gallery = try builtProgram("photobooth-gallery")
        guard access("/usr/bin/rclone", X_OK) == 0 else { Issue.record("rclone is missing: apt-get install rclone"); return }
        let dir = makeTempDir(); defer { removeTree(dir) }
        let socket = "\(dir)/control"
        // A free port: bound, read back, let go.
        let probe = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
        }
        close(probe)
        try #require(bound)
        let port = UInt16(bigEndian: a.sin_port)
        try AtomicFile.write(Array("[gallery]\nenabled = true\nlisten = 127.0.0.1\nport = \(port)\nurl_base = http://127.0.0.1:\(port)\n".utf8),
                             to: "\(dir)/photobooth.conf")
        let pid = spawnProgram(daemon, ["--simulate", "--config", "\(dir)/photobooth.conf", "--socket", socket, "--set", "session.preview=0s",
                                        "--set", "session.countdown=0s", "--set", "session.review=1s", "--set", "storage.min_free=0B"],
                               in: dir, output: "\(dir)/daemon.log")
        try #require(pid > 0)
        defer { terminate(pid) }
        try #require(waitForDaemon(socket) != nil, "\(fileText("\(dir)/daemon.log"))")
        #expect(runProgram(ctl, ["press", "--socket", socket], in: dir).status == 0)
        waitUntil(30) { fileText("\(dir)/daemon.log").contains("indexed at /p/") }
        // The sync's remote is away: a file where its folder should be.
        try AtomicFile.write([0], to: "\(dir)/remote")
        let served = spawnProgram(gallery, ["--config", "\(dir)/photobooth.conf", "--set", "gallery.index=\(dir)/gallery/index.sqlite",
                                            "--set", "storage.dir=\(dir)/photos", "--set", "gallery.cache=\(dir)/gallery-cache",
                                            "--set", "gallery.state=\(dir)/gallery-state", "--set", "gallery.sync_remote=\(dir)/remote",
                                            "--set", "gallery.sync_config=/dev/null"],
                                  in: dir, output: "\(dir)/gallery.log")
        try #require(served > 0)
        defer { terminate(served) }
        var report: StatusReport?
        waitUntil(30) {
            report = decodeJSON(StatusReport.self, runProgram(ctl, ["status", "--json", "--socket", socket], in: dir).output)
            return report?.gallery?.health?.contains("behind since") == true
        }
        let health = report?.gallery?.health ?? ""
        #expect(health.hasPrefix("photobooth-gallery answers (ok ") && health.contains("; sync to \(dir)/remote: behind since "),
                "\(health)\n\(fileText("\(dir)/gallery.log"))")
        #expect(health.contains("1 picture not copied, 0 removals not done; last error: "), "\(health)")
        let answer = decodeJSON(GalleryAnswer.self, runProgram(ctl, ["gallery", "status", "--json", "--socket", socket], in: dir).output)
        #expect(answer?.status.health?.contains("sync to \(dir)/remote: behind since ") == true, "\(String(describing: answer))")
        let text = runProgram(ctl, ["status", "--socket", socket], in: dir).output
        #expect(text.contains("sync to \(dir)/remote: behind since "), "\(text)")
    }

    @Test("a mistyped command gets the closest one, as a mistyped key does")
    func mistypedCommand() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let typo = runProgram(ctl, ["sttaus"], in: dir)
        #expect(typo.status == 64)
        #expect(typo.output.contains("unknown command 'sttaus'; did you mean 'status'?"), "\(typo.output)")
        let config = runProgram(ctl, ["config", "valdate"], in: dir)
        #expect(config.status == 64)
        #expect(config.output.contains("unknown config command 'valdate'; did you mean 'validate'?"), "\(config.output)")
    }

    @Test("config validate counts 1 error, 1 warning in the singular")
    func singularCounts() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write(Array("[camera]\ndevice = C920 ; the Logitech\nframe_rate = fast\n".utf8), to: "\(dir)/bad.conf")
        let bad = runProgram(ctl, ["config", "validate", "\(dir)/bad.conf"], in: dir)
        #expect(bad.status == 78)
        #expect(bad.output.contains("\(dir)/bad.conf: 1 error, 1 warning\n"), "\(bad.output)")
        try AtomicFile.write(Array("[camera]\ndevice = C920 ; the Logitech\n".utf8), to: "\(dir)/warned.conf")
        let warned = runProgram(ctl, ["config", "validate", "\(dir)/warned.conf"], in: dir)
        #expect(warned.status == 0)
        #expect(warned.output.contains("\(dir)/warned.conf: valid (1 warning)\n"), "\(warned.output)")
        let shown = runProgram(ctl, ["config", "show", "--file", "\(dir)/bad.conf", "--socket", "\(dir)/none"], in: dir)
        #expect(shown.output.contains("\(dir)/bad.conf is not valid (1 error)"), "\(shown.output)")
    }
}
