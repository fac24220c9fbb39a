/// An sRGB colour, 8 bits per channel, as `picture.background` and `picture.text_color` are written:
/// `#rrggbb` or one of the names in `RGBColor.named`.
public struct RGBColor: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// The colour names a config may use, with their values.
    public static let named: [(name: String, color: RGBColor)] = [
        ("white", RGBColor(red: 255, green: 255, blue: 255)),
        ("black", RGBColor(red: 0, green: 0, blue: 0)),
        ("grey", RGBColor(red: 128, green: 128, blue: 128)),
        ("red", RGBColor(red: 255, green: 0, blue: 0)),
        ("green", RGBColor(red: 0, green: 128, blue: 0)),
        ("blue", RGBColor(red: 0, green: 0, blue: 255)),
        ("yellow", RGBColor(red: 255, green: 255, blue: 0)),
        ("pink", RGBColor(red: 255, green: 192, blue: 203)),
        ("gold", RGBColor(red: 255, green: 215, blue: 0)),
    ]

    /// Reads `#rrggbb` (any letter case) or a name from `named`; nil otherwise.
    public init?(parsing text: String) {
        let lower = text.lowercased()
        if let hit = RGBColor.named.first(where: { $0.name == lower }) {
            self = hit.color
            return
        }
        let hex = Array(lower.utf8)
        guard hex.count == 7, hex[0] == UInt8(ascii: "#"), let v = UInt32(String(lower.dropFirst()), radix: 16) else {
            return nil
        }
        self.init(red: UInt8(v >> 16), green: UInt8((v >> 8) & 0xFF), blue: UInt8(v & 0xFF))
    }

    /// The name when the colour has one, else `#rrggbb`.
    public var description: String {
        if let hit = RGBColor.named.first(where: { $0.color == self }) { return hit.name }
        let digits = Array("0123456789abcdef")
        var s = "#"
        for c in [red, green, blue] { s.append(digits[Int(c >> 4)]); s.append(digits[Int(c & 0xF)]) }
        return s
    }
}

/// `picture.layout`: how the captures of a session are arranged on the picture.
public enum PictureLayoutSetting: String, SettingChoice {
    /// By the number of shots: 1 single, 2 strip, 3 3up, 4 2x2; the sheet turned to suit the captures.
    case auto
    /// One capture filling the sheet.
    case single
    /// Four captures in two rows of two.
    case grid2x2 = "2x2"
    /// Up to four captures in a column, twice side by side on the sheet (cut into two strips).
    case strip
    /// Three captures in a row (portrait captures) or a column (landscape captures).
    case threeUp = "3up"
}

/// `picture.size`: the sheet the picture is composed for.
public enum PictureSizeSetting: String, SettingChoice {
    /// The size of `print.media`.
    case media
    case in4x6 = "4x6in"
    case in5x7 = "5x7in"
    case in6x8 = "6x8in"
    case in2x6 = "2x6in"

    /// Short and long side in inches; nil for `media`.
    public var inches: (short: Double, long: Double)? {
        switch self {
        case .media: nil
        case .in4x6: (4, 6)
        case .in5x7: (5, 7)
        case .in6x8: (6, 8)
        case .in2x6: (2, 6)
        }
    }
}

/// `picture.dpi`: the picture's resolution.
public enum PictureDPISetting: String, SettingChoice {
    /// As `print.dpi`.
    case print
    case dpi150 = "150"
    case dpi200 = "200"
    case dpi300 = "300"
    case dpi600 = "600"

    /// Dots per inch, with `printDPI` for `.print`.
    public func dotsPerInch(printDPI: Int) -> Int { Int(rawValue) ?? printDPI }
}

/// `picture.qr`: where the printed page carries the QR code of the picture's URL, or off.
public enum PictureQRSetting: String, SettingChoice {
    case off
    case topLeft = "top-left"
    case topRight = "top-right"
    case bottomLeft = "bottom-left"
    case bottomRight = "bottom-right"
}

extension Settings {
    /// `[picture]`: the composed picture of a session (layout, sheet, background, overlay, footer).
    public struct Picture: Sendable, Hashable {
        /// `picture.compose_single_shot`: compose one-shot sessions too (else the capture is the picture).
        public var composeSingleShot = false
        /// `picture.layout`.
        public var layout = PictureLayoutSetting.auto
        /// `picture.fit`: fill (crop) or fit (letterbox) each capture in its slot.
        public var fit = ScalingSetting.fill
        /// `picture.size`: the sheet, or `.media` for `print.media`'s size.
        public var size = PictureSizeSetting.media
        /// `picture.dpi`.
        public var dpi = PictureDPISetting.print
        /// `picture.quality`: JPEG quality 1…100 of the picture (4:2:0).
        public var quality = 92
        /// `picture.margin`: margin around and between the captures, in millimetres.
        public var marginMillimetres = 0
        /// `picture.background`: the sheet's colour.
        public var background = RGBColor(red: 255, green: 255, blue: 255)
        /// `picture.background_image`: a JPEG or PNG filling the sheet under the captures; empty for none.
        public var backgroundImage = ""
        /// `picture.overlay`: a PNG with transparency drawn over everything; empty for none.
        public var overlay = ""
        /// `picture.footer_top`, `picture.footer_bottom`: footer lines, `{date}` replaced by the date; empty lines are left out.
        public var footerTop = ""
        public var footerBottom = ""
        /// `picture.date_format`: strftime(3) format of `{date}`.
        public var dateFormat = ""
        /// `picture.font`: TrueType/OpenType font of the footer.
        public var font = ""
        /// `picture.text_color`: colour of the footer text.
        public var textColor = RGBColor(red: 0, green: 0, blue: 0)
        /// `picture.qr`: the corner of the printed page that carries the picture's URL as a QR code, or off.
        public var qr = PictureQRSetting.off
    }
}
