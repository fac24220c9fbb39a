/// The booth's version, printed by `--version` of both programs.
public let photoboothVersion = "0.1.0"

/// Exit codes from sysexits(3).
public enum ExitCode {
    public static let ok: Int32 = 0
    /// EX_USAGE: a bad command-line option.
    public static let usage: Int32 = 64
    /// EX_NOINPUT: a file named on the command line does not exist.
    public static let noInput: Int32 = 66
    /// EX_UNAVAILABLE: a device or the daemon is not available.
    public static let unavailable: Int32 = 69
    /// EX_SOFTWARE: an internal error.
    public static let software: Int32 = 70
    /// EX_CONFIG: the config file is invalid.
    public static let config: Int32 = 78
}
