import Glibc

/// Seconds since 1970 as calendar text: the booth's one `strftime` wrapper, in UTC (`gmtime_r`) or the
/// local time zone (`localtime_r`). Formats use the C locale's day and month names (the booth never
/// calls `setlocale`), as HTTP dates need.
public enum TimeText {
    /// Which calendar the seconds are shown in.
    public enum Zone: Sendable {
        /// UTC (`gmtime_r`).
        case utc
        /// The local time zone, TZ or /etc/localtime (`localtime_r`).
        case local
    }

    /// `seconds` since 1970 in `format` (strftime(3), at most 511 bytes of output: `picture.date_format`
    /// is the operator's), in `zone`.
    /// - Returns: the text, or the seconds as digits when the time cannot be broken down.
    public static func format(_ seconds: Int64, _ format: String, in zone: Zone) -> String {
        var t = time_t(seconds), parts = tm()
        let broken = switch zone {
        case .utc: gmtime_r(&t, &parts)
        case .local: localtime_r(&t, &parts)
        }
        guard broken != nil else { return "\(seconds)" }
        var buffer = [CChar](repeating: 0, count: 512)
        let n = strftime(&buffer, buffer.count, format, &parts)
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `2026-12-07 12:03:04 UTC`: a log's and `status`'s time in UTC.
    public static func utc(_ seconds: Int64) -> String {
        format(seconds, "%Y-%m-%d %H:%M:%S UTC", in: .utc)
    }

    /// `2026-12-07 13:03:04`: local time, as `status` and `stats` show it.
    public static func local(_ seconds: Int64) -> String {
        format(seconds, "%Y-%m-%d %H:%M:%S", in: .local)
    }

    /// An HTTP date, `Tue, 01 Dec 2026 18:04:05 GMT` (RFC 9110's IMF-fixdate).
    public static func http(_ seconds: Int64) -> String {
        format(seconds, "%a, %d %b %Y %H:%M:%S GMT", in: .utc)
    }
}
