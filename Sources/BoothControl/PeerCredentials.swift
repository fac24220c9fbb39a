import BoothStorage
import CSysShims
import Glibc

/// The peer of a control connection, from `SO_PEERCRED` (what the kernel recorded at `connect`).
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: uid_t
    public var gid: gid_t
    public init(pid: Int32, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// Reads `SO_PEERCRED` of a connected unix socket. Wraps `getsockopt(SO_PEERCRED)`.
    public static func of(fd: Int32) throws(SocketError) -> PeerCredentials {
        var pid: Int32 = 0
        var uid: UInt32 = 0, gid: UInt32 = 0
        guard pb_peer_credentials(fd, &pid, &uid, &gid) == 0 else {
            throw SocketError(call: "getsockopt(SO_PEERCRED)", errno: errno, path: "fd \(fd)")
        }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
    }
}

/// Who may talk to the daemon: root, the daemon's own user, or a user whose groups (supplementary ones
/// included, from `getgrouplist`) contain the group `photobooth`.
public struct PeerPolicy: Sendable {
    /// The group (`photobooth`).
    public var groupName: String
    /// The daemon's effective uid (its own user may always talk to it).
    public var daemonUID: uid_t
    /// The group's id, nil when the group does not exist. Wraps `getgrnam_r`.
    public var groupID: @Sendable (String) -> gid_t?
    /// A user's groups: primary `gid` plus supplementary ones; nil when the uid has no passwd entry.
    /// Wraps `getpwuid_r` and `getgrouplist`.
    public var groups: @Sendable (uid_t, gid_t) -> [gid_t]?
    /// A user name for messages (`getpwuid_r`), nil when unknown.
    public var userName: @Sendable (uid_t) -> String?

    public init(groupName: String = ControlSocketPath.groupName, daemonUID: uid_t = geteuid(),
                groupID: @escaping @Sendable (String) -> gid_t? = SystemUsers.groupID,
                groups: @escaping @Sendable (uid_t, gid_t) -> [gid_t]? = SystemUsers.groups,
                userName: @escaping @Sendable (uid_t) -> String? = SystemUsers.userName) {
        self.groupName = groupName
        self.daemonUID = daemonUID
        self.groupID = groupID
        self.groups = groups
        self.userName = userName
    }

    /// nil when `peer` may use the socket; else the refusal, saying what to do.
    public func refusal(for peer: PeerCredentials) -> String? {
        if peer.uid == 0 || peer.uid == daemonUID { return nil }
        let who = userName(peer.uid).map { "user '\($0)' (uid \(peer.uid))" } ?? "uid \(peer.uid)"
        guard let gid = groupID(groupName) else {
            return "\(who) may not use photoboothd's control socket: only root and members of group '\(groupName)' may, "
                + "and that group does not exist here (install.sh creates it: sudo groupadd --system \(groupName))"
        }
        if let list = groups(peer.uid, peer.gid), list.contains(gid) { return nil }
        let name = userName(peer.uid) ?? "USER"
        return "\(who) may not use photoboothd's control socket: only root and members of group '\(groupName)' may. "
            + "Add the user to the group (sudo adduser \(name) \(groupName)) and log in again, or use sudo."
    }
}
