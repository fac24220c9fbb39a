// BoothLayout: the session's picture: captures composed on a sheet.
//
// Owns the layout geometry, the I420 canvas (libyuv), PNG overlays and backgrounds (libpng), the
// composer (PictureComposer, LockedPictureComposer) and its setup from the settings (PictureSetup.swift:
// the composer for [picture], its diagnostics for photoboothctl). photoboothd hands it to the runtime
// as the PictureComposing port.
//
// May import: BoothCore, BoothJPEG, BoothRaster (fonts, PixelRect), CTurboJPEG, CYUV, CPNG and the system.
