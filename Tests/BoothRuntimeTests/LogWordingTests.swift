import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Testing
@testable import BoothRuntime
@testable import BoothPrint

// What the log says must be true and short (issue 13): a capture turned losslessly is not "encoded",
// uncounted paper is not "? sheets", a fault's reasons are not repeated on every state line.

@Suite(.serialized) struct LogWordingTests {
    @Test("an MJPEG capture turned 180° losslessly is logged as the camera's JPEG turned losslessly, not as encoded")
    func losslessTurnIsNotEncoded() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.camera.format = .mjpeg
        settings.camera.rotation = .r180
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })
        _ = booth.button.press()
        try #require(await eventually { booth.logged("capture 1 saved: ") }, "\(booth.logText)")
        let line = try #require(booth.logs.all.first { $0.contains("capture 1 saved: ") })
        #expect(line.contains("320x240 MJPG, as sent by the camera, turned losslessly)"), "\(line)")
        #expect(!line.contains("encoded"), "\(line)")
    }

    @Test("a fault's reasons: each logged once (not on every retry), the state lines name the kinds only")
    func faultReasonsAreLoggedOnce() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.storage.mount = "\(dir)/not-mounted"
        let booth = TestBooth(settings, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.logged("fault (storage): ") }, "\(booth.logText)")
        // The state line names the kinds; the reason has its own line.
        let states = booth.logs.all.filter { $0.contains("state: ") }
        #expect(states.contains { $0.hasSuffix("state: idle -> fault(storage)") }, "\(states)")
        for line in states {
            #expect(!line.contains("not-mounted"), "a state line repeats a reason: \(line)")
        }
        // The storage retry (after 1 s) finds the same reason again: not logged again at error.
        try #require(await booth.advance(milliseconds: 1000))
        try #require(await eventually { booth.logged("fault (storage) unchanged after the retry") }, "\(booth.logText)")
        let lines = booth.logs.all
        #expect(lines.filter { $0.contains("fault (storage): ") }.count == 1, "\(booth.logText)")
        let long = lines.filter { $0.count > 400 }
        #expect(long.isEmpty, "\(long)")
    }

    @Test func paperLeftOrNotCounted() {
        #expect(PrintWorker.paperText(nil) == "paper not counted")
        #expect(PrintWorker.paperText(1) == "1 sheet left")
        #expect(PrintWorker.paperText(12) == "12 sheets left")
    }
}
