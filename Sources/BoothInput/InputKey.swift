import CEvdev

/// What presses: a key or button code of the kernel's `EV_KEY` events (`KEY_SPACE`, `KEY_ENTER`,
/// `BTN_LEFT`), or a tap on a touch screen (`BTN_TOUCH`, which a multitouch screen reports while any
/// finger is down). From `button.input_key`.
public struct InputKey: Sendable, Hashable, CustomStringConvertible {
    /// The `EV_KEY` code (linux/input-event-codes.h): `KEY_SPACE` is 57, `BTN_TOUCH` 0x14a.
    public let code: UInt16
    /// True for `tap`: the device must be a touch screen, and `code` is `BTN_TOUCH`.
    public let isTap: Bool

    /// `"KEY_SPACE"`, `"tap"`.
    public var description: String { isTap ? "tap" : InputKey.name(of: code) }

    /// Reads `button.input_key`: `tap`, or a name libevdev knows for an `EV_KEY` code (any letter
    /// case; `KEY_` or `BTN_` first). Wraps `libevdev_event_code_from_name`.
    /// - Throws: ``InputError`` (`.unknownKey`) naming the text and what is allowed.
    public init(parsing text: String) throws(InputError) {
        if text.lowercased() == "tap" {
            code = UInt16(BTN_TOUCH)
            isTap = true
            return
        }
        let upper = text.uppercased()
        let found = upper.hasPrefix("KEY_") || upper.hasPrefix("BTN_") ? libevdev_event_code_from_name(UInt32(EV_KEY), upper) : -1
        guard found >= 0 else { throw InputError(.unknownKey, "'\(text)' is not a key name; use tap or a Linux input key name such as KEY_SPACE, KEY_ENTER or BTN_LEFT (see 'photoboothctl devices' for a device's keys)") }
        code = UInt16(found)
        isTap = false
    }

    /// The key `code` itself (not a tap).
    public init(code: UInt16) {
        self.code = code
        isTap = false
    }

    /// libevdev's name for an `EV_KEY` code (`"KEY_SPACE"`), or `"key 0x2a8"` for one it has no name for.
    /// Wraps `libevdev_event_code_get_name`.
    public static func name(of code: UInt16) -> String {
        guard let name = libevdev_event_code_get_name(UInt32(EV_KEY), UInt32(code)) else {
            return "key 0x" + String(code, radix: 16)
        }
        return String(cString: name)
    }
}
