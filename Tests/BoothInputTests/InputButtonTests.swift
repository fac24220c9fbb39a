import BoothCore
import BoothButtons
import Testing
@testable import BoothInput

private func t(_ ms: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000).adding(milliseconds: ms) }
private let space = InputKey(code: 57)
private func key(_ value: Int32, at ms: Int64, code: UInt16 = 57) -> InputEvent {
    InputEvent(type: 1, code: code, value: value, at: t(ms))  // EV_KEY
}

@Suite("Input keys and events")
struct InputKeyTests {
    @Test("key names are libevdev's, any case; tap is BTN_TOUCH on a touch screen; a wrong name says what is allowed")
    func keyNames() throws {
        #expect(try InputKey(parsing: "KEY_SPACE").code == 57)
        #expect(try InputKey(parsing: "key_enter").code == 28)
        #expect(try InputKey(parsing: "BTN_LEFT").code == 0x110)
        let tap = try InputKey(parsing: "tap")
        #expect(tap.isTap && tap.code == 0x14a && tap.description == "tap")
        #expect(InputKey(code: 57).description == "KEY_SPACE")
        #expect(InputKey.name(of: 0x2e8) == "key 0x2e8", "a code libevdev has no name for")
        #expect(throws: InputError(.unknownKey, "'KEY_SPCAE' is not a key name; use tap or a Linux input key name such as KEY_SPACE, "
                                   + "KEY_ENTER or BTN_LEFT (see 'photoboothctl devices' for a device's keys)")) {
            try InputKey(parsing: "KEY_SPCAE")
        }
        #expect(throws: InputError.self) { try InputKey(parsing: "SYN_REPORT") }
    }

    @Test("the key's down and up are numbered edges; auto-repeat (value 2) and other keys and types are none")
    func edgeFilter() {
        var filter = KeyEdgeFilter(key: space)
        #expect(filter.edge(key(1, at: 0)) == ButtonEdge(active: true, at: t(0), sequence: 1))
        #expect(filter.edge(key(2, at: 250)) == nil)
        #expect(filter.edge(key(2, at: 283)) == nil)
        #expect(filter.edge(key(1, at: 300, code: 30)) == nil, "KEY_A")
        #expect(filter.edge(InputEvent(type: 0, code: 0, value: 0, at: t(300))) == nil, "SYN_REPORT")
        #expect(filter.edge(InputEvent(type: 3, code: 57, value: 1, at: t(300))) == nil, "EV_ABS with the same code")
        #expect(filter.edge(key(0, at: 400)) == ButtonEdge(active: false, at: t(400), sequence: 2))
        #expect(filter.repeats == 2)
        filter.dropped()
        #expect(filter.edge(key(1, at: 500)) == ButtonEdge(active: true, at: t(500), sequence: 4), "past a gap after SYN_DROPPED")
    }

    @Test("a held key with auto-repeat through the debouncer: one press, one long press, one release")
    func heldKeyIsOnePress() {
        var filter = KeyEdgeFilter(key: space)
        var debouncer = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500), lineActive: false, at: t(0))
        var events: [ButtonEvent] = []
        var stream = [key(1, at: 100)]
        for ms in stride(from: Int64(350), through: 2600, by: 33) { stream.append(key(2, at: ms)) }
        stream.append(key(0, at: 2600))
        for event in stream {
            if let edge = filter.edge(event) { events += debouncer.edge(edge) }
            // The thread polls at each deadline with the key's state then.
            while let due = debouncer.nextDeadline, due <= event.at { events += debouncer.poll(now: due, lineActive: debouncer.lineActive) }
        }
        events += debouncer.poll(now: t(2700), lineActive: false)
        #expect(events == [.press(id: 1, at: t(100)), .longPress(id: 1, at: t(1600)),
                           .release(id: 1, at: t(2600), heldMilliseconds: 2500)])
        #expect(filter.repeats == 69)
    }
}

@Suite("Input device selection")
struct InputDeviceSelectionTests {
    let keyboard = InputDeviceInfo(path: "/dev/input/event2", name: "AT Translated Set 2 keyboard", byID: [],
                                   keys: [1, 28, 30, 57], autoRepeats: true)
    let dome = InputDeviceInfo(path: "/dev/input/event5", name: "LinTx Dome Button", byID: ["usb-LinTx_Dome-event-kbd"],
                               bus: 3, vendor: 0x1234, product: 0x5678, keys: [28, 57], autoRepeats: true)
    let touch = InputDeviceInfo(path: "/dev/input/event7", name: "ILITEK Multi-Touch", keys: [0x14a], isTouchScreen: true)
    let power = InputDeviceInfo(path: "/dev/input/event0", name: "Power Button", keys: [116])
    var all: [InputDeviceInfo] { [power, keyboard, dome, touch] }

    @Test("the spec's words: any keyboard, any touch screen (any case), a path, else a name")
    func specs() {
        #expect(InputDeviceSpec("Any Keyboard") == .anyKeyboard)
        #expect(InputDeviceSpec("any touchscreen") == .anyTouchScreen)
        #expect(InputDeviceSpec("/dev/input/event5") == .path("/dev/input/event5"))
        #expect(InputDeviceSpec("LinTx Dome Button") == .named("LinTx Dome Button"))
    }

