import BoothCore
import CGPhoto2
import Glibc
import Synchronization

/// A camera libgphoto2 lists (`gp_abilities_list_detect`): its model and port.
public struct GPhoto2CameraInfo: Sendable, Hashable, CustomStringConvertible {
    /// The model as libgphoto2 names it (`"Nikon DSC D750"`, `"Canon EOS 5D Mark IV"`).
    public var model: String
    /// The port (`"usb:001,004"`: bus 1, device 4).
    public var port: String

    public init(model: String, port: String) {
        self.model = model
        self.port = port
    }

    /// `"Nikon DSC D750 at usb:001,004"`.
    public var description: String { "\(model) at \(port)" }

    /// True for libgphoto2's catch-all entry for a device of the USB still-image class that it has no
    /// model for: a new body, or a phone in PTP mode (left charging on the booth's computer).
    public var isGenericPTPClass: Bool { model == "USB PTP Class Camera" }

    /// The USB device node of a `usb:BBB,DDD` port (`/dev/bus/usb/001/004`); nil for other ports.
    public var usbDeviceNode: String? {
        guard port.hasPrefix("usb:") else { return nil }
        let parts = port.dropFirst(4).split(separator: ",")
        guard parts.count == 2, parts.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isNumber) }) else { return nil }
        return "/dev/bus/usb/\(parts[0])/\(parts[1])"
    }

    /// True when `camera.device` = `selector` names this camera: empty or `auto` names any; else the
    /// port exactly (`usb:001,004`) or a part of the model name, ignoring case (`D750`).
    public func matches(_ selector: String) -> Bool {
        let s = selector.trimmingSpaces()
        if s.isEmpty || s == "auto" { return true }
        if s.hasPrefix("usb:") { return s == port }
        return model.lowercased().contains(s.lowercased())
    }
}

/// What `photoboothctl devices` says of an open gphoto2 camera.
public struct GPhoto2CameraDetails: Sendable, Hashable {
    /// The battery level in percent (the `batterylevel` config value, `"50%"`); nil when the body reports none.
    public var batteryPercent: Int?
    /// Free space on the card, bytes (`gp_camera_get_storageinfo`, the first storage with a free figure); nil when unknown.
    public var freeBytes: Int64?
    /// The capture target as the camera names it (`"Internal RAM"`, `"Memory card"`) and the names it allows.
    public var captureTarget: String?
    public var captureTargets: [String] = []
    /// The image format (`imagequality`/`imageformat`: `"JPEG Fine"`, `"NEF (Raw)"`), where the body has one.
    public var imageFormat: String?

    public init() {}
}

/// The `camera.capture_target` setting as a camera names it: libgphoto2's `capturetarget` choice.
public enum GPhoto2CaptureTarget {
    /// The choice of `choices` for `setting` (`ram`: the one naming RAM or SDRAM; `card`: the one naming a
    /// card): nil when the camera offers none such.
    public static func choice(for setting: CaptureTargetSetting, among choices: [String]) -> String? {
        let lowered = choices.map { $0.lowercased() }
        let wanted: (String) -> Bool
        switch setting {
        case .ram: wanted = { $0.contains("ram") }
        case .card: wanted = { $0.contains("card") }
        }
        return lowered.firstIndex(where: wanted).map { choices[$0] }
    }
}

/// One camera through libgphoto2's C API (`gp_camera_*`), confined to the thread that made it: every call
/// blocks on USB (a live-view frame ≈ 10–50 ms, a capture with autofocus seconds, a 25 MB download about
/// a second on USB 2), so only a thread the booth owns makes them, never the cooperative pool.
///
/// Errors are ``GPhoto2Error``s carrying the driver's own last words (the context's error callback).
public final class GPhoto2Camera {
    private let context: OpaquePointer
    private var camera: UnsafeMutablePointer<Camera>?
    /// The last error text the driver gave through the context (set by the callback, read after a call).
    private let messages = DriverMessages()
    /// The camera open, while one is.
    public private(set) var info: GPhoto2CameraInfo?
    /// The camera the last ``open(_:)`` chose, opened or not (a failed claim names its USB node).
    public private(set) var lastChosen: GPhoto2CameraInfo?

