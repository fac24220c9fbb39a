import BoothControl
import BoothClock
import BoothCore
import BoothLayout
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

/// Loading with sources and warnings, and `--check`'s print and mount checks with a stand-in for CUPS.
@Suite("Config load warnings and --check settings")
struct CheckSettingsTests {
    @Test("a warning does not stop the load: the settings are used and the warning is returned")
    func warningsDoNotRefuse() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let loaded = try loadSettings(path: "\(dir)/absent.conf", required: false,
                                      overrides: [(key: "session.shots", value: "3"), (key: "picture.layout", value: "2x2")])
        #expect(loaded.settings.session.shots == 3)
        #expect(loaded.warnings.map(\.description) == [
            "--set picture.layout=2x2: warning: picture.layout = 2x2 (--set picture.layout=2x2) has 4 slots, but session.shots = 3 "
                + "(--set session.shots=3) fills 3: every picture has 1 empty slot; set picture.layout = auto (3up for 3 shots), or session.shots = 4",
        ])
        #expect(loaded.sources.origin(of: "session.shots") == .commandLine(key: "session.shots", value: "3"))
        #expect(loaded.sources.origin(of: "session.review") == .defaultValue(file: "\(dir)/absent.conf"))
    }

    @Test("a [picture] file named with --set is reported against the flag (picture diagnostics with sources)")
    func pictureFileFromOverride() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let loaded = try loadSettings(path: "\(dir)/absent.conf", required: false,
                                      overrides: [(key: "session.shots", value: "2"), (key: "picture.background_image", value: "\(dir)/none.png")])
        let found = pictureDiagnostics(loaded.settings, sources: loaded.sources)
        #expect(found.count == 1)
        #expect(found.first?.description.hasPrefix("--set picture.background_image=\(dir)/none.png: picture.background_image: ") == true, "\(found)")
        #expect(found.first?.severity == .error)
    }

    func devices() -> DeviceFactory {
        let camera = TestCamera(name: "sim-check"), button = FakeButton()
        return DeviceFactory(camera: { _ in camera }, button: { _ in button }, led: { _ in nil }, displays: { _, _, _ in [] })
    }

    @Test("--check: a queue CUPS does not have is a settings error (78) naming both keys' places and the queues CUPS has")
    func noSuchQueue() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let text = "[print]\nmode = press\ndestination = Photo-Printer\n"
        var settings = try Settings.parse(text: text, file: "booth.conf").get()
        settings.storage.dir = "\(dir)/photos"
        settings.storage.sessionFile = "\(dir)/session-number"
        let logs = LogRecorder()
        var asked: [String] = []
        let code = checkDevices(settings: settings, sources: SettingSources(file: "booth.conf", text: text), factory: devices(),
                                log: logs.logger(), printQueue: { asked.append($0); return .noSuchQueue("cupsGetNamedDest for Photo-Printer: not found", queues: ["Canon_SELPHY", "PDF"]) })
        #expect(asked == ["Photo-Printer"])
        #expect(code == ExitCode.config, "\(logs.all)")
        #expect(logs.all.contains { $0.contains("check: print: print.mode = press (booth.conf:2) prints to the CUPS queue Photo-Printer "
                                                + "(print.destination = Photo-Printer (booth.conf:3)), which does not exist: cupsGetNamedDest for "
                                                + "Photo-Printer: not found; CUPS has Canon_SELPHY, PDF: set print.destination to one of them") }, "\(logs.all)")
    }

    @Test("--check: no CUPS answering is a service not available (69); print.mode = off asks nothing; a found queue is ok")
    func cupsAnswers() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.print.mode = .auto
        let logs = LogRecorder()
        #expect(checkDevices(settings: settings, factory: devices(), log: logs.logger(),
                             printQueue: { _ in .noCUPS("httpConnect2 for the default destination: cannot reach the CUPS server") }) == ExitCode.unavailable)
        #expect(logs.all.contains { $0.contains("check: print: print.mode = auto needs CUPS, which does not answer the look-up") }, "\(logs.all)")
        #expect(checkDevices(settings: settings, factory: devices(), log: LogRecorder().logger(), printQueue: { _ in .found(queue: "booth") }) == ExitCode.ok)
        settings.print.mode = .off
        var asked = false
        #expect(checkDevices(settings: settings, factory: devices(), log: LogRecorder().logger(), printQueue: { _ in asked = true; return .noCUPS("") }) == ExitCode.ok)
        #expect(!asked)
    }

    @Test("--check: storage.mount on a plain directory is reported with both keys; the check changes nothing")
    func mountNotMounted() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        mkdir("\(dir)/media", 0o755)
        var settings = fastSettings(dir: dir)
        settings.storage.mount = "\(dir)/media"
        settings.storage.dir = "\(dir)/media/photos"
        let logs = LogRecorder()
        #expect(checkDevices(settings: settings, factory: devices(), log: logs.logger()) == ExitCode.unavailable)
        #expect(logs.all.contains { $0.contains("check: storage: storage.mount = \(dir)/media for storage.dir") && $0.contains("not mounted") },
                "\(logs.all)")
        #expect(listDirectory("\(dir)/media").isEmpty)
    }

    @Test("--check and status warn when the system clock is not synchronised, and say how to set it; not when it is (#35)")
    func clockNotSynchronised() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = fastSettings(dir: dir)
        let advice = "set it with timedatectl set-time"
        let logs = LogRecorder()
        #expect(checkDevices(settings: settings, factory: devices(), log: logs.logger(), clockSynchronized: { false }) == ExitCode.ok,
                "a warning: the booth runs")
        let warning = try #require(logs.all.first { $0.contains("check: clock:") }, "\(logs.all)")
        #expect(warning.contains("not synchronised"), "\(warning)")
        #expect(warning.contains("{date} and the date folders"), "\(warning)")
        #expect(warning.contains(advice), "\(warning)")
        #expect(warning.contains("systemd-timesyncd"), "\(warning)")
        for answer: Bool? in [true, nil] {
            let quiet = LogRecorder()
            #expect(checkDevices(settings: settings, factory: devices(), log: quiet.logger(), clockSynchronized: { answer }) == ExitCode.ok)
            #expect(!quiet.all.contains { $0.contains("check: clock:") && $0.contains("not synchronised") }, "\(String(describing: answer)): \(quiet.all)")
        }

        // status: the same words, in the report (--json) and its text.
        let booth = TestBooth(settings)
        booth.start()
        defer { booth.shutdownAndWait() }
        let unsynced = booth.runtime.statusReport(configPath: "booth.conf", clockSynchronized: false)
        #expect(unsynced.clockSynchronized == false)
        let said = try #require(unsynced.clockWarning, "status carries the warning")
        #expect(said.contains(advice) && said.contains("not synchronised"), "\(said)")
        let json = String(decoding: try JSONEncoder().encode(unsynced), as: UTF8.self)
        #expect(json.contains("\"clockWarning\""), "\(json)")
        #expect(unsynced.clockLine.contains(advice), "the text row: \(unsynced.clockLine)")
        let synced = booth.runtime.statusReport(configPath: "booth.conf", clockSynchronized: true)
        #expect(synced.clockWarning == nil)
        #expect(synced.clockLine == "synchronised")
    }
}