    @Test("by path, by-id name, kernel name (exact, then any case); any keyboard is the first that reports the key")
    func selection() throws {
        #expect(try InputDeviceSpec.path("/dev/input/by-id/usb-LinTx_Dome-event-kbd").select(among: all, key: space,
                                                                                            resolvedPath: "/dev/input/event5") == dome)
        #expect(try InputDeviceSpec.named("usb-LinTx_Dome-event-kbd").select(among: all, key: space) == dome)
        #expect(try InputDeviceSpec.named("lintx dome button").select(among: all, key: space) == dome)
        #expect(try InputDeviceSpec.anyKeyboard.select(among: all, key: space) == dome,
                "a plugged-in (USB) device before the built-in keyboard at event2")
        #expect(try InputDeviceSpec.anyKeyboard.select(among: [power, keyboard, touch], key: space) == keyboard,
                "without one, the first that reports the key (event0 has no KEY_SPACE)")
        // Two nodes of one name (a keyboard's keys and its media keys): the one that reports the key.
        let media = InputDeviceInfo(path: "/dev/input/event4", name: "LinTx Dome Button", bus: 3, keys: [113, 114, 115])
        #expect(try InputDeviceSpec.named("LinTx Dome Button").select(among: [media, dome], key: space) == dome)
        // BTN_TOUCH as a key: a touch screen reports it, but is never "any keyboard".
        #expect(throws: InputError.self) { try InputDeviceSpec.anyKeyboard.select(among: [touch], key: InputKey(code: 0x14a)) }
        #expect(try InputDeviceSpec.anyTouchScreen.select(among: all, key: try InputKey(parsing: "tap")) == touch)
    }

    @Test("no match lists what there is; a device without the key says which keys it has, or that it wants tap")
    func errors() throws {
        #expect(throws: InputError(.noDevice, "no input device 'Foot switch' (have /dev/input/event0 'Power Button' [keys], "
                                   + "/dev/input/event2 'AT Translated Set 2 keyboard' [keyboard], /dev/input/event5 'LinTx Dome Button' [keyboard], "
                                   + "/dev/input/event7 'ILITEK Multi-Touch' [touch screen]); use a /dev/input path, a /dev/input/by-id name, "
                                   + "a device name, any keyboard or any touch screen")) {
            try InputDeviceSpec.named("Foot switch").select(among: all, key: space)
        }
        #expect(throws: InputError(.noDevice, "no keyboard reports KEY_F13 (have /dev/input/event0 'Power Button' [keys])")) {
            try InputDeviceSpec.anyKeyboard.select(among: [power], key: InputKey(code: 183))
        }
        #expect(throws: InputError(.keyNotReported, "/dev/input/event0 'Power Button' does not report KEY_SPACE; it reports KEY_POWER")) {
            try InputDeviceSpec.named("Power Button").select(among: all, key: space)
        }
        #expect(throws: InputError(.keyNotReported, "/dev/input/event7 'ILITEK Multi-Touch' does not report KEY_SPACE; it is a touch screen: set button.input_key = tap")) {
            try InputDeviceSpec.path("/dev/input/event7").select(among: all, key: space)
        }
        #expect(throws: InputError(.keyNotReported, "/dev/input/event5 'LinTx Dome Button' is no touch screen (no direct multitouch axes): a tap needs one")) {
            try InputDeviceSpec.named("LinTx Dome Button").select(among: all, key: try InputKey(parsing: "tap"))
        }
        #expect(throws: InputError(.noDevice, "no touch screen found (no input devices: nothing in /dev/input, or none readable)")) {
            try InputDeviceSpec.anyTouchScreen.select(among: [], key: try InputKey(parsing: "tap"))
        }
    }

    @Test("a path that is not an evdev node is refused before it is opened (never a watchdog or a mouse node)")
    func notAnEventNode() {
        #expect(throws: InputError(.openFailed, "/dev/null is not an input event device; use a /dev/input/eventN node or a link to one "
                                   + "(/dev/input/by-id/…-event-kbd)")) {
            try InputDevices.find(.path("/dev/null"), key: space)
        }
    }

    @Test("a directory without event nodes lists nothing; a path that does not exist is an open error with advice")
    func machine() {
        let (devices, unreadable) = InputDevices.list(directory: "/nonexistent-input")
        #expect(devices.isEmpty && unreadable.isEmpty)
        #expect(throws: InputError.self) { try InputDevices.find(.path("/nonexistent-input/event9"), key: space) }
        do {
            _ = try InputDevices.find(.path("/nonexistent-input/event9"), key: space)
        } catch {
            #expect(error.kind == .openFailed)
            #expect(error.message.contains("is it plugged in?"), "\(error)")
        }
    }
}

