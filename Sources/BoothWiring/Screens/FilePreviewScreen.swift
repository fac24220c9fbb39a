import BoothCore

extension ScreenKind {
    /// The file preview (``FilePreview``): beside the `display.device` screen whenever `preview.file` is set.
    public static let filePreview = ScreenKind(name: "file", role: .alongside(wanted: { !$0.preview.file.isEmpty }),
                                               make: { filePreviewDisplays($0.settings, $0.clock, $0.log, $0.orientation) })
}
