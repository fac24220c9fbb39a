import BoothCore
import FoundationEssentials
import Glibc

/// One V4L2 control (`VIDIOC_QUERYCTRL`), with its current value (`VIDIOC_G_CTRL`).
public struct ControlInfo: Sendable, Hashable {
    /// The control id, e.g. `V4L2_CID_POWER_LINE_FREQUENCY` (0x00980918).
    public var id: UInt32
    /// The driver's name, e.g. `"Power Line Frequency"`.
    public var name: String
    /// The kind of control.
    public var kind: Kind
    /// Smallest value.
    public var minimum: Int32
    /// Largest value.
    public var maximum: Int32
    /// Step between values.
    public var step: Int32
    /// Default value.
    public var defaultValue: Int32
    /// Current value, nil when it cannot be read (write-only, buttons, or `VIDIOC_G_CTRL` failed).
    public var current: Int32?
    /// Menu items by value (menu and integer-menu controls), e.g. `[0: "Disabled", 1: "50 Hz"]`.
    public var menu: [Int32: String]

    /// Control types the booth distinguishes (`v4l2_ctrl_type`).
    public enum Kind: String, Sendable, Hashable {
        case integer, boolean, menu, integerMenu = "integer menu", button, other
    }

    public init(id: UInt32, name: String, kind: Kind, minimum: Int32, maximum: Int32, step: Int32,
                defaultValue: Int32, current: Int32?, menu: [Int32: String] = [:]) {
        self.id = id
        self.name = name
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.current = current
        self.menu = menu
    }
}

/// A video node and what it can do, as `photoboothctl devices` shows it.
public struct CameraInfo: Sendable, Hashable {
    /// The node, e.g. `"/dev/video0"`.
    public var path: String
    /// The names under `/dev/v4l/by-id` that link to this node.
    public var byIdNames: [String]
    /// `v4l2_capability.driver`, e.g. `"uvcvideo"`.
    public var driver: String
    /// `v4l2_capability.card`, e.g. `"HD Pro Webcam C920"`.
    public var card: String
    /// `v4l2_capability.bus_info`, e.g. `"usb-0000:00:14.0-1"`.
    public var busInfo: String
    /// The node's capability bits (`device_caps` when the driver reports them).
    public var capabilities: UInt32
    /// True when the node captures video and supports streaming I/O.
    public var isUsableCapture: Bool
    /// Offered formats (only when discovered with ``CameraDiscovery/Detail/formats`` or more).
    public var formats: [FormatOffer]
    /// Controls (only when discovered with ``CameraDiscovery/Detail/full``).
    public var controls: [ControlInfo]
    /// Why the node could not be queried, if it could not (then the other fields are empty).
    public var problem: String?

    public init(path: String, byIdNames: [String] = [], driver: String = "", card: String = "",
                busInfo: String = "", capabilities: UInt32 = 0, isUsableCapture: Bool = false,
                formats: [FormatOffer] = [], controls: [ControlInfo] = [], problem: String? = nil) {
        self.path = path
        self.byIdNames = byIdNames
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.capabilities = capabilities
        self.isUsableCapture = isUsableCapture
        self.formats = formats
        self.controls = controls
        self.problem = problem
    }

    /// `"/dev/video0 (HD Pro Webcam C920, uvcvideo, usb-0000:00:14.0-1)"` for logs.
    public var identity: String {
        let parts = [card, driver, busInfo].filter { !$0.isEmpty }
        return parts.isEmpty ? path : "\(path) (\(parts.joined(separator: ", ")))"
    }
}

/// Finds video nodes under a dev root (`/dev`, or a fake tree in tests).
public struct CameraDiscovery: Sendable {
    /// How much to query per node.
    public enum Detail: Sendable {
        /// `VIDIOC_QUERYCAP` only (fast; enough to select a camera).
        case capabilities
        /// Plus formats, frame sizes and intervals.
        case formats
        /// Plus controls and their current values.
        case full
    }

    /// The directory holding `video*` nodes and `v4l/by-id`; `/dev` on a real system.
    public var devRoot: String

    public init(devRoot: String = "/dev") {
        self.devRoot = devRoot
    }

