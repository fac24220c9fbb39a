import BoothSystem
import BoothTestSupport
import BoothControl
import BoothCore
import BoothPorts
import BoothRuntime
import BoothStorage
import Foundation
import Testing
@testable import BoothWiring

@Suite("DaemonConfig: the daemon's settings read one way for the start, status and a reload")
struct DaemonConfigTests {
    @Test("the file, then the overrides, then the review hook below the schema's floor: the same settings from load, read and reload")
    func oneWay() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write(Array("[session]\ncountdown = 5s\nshots = 2\n".utf8), to: "\(dir)/booth.conf", replace: true)
        let config = DaemonConfig(path: "\(dir)/booth.conf", required: true, overrides: [(key: "session.shots", value: "1")],
                                  reviewMilliseconds: 250)
        let loaded = try config.load()
        #expect(loaded.settings.session.countdownMilliseconds == 5000)
        #expect(loaded.settings.session.shots == 1, "the override wins over the file")
        #expect(loaded.settings.session.reviewMilliseconds == 250, "the soak hook, below session.review's 1 s floor")
        #expect(try config.read().get() == loaded.settings)
        #expect(try config.reload(log: LogRecorder().logger()).get() == loaded.settings)
    }

    @Test("a named file that cannot be read: load throws it (EX_NOINPUT); read and reload give one diagnostic naming the file")
    func unreadable() {
        let config = DaemonConfig(path: "/nonexistent/booth.conf", required: true, overrides: [])
        do {
            _ = try config.load()
            Issue.record("a missing --config file loaded")
        } catch {
            #expect(error.exitCode == ExitCode.noInput, "\(error)")
        }
        for result in [config.read(), config.reload(log: LogRecorder().logger())] {
            guard case let .failure(e) = result else { Issue.record("a missing --config file read"); continue }
            #expect(e.diagnostics.count == 1, "\(e)")
            #expect(e.diagnostics.first?.file == "/nonexistent/booth.conf")
            #expect(e.diagnostics.first?.message.hasPrefix("cannot read the config file") == true, "\(e)")
        }
    }

    @Test("a reload refuses a [picture] file that is missing and names the --set flag that gave it; read does not open the files")
    func reloadChecksThePictureFiles() {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let config = DaemonConfig(path: "\(dir)/none.conf", required: false,
                                  overrides: [(key: "session.shots", value: "2"), (key: "picture.overlay", value: "\(dir)/none.png")])
        #expect((try? config.read().get()) != nil, "status compares the settings; the files are the reload's concern")
        guard case let .failure(e) = config.reload(log: LogRecorder().logger()) else {
            Issue.record("a reload with a missing overlay was applied")
            return
        }
        #expect(e.description.contains("--set picture.overlay=\(dir)/none.png"), "\(e)")
    }
}
