import CSysShims
import Glibc

/// Whether the wall clock is synchronised (NTP via systemd-timesyncd, chrony or ntpd). A Raspberry Pi has
/// no real-time clock and events are often offline, so dates in folder names may be wrong; nothing in the
/// booth derives uniqueness from the clock (session numbers come from the files).
public enum ClockSync {
    /// True when the kernel's NTP status has `STA_UNSYNC` clear (what `timedatectl` shows as
    /// "System clock synchronized"); nil when it cannot be read. Wraps `adjtimex(2)` (read only). Where
    /// `adjtimex` is denied (the unit's `ProtectClock=yes` filters it with EPERM), systemd-timesyncd's flag
    /// file `/run/systemd/timesync/synchronized` answers true when present, else nil (unknown).
    public static func isSynchronized() -> Bool? {
        switch pb_clock_synchronized() {
        case 1: return true
        case 0: return false
        default: return access(timesyncFlag, F_OK) == 0 ? true : nil
        }
    }

    /// Written by systemd-timesyncd once it has synchronised the clock.
    public static let timesyncFlag = "/run/systemd/timesync/synchronized"
}
