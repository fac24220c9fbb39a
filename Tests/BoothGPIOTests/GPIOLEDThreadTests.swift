import BoothCore
import Dispatch
import Synchronization
import Testing
@testable import BoothGPIO

/// An output line stand-in that records every value the LED thread writes.
private final class FakeOutput: LEDLineIO {
    private let state = Mutex<(writes: [Bool], read: Int, released: Bool)>(([], 0, false))
    private let wrote = DispatchSemaphore(value: 0)

    func set(on: Bool) -> Result<Void, Errno> {
        state.withLock { $0.writes.append(on) }
        wrote.signal()
        return .success(())
    }

    func release() { state.withLock { $0.released = true } }

    /// Waits (bounded) for the next write not yet returned, and returns it.
    func nextWrite() -> Bool? {
        guard wrote.wait(timeout: .now() + 5) == .success else { return nil }
        return state.withLock { s in
            defer { s.read += 1 }
            return s.writes[s.read]
        }
    }

    var writes: [Bool] { state.withLock { $0.writes } }
    var released: Bool { state.withLock { $0.released } }
}

@Suite("GPIOLED thread over a fake line")
struct GPIOLEDThreadTests {
    fileprivate func start(_ line: FakeOutput, timing: LEDTiming = LEDTiming()) throws -> GPIOLED {
        let address = GPIOLineAddress(chip: "gpiochip0", line: "27")
        let resolved = GPIOResolvedLine(address: address, chipName: "gpiochip0", chipLabel: "fake",
                                        chipPath: "/dev/gpiochip0",
                                        info: GPIOLineInfo(offset: 27, name: "", consumer: "", used: false,
                                                           isOutput: true, activeLow: false))
        return try GPIOLED.start(line: line, configuration: GPIOLED.Configuration(address: address, timing: timing),
                                 resolved: resolved, log: { _, _ in })
    }

    @Test("steady lights it, off darkens it, stop turns it off and releases the line")
    func steadyAndOff() throws {
        let line = FakeOutput()
        let led = try start(line)
        #expect(line.nextWrite() == false, "starts off")
        led.set(.steady)
        #expect(line.nextWrite() == true)
        #expect(led.pattern == .steady)
        led.set(.off)
        #expect(line.nextWrite() == false)
        led.set(.steady)
        #expect(line.nextWrite() == true)
        led.stop()
        #expect(line.writes.last == false)
        #expect(line.released)
    }

    @Test("blink alternates on and off on the thread")
    func blinkAlternates() throws {
        let line = FakeOutput()
        let led = try start(line, timing: LEDTiming(blinkOnMilliseconds: 20, blinkOffMilliseconds: 20))
        #expect(line.nextWrite() == false)
        led.set(.blink)
        let seen = (0..<4).map { _ in line.nextWrite() }
        #expect(seen == [true, false, true, false])
        led.stop()
        #expect(line.released)
    }
}
