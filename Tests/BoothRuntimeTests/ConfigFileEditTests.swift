import BoothCore
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing
@testable import BoothStorage

// `photoboothctl config set` as operators run it on the file itself (issue 35): several at once, and
// on a config file that is a symbolic link. The built photoboothctl, no daemon (a socket nobody serves).

@Suite(.serialized) struct ConfigFileEditTests {
    @Test("8 photoboothctl config set of different keys at once, 5 rounds: every one exits 0 and every value is in the file")
    func parallelSetsLoseNothing() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        let file = "\(dir)/booth.conf"
        let keys = ["session.countdown", "session.review", "camera.live_view_rate", "camera.frame_rate",
                    "camera.settle_frames", "button.debounce", "picture.footer_top", "display.rotation"]
        for round in 1...5 {
            try AtomicFile.write(Array(Schema.defaultConfigText().utf8), to: file, replace: true)
            let values = ["\(2 + round)s", "\(3 + round)s", "\(10 + round)", "\(20 + round)", "\(round)", "\(30 + round)ms",
                          "round \(round)", round % 2 == 0 ? "180" : "90"]
            var pids: [(pid: pid_t, out: String)] = []
            for (i, key) in keys.enumerated() {
                let out = "\(dir)/set-\(round)-\(i).out"
                let pid = spawnProgram(ctl, ["config", "set", key, values[i], "--file", file, "--socket", "\(dir)/none"],
                                       in: dir, output: out)
                try #require(pid > 0)
                pids.append((pid, out))
            }
            for (pid, out) in pids {
                #expect(exitStatus(of: pid, within: 60) == 0, "\(fileText(out))")
            }
            let settings = try Settings.parse(text: fileText(file), file: file).get()
            for (i, key) in keys.enumerated() {
                let spec = try #require(Schema.spec(for: key))
                #expect(spec.text(in: settings) == values[i], "round \(round): \(key) lost")
            }
        }
    }

    @Test("config set on a config file that is a symbolic link writes the link's target (atomically) and keeps the link; a dangling link is refused")
    func setThroughASymlink() throws {
        let ctl = try builtProgram("photoboothctl")
        let dir = makeTempDir(); defer { removeTree(dir) }
        try makeDirectories("\(dir)/real")
        let target = "\(dir)/real/booth.conf", link = "\(dir)/booth.conf"
        try AtomicFile.write(Array("[session]\ncountdown = 3s\n".utf8), to: target, replace: true)
        #expect(symlink("real/booth.conf", link) == 0)
        let set = runProgram(ctl, ["config", "set", "session.countdown", "7s", "--file", link, "--socket", "\(dir)/none"], in: dir)
        #expect(set.status == 0, "\(set.output)")
        var st = stat()
        #expect(lstat(link, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK, "the link is still a link")
        #expect(fileText(target) == "[session]\ncountdown = 7s\n")
        #expect(set.output.contains("session.countdown = 7s (\(link) -> \(target) line 2, was 3s)"), "\(set.output)")

        let dangling = "\(dir)/gone.conf"
        #expect(symlink("\(dir)/nowhere/booth.conf", dangling) == 0)
        let refused = runProgram(ctl, ["config", "set", "session.countdown", "7s", "--file", dangling, "--socket", "\(dir)/none"], in: dir)
        #expect(refused.status == 73, "\(refused.output)")
        #expect(refused.output.contains("cannot write \(dangling): it is a symbolic link to \(dir)/nowhere/booth.conf, which does not exist"),
                "\(refused.output)")
        #expect(lstat(dangling, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK)
    }
}
