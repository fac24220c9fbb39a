import BoothCore
import BoothJPEG
import BoothLayout
import BoothRuntime
import FoundationEssentials

/// The `[picture]` layout as the runtime's ``PictureComposing``: composes with BoothLayout's
/// ``LockedPictureComposer`` and reads the picture's size from its JPEG frame header (TurboJPEG).
struct LayoutPictureComposer: PictureComposing {
    let layout: LockedPictureComposer

    /// - Throws: the layout's `PictureError`; `TurboJPEGError` when its output is not a JPEG.
    func composePicture(captures: [[UInt8]], takenAt: Date) throws -> ComposedPicture {
        let jpeg = try layout.composePicture(captures: captures, takenAt: takenAt)
        return ComposedPicture(jpeg: jpeg, size: try JPEGDecoder().header(jpeg).size)
    }

    func prepare(capture: [UInt8], index: Int, count: Int) { layout.prepare(capture: capture, index: index, count: count) }
}

/// The composer photoboothd gives the runtime: the `[picture]` layout built from `settings`
/// (``makeLayoutComposer(_:)``, which reads its font, overlay and background image now).
/// - Returns: the composer, or nil when no session needs one (the capture is the picture).
/// - Throws: what ``makeLayoutComposer(_:)`` throws.
public func makePictureComposer(_ settings: Settings) throws -> (any PictureComposing)? {
    try makeLayoutComposer(settings).map { LayoutPictureComposer(layout: $0) }
}