    /// Makes a libgphoto2 context (`gp_context_new`) whose error and message texts are collected.
    /// Returns nil when libgphoto2 cannot make one (out of memory).
    public init?() {
        GPhoto2ErrorLog.install()
        guard let context = gp_context_new() else { return nil }
        self.context = context
        let box = Unmanaged.passUnretained(messages).toOpaque()
        gp_context_set_error_func(context, { _, text, data in
            guard let text, let data else { return }
            Unmanaged<DriverMessages>.fromOpaque(data).takeUnretainedValue().last = String(cString: text)
        }, box)
    }

    deinit {
        close()
        gp_context_unref(context)
    }

    /// The cameras attached (`gp_abilities_list_load`, `gp_port_info_list_load`, `gp_abilities_list_detect`),
    /// in libgphoto2's order. libgphoto2 reads the port and camera drivers from `IOLIBS` and `CAMLIBS`
    /// when set (the tests' virtual camera), else from where Debian installs them.
    /// - Throws: ``GPhoto2Error`` when the driver lists cannot be loaded.
    public func detect() throws(GPhoto2Error) -> [GPhoto2CameraInfo] {
        try detectAll().cameras
    }

    /// ``detect()``, and the devices libgphoto2 lists that take no still (`others`: an MTP phone or media
    /// player, a camera in MTP or PC mode), for the messages that say why no camera was found.
    public func detectAll() throws(GPhoto2Error) -> (cameras: [GPhoto2CameraInfo], others: [GPhoto2CameraInfo]) {
        let lists = try loadLists()
        defer { lists.free() }
        return try detectWith(lists)
    }

    /// Opens the first camera `selector` names (``GPhoto2CameraInfo/matches(_:)``): sets its abilities and
    /// port, then `gp_camera_init` (which claims the USB interface).
    /// - Throws: ``GPhoto2Error``: `gp_abilities_list_detect` with `GP_ERROR_MODEL_NOT_FOUND` when none is
    ///   attached (or none matches), `gp_camera_init` with `GP_ERROR_IO_USB_CLAIM` when another process holds it.
    @discardableResult
    public func open(_ selector: String) throws(GPhoto2Error) -> GPhoto2CameraInfo {
        close()
        let lists = try loadLists()
        defer { lists.free() }
        let (attached, others) = try detectWith(lists)
        guard let chosen = attached.first(where: { $0.matches(selector) }) else {
            var listed = attached.isEmpty ? "none attached" : "attached: " + attached.map(\.description).joined(separator: ", ")
            if !others.isEmpty {
                listed += "; libgphoto2 also lists \(others.map(\.description).joined(separator: ", ")), which takes no stills "
                    + "(a phone or media player, or a camera in MTP or PC mode: set its USB mode to PTP or PC remote)"
            }
            throw GPhoto2Error(call: "gp_abilities_list_detect", code: -105, camera: selector.isEmpty ? "any camera" : selector,
                               driverMessage: "no camera matches camera.device (\(listed))")
        }
        lastChosen = chosen
        var cam: UnsafeMutablePointer<Camera>?
        try check(gp_camera_new(&cam), "gp_camera_new", camera: chosen.description)
        do {
            var abilities = CameraAbilities()
            let model = gp_abilities_list_lookup_model(lists.abilities, chosen.model)
            try check(model, "gp_abilities_list_lookup_model", camera: chosen.description)
            try check(gp_abilities_list_get_abilities(lists.abilities, model, &abilities), "gp_abilities_list_get_abilities", camera: chosen.description)
            try check(gp_camera_set_abilities(cam, abilities), "gp_camera_set_abilities", camera: chosen.description)
            let port = gp_port_info_list_lookup_path(lists.ports, chosen.port)
            try check(port, "gp_port_info_list_lookup_path", camera: chosen.description)
            var portInfo: GPPortInfo?
            try check(gp_port_info_list_get_info(lists.ports, port, &portInfo), "gp_port_info_list_get_info", camera: chosen.description)
            try check(gp_camera_set_port_info(cam, portInfo), "gp_camera_set_port_info", camera: chosen.description)
            try check(gp_camera_init(cam, context), "gp_camera_init", camera: chosen.description)
        } catch {
            gp_camera_unref(cam)
            throw error
        }
        camera = cam
        info = chosen
        return chosen
    }

    /// Releases the camera (`gp_camera_exit`, which releases the USB interface). Safe to call more than once.
    public func close() {
        guard let camera else { return }
        gp_camera_exit(camera, context)
        gp_camera_unref(camera)
        self.camera = nil
        info = nil
    }

