import BoothCore

/// The IPP job options a print is submitted with (`cupsAddOption` name/value pairs), each value taken
/// from the field of its option's name, never from a position in a list: reordering ``Option/allCases``
/// (or asking in any order) cannot send one option's value under another's name.
public struct JobOptions: Sendable, Equatable {
    /// An IPP job attribute the booth sets; the raw value is its IPP name.
    public enum Option: String, Sendable, CaseIterable {
        case copies
        case media
        case printColorMode = "print-color-mode"
        case printScaling = "print-scaling"
    }

    /// `copies`, 1…10 (`print.copies`'s range).
    public var copies: Int
    /// `media`: a PWG media name (`na_index-4x6_4x6in`).
    public var media: String
    /// `print-color-mode`: `color`, `monochrome` or `auto`.
    public var colorMode: String
    /// `print-scaling`: always `none` (the page is rendered at the media's exact size).
    public var scaling = "none"

    /// The options of `print.copies`, `print.media` and `print.color`.
    public init(_ settings: Settings.Print) {
        copies = settings.copies
        media = settings.media
        colorMode = settings.color.rawValue
    }

    /// The value sent for `option`.
    public func value(_ option: Option) -> String {
        switch option {
        case .copies: String(copies)
        case .media: media
        case .printColorMode: colorMode
        case .printScaling: scaling
        }
    }

    /// (IPP name, value) for each of `options`, in that order.
    public func pairs(_ options: [Option] = Option.allCases) -> [(String, String)] {
        options.map { ($0.rawValue, value($0)) }
    }

    /// Every option, in ``Option/allCases`` order.
    public var pairs: [(String, String)] { pairs() }
}
