import BoothCore
import BoothInput
import Testing
@testable import BoothWiring

@Suite("Review keys of an input button")
struct ReviewKeyTests {
    private let space = InputKey(code: 57)  // KEY_SPACE
    private let all: (InputKey) -> Bool = { _ in true }

    @Test("print and skip keys act by code; the device must report them")
    func act() throws {
        let (actions, warnings) = InputButtonDevice.reviewActions([(.print, "KEY_P"), (.skip, "key_esc")], main: space, mainText: "KEY_SPACE",
                                                                  reports: all, device: "/dev/input/event3")
        #expect(actions == [try InputKey(parsing: "KEY_P").code: .print, 1: .skip])
        #expect(warnings.isEmpty)
        let (none, said) = InputButtonDevice.reviewActions([(.print, "KEY_P")], main: space, mainText: "KEY_SPACE",
                                                           reports: { $0.code != 25 }, device: "/dev/input/event3")
        #expect(none.isEmpty)
        #expect(said == ["button: button.print_key = KEY_P: /dev/input/event3 does not report it; no print key"])
    }

    @Test("a review key that is the main key under another name (BTN_A = BTN_SOUTH) is left off, so it cannot swallow the press")
    func aliases() throws {
        let south = try InputKey(parsing: "BTN_SOUTH")
        #expect(try InputKey(parsing: "BTN_A").code == south.code, "libevdev's alias, the case this guards")
        let (actions, warnings) = InputButtonDevice.reviewActions([(.print, "BTN_A"), (.skip, "BTN_B")], main: south, mainText: "BTN_SOUTH",
                                                                  reports: all, device: "pad")
        #expect(actions == [try InputKey(parsing: "BTN_EAST").code: .skip])
        #expect(warnings == ["button: button.print_key = BTN_A is the same key as button.input_key = BTN_SOUTH; no print key"])
        let (one, twice) = InputButtonDevice.reviewActions([(.print, "BTN_B"), (.skip, "BTN_EAST")], main: space, mainText: "KEY_SPACE",
                                                           reports: all, device: "pad")
        #expect(one.count == 1)
        #expect(twice == ["button: button.skip_key = BTN_EAST is the same key as button.print_key; no skip key"])
    }

    @Test("a tap or a name libevdev does not know is no review key, with the reason")
    func refused() throws {
        let (actions, warnings) = InputButtonDevice.reviewActions([(.print, "tap"), (.skip, "KEY_NOPE")], main: space, mainText: "KEY_SPACE",
                                                                  reports: all, device: "touch")
        #expect(actions.isEmpty)
        #expect(warnings.count == 2)
        #expect(warnings[0] == "button: button.print_key = tap: a tap cannot be a review key; no print key")
        #expect(warnings[1].hasPrefix("button: button.skip_key: 'KEY_NOPE' is not a key name"))
        let tap = try InputKey(parsing: "tap")
        let (_, same) = InputButtonDevice.reviewActions([(.print, "BTN_TOUCH")], main: tap, mainText: "tap", reports: all, device: "touch")
        #expect(same == ["button: button.print_key = BTN_TOUCH is the same key as button.input_key = tap; no print key"])
    }
}