    /// One live-view frame (`gp_camera_capture_preview`): the JPEG bytes as the camera sent them (a body
    /// starts live view on the first call, and again after a still where it stops it).
    /// - Throws: ``GPhoto2Error`` (`GP_ERROR_NOT_SUPPORTED` for a body without live view).
    public func preview() throws(GPhoto2Error) -> [UInt8] {
        let cam = try opened("gp_camera_capture_preview")
        var file: OpaquePointer?
        try check(gp_file_new(&file), "gp_file_new", camera: name)
        defer { gp_file_unref(file) }
        try check(gp_camera_capture_preview(cam, file, context), "gp_camera_capture_preview", camera: name)
        return try bytes(of: file, "gp_file_get_data_and_size")
    }

    /// Releases the shutter and waits for the file (`gp_camera_capture`, `GP_CAPTURE_IMAGE`): the file the
    /// driver reports (with RAW+JPEG, the last of the pair).
    /// - Throws: ``GPhoto2Error`` (a card full, a failed focus, the camera gone).
    public func capture() throws(GPhoto2Error) -> GPhoto2FilePath {
        let cam = try opened("gp_camera_capture")
        var path = CameraFilePath()
        try check(gp_camera_capture(cam, GP_CAPTURE_IMAGE, &path, context), "gp_camera_capture", camera: name)
        return GPhoto2FilePath(folder: String(cArray: path.folder), name: String(cArray: path.name))
    }

    /// Releases the shutter (`gp_camera_trigger_capture`) and returns once the camera took the order; the
    /// file comes as a `GP_EVENT_FILE_ADDED` (``waitForEvent(timeoutMilliseconds:)``).
    /// - Throws: ``GPhoto2Error`` (a failed focus, a full card, the camera gone).
    public func trigger() throws(GPhoto2Error) {
        let cam = try opened("gp_camera_trigger_capture")
        try check(gp_camera_trigger_capture(cam, context), "gp_camera_trigger_capture", camera: name)
    }

    /// One event (`gp_camera_wait_for_event`), waiting up to `timeoutMilliseconds` (ms).
    /// - Throws: ``GPhoto2Error`` (the camera gone).
    public func waitForEvent(timeoutMilliseconds: Int) throws(GPhoto2Error) -> GPhoto2Event {
        let cam = try opened("gp_camera_wait_for_event")
        var type = GP_EVENT_UNKNOWN
        var data: UnsafeMutableRawPointer?
        try check(gp_camera_wait_for_event(cam, Int32(clamping: timeoutMilliseconds), &type, &data, context), "gp_camera_wait_for_event", camera: name)
        defer { free(data) }
        switch type {
        case GP_EVENT_TIMEOUT: return .timeout
        case GP_EVENT_CAPTURE_COMPLETE: return .captureComplete
        case GP_EVENT_FILE_ADDED, GP_EVENT_FOLDER_ADDED:
            guard let p = data?.assumingMemoryBound(to: CameraFilePath.self).pointee else { return .other("file added without a path") }
            let path = GPhoto2FilePath(folder: String(cArray: p.folder), name: String(cArray: p.name))
            return type == GP_EVENT_FILE_ADDED ? .fileAdded(path) : .folderAdded(path)
        default:
            if type == GP_EVENT_UNKNOWN, let data { return .other(String(cString: data.assumingMemoryBound(to: CChar.self))) }
            return .other("event \(type.rawValue)")
        }
    }

    /// The file's bytes (`gp_camera_file_get`, `GP_FILE_TYPE_NORMAL`).
    public func download(_ path: GPhoto2FilePath) throws(GPhoto2Error) -> [UInt8] {
        let cam = try opened("gp_camera_file_get")
        var file: OpaquePointer?
        try check(gp_file_new(&file), "gp_file_new", camera: name)
        defer { gp_file_unref(file) }
        try check(gp_camera_file_get(cam, path.folder, path.name, GP_FILE_TYPE_NORMAL, file, context), "gp_camera_file_get", camera: name)
        return try bytes(of: file, "gp_file_get_data_and_size")
    }

