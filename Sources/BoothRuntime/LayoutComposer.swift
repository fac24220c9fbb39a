import BoothCore
import BoothLayout
import Foundation

extension LockedPictureComposer: PictureComposing {}

/// The composer photoboothd gives the runtime: the `[picture]` layout (``LockedPictureComposer``) built
/// from `settings`, loading its font, overlay and background image now, so a missing file is reported
/// at start rather than at the first session.
/// - Returns: the composer, or nil when no session needs one (`session.shots` = 1 and
///   `picture.compose_single_shot` = false): the capture is the picture.
/// - Throws: `PictureError` (font, overlay or background image that cannot be read, media size).
public func makePictureComposer(_ settings: Settings) throws -> (any PictureComposing)? {
    guard settings.session.shots > 1 || settings.picture.composeSingleShot else { return nil }
    return try LockedPictureComposer(options: PictureOptions(settings: settings))
}
