import BoothPorts
/// The booth's version, printed by `--version` of every program.
public let photoboothVersion = "0.1.0"

/// The project's licence as an SPDX expression: the GNU GPL version 3 or later (LICENSE at the
/// package root). The programs link Debian's libgphoto2 and libcamera (LGPL), so what a user receives
/// is GPL-3.0-or-later as a whole.
public let photoboothLicence = "GPL-3.0-or-later"

/// What `--version` prints for `program` (`photoboothd`, `photoboothctl`, `photobooth-gallery`): its
/// name and version on the first line, then the licence and the warranty in the GNU programs' words.
public func versionText(program: String) -> String {
    """
    \(program) \(photoboothVersion)
    Copyright (C) 2026 the Photobooth authors
    License \(photoboothLicence): GNU GPL version 3 or later <https://www.gnu.org/licenses/gpl-3.0.html>.
    This is free software: you are free to change and redistribute it.
    There is NO WARRANTY, to the extent permitted by law.
    """
}

/// Exit codes from sysexits(3).
public enum ExitCode {
    public static let ok: Int32 = 0
    /// EX_USAGE: a bad command-line option.
    public static let usage: Int32 = 64
    /// EX_DATAERR: a value given on the command line is not valid (e.g. `config set` with a bad value).
    public static let dataError: Int32 = 65
    /// EX_NOINPUT: a file named on the command line does not exist.
    public static let noInput: Int32 = 66
    /// EX_UNAVAILABLE: a device or the daemon is not available.
    public static let unavailable: Int32 = 69
    /// EX_SOFTWARE: an internal error.
    public static let software: Int32 = 70
    /// EX_CANTCREAT: an output file cannot be created (exists, or no permission on its directory).
    public static let cantCreate: Int32 = 73
    /// EX_IOERR: reading or writing failed, or the daemon's reply was not understood.
    public static let ioError: Int32 = 74
    /// EX_TEMPFAIL: try again later (e.g. no camera frame for a snapshot right now).
    public static let tempFail: Int32 = 75
    /// EX_NOPERM: not allowed (the control socket is for root and group `photobooth`).
    public static let noPermission: Int32 = 77
    /// EX_CONFIG: the config file is invalid.
    public static let config: Int32 = 78
}
