import BoothClock
import BoothCore
import Foundation
import Synchronization
import Testing
@testable import BoothGPIO

/// The real libgpiod path on the build host, which has no GPIO chip. (Real edges
/// through gpio-sim are exercised in the qemu guest by the hardware issue.)
@Suite("libgpiod on the host")
struct GPIOHostTests {
    /// /dev/gpiochipN entries on this machine, counted independently of the shim.
    var hostChips: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
            .filter { $0.hasPrefix("gpiochip") && Int($0.dropFirst(8)) != nil }
    }

    @Test("a chip that does not exist throws GPIOError naming chip and line")
    func missingChip() throws {
        try #require(!hostChips.contains("gpiochip9"), "the host has a gpiochip9")
        let config = GPIOButton.Configuration(address: GPIOLineAddress(chip: "gpiochip9", line: "17"))
        let error = #expect(throws: GPIOError.self) {
            _ = try GPIOButton.start(config, log: { _, _ in }, handler: { _ in })
        }
        #expect(error?.kind == .chipNotFound)
        #expect(error?.chip == "gpiochip9")
        #expect(error?.line == "17")
        #expect(error?.errno == ENOENT)
        #expect(error?.call == "gpiod_chip_open")
        #expect(error?.message == "chip 'gpiochip9' not found (wanted for line 17)")
        #expect(error?.description.contains("errno \(ENOENT)") == true)
    }

    @Test("a chip label, path or number that matches nothing is not found either")
    func missingChipBySpec() {
        for spec in ["no-such-label", "/dev/gpiochip97", "98"] {
            let error = #expect(throws: GPIOError.self) {
                _ = try GPIOLineAddress(chip: spec, line: "GPIO17").resolve()
            }
            #expect(error?.kind == .chipNotFound, "\(spec)")
            #expect(error?.message.contains("'\(spec)'") == true)
            #expect(error?.message.contains("'GPIO17'") == true)
        }
    }

    @Test("an LED on a missing chip throws too")
    func missingLEDChip() {
        let error = #expect(throws: GPIOError.self) {
            _ = try GPIOLED.start(GPIOLED.Configuration(address: GPIOLineAddress(chip: "gpiochip9", line: "27")),
                                  log: { _, _ in })
        }
        #expect(error?.kind == .chipNotFound)
        #expect(error?.line == "27")
    }

    @Test("listing chips returns every /dev/gpiochip (none on the host) without error")
    func listChips() throws {
        let chips = try GPIOChipInfo.list()
        #expect(chips.map(\.path).sorted() == hostChips.map { "/dev/\($0)" }.sorted())
        for chip in chips where chip.error == nil {
            #expect(chip.lines.map(\.offset) == (0..<UInt32(chip.lines.count)).map { $0 })
        }
    }

    @Test("the shim was compiled against the installed libgpiod API")
    func apiVersion() throws {
        let header = try String(contentsOfFile: "/usr/include/gpiod.h", encoding: .utf8)
        #expect(GPIOChipInfo.libgpiodAPIVersion == (header.contains("GPIOD_LINE_BULK_MAX_LINES") ? 1 : 2))
    }

    @Test("operator messages name chip, label, line and holder")
    func messages() {
        let notFound = GPIOError(kind: .lineNotFound, call: "gpiod_chip_find_line", errno: ENOENT, chip: "gpiochip0",
                                 chipLabel: "pinctrl-bcm2711", line: "GPIO99")
        #expect(notFound.message == "line 'GPIO99' not found on chip gpiochip0 (pinctrl-bcm2711)")
        let busy = GPIOError(kind: .lineBusy(consumer: "other-app"), call: "gpiod_line_request", errno: EBUSY,
                             chip: "gpiochip0", chipLabel: "pinctrl-bcm2711", line: "17")
        #expect(busy.message == "line 17 on gpiochip0 is busy (used by 'other-app')")
        #expect(busy.description.hasPrefix(busy.message + " [gpiod_line_request: "))
    }

    @Test("line offsets and names are told apart")
    func lineAddress() {
        #expect(GPIOLineAddress(chip: "gpiochip0", line: "17").offset == 17)
        #expect(GPIOLineAddress(chip: "gpiochip0", line: "GPIO17").offset == nil)
        #expect(GPIOLineAddress(chip: "gpiochip0", line: "").offset == nil)
    }

    @Test("poll timeouts round up to whole milliseconds")
    func timeouts() {
        let now = MonotonicInstant(nanoseconds: 10_000_000_000)
        #expect(pollTimeout(until: nil, now: now) == -1)
        #expect(pollTimeout(until: now, now: now) == 0)
        #expect(pollTimeout(until: MonotonicInstant(nanoseconds: 10_000_000_001), now: now) == 1)
        #expect(pollTimeout(until: now.adding(milliseconds: 30), now: now) == 30)
        #expect(pollTimeout(until: now.adding(milliseconds: -5), now: now) == 0)
    }

    @Test("a stop request wakes a thread sleeping in poll, and stop waits for it")
    func threadControl() throws {
        let control = try ThreadControl()
        let woke = Mutex(false)
        try control.spawn(name: "test-wake") {
            if case .success(let revents) = Sys.poll([control.pipe.readFD], timeoutMilliseconds: 60_000) {
                woke.withLock { $0 = revents[0] != 0 }
            }
            control.finish()
        }
        control.stop()
        #expect(woke.withLock { $0 }, "stop() returned only after the thread saw the wake-up")
        control.stop()  // idempotent: returns at once
    }
}

@Test("a chip listing reads like gpioinfo")
func chipListingText() {
    let chip = GPIOChipInfo(path: "/dev/gpiochip0", name: "gpiochip0", label: "pinctrl-bcm2711", lines: [
        GPIOLineInfo(offset: 0, name: "", consumer: "", used: false, isOutput: false, activeLow: false),
        GPIOLineInfo(offset: 17, name: "GPIO17", consumer: "photobooth", used: true, isOutput: false, activeLow: true),
    ], error: nil)
    #expect(chip.description == """
        gpiochip0 [pinctrl-bcm2711] /dev/gpiochip0, 2 lines
          0 unnamed input
          17 "GPIO17" input used by "photobooth" active-low
        """)
}
