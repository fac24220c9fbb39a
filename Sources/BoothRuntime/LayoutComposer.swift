import BoothCore
import BoothLayout
import Foundation

extension LockedPictureComposer: PictureComposing {}

/// The largest picture the booth composes, in pixels: the decoder behind the review screen and the
/// print renderer refuses JPEGs over 40 megapixels (`JPEGDecoder.maxPixels`), so a larger sheet
/// would be saved but never shown or printed.
public let maxPicturePixels = 40_000_000

/// A `[picture]` layout that cannot be composed, said in the operator's terms.
public struct PictureSetupError: Error, CustomStringConvertible, Sendable {
    /// What is wrong and which keys to change.
    public var description: String
}

/// The composer photoboothd gives the runtime: the `[picture]` layout (``LockedPictureComposer``) built
/// from `settings`, loading its font, overlay and background image now, so a missing file is reported
/// at start (or refuses a reload) rather than failing the first series.
/// - Returns: the composer, or nil when no session needs one (`session.shots` = 1 and
///   `picture.compose_single_shot` = false): the capture is the picture.
/// - Throws: ``PictureSetupError`` for a sheet over ``maxPicturePixels``; `PictureError` for a font,
///   overlay or background image that cannot be read, or a media size without dimensions.
public func makePictureComposer(_ settings: Settings) throws -> (any PictureComposing)? {
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
