/// A failed libcups call: which function, its IPP or HTTP status and CUPS's message
/// (`cupsLastErrorString`), and the destination it was about.
public struct PrintError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The libcups function that failed, e.g. `"cupsCreateDestJob"`.
    public var call: String
    /// The status word, e.g. `"client-error-not-found"` (`ippErrorString`) or `"HTTP 404"`; empty when none.
    public var status: String
    /// What CUPS said, e.g. `"The printer or class does not exist."`.
    public var message: String
    /// The queue (or printer URI) the call was about; empty for the CUPS default.
    public var destination: String

    public init(call: String, status: String = "", message: String, destination: String) {
        self.call = call
        self.status = status
        self.message = message
        self.destination = destination
    }

    public var description: String {
        let dest = destination.isEmpty ? "the default destination" : destination
        let st = status.isEmpty ? "" : " (\(status))"
        return "\(call) for \(dest)\(st): \(message)"
    }
}

/// An option the destination does not support, found before anything is printed.
public struct PrintOptionRejected: Error, Equatable, Sendable, CustomStringConvertible {
    /// The IPP attribute, e.g. `"media"`.
    public var option: String
    /// The value asked for, e.g. `"na_5x7_5x7in"`.
    public var value: String
    /// What the destination supports (its `…-supported` values, comma-separated, possibly shortened).
    public var supported: String
    public var destination: String

    public var description: String {
        "\(destination.isEmpty ? "the default destination" : destination) rejects \(option)=\(value); it supports: \(supported)"
    }
}

/// A page too large to render: `print.media` at `print.dpi` has more than ``PrintRenderer/maxPagePixels``.
public struct PrintPageTooLarge: Error, Equatable, Sendable, CustomStringConvertible {
    /// The PWG media name (or the page size in pixels, when a size was asked for directly).
    public var media: String
    /// The resolution asked for (0 when a size was asked for directly).
    public var dpi: Int
    /// The highest resolution at which this media fits.
    public var maxDPI: Int
    /// The limit, in pixels.
    public var maxPixels: Int

    public init(media: String, dpi: Int, maxDPI: Int, maxPixels: Int) {
        self.media = media
        self.dpi = dpi
        self.maxDPI = maxDPI
        self.maxPixels = maxPixels
    }

    public var description: String {
        if dpi == 0 { return "a page of \(media) pixels is larger than the renderer's \(maxPixels / 1_000_000) megapixels" }
        return "print.media \(media) at print.dpi \(dpi) is larger than the renderer's \(maxPixels / 1_000_000) megapixels; "
            + "use print.dpi \(maxDPI) or less, or a smaller media"
    }
}
