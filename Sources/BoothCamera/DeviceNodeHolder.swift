import BoothCore
import Glibc

/// Who holds a device node open: the process whose `/proc/PID/fd` links to it (a USB camera's
/// `/dev/bus/usb/…` node held by gvfs; a libcamera camera's `/dev/video…` held by another libcamera app).
public enum DeviceNodeHolder {
    /// `"gvfs-gphoto2-vo (pid 1234)"` for the first process with `node` (`/dev/bus/usb/001/004`, `/dev/video2`)
    /// open, nil when none is found (or /proc cannot be read, as under `ProtectProc=invisible`).
    public static func find(_ node: String) -> String? {
        guard let proc = opendir("/proc") else { return nil }
        defer { closedir(proc) }
        let own = getpid()
        while let entry = readdir(proc) {
            let pidName = String(cArray: entry.pointee.d_name)
            guard let pid = Int32(pidName), pid != own else { continue }
            guard let fds = opendir("/proc/\(pid)/fd") else { continue }
            defer { closedir(fds) }
            while let fd = readdir(fds) {
                let fdName = String(cArray: fd.pointee.d_name)
                guard Int(fdName) != nil else { continue }
                var buffer = [CChar](repeating: 0, count: 256)
                let n = readlink("/proc/\(pid)/fd/\(fdName)", &buffer, buffer.count - 1)
                guard n > 0 else { continue }
                if String(nulTerminated: Array(buffer[0..<n])) == node {
                    return "\(commandName(pid) ?? "process") (pid \(pid))"
                }
            }
        }
        return nil
    }

    /// `"cam (pid 741)"` for the process holding a POSIX lock on `node` (`/dev/media0`: libcamera's
    /// `Camera::acquire` locks its pipeline's media device with `lockf`), read from `/proc/locks` (whose
    /// `MAJ:MIN:INODE` is the node's filesystem device, in hex, and its inode); nil when none holds one.
    /// Unlike ``find(_:)`` it does not name a process that has the node open only to list cameras.
    public static func lockHolder(_ node: String, locks: String = "/proc/locks") -> String? {
        var st = stat()
        guard stat(node, &st) == 0, let f = fopen(locks, "r") else { return nil }
        defer { fclose(f) }
        let dev = UInt64(st.st_dev)  // glibc's gnu_dev_major / gnu_dev_minor, written out
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        func hex2(_ v: UInt64) -> String { let h = String(v, radix: 16); return h.count < 2 ? "0" + h : h }
        let key = "\(hex2(major)):\(hex2(minor)):\(st.st_ino)"
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), f) != nil {
            let line = String(nulTerminated: buffer)
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
            guard let i = fields.firstIndex(where: { $0 == key }), i > 0, let pid = Int32(fields[i - 1]) else { continue }
            return "\(commandName(pid) ?? "process") (pid \(pid))"
        }
        return nil
    }

    private static func commandName(_ pid: Int32) -> String? {
        guard let f = fopen("/proc/\(pid)/comm", "r") else { return nil }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, 64, f) != nil else { return nil }
        return String(nulTerminated: buffer).trimmingWhitespace()
    }
}