@Suite("A flooded key device (SYN_DROPPED)")
struct KeyFloodTests {
    /// The key toggled every 0.1 ms from `from` to `to` (bounce noise far shorter than the debounce),
    /// through the filter; the kernel's buffer overflows at `dropAt`: the events from there are
    /// never read, libevdev's resync reads the key `downAtResync` at `resyncAt`.
    private func flood(_ debouncer: inout ButtonDebouncer, _ filter: inout KeyEdgeFilter, from: Int64, dropAt: Int64,
                       resyncAt: Int64, downAtResync: Bool) -> [ButtonEvent] {
        var events: [ButtonEvent] = []
        var down = true
        var at = t(from)
        while at <= t(dropAt) {
            if let edge = filter.edge(InputEvent(type: 1, code: 57, value: down ? 1 : 0, at: at)) { events += debouncer.edge(edge) }
            down.toggle()
            at = MonotonicInstant(nanoseconds: at.nanoseconds + 100_000)
        }
        filter.dropped()
        events += debouncer.resync(now: t(resyncAt), lineActive: downAtResync)
        return events
    }

    private func presses(_ events: [ButtonEvent]) -> [ButtonEvent] { events.filter { if case .press = $0 { true } else { false } } }

    @Test("a flood in idle whose resync reads the key down, then up: no press")
    func floodInIdle() {
        var filter = KeyEdgeFilter(key: space)
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500), lineActive: false, at: t(0))
        // The last edge read before the drop is a key-down at 110 ms; the resync 60 ms later reads it down.
        var events = flood(&d, &filter, from: 100, dropAt: 110, resyncAt: 170, downAtResync: true)
        #expect(presses(events).isEmpty, "the key read down at the resync has been stable for no time: \(events)")
        // The flood goes on after the resync and ends with the key up: still no press.
        var down = false
        for us in stride(from: Int64(170_100), to: 180_000, by: 100) {
            if let edge = filter.edge(InputEvent(type: 1, code: 57, value: down ? 1 : 0, at: MonotonicInstant(nanoseconds: t(0).nanoseconds + UInt64(us) * 1000))) {
                events += d.edge(edge)
            }
            down.toggle()
        }
        while let due = d.nextDeadline, due <= t(1000) { events += d.poll(now: due, lineActive: false) }
        #expect(presses(events).isEmpty, "\(events.suffix(4))")
        #expect(!d.isHeld)
    }

    @Test("a press after a resync needs a stable period measured from the resync")
    func stableFromResync() {
        var filter = KeyEdgeFilter(key: space)
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500), lineActive: false, at: t(0))
        _ = flood(&d, &filter, from: 100, dropAt: 110, resyncAt: 170, downAtResync: true)
        #expect(d.nextDeadline == t(200), "debounce from the resync at 170 ms")
        #expect(d.poll(now: t(199), lineActive: true).isEmpty)
        // Really held (the guest holds the key): a press, timed from the resync, and its long press 1500 ms later.
        #expect(d.poll(now: t(200), lineActive: true) == [.press(id: 1, at: t(170))])
        #expect(d.poll(now: t(1670), lineActive: true) == [.longPress(id: 1, at: t(1670))])
    }

    @Test("a flood while a press is held: the hold goes on, no second press")
    func floodWhileHeld() {
        var filter = KeyEdgeFilter(key: space)
        var d = ButtonDebouncer(timing: ButtonTiming(debounceMilliseconds: 30, longPressMilliseconds: 1500), lineActive: false, at: t(0))
        _ = d.edge(filter.edge(key(1, at: 0))!)
        #expect(d.poll(now: t(30), lineActive: true) == [.press(id: 1, at: t(0))])
        // Up at 100 (pending), a flood from 105: the resync reads the key down 60 ms after the last edge read.
        var events = d.edge(filter.edge(key(0, at: 100))!)
        events += flood(&d, &filter, from: 105, dropAt: 115, resyncAt: 175, downAtResync: true)
        while let due = d.nextDeadline, due <= t(400) { events += d.poll(now: due, lineActive: true) }
        #expect(presses(events).isEmpty, "\(events.suffix(4))")
        #expect(d.heldPressID == 1)
    }
}

@Suite("SYN_DROPPED warnings, rate-limited")
struct DroppedEventsLogTests {
    @Test("the first drop is told at once; the next ones wait for the interval and are counted")
    func rateLimited() {
        var log = DroppedEventsLog()
        let interval = DroppedEventsLog.intervalMilliseconds
        #expect(log.dropped(at: t(0)) == 1)
        #expect(log.nextDeadline == nil, "nothing held back")
        // 26 more drops within the next 2 s (the flood that logged 27 lines): held back.
        for ms in stride(from: Int64(75), through: 2000, by: 75) { #expect(log.dropped(at: t(ms)) == nil) }
        #expect(log.untold == 26)
        #expect(log.nextDeadline == t(interval))
        #expect(log.flush(at: t(interval - 1)) == nil)
        #expect(log.flush(at: t(interval)) == 26, "told when due, though no drop follows")
        #expect(log.flush(at: t(2 * interval)) == nil, "nothing left to tell")
        #expect(log.dropped(at: t(interval + 1)) == nil, "within the interval of the last line")
        #expect(log.dropped(at: t(2 * interval)) == 2)
        #expect(log.total == 29)
    }
}
