import FoundationEssentials
import Glibc

/// Where the control socket lives.
public enum ControlSocketPath {
    /// The system booth's socket (systemd, root).
    public static let system = "/run/photobooth/control"
    /// The group whose members may use the socket.
    public static let groupName = "photobooth"

    /// The per-user socket: `$XDG_RUNTIME_DIR/photobooth/control`, or `/tmp/photobooth-<uid>/control`
    /// when `XDG_RUNTIME_DIR` is not set.
    public static func user(environment: [String: String] = ProcessInfo.processInfo.environment,
                            uid: uid_t = geteuid()) -> String {
        if let dir = environment["XDG_RUNTIME_DIR"], !dir.isEmpty { return "\(dir)/photobooth/control" }
        return "/tmp/photobooth-\(uid)/control"
    }

    /// The daemon's socket: `/run/photobooth/control` as root without `--simulate`, else ``user(environment:uid:)``.
    public static func forDaemon(simulated: Bool, uid: uid_t = geteuid(),
                                 environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        !simulated && uid == 0 ? system : user(environment: environment, uid: uid)
    }

    /// Where `photoboothctl` looks, in order: the system socket, then the per-user one.
    public static func candidatesForClient(environment: [String: String] = ProcessInfo.processInfo.environment,
                                           uid: uid_t = geteuid()) -> [String] {
        [system, user(environment: environment, uid: uid)]
    }
}