    /// Deletes the file on the camera (`gp_camera_file_delete`).
    public func delete(_ path: GPhoto2FilePath) throws(GPhoto2Error) {
        let cam = try opened("gp_camera_file_delete")
        try check(gp_camera_file_delete(cam, path.folder, path.name, context), "gp_camera_file_delete", camera: name)
    }

    /// The text value of config widget `key` (`gp_camera_get_single_config`: `"batterylevel"` → `"50%"`)
    /// and, for a radio or menu widget, its choices; nil when the body has no such widget.
    public func config(_ key: String) -> (value: String, choices: [String])? {
        defer { forgetDriverWords() }
        guard let cam = camera else { return nil }
        var widget: OpaquePointer?
        guard gp_camera_get_single_config(cam, key, &widget, context) >= 0, let widget else { return nil }
        defer { gp_widget_free(widget) }
        var type = GP_WIDGET_TEXT
        guard gp_widget_get_type(widget, &type) >= 0 else { return nil }
        var choices: [String] = []
        if type == GP_WIDGET_RADIO || type == GP_WIDGET_MENU {
            for i in 0..<max(0, gp_widget_count_choices(widget)) {
                var choice: UnsafePointer<CChar>?
                if gp_widget_get_choice(widget, i, &choice) >= 0, let choice { choices.append(String(cString: choice)) }
            }
        }
        switch type {
        case GP_WIDGET_TEXT, GP_WIDGET_RADIO, GP_WIDGET_MENU:
            var value: UnsafePointer<CChar>?
            guard withUnsafeMutablePointer(to: &value, { gp_widget_get_value(widget, $0) }) >= 0, let value else { return nil }
            return (String(cString: value), choices)
        default:
            return nil
        }
    }

    /// Sets config widget `key` to `value` (`gp_widget_set_value`, `gp_camera_set_single_config`).
    /// - Throws: ``GPhoto2Error`` when the body has no such widget or refuses the value.
    public func setConfig(_ key: String, _ value: String) throws(GPhoto2Error) {
        try setWidget(key) { widget throws(GPhoto2Error) in
            try check(value.withCString { gp_widget_set_value(widget, $0) }, "gp_widget_set_value(\(key))", camera: name)
        }
    }

    /// Gets widget `key` (`gp_camera_get_single_config`), lets `set` give it its value, and sends it back
    /// (`gp_camera_set_single_config`); the widget is freed either way.
    private func setWidget(_ key: String, _ set: (OpaquePointer?) throws(GPhoto2Error) -> Void) throws(GPhoto2Error) {
        let cam = try opened("gp_camera_set_single_config")
        var widget: OpaquePointer?
        try check(gp_camera_get_single_config(cam, key, &widget, context), "gp_camera_get_single_config(\(key))", camera: name)
        defer { gp_widget_free(widget) }
        try set(widget)
        try check(gp_camera_set_single_config(cam, key, widget, context), "gp_camera_set_single_config(\(key))", camera: name)
    }

    /// True when the open camera has config widget `key` (`gp_camera_get_single_config` answers it), and when
    /// `toggle`, of type `GP_WIDGET_TOGGLE`.
    public func hasConfig(_ key: String, toggle: Bool = false) -> Bool {
        defer { forgetDriverWords() }
        guard let cam = camera else { return false }
        var widget: OpaquePointer?
        guard gp_camera_get_single_config(cam, key, &widget, context) >= 0, let widget else { return false }
        defer { gp_widget_free(widget) }
        var type = GP_WIDGET_TEXT
        guard gp_widget_get_type(widget, &type) >= 0 else { return false }
        return !toggle || type == GP_WIDGET_TOGGLE
    }

    /// Sets toggle widget `key` on (`gp_widget_set_value` with an int 1, `gp_camera_set_single_config`): an
    /// action such as `autofocusdrive`, which the driver performs as the value is set.
    /// - Throws: ``GPhoto2Error`` when the body has no such widget or the action fails (a focus that failed).
    public func setToggle(_ key: String) throws(GPhoto2Error) {
        try setWidget(key) { widget throws(GPhoto2Error) in
            var type = GP_WIDGET_TEXT
            try check(gp_widget_get_type(widget, &type), "gp_widget_get_type(\(key))", camera: name)
            // The value's C type follows the widget's: an int for a toggle; anything else is not set this way.
            guard type == GP_WIDGET_TOGGLE else {
                throw GPhoto2Error(call: "gp_widget_set_value(\(key))", code: -2, camera: name, driverMessage: "not a toggle widget")
            }
            var on: Int32 = 1
            try check(gp_widget_set_value(widget, &on), "gp_widget_set_value(\(key))", camera: name)
        }
    }

