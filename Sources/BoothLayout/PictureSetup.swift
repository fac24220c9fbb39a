import BoothCore
import BoothRaster
import FoundationEssentials

/// The largest picture the booth composes, in pixels: the print renderer decodes the picture whole, and a
/// decode makes at most 40 megapixels (`JPEGDecoder.maxPixels`), so a larger sheet would be saved but never
/// printed.
public let maxPicturePixels = 40_000_000

/// The least a capture's slot may measure on its shorter side, in millimetres at the picture's dpi:
/// a classic photo strip's slots (4 on a 2 in strip, with margins) are about 19 x 30 mm, and at 15 mm a
/// face of a group of guests (a third of the slot) prints 5 mm high; below it the sheet is mostly margin.
public let minimumSlotMillimetres = 15
/// ...and never fewer pixels than this (a face of a third of it then has some 20 pixels), for low dpi.
public let minimumSlotPixels = 64

/// A `[picture]` layout that cannot be composed, said in the operator's terms.
public struct PictureSetupError: Error, CustomStringConvertible, Sendable {
    /// What is wrong and which keys to change.
    public var description: String
    /// The keys at fault, the one to change first; empty when the dpi is (picture.dpi, or print.dpi).
    public var keys: [String] = []
}

/// The `[picture]` layout (``LockedPictureComposer``) built from `settings`, loading its font, overlay
/// and background image now, so a missing file is reported at start (or refuses a reload) rather than
/// failing the first series. photoboothd hands it to the runtime as its picture composer.
/// - Returns: the composer, or nil when no session needs one (`session.shots` = 1 and
///   `picture.compose_single_shot` = false): the capture is the picture.
/// - Throws: ``PictureSetupError`` for a sheet over ``maxPicturePixels`` or slots under ``minimumSlotMillimetres``
///   (``PictureSetupError/keys`` names them); ``PictureError`` for a font,
///   overlay or background image that cannot be read, or a media size without dimensions.
public func makeLayoutComposer(_ settings: Settings) throws -> LockedPictureComposer? {
    guard settings.session.shots > 1 || settings.picture.composeSingleShot else { return nil }
    let options = try PictureOptions(settings: settings)
    let width = options.sheetShortInches * Double(options.dpi), height = options.sheetLongInches * Double(options.dpi)
    guard width * height <= Double(maxPicturePixels) else {
        let fits = Int((Double(maxPicturePixels) / (options.sheetShortInches * options.sheetLongInches)).squareRoot())
        throw PictureSetupError(description: "picture.size and picture.dpi make a \(Int(width))x\(Int(height)) picture, "
                                + "over the \(maxPicturePixels / 1_000_000) megapixels the booth can show and print; "
                                + "use a dpi of at most \(fits) (picture.dpi, or print.dpi when picture.dpi = print)")
    }
    if let small = smallSlots(settings, options) { throw small }
    return try LockedPictureComposer(options: options)
}

