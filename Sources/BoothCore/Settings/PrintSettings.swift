extension Settings {
    /// `[print]`: printing through CUPS.
    public struct Print: Sendable, Hashable {
        /// `print.mode`.
        public var mode = PrintMode.off
        /// `print.destination`: the CUPS queue; empty = the CUPS default destination.
        public var destination = ""
        /// `print.copies`: copies of each picture, within ``copiesRange``.
        public var copies = 1
        /// The copies a picture may have: the schema's range for `print.copies`, and what a print
        /// journal's request may hold.
        public static let copiesRange = 1...10
        /// `print.sheets` and `photoboothctl refill SHEETS`: the paper counter's range, sheets.
        public static let sheetsRange = 0...100_000
        /// `print.media`: PWG media name (`na_index-4x6_4x6in`). Setting it parses it, once, into ``mediaSize``.
        public var media = "" { didSet { mediaSize = MediaSize(pwg: media) } }
        /// `print.media` parsed (the page's size for the renderer and the picture's sheet): set with
        /// ``media``, so no reader parses it again. nil when `media` is no PWG name with a size (the
        /// schema refuses such a file; only settings built in code can hold one).
        public private(set) var mediaSize: MediaSize?
        /// `print.color`.
        public var color = PrintColorSetting.color
        /// `print.dpi`: resolution the picture is rendered at for the media, dots per inch.
        public var dpi = 300
        /// `print.pending_limit`: jobs out at the printer at once.
        public var pendingLimit = 1
        /// `print.reprint_limit`: reprints allowed per picture (`photoboothctl prints reprint`).
        public var reprintLimit = 1
        /// `print.backlog`: which held requests are released when the printer is ready again.
        public var backlog = PrintBacklogSetting.maxAge
        /// `print.backlog_newest`: with backlog = newest, how many of the newest held requests are kept.
        public var backlogNewest = 5
        /// `print.backlog_max_age`: with backlog = max-age, held requests older than this are dropped (ms).
        public var backlogMaxAgeMilliseconds = 0
        /// `print.sheets`: sheets of paper loaded at start until `photoboothctl refill` says otherwise.
        public var sheets = 0
        /// `print.sheets_per_picture`: sheets one copy uses.
        public var sheetsPerPicture = 1
        /// `print.paper_warning`: warn at or below this many sheets left.
        public var paperWarning = 0
        /// `print.poll_interval`: printer health and job states are polled this often (ms).
        public var pollIntervalMilliseconds = 0
        /// `print.journal`: the print journal (JSON, rewritten atomically).
        public var journal = ""
        /// `print.spool`: directory of the rendered pictures waiting to be printed.
        public var spool = ""
    }
}

extension PrintMode: SettingChoice {}
extension CancelledCaptures: SettingChoice {}

/// `print.color`.
public enum PrintColorSetting: String, SettingChoice {
    case color
    case monochrome
}

/// `print.backlog`: what happens to requests held while the printer was unavailable.
public enum PrintBacklogSetting: String, SettingChoice {
    /// Every held request prints, oldest first.
    case all
    /// Only the newest `backlog_newest` held requests print; older ones are dropped.
    case newest
    /// Requests older than `backlog_max_age` are dropped (the guest is gone).
    case maxAge = "max-age"
}