    /// The battery level in percent (`batterylevel`, `"50%"`); nil when the body reports none.
    public func batteryPercent() -> Int? {
        guard let v = config("batterylevel")?.value else { return nil }
        return Int(v.filter { $0 != "%" }.trimmingSpaces())
    }

    /// Free bytes on the first storage that reports a free figure (`gp_camera_get_storageinfo`, `freekbytes`).
    public func freeBytes() -> Int64? {
        defer { forgetDriverWords() }
        guard let cam = camera else { return nil }
        var infos: UnsafeMutablePointer<CameraStorageInformation>?
        var count: Int32 = 0
        guard gp_camera_get_storageinfo(cam, &infos, &count, context) >= 0, let infos else { return nil }
        defer { free(infos) }
        for i in 0..<Int(count) where infos[i].fields.rawValue & GP_STORAGEINFO_FREESPACEKBYTES.rawValue != 0 {
            return Int64(infos[i].freekbytes) * 1024
        }
        return nil
    }

    /// What `devices` lists of the open camera (battery, free space, capture target, image format).
    public func details() -> GPhoto2CameraDetails {
        var d = GPhoto2CameraDetails()
        d.batteryPercent = batteryPercent()
        d.freeBytes = freeBytes()
        if let t = config("capturetarget") { d.captureTarget = t.value; d.captureTargets = t.choices }
        d.imageFormat = (config("imagequality") ?? config("imageformat"))?.value
        return d
    }

    /// Asks the open camera something small (`gp_camera_get_storageinfo`): true when it answers. For a
    /// camera without live view, the check that it is still there.
    /// - Throws: ``GPhoto2Error`` (the camera gone).
    public func ping() throws(GPhoto2Error) {
        let cam = try opened("gp_camera_get_storageinfo")
        var infos: UnsafeMutablePointer<CameraStorageInformation>?
        var count: Int32 = 0
        let rc = gp_camera_get_storageinfo(cam, &infos, &count, context)
        free(infos)
        try check(rc, "gp_camera_get_storageinfo", camera: name)
    }

    // MARK: Helpers

    /// Clears the driver's words after a call whose failure is not reported (a config read), so they are
    /// not taken for the cause of the next call's failure.
    private func forgetDriverWords() {
        messages.last = nil
        _ = GPhoto2ErrorLog.take()
    }

    private var name: String { info?.description ?? "camera" }

    private func opened(_ call: String) throws(GPhoto2Error) -> UnsafeMutablePointer<Camera> {
        guard let camera else { throw GPhoto2Error(call: call, code: -52, camera: "camera", driverMessage: "no camera open") }
        return camera
    }

    /// Throws for a negative `rc`, with the driver's words: the context's error text, else the root cause
    /// among the error lines libgphoto2 logged on this thread during the call (ptp2 reports a PTP response
    /// such as `"PTP Store Full (0x200c)"` only there). Both are cleared at each check.
    private func check(_ rc: Int32, _ call: String, camera: String) throws(GPhoto2Error) {
        let message = messages.last
        messages.last = nil
        let logged = GPhoto2ErrorLog.take()
        guard rc < 0 else { return }
        throw GPhoto2Error(call: call, code: rc, camera: camera, driverMessage: message ?? GPhoto2ErrorLog.rootCause(logged))
    }

    private struct Lists {
        let abilities: OpaquePointer?
        let ports: OpaquePointer?
        func free() {
            gp_abilities_list_free(abilities)
            gp_port_info_list_free(ports)
        }
    }

    private func loadLists() throws(GPhoto2Error) -> Lists {
        var abilities: OpaquePointer?, ports: OpaquePointer?
        try check(gp_abilities_list_new(&abilities), "gp_abilities_list_new", camera: "any")
        guard gp_port_info_list_new(&ports) >= 0 else {
            gp_abilities_list_free(abilities)
            throw GPhoto2Error(call: "gp_port_info_list_new", code: -3, camera: "any")
        }
        let lists = Lists(abilities: abilities, ports: ports)
        let rcAbilities = gp_abilities_list_load(abilities, context)
        let rcPorts = gp_port_info_list_load(ports)
        if rcAbilities < 0 || rcPorts < 0 {
            lists.free()
            try check(min(rcAbilities, rcPorts), rcAbilities < 0 ? "gp_abilities_list_load" : "gp_port_info_list_load", camera: "any")
        }
        return lists
    }

