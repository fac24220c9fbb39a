import BoothClock
import BoothSystem
import CEvdev
import FoundationEssentials
import Glibc

/// One of the kernel's input devices as libevdev describes it, for selection and `photoboothctl devices`.
public struct InputDeviceInfo: Sendable, Hashable {
    /// The event node: `/dev/input/event3`.
    public var path: String
    /// The device's name as the kernel reports it (`EVIOCGNAME`): `"QEMU QEMU USB Keyboard"`.
    public var name: String
    /// Its stable names in `/dev/input/by-id` (udev's, e.g. `usb-QEMU_QEMU_USB_Keyboard_68284-0000:00:04.0-1-event-kbd`).
    public var byID: [String]
    /// Bus, vendor and product ids (`EVIOCGID`): bus 3 is USB.
    public var bus: UInt16, vendor: UInt16, product: UInt16
    /// The `EV_KEY` codes it reports, ascending.
    public var keys: [UInt16]
    /// A touch screen: direct input (`INPUT_PROP_DIRECT`) with multitouch positions
    /// (`ABS_MT_POSITION_X`/`_Y`). A touchpad (not direct) or a tablet pointer with only `ABS_X` is not one.
    public var isTouchScreen: Bool
    /// Reports key events with kernel auto-repeat (`EV_REP`): a keyboard.
    public var autoRepeats: Bool

    public init(path: String, name: String, byID: [String] = [], bus: UInt16 = 0, vendor: UInt16 = 0, product: UInt16 = 0,
                keys: [UInt16], isTouchScreen: Bool = false, autoRepeats: Bool = false) {
        self.path = path
        self.name = name
        self.byID = byID
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.keys = keys
        self.isTouchScreen = isTouchScreen
        self.autoRepeats = autoRepeats
    }

    /// On USB (bus 3) or Bluetooth (bus 5): a device plugged in, not built in.
    public var isPluggedIn: Bool { bus == 3 || bus == 5 }

    /// True when it reports `key` (a tap: when it is a touch screen).
    public func reports(_ key: InputKey) -> Bool {
        key.isTap ? isTouchScreen : keys.contains(key.code)
    }

    /// `"/dev/input/event3 'QEMU QEMU USB Keyboard'"`.
    public var describe: String { "\(path) '\(name)'" }

    /// `"keyboard"`, `"touch screen"`, `"keys"` (no repeat: a button box, a mouse), `"no keys"`.
    public var kind: String {
        if isTouchScreen { return "touch screen" }
        if keys.isEmpty { return "no keys" }
        return autoRepeats ? "keyboard" : "keys"
    }
}

/// The major number of a device number (`major(3)`, a macro Glibc's module does not export).
func major(_ dev: dev_t) -> UInt32 { UInt32(truncatingIfNeeded: ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)) }

/// Which device `button.input_device` names.
public enum InputDeviceSpec: Sendable, Hashable, CustomStringConvertible {
    /// A node or a link to one: `/dev/input/event3`, `/dev/input/by-id/usb-…-event-kbd`.
    case path(String)
    /// A name in `/dev/input/by-id`, or the device's name as the kernel reports it (exact, then any letter
    /// case); among nodes of one name, the one that reports the key.
    case named(String)
    /// The first device (by event number) that reports the key and is no touch screen, a plugged-in one
    /// (USB, Bluetooth) before a built-in keyboard (a laptop's, the PC's i8042).
    case anyKeyboard
    /// The first touch screen.
    case anyTouchScreen

    /// Reads `button.input_device`: `any keyboard`, `any touch screen` (any letter case), a path
    /// (starting with `/`), else a name.
    public init(_ text: String) {
        switch text.lowercased() {
        case "any keyboard": self = .anyKeyboard
        case "any touch screen", "any touchscreen": self = .anyTouchScreen
        default: self = text.hasPrefix("/") ? .path(text) : .named(text)
        }
    }

    public var description: String {
        switch self {
        case .path(let p): p
        case .named(let n): "'\(n)'"
        case .anyKeyboard: "any keyboard"
        case .anyTouchScreen: "any touch screen"
        }
    }