/// Slots smaller than ``minimumSlotMillimetres`` (and ``minimumSlotPixels``) on their shorter side, for
/// `settings`' layout, shots, margin, footer and sheet, with captures of `camera.capture_size` turned by
/// `camera.rotation` (both ways for auto; a gphoto2 camera's as 3:2): an error naming `picture.margin`,
/// `picture.layout` and the sheet's key, with the largest margin that fits; nil when every slot fits.
func smallSlots(_ settings: Settings, _ options: PictureOptions) -> PictureSetupError? {
    let shots = max(1, settings.session.shots)
    let layout = PictureLayout(options.layout, shotCount: shots)
    let capture = settings.camera.backend == .gphoto2 ? FrameSize(width: 3, height: 2) : settings.camera.captureSize
    let turned = FrameSize(width: capture.height, height: capture.width)
    let captures: [FrameSize] = switch settings.camera.rotation {
    case .r0, .r180: [capture]
    case .r90, .r270: [turned]
    case .auto: [capture, turned]
    }
    let least = max(minimumSlotPixels, Int((Double(minimumSlotMillimetres) / 25.4 * Double(options.dpi)).rounded(.up)))
    /// The smallest slot's size with `margin` mm, over the captures' orientations.
    func smallest(margin: Int) -> PixelRect? {
        captures.flatMap { size in
            PicturePlan(layout: layout, captureSizes: Array(repeating: size, count: shots),
                        sheetInches: (options.sheetShortInches, options.sheetLongInches), dpi: options.dpi,
                        marginMillimetres: margin, footerLines: options.activeFooterLines.count, fit: options.fit).slots
        }.min { min($0.width, $0.height) < min($1.width, $1.height) }
    }
    guard let slot = smallest(margin: options.marginMillimetres), min(slot.width, slot.height) < least else { return nil }
    func value(_ key: String) -> String { "\(key) = \(settings.text(forKey: key) ?? "")" }
    let sheetKey = settings.picture.size == .media ? "print.media" : "picture.size"
    let layoutText = value("picture.layout") + (settings.picture.layout == .auto ? " (\(layout.rawValue) for \(shots) shot\(shots == 1 ? "" : "s"))" : "")
    func inches(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(x) }
    let across = Double(min(slot.width, slot.height)) / Double(options.dpi) * 25.4
    let fits = stride(from: options.marginMillimetres - 1, through: 0, by: -1).first { m in
        smallest(margin: m).map { min($0.width, $0.height) >= least } ?? false
    }
    let fix = fits.map { "set picture.margin = \($0) or less, a layout with fewer slots, or larger media" }
        ?? "no margin makes them large enough: choose a layout with fewer slots (picture.layout), or larger media"
    return PictureSetupError(description: "\(value("picture.margin")) with \(layoutText) on \(value(sheetKey)) "
        + "(\(inches(options.sheetShortInches))x\(inches(options.sheetLongInches)) in at \(options.dpi) dpi) leaves slots of "
        + "\(slot.width)x\(slot.height) pixels (\(Int(across)) mm across): a capture's slot needs at least \(minimumSlotMillimetres) mm "
        + "(\(least) pixels at \(options.dpi) dpi) on its shorter side to show a face; \(fix)",
        keys: ["picture.margin", "picture.layout", sheetKey])
}

/// What `photoboothd` would say of the `[picture]` files in `settings` (font, overlay, background
/// image, sheet size), as config diagnostics for `photoboothctl config validate` and `config set`:
/// an error when sessions need the composer (`session.shots` > 1 or `picture.compose_single_shot`),
/// else a warning (a later change to the shot count would fail). Empty when the composer can be made.
/// - Parameters:
///   - file: the config file's name for the diagnostic; `text`: its text, to find the key's line.
public func pictureDiagnostics(_ settings: Settings, file: String, text: String?) -> [Diagnostic] {
    pictureDiagnostics(settings, sources: SettingSources(file: file, text: text))
}

/// ``pictureDiagnostics(_:file:text:)`` for settings whose keys may come from the command line: the
/// diagnostic is located where the key was set (`file:line`, or `--set picture.overlay=…`).
public func pictureDiagnostics(_ settings: Settings, sources: SettingSources) -> [Diagnostic] {
    var all = settings
    all.picture.composeSingleShot = true
    do {
        _ = try makeLayoutComposer(all)
        return []
    } catch {
        let needed = settings.session.shots > 1 || settings.picture.composeSingleShot
        let note = needed ? "" : " (unused while session.shots = 1, but every series would fail)"
        // The keys of small slots, located where the first the operator set is.
        if let setup = error as? PictureSetupError, let first = setup.keys.first {
            return [sources.diagnostic(keys: setup.keys, message: "\(first): \(error)\(note)", severity: needed ? .error : .warning)]
        }
        // The key to change, located where it was set: picture.dpi = print and picture.size = media
        // take print.dpi and print.media, which are then the keys at fault.
        let key: String
        switch error {
        case let PictureError.png(path, _): key = path == settings.picture.overlay ? "picture.overlay" : "picture.background_image"
        case PictureError.backgroundImage: key = "picture.background_image"
        case PictureError.font: key = "picture.font"
        case PictureError.mediaSize: key = settings.picture.size == .media ? "print.media" : "picture.size"
        default: key = settings.picture.dpi == .print ? "print.dpi" : "picture.dpi"
        }
        return [sources.diagnostic(key: key, message: "\(key): \(error)\(note)", severity: needed ? .error : .warning)]
    }
}
