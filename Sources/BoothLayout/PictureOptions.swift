import BoothCore
import BoothJPEG
import BoothRaster

/// Why a picture could not be composed or a composer not made.
public enum PictureError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No captures were given.
    case noCaptures
    /// Capture `index` (0-based) could not be decoded: TurboJPEG's call and message.
    case decode(index: Int, message: String)
    /// The PNG overlay or background image at `path` could not be read: libpng's message.
    case png(path: String, message: String)
    /// The JPEG background image at `path` could not be read or decoded.
    case backgroundImage(path: String, message: String)
    /// The footer font could not be loaded.
    case font(FontError)
    /// `print.media` has no size in its name and `picture.size` is `media`.
    case mediaSize(String)
    /// The picture could not be encoded: TurboJPEG's call and message.
    case encode(message: String)

    public var description: String {
        switch self {
        case .noCaptures: "no captures to compose"
        case .decode(let index, let message): "capture \(index + 1) could not be decoded: \(message)"
        case .png(let path, let message): "\(path): PNG not readable: \(message)"
        case .backgroundImage(let path, let message): "\(path): background image not readable: \(message)"
        case .font(let error): "picture font: \(error)"
        case .mediaSize(let media): "print.media '\(media)' has no size in its name; set picture.size"
        case .encode(let message): "picture could not be encoded: \(message)"
        }
    }
}

/// What the composer makes: layout, sheet, resolution, look and footer. Built from `[picture]`
/// (and `print.media`/`print.dpi`) by `init(settings:)`, or set field by field.
public struct PictureOptions: Sendable, Hashable {
    /// The layout, or `.auto` to choose by the number of captures.
    public var layout: PictureLayoutSetting
    /// True: each capture letterboxed in its slot (fit); false: cropped to fill it.
    public var fit: Bool
    /// The sheet's short and long side in inches; the orientation is chosen per picture.
    public var sheetShortInches: Double
    public var sheetLongInches: Double
    /// Dots per inch (4x6 in at 600 dpi: 3600x2400 pixels).
    public var dpi: Int
    /// JPEG quality 1…100 (4:2:0).
    public var quality: Int
    /// Margin around and between slots, millimetres.
    public var marginMillimetres: Int
    public var background: RGBColor
    /// A JPEG or PNG file filling the sheet under the captures; empty for none.
    public var backgroundImage: String
    /// A PNG file with alpha drawn over the picture, scaled to cover the sheet (aspect kept); empty for none.
    public var overlay: String
    /// Footer lines, `{date}` replaced by the date; empty lines are dropped.
    public var footerLines: [String]
    /// strftime(3) format of `{date}`.
    public var dateFormat: String
    /// TrueType/OpenType file for the footer.
    public var font: String
    public var textColor: RGBColor
    /// Threads decoding and scaling the captures (1 or 2; the encode is one thread).
    public var threads: Int

    public init(layout: PictureLayoutSetting = .auto, fit: Bool = false, sheetShortInches: Double = 4,
                sheetLongInches: Double = 6, dpi: Int = 300, quality: Int = 92, marginMillimetres: Int = 3,
                background: RGBColor = RGBColor(red: 255, green: 255, blue: 255), backgroundImage: String = "",
                overlay: String = "", footerLines: [String] = [], dateFormat: String = "%d %B %Y",
                font: String = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                textColor: RGBColor = RGBColor(red: 0, green: 0, blue: 0), threads: Int = 1) {
        self.layout = layout
        self.fit = fit
        self.sheetShortInches = min(sheetShortInches, sheetLongInches)
        self.sheetLongInches = max(sheetShortInches, sheetLongInches)
        self.dpi = dpi
        self.quality = quality
        self.marginMillimetres = marginMillimetres
        self.background = background
        self.backgroundImage = backgroundImage
        self.overlay = overlay
        self.footerLines = footerLines
        self.dateFormat = dateFormat
        self.font = font
        self.textColor = textColor
        self.threads = threads
    }

    /// The options `[picture]` asks for. `picture.size = media` takes the size from `print.media`'s
    /// PWG name (`na_index-4x6_4x6in`), `picture.dpi = print` takes `print.dpi`.
    /// Throws `PictureError.mediaSize` when the media name has no size.
    public init(settings: Settings, threads: Int = 1) throws(PictureError) {
        let p = settings.picture
        let inches: (short: Double, long: Double)
        if let fixed = p.size.inches {
            inches = fixed
        } else {
            guard let media = settings.print.mediaSize else { throw PictureError.mediaSize(settings.print.media) }
            // Inches to the thousandth: 6 in is 152.4 mm, which does not divide back to exactly 6.
            let a = (media.widthMillimetres / 25.4 * 1000).rounded() / 1000
            let b = (media.heightMillimetres / 25.4 * 1000).rounded() / 1000
            inches = (min(a, b), max(a, b))
        }
        self.init(layout: p.layout, fit: p.fit == .fit, sheetShortInches: inches.short, sheetLongInches: inches.long,
                  dpi: p.dpi.dotsPerInch(printDPI: settings.print.dpi), quality: p.quality,
                  marginMillimetres: p.marginMillimetres, background: p.background, backgroundImage: p.backgroundImage,
                  overlay: p.overlay, footerLines: [p.footerTop, p.footerBottom], dateFormat: p.dateFormat, font: p.font,
                  textColor: p.textColor, threads: threads)
    }

    /// The footer lines that are not empty.
    var activeFooterLines: [String] { footerLines.filter { !$0.isEmpty } }
}