    /// The device this spec picks among `devices` for `key`. Pure: `devices` as ``InputDevices/list()``
    /// gives them (a `.path` must already be resolved to its event node: `resolvedPath`).
    /// - Throws: ``InputError`` `.noDevice` listing what there is, or `.keyNotReported` when the named
    ///   device does not report the key (or is no touch screen for a tap).
    public func select(among devices: [InputDeviceInfo], key: InputKey, resolvedPath: String? = nil) throws(InputError) -> InputDeviceInfo {
        let found: InputDeviceInfo?
        switch self {
        case .path(let p):
            let node = resolvedPath ?? p
            found = devices.first { $0.path == node }
        case .named(let n):
            // A keyboard or foot switch often has several nodes of one name (keys, media keys): the one
            // that reports the key, else the first (whose error says which keys it has).
            let byID = devices.filter { $0.byID.contains(n) }, exact = devices.filter { $0.name == n }
            let named = !byID.isEmpty ? byID : !exact.isEmpty ? exact : devices.filter { $0.name.lowercased() == n.lowercased() }
            found = named.first { $0.reports(key) } ?? named.first
        case .anyKeyboard:
            guard !key.isTap else {
                throw InputError(.keyNotReported, "button.input_key = tap needs a touch screen: set button.input_device = any touch screen (or name one)")
            }
            // A plugged-in button (USB, Bluetooth) before a built-in keyboard (a laptop's, i8042 at event0).
            let candidates = devices.filter { !$0.isTouchScreen && $0.reports(key) }
            found = candidates.first { $0.isPluggedIn } ?? candidates.first
            if found == nil {
                throw InputError(.noDevice, "no keyboard reports \(key)" + InputDeviceSpec.present(devices))
            }
        case .anyTouchScreen:
            found = devices.first { $0.isTouchScreen }
            if found == nil { throw InputError(.noDevice, "no touch screen found" + InputDeviceSpec.present(devices)) }
        }
        guard let device = found else {
            throw InputError(.noDevice, "no input device \(self)" + InputDeviceSpec.present(devices)
                             + "; use a /dev/input path, a /dev/input/by-id name, a device name, any keyboard or any touch screen")
        }
        guard device.reports(key) else {
            if key.isTap {
                throw InputError(.keyNotReported, "\(device.describe) is no touch screen (no direct multitouch axes): a tap needs one")
            }
            let some = device.keys.prefix(6).map { InputKey.name(of: $0) }
            throw InputError(.keyNotReported, "\(device.describe) does not report \(key)"
                             + (device.isTouchScreen ? "; it is a touch screen: set button.input_key = tap" :
                                some.isEmpty ? "; it reports no keys" : "; it reports \(some.joined(separator: ", "))\(device.keys.count > 6 ? ", …" : "")"))
        }
        return device
    }

    /// `": have /dev/input/event0 'Power Button', …"` or `": no input devices (is /dev/input there?)"`.
    static func present(_ devices: [InputDeviceInfo]) -> String {
        if devices.isEmpty { return " (no input devices: nothing in /dev/input, or none readable)" }
        return " (have " + devices.prefix(8).map { "\($0.describe) [\($0.kind)]" }.joined(separator: ", ")
            + (devices.count > 8 ? ", …" : "") + ")"
    }
}

/// The machine's input devices.
public enum InputDevices {
    /// Where the kernel's event nodes are.
    public static let directory = "/dev/input"