    /// The `videoN` nodes under the dev root, sorted by N; empty when the root does not exist.
    public func videoNodePaths() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: devRoot)) ?? []
        let numbered: [(Int, String)] = entries.compactMap { name in
            guard name.hasPrefix("video"), let n = Int(name.dropFirst(5)) else { return nil }
            return (n, name)
        }
        return numbered.sorted { $0.0 < $1.0 }.map { "\(devRoot)/\($0.1)" }
    }

    /// The `/dev/v4l/by-id` names and the node paths they resolve to.
    public func byIdLinks() -> [(name: String, target: String)] {
        let dir = "\(devRoot)/v4l/by-id"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.sorted().compactMap { name in
            guard let target = CameraDiscovery.resolveLink("\(dir)/\(name)") else { return nil }
            return (name, target)
        }
    }

    /// Every video node with what `detail` asks for. Nodes that cannot be opened or queried
    /// are listed with ``CameraInfo/problem`` set. Capture nodes are opened through
    /// libv4l2 (so formats include libv4l2's conversions, flagged emulated).
    public func cameras(detail: Detail = .capabilities) -> [CameraInfo] {
        let links = byIdLinks()
        return videoNodePaths().map { path in
            var info = CameraInfo(path: path, byIdNames: links.filter { $0.target == path }.map(\.name))
            do {
                let (node, cap) = try Sys.openVideo(path)
                defer { node.close() }
                info.driver = cap.driver
                info.card = cap.card
                info.busInfo = cap.busInfo
                info.capabilities = cap.capabilities
                info.isUsableCapture = cap.isVideoCapture && cap.canStream
                if info.isUsableCapture, detail != .capabilities {
                    info.formats = try CameraDiscovery.formats(of: node)
                    if detail == .full { info.controls = try CameraDiscovery.controls(of: node) }
                }
            } catch {
                info.problem = "\(error)"
            }
            return info
        }
    }

    /// The usable capture cameras, in node order.
    public func captureCameras(detail: Detail = .capabilities) -> [CameraInfo] {
        cameras(detail: detail).filter(\.isUsableCapture)
    }

    /// The formats of an open node: `VIDIOC_ENUM_FMT`, then `VIDIOC_ENUM_FRAMESIZES` per format
    /// and `VIDIOC_ENUM_FRAMEINTERVALS` per discrete size (per largest size when stepwise).
    static func formats(of node: V4L2Node) throws(V4L2Error) -> [FormatOffer] {
        var offers: [FormatOffer] = []
        var index: UInt32 = 0
        while let d = try node.enumFormat(index: index), index < 256 {
            index += 1
            guard let sizes = try node.enumFrameSizes(fourcc: d.fourcc) else { continue }
            var intervals: [FrameSize: FrameIntervalOffer] = [:]
            let probe: [FrameSize]
            switch sizes {
            case .discrete(let list): probe = list
            case .stepwise(_, let hi, _, _), .continuous(_, let hi): probe = [hi]
            }
            for size in probe {
                if let offer = try node.enumFrameIntervals(fourcc: d.fourcc, size: size) { intervals[size] = offer }
            }
            offers.append(FormatOffer(fourcc: d.fourcc, description: d.description, isEmulated: d.isEmulated,
                                      sizes: sizes, intervals: intervals))
        }
        return offers
    }

    /// The controls of an open node: `VIDIOC_QUERYCTRL` with `V4L2_CTRL_FLAG_NEXT_CTRL`,
    /// skipping disabled controls and class headings; current values by `VIDIOC_G_CTRL`;
    /// menu items by `VIDIOC_QUERYMENU`.
    static func controls(of node: V4L2Node) throws(V4L2Error) -> [ControlInfo] {
        var result: [ControlInfo] = []
        var id: UInt32 = 0
        var guardCount = 0
        while let q = try node.queryControl(id: id, next: true), guardCount < 1024 {
            guardCount += 1
            id = q.id
            if q.flags & V4L2ControlID.flagDisabled != 0 || q.type == V4L2ControlID.typeClass { continue }
            result.append(controlInfo(q, node: node))
        }
        return result
    }

    static func controlInfo(_ q: V4L2ControlDescription, node: V4L2Node) -> ControlInfo {
        let kind: ControlInfo.Kind
        switch q.type {
        case V4L2ControlID.typeInteger: kind = .integer
        case V4L2ControlID.typeBoolean: kind = .boolean
        case V4L2ControlID.typeMenu: kind = .menu
        case V4L2ControlID.typeIntegerMenu: kind = .integerMenu
        case V4L2ControlID.typeButton: kind = .button
        default: kind = .other
        }
        var menu: [Int32: String] = [:]
        if kind == .menu || kind == .integerMenu, q.minimum >= 0, q.maximum >= q.minimum, q.maximum - q.minimum < 64 {
            for i in q.minimum...q.maximum {
                if let name = node.menuItem(id: q.id, index: UInt32(i), integerMenu: kind == .integerMenu) {
                    menu[i] = name
                }
            }
        }
        let readable = kind == .integer || kind == .boolean || kind == .menu || kind == .integerMenu
        let current = readable ? try? node.control(id: q.id) : nil
        return ControlInfo(id: q.id, name: q.name, kind: kind, minimum: q.minimum, maximum: q.maximum,
                           step: q.step, defaultValue: q.defaultValue, current: current, menu: menu)
    }

    /// The path a symlink points to, made absolute and normalised (`..` removed); nil when not a link.
    static func resolveLink(_ path: String) -> String? {
        guard let dest = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return nil }
        let absolute = dest.hasPrefix("/") ? dest : String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) + "/" + dest
        return URL(fileURLWithPath: absolute).standardized.path
    }
}
