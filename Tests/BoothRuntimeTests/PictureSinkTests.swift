import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage

// The picture-sink seam (issue 14): a sink defined here, not in any device module, gets every saved
// capture and picture of a real session through the real runtime (simulated camera, real storage),
// after storage's durable save; a sink that does not return holds up neither the session nor the
// other sinks.

/// A door a sink can be held at until the test opens it.
final class SinkGate: Sendable {
    private let open = Mutex(false)
    private let waiting = Mutex(0)
    func release() { open.withLock { $0 = true } }
    /// Sinks held at the gate now.
    var held: Int { waiting.withLock { $0 } }
    func pass() {
        waiting.withLock { $0 += 1 }
        while !open.withLock({ $0 }) { usleep(2_000) }
        waiting.withLock { $0 -= 1 }
    }
}

/// A picture sink of the test target's own: records each picture it got and whether, when it got it,
/// the file was on disk under its final name with exactly those bytes.
final class RecordingPictureSink: PictureSink {
    let sinkName: String
    private let gate: SinkGate?
    private let got = Mutex<[(picture: SavedPicture, onDisk: Bool)]>([])

    init(name: String, gate: SinkGate? = nil) {
        sinkName = name
        self.gate = gate
    }

    func pictureSaved(_ picture: SavedPicture) {
        let onDisk = (try? AtomicFile.read(picture.path)) == picture.bytes
        got.withLock { $0.append((picture, onDisk)) }
        gate?.pass()
    }

    var pictures: [SavedPicture] { got.withLock { $0.map(\.picture) } }
    /// Per picture: its file held its bytes when the sink was told.
    var wereOnDisk: [Bool] { got.withLock { $0.map(\.onDisk) } }
}

@Suite(.serialized) struct PictureSinkTests {
    @Test("a 3-shot session delivers its captures and its picture to a sink: path, session, shot, kind, bytes of the file on disk")
    func aSessionDeliversItsCapturesAndItsPicture() async throws {
        let dir = makeTempDir("picture-sink"); defer { removeTree(dir) }
        var settings = seriesSettings(dir: dir, shots: 3)
        settings.print.mode = .off
        let sink = RecordingPictureSink(name: "recorder")
        var options = RuntimeOptions()
        options.composer = StackComposer()
        options.pictureSinks = [sink]
        let booth = TestBooth(settings, options: options)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming }, "\(booth.logText)")
        booth.button.press()
        try #require(await eventually { booth.runtime.counters.completed == 1 && sink.pictures.count == 4 },
                     "\(sink.pictures.map(\.path)) \(booth.logText)")

        let files = savedCaptures(in: settings.storage.dir)
        let pictures = sink.pictures
        #expect(pictures.map(\.path).sorted() == files, "one delivery per file saved, no other")
        #expect(pictures.map(\.kind) == [.capture, .capture, .capture, .picture])
        #expect(pictures.map(\.shot) == [1, 2, 3, 0])
        #expect(pictures.allSatisfy { $0.session == 1 })
        #expect(pictures.map { fileName($0.path) }
                == ["booth-000001-1.jpg", "booth-000001-2.jpg", "booth-000001-3.jpg", "booth-000001-picture.jpg"])
        for p in pictures {
            #expect(try AtomicFile.read(p.path) == p.bytes, "the bytes are the file's: \(p.path)")
        }
        #expect(sink.wereOnDisk == [true, true, true, true], "each file was in place, whole, before its sink was told")
        #expect(Set(pictures.map(\.captureID)).count == 4)
    }

    @Test("a sink that does not return delays neither the session's next states nor another sink")
    func aBlockingSinkDelaysNothing() async throws {
        let dir = makeTempDir("blocking-sink"); defer { removeTree(dir) }
        let settings = fastSettings(dir: dir)
        let gate = SinkGate()
        let stuck = RecordingPictureSink(name: "stuck", gate: gate)
        let other = RecordingPictureSink(name: "other")
        var options = RuntimeOptions()
        options.pictureSinks = [stuck, other]
        let booth = TestBooth(settings, options: options)
        booth.start()
        defer {
            gate.release()
            booth.shutdownAndWait()
        }
        try #require(await eventually { booth.camera.isStreaming }, "\(booth.logText)")

        booth.button.press()
        // The first capture reached the stuck sink, which holds it: the session still goes on to
        // review and back to idle, and the other sink has its capture.
        try #require(await eventually { gate.held == 1 }, "\(booth.logText)")
        #expect(await eventually { booth.runtime.counters.completed == 1 && booth.state.isIdle }, "\(booth.logText)")
        #expect(await eventually { other.pictures.count == 1 }, "\(booth.logText)")

        // A second session, the stuck sink still holding the first capture.
        booth.button.press()
        #expect(await eventually { booth.runtime.counters.completed == 2 && booth.state.isIdle }, "\(booth.logText)")
        #expect(await eventually { other.pictures.count == 2 })
        #expect(await eventually { booth.runtime.storage.saved == 2 }, "the storage thread is not held by the sink")
        #expect(stuck.pictures.count == 1, "the stuck sink is still on its first picture")
        #expect(gate.held == 1)

        // Let go: it gets the second capture too, in order.
        gate.release()
        #expect(await eventually { stuck.pictures.count == 2 })
        #expect(stuck.pictures.map(\.session) == [1, 2])
        #expect(stuck.pictures.map(\.path) == other.pictures.map(\.path))
        #expect(stuck.pictures.map(\.path) == savedCaptures(in: settings.storage.dir))
    }

    @Test("a sink more than 32 pictures behind loses its oldest waiting one (logged); at the stop what still waits is counted and never handed to it")
    func aSinkFarBehindLosesItsOldestWaitingPicture() async throws {
        let gate = SinkGate()
        let sink = RecordingPictureSink(name: "slow", gate: gate)
        let logs = LogRecorder()
        let delivery = PictureDelivery(sinks: [sink], log: logs.logger())
        delivery.launch()
        defer { gate.release() }
        func picture(_ n: Int) -> SavedPicture {
            SavedPicture(path: "/nowhere/p\(n).jpg", session: n, shot: 1, kind: .capture, captureID: UInt64(n), bytes: [])
        }
        delivery.deliver(picture(0))
        try #require(await eventually { gate.held == 1 }, "the sink holds picture 0")
        for n in 1...33 { delivery.deliver(picture(n)) }
        #expect(logs.all == ["<3>slow: 32 pictures waiting; /nowhere/p1.jpg not handed to it"])
        delivery.finish(timeoutSeconds: 0.05)
        #expect(logs.all.last == "<4>slow: 32 pictures not handed to it when stopping")
        delivery.deliver(picture(34))
        gate.release()
        #expect(await eventually { gate.held == 0 })
        usleep(50_000)
        #expect(sink.pictures.map(\.session) == [0], "nothing after the stop, nothing that waited at it")
        #expect(logs.all.count == 2, "a picture delivered after the stop is neither queued nor logged")
    }
}
