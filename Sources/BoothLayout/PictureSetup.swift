import BoothCore
import FoundationEssentials

/// The largest picture the booth composes, in pixels: the print renderer decodes the picture whole, and a
/// decode makes at most 40 megapixels (`JPEGDecoder.maxPixels`), so a larger sheet would be saved but never
/// printed.
public let maxPicturePixels = 40_000_000

/// A `[picture]` layout that cannot be composed, said in the operator's terms.
public struct PictureSetupError: Error, CustomStringConvertible, Sendable {
    /// What is wrong and which keys to change.
    public var description: String
}

/// The `[picture]` layout (``LockedPictureComposer``) built from `settings`, loading its font, overlay
/// and background image now, so a missing file is reported at start (or refuses a reload) rather than
/// failing the first series. photoboothd hands it to the runtime as its picture composer.
/// - Returns: the composer, or nil when no session needs one (`session.shots` = 1 and
///   `picture.compose_single_shot` = false): the capture is the picture.
/// - Throws: ``PictureSetupError`` for a sheet over ``maxPicturePixels``; ``PictureError`` for a font,
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
    return try LockedPictureComposer(options: options)
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
        let needed = settings.session.shots > 1 || settings.picture.composeSingleShot
        let note = needed ? "" : " (unused while session.shots = 1, but every series would fail)"
        return [sources.diagnostic(key: key, message: "\(key): \(error)\(note)", severity: needed ? .error : .warning)]
    }
}
