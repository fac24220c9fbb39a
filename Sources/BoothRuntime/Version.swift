import BoothPorts
/// The booth's version, printed by `--version` of both programs.
public let photoboothVersion = "0.1.0"

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
