import Glibc

/// Lookups in the system's user and group databases (NSS), for ``PeerPolicy``.
public enum SystemUsers {
    /// The gid of group `name` (`getgrnam_r`), nil when there is no such group.
    @Sendable public static func groupID(_ name: String) -> gid_t? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &group, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return group.gr_gid
    }

    /// The user name of `uid` (`getpwuid_r`), nil when unknown.
    @Sendable public static func userName(_ uid: uid_t) -> String? {
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, result != nil, let name = pw.pw_name else { return nil }
        return String(cString: name)
    }

    /// `gid` and the supplementary groups of `uid` (`getgrouplist` on its user name); nil when `uid` has no
    /// passwd entry (then it is in no group but `gid`).
    @Sendable public static func groups(_ uid: uid_t, _ gid: gid_t) -> [gid_t]? {
        guard let name = userName(uid) else { return nil }
        var count: Int32 = 64
        while true {
            var list = [gid_t](repeating: 0, count: Int(count))
            var n = count
            if getgrouplist(name, gid, &list, &n) >= 0 { return Array(list[0..<Int(n)]) }
            if n <= count { count *= 2 } else { count = n }
            if count > 65536 { return nil }
        }
    }
}
