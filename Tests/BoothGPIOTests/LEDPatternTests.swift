import BoothCore
import Testing
@testable import BoothGPIO

@Suite("LED patterns")
struct LEDPatternTests {
    let timing = LEDTiming()  // blink 250/250; fault 120 on, 120 off, 120 on, 900 off

    @Test("off and steady never change")
    func constants() {
        for ms: Int64 in [0, 1, 249, 250, 10_000] {
            #expect(!LEDPattern.off.isOn(atElapsedMilliseconds: ms, timing: timing))
            #expect(LEDPattern.steady.isOn(atElapsedMilliseconds: ms, timing: timing))
        }
        #expect(LEDPattern.off.nextChange(afterElapsedMilliseconds: 0, timing: timing) == nil)
        #expect(LEDPattern.steady.nextChange(afterElapsedMilliseconds: 123, timing: timing) == nil)
    }

    @Test("blink: 250 ms on, 250 ms off, starting on")
    func blink() {
        let samples: [(Int64, Bool)] = [(0, true), (249, true), (250, false), (499, false), (500, true), (1250, false)]
        for (ms, on) in samples {
            #expect(LEDPattern.blink.isOn(atElapsedMilliseconds: ms, timing: timing) == on, "at \(ms) ms")
        }
        #expect(LEDPattern.blink.nextChange(afterElapsedMilliseconds: 0, timing: timing) == 250)
        #expect(LEDPattern.blink.nextChange(afterElapsedMilliseconds: 250, timing: timing) == 500)
        #expect(LEDPattern.blink.nextChange(afterElapsedMilliseconds: 1999, timing: timing) == 2000)
        #expect(LEDPattern.blink.isOn(atElapsedMilliseconds: -5, timing: timing), "before the start counts as 0")
    }

    @Test("fault: a double flash then a pause, repeating every 1260 ms")
    func fault() {
        let samples: [(Int64, Bool)] = [(0, true), (119, true), (120, false), (240, true), (359, true), (360, false),
                                        (1259, false), (1260, true), (1380, false), (1500, true)]
        for (ms, on) in samples {
            #expect(LEDPattern.fault.isOn(atElapsedMilliseconds: ms, timing: timing) == on, "at \(ms) ms")
        }
        var changes: [Int64] = [0]
        while changes.count < 6, let next = LEDPattern.fault.nextChange(afterElapsedMilliseconds: changes[changes.count - 1],
                                                                        timing: timing) {
            changes.append(next)
        }
        #expect(changes == [0, 120, 240, 360, 1260, 1380])
    }

    @Test("fault is distinguishable from blink over one second")
    func faultDiffersFromBlink() {
        let blink = stride(from: Int64(0), to: 1000, by: 10).map { LEDPattern.blink.isOn(atElapsedMilliseconds: $0, timing: timing) }
        let fault = stride(from: Int64(0), to: 1000, by: 10).map { LEDPattern.fault.isOn(atElapsedMilliseconds: $0, timing: timing) }
        #expect(blink != fault)
        #expect(fault.filter { $0 }.count < blink.filter { $0 }.count, "fault is mostly dark")
    }

    @Test("custom timing is honoured")
    func customTiming() {
        let fast = LEDTiming(blinkOnMilliseconds: 100, blinkOffMilliseconds: 300)
        #expect(LEDPattern.blink.isOn(atElapsedMilliseconds: 99, timing: fast))
        #expect(!LEDPattern.blink.isOn(atElapsedMilliseconds: 100, timing: fast))
        #expect(LEDPattern.blink.isOn(atElapsedMilliseconds: 400, timing: fast))
        #expect(LEDPattern.blink.nextChange(afterElapsedMilliseconds: 100, timing: fast) == 400)
    }
}