    /// Every `/dev/input/eventN` that opens, by event number, with its `by-id` names. A node that
    /// does not open (permission) is left out; `unreadable` says which.
    /// Wraps open(2), `libevdev_new_from_fd` and the `libevdev_get_*`/`libevdev_has_*` queries.
    public static func list(directory: String = directory) -> (devices: [InputDeviceInfo], unreadable: [String]) {
        let names = entries(directory).filter { $0.hasPrefix("event") }
            .sorted { (Int($0.dropFirst(5)) ?? .max, $0) < (Int($1.dropFirst(5)) ?? .max, $1) }
        var links: [String: [String]] = [:]
        for link in entries(directory + "/by-id").sorted() {
            if let node = realPath(directory + "/by-id/" + link) { links[node, default: []].append(link) }
        }
        var devices: [InputDeviceInfo] = [], unreadable: [String] = []
        for name in names {
            let path = directory + "/" + name
            switch describe(path) {
            case .success(var info):
                info.byID = links[path] ?? []
                devices.append(info)
            case .failure: unreadable.append(path)
            }
        }
        return (devices, unreadable)
    }

    /// Opens `path` read-only, reads what libevdev says of it, closes it.
    public static func describe(_ path: String) -> Result<InputDeviceInfo, InputError> {
        let fd = retryingEINTR { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        if fd < 0 { return .failure(.opening(path, errno: errno)) }
        defer { close(fd) }
        var dev: OpaquePointer?
        let rc = libevdev_new_from_fd(fd, &dev)
        guard rc == 0, let dev else { return .failure(InputError(.openFailed, "\(path): not an input device (libevdev_new_from_fd: \(InputError.errnoName(-rc)))")) }
        defer { libevdev_free(dev) }
        return .success(info(dev, path: path))
    }

    /// What libevdev says of an open device.
    static func info(_ dev: OpaquePointer, path: String) -> InputDeviceInfo {
        var keys: [UInt16] = []
        if libevdev_has_event_type(dev, UInt32(EV_KEY)) != 0 {
            for code in 0...UInt32(KEY_MAX) where libevdev_has_event_code(dev, UInt32(EV_KEY), code) != 0 {
                keys.append(UInt16(code))
            }
        }
        let touch = libevdev_has_property(dev, UInt32(INPUT_PROP_DIRECT)) != 0
            && libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(ABS_MT_POSITION_X)) != 0
            && libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(ABS_MT_POSITION_Y)) != 0
        return InputDeviceInfo(path: path, name: libevdev_get_name(dev).map { String(cString: $0) } ?? "",
                               bus: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(dev)),
                               vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(dev)),
                               product: UInt16(truncatingIfNeeded: libevdev_get_id_product(dev)),
                               keys: keys, isTouchScreen: touch,
                               autoRepeats: libevdev_has_event_type(dev, UInt32(EV_REP)) != 0)
    }

    /// Finds the device `spec` names that reports `key`: lists the devices and selects.
    /// - Throws: ``InputError`` as ``InputDeviceSpec/select(among:key:resolvedPath:)``; for a path
    ///   that does not open, `.openFailed` with the errno.
    public static func find(_ spec: InputDeviceSpec, key: InputKey, directory: String = directory) throws(InputError) -> InputDeviceInfo {
        var resolved: String?
        if case .path(let p) = spec {
            guard let node = realPath(p) else { throw InputError.opening(p, errno: errno) }
            // Only an evdev node (char major 13, /dev/input/eventN): never open another device (a watchdog).
            var st = stat()
            guard stat(node, &st) == 0, (st.st_mode & S_IFMT) == S_IFCHR, major(st.st_rdev) == 13,
                  node.split(separator: "/").last?.hasPrefix("event") == true else {
                throw InputError(.openFailed, "\(p) is not an input event device; use a /dev/input/eventN node or a link to one "
                                 + "(/dev/input/by-id/…-event-kbd)")
            }
            resolved = node
            if case .failure(let error) = describe(node) { throw error }
        }
        let (devices, unreadable) = list(directory: directory)
        do {
            return try spec.select(among: devices, key: key, resolvedPath: resolved)
        } catch {
            guard !unreadable.isEmpty, error.kind == .noDevice else { throw error }
            throw InputError(.noDevice, error.message + "; not readable: " + unreadable.prefix(4).joined(separator: ", ")
                             + " (the booth's user needs the input group)")
        }
    }

    static func entries(_ directory: String) -> [String] { listDirectory(directory) }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
