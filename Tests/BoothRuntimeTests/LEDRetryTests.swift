import BoothCore
import BoothPorts
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothWiring

/// An LED that records the patterns it is asked to show.
final class FakeLED: LEDDevice {
    private let shown = Mutex<[LEDPattern]>([])
    func set(_ pattern: LEDPattern) { shown.withLock { $0.append(pattern) } }
    func stop() {}
    var patterns: [LEDPattern] { shown.withLock { $0 } }
}

/// An LED factory whose first `failures` openings fail (nil, as `realDevices` answers when the line
/// does not open); counts the attempts.
final class FlakyLEDFactory: Sendable {
    private let attempts = Mutex(0)
    private let failures: Int
    let led = FakeLED()
    init(failures: Int) { self.failures = failures }
    var count: Int { attempts.withLock { $0 } }
    func open(_ s: Settings) -> (any LEDDevice)? {
        let n = attempts.withLock { $0 += 1; return $0 }
        return n <= failures ? nil : led
    }
}

@Suite struct DeviceRetryTests {
    @Test("a failed LED line waits 1 s, doubling to 30 s, like the fault retries; reset starts over")
    func backoff() {
        var retry = DeviceRetry()
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        #expect(!retry.isDue(at: t0), "nothing pending before a failure")
        #expect(retry.failed(at: t0) == 1000)
        #expect(!retry.isDue(at: t0.adding(milliseconds: 999)))
        #expect(retry.isDue(at: t0.adding(milliseconds: 1000)))
        let waits = (0..<6).map { _ in retry.failed(at: t0) }
        #expect(waits == [2000, 4000, 8000, 16_000, 30_000, 30_000])
        retry.reset()
        #expect(!retry.isDue(at: t0.adding(milliseconds: 100_000)))
        #expect(retry.failed(at: t0) == 1000)
    }

    @Test("the runtime opens a configured LED line again after it failed to open, and shows the current pattern")
    func runtimeRetriesTheLEDLine() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.led.line = "23"
        let factory = FlakyLEDFactory(failures: 2)
        let booth = TestBooth(settings, led: { factory.open($0) }, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { factory.count == 1 && booth.camera.isStreaming })
        // Tried again 1 s after the failure (the loop's tick, each second), then 2 s after that.
        try #require(await booth.advance(milliseconds: 1000))
        #expect(factory.count == 2, "\(booth.logText)")
        try #require(await booth.advance(milliseconds: 1000))
        #expect(factory.count == 2, "not before 2 s:\n\(booth.logText)")
        try #require(await booth.advance(milliseconds: 1000))
        #expect(factory.count == 3 && !factory.led.patterns.isEmpty, "\(booth.logText)")
        let current = booth.runtime.inputs.ledPattern
        #expect(factory.led.patterns.last == current, "the reopened LED shows what the machine last asked for")
        // The first failure is warned (<4>); the next, of a line still missing, only at debug (<7>).
        #expect(booth.logText.contains("<4>led: line 23 not opened; trying again in 1 s"), "\(booth.logText)")
        #expect(booth.logText.contains("<7>led: line 23 not opened; trying again in 2 s"), "\(booth.logText)")
        #expect(booth.logText.contains("led: line 23 opened"))
        #expect(booth.runtime.inputs.ledRetry == DeviceRetry(), "nothing pending once open")
    }

    @Test("no LED configured: nothing is retried")
    func unconfiguredLEDIsNotRetried() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let factory = FlakyLEDFactory(failures: 1_000)
        let booth = TestBooth(fastSettings(dir: dir), led: { factory.open($0) }, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { factory.count == 1 && booth.camera.isStreaming })
        try #require(await booth.advance(milliseconds: 5000))
        #expect(factory.count == 1, "not opened again")
        #expect(booth.runtime.inputs.ledRetry == DeviceRetry())
    }

    @Test("a factory without an LED by design (--simulate): a configured line is not retried or warned about")
    func simulateDoesNotRetryTheLED() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        var settings = fastSettings(dir: dir)
        settings.led.line = "23"
        let factory = FlakyLEDFactory(failures: 1_000)
        let booth = TestBooth(settings, led: { factory.open($0) }, opensLED: false, clock: .startingNow())
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { factory.count == 1 && booth.camera.isStreaming })
        try #require(await booth.advance(milliseconds: 5000))
        #expect(factory.count == 1, "not opened again")
        #expect(booth.runtime.inputs.ledRetry == DeviceRetry(), "nothing pending")
        #expect(!booth.logText.contains("not opened"), "\(booth.logText)")
    }
}
