import FoundationEssentials
import Glibc

/// The `camera.device` setting, parsed.
public enum CameraSelector: Sendable, Hashable, CustomStringConvertible {
    /// `""` or `"auto"`: the first usable capture device.
    case auto
    /// A path starting with `/`: that node, or a `/dev/v4l/by-id/…` link to one.
    case path(String)
    /// A `/dev/v4l/by-id` name, or else a substring of the card name (case-insensitive).
    case name(String)

    /// Parses the setting (surrounding whitespace ignored).
    public init(parsing text: String) {
        let t = text.trimmingSpaces()
        if t.isEmpty || t.lowercased() == "auto" {
            self = .auto
        } else if t.hasPrefix("/") {
            self = .path(t)
        } else {
            self = .name(t)
        }
    }

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .path(let p): return p
        case .name(let n): return n
        }
    }

    /// The camera this selector picks from `cameras` (as discovery lists them), or nil.
    ///
    /// `.auto` picks the first usable capture device; `.path` the camera whose path is the
    /// path (after `resolvedPath`, which follows a by-id link); `.name` the first usable
    /// camera with that exact by-id name, else the first whose card contains the name.
    public func select(from cameras: [CameraInfo], resolvedPath: String? = nil) -> CameraInfo? {
        let usable = cameras.filter(\.isUsableCapture)
        switch self {
        case .auto:
            return usable.first
        case .path(let p):
            let target = resolvedPath ?? p
            return cameras.first { $0.path == target || $0.path == p }
        case .name(let n):
            if let byId = usable.first(where: { $0.byIdNames.contains(n) }) { return byId }
            let needle = n.lowercased()
            return usable.first { $0.card.lowercased().contains(needle) }
        }
    }
}
