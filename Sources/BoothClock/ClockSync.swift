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

    /// What to tell the operator when the clock is not synchronised (`synchronized == false`): what it
    /// affects and how to set it; nil when it is synchronised or that is unknown.
    public static func warning(synchronized: Bool?) -> String? {
        guard synchronized == false else { return nil }
        return "the system clock is not synchronised (no network time since it started; a Raspberry Pi without a "
            + "real-time clock starts at the time fake-hwclock saved), so {date} and the date folders may be wrong; "
            + "set it with timedatectl set-time 'YYYY-MM-DD HH:MM:SS', or give the booth network time "
            + "(timedatectl set-ntp true: systemd-timesyncd) or a real-time clock (a Pi 5's RTC battery, an RTC module)"
    }
}