    private func detectWith(_ lists: Lists) throws(GPhoto2Error) -> (cameras: [GPhoto2CameraInfo], others: [GPhoto2CameraInfo]) {
        var found: OpaquePointer?
        try check(gp_list_new(&found), "gp_list_new", camera: "any")
        defer { gp_list_free(found) }
        try check(gp_abilities_list_detect(lists.abilities, lists.ports, found, context), "gp_abilities_list_detect", camera: "any")
        var cameras: [GPhoto2CameraInfo] = [], others: [GPhoto2CameraInfo] = []
        for i in 0..<max(0, gp_list_count(found)) {
            var name: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?
            guard gp_list_get_name(found, i, &name) >= 0, gp_list_get_value(found, i, &value) >= 0,
                  let name, let value else { continue }
            let port = String(cString: value)
            // "usb:" alone is the generic entry a port library lists for matching, not a camera.
            if port == "usb:" { continue }
            let info = GPhoto2CameraInfo(model: String(cString: name), port: port)
            // A phone or media player (MTP) is listed too, but takes no still: not a camera for the booth.
            var abilities = CameraAbilities()
            let model = gp_abilities_list_lookup_model(lists.abilities, name)
            if model >= 0, gp_abilities_list_get_abilities(lists.abilities, model, &abilities) >= 0,
               abilities.operations.rawValue & GP_OPERATION_CAPTURE_IMAGE.rawValue != 0 {
                cameras.append(info)
            } else {
                others.append(info)
            }
        }
        return (cameras, others)
    }

    private func bytes(of file: OpaquePointer?, _ call: String) throws(GPhoto2Error) -> [UInt8] {
        var data: UnsafePointer<CChar>?
        var size: UInt = 0
        try check(gp_file_get_data_and_size(file, &data, &size), call, camera: name)
        guard let data, size > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: Int(size)) { Array(UnsafeBufferPointer(start: $0, count: Int(size))) }
    }
}

/// The driver's last words, written by the context's callbacks on the calling thread.
private final class DriverMessages {
    var last: String?
}

/// libgphoto2's error-level log lines (`gp_log_add_func(GP_LOG_ERROR, …)`, installed once per process),
/// kept per thread until the next ``take()``: a camera's calls run on one thread, so its lines are its own.
enum GPhoto2ErrorLog {
    private static let lines = Mutex<[UInt: [String]]>([:])
    private static let installed = Mutex(false)

    static func install() {
        let first = installed.withLock { done in defer { done = true }; return !done }
        guard first else { return }
        _ = gp_log_add_func(GP_LOG_ERROR, { _, domain, text, _ in
            guard let text else { return }
            GPhoto2ErrorLog.record((domain.map { String(cString: $0) + ": " } ?? "") + String(cString: text))
        }, nil)
    }

    private static func record(_ line: String) {
        let me = UInt(pthread_self())
        lines.withLock { all in
            var mine = all[me] ?? []
            if mine.count < 20 { mine.append(line) }
            all[me] = mine
        }
    }

    /// This thread's lines since the last take, oldest first; cleared.
    static func take() -> [String] {
        let me = UInt(pthread_self())
        return lines.withLock { $0.removeValue(forKey: me) } ?? []
    }

    /// The root cause among `lines`: the first that says what failed (`"…receiving resp failed: PTP Store
    /// Full (0x200c)"` → `"PTP Store Full (0x200c)"`), not the wrappers that only pass a code on (`"failed: -1"`).
    static func rootCause(_ lines: [String]) -> String? {
        for line in lines {
            let marker = Array("failed: ".utf8), bytes = Array(line.utf8)
            guard bytes.count > marker.count,
                  let at = (0...(bytes.count - marker.count)).first(where: { bytes[$0..<($0 + marker.count)].elementsEqual(marker) })
            else { continue }
            let cause = String(decoding: bytes[(at + marker.count)...], as: UTF8.self).trimmingSpaces()
            if Int(cause) == nil, !cause.isEmpty { return cause }
        }
        return nil
    }
}
