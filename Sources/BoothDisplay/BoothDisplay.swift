// BoothDisplay: the screens, behind the DisplaySink port, and the booth's one orientation source.
//
// Owns the framebuffer (fbdev, its formats, the VT console), the KMS screen (KMSFramebuffer: a
// connected connector's preferred mode, dumb buffers, page flips on vblank, DRM master; PendingScreen
// for a card whose screen is plugged in later), the screen drawing (ScreenRenderer, Canvas, FreeType
// fonts, picture scaling) on a thread of its own (FramebufferDisplay), and OrientationTracker (the
// OrientationSource port: fixed turns or the IIO accelerometer).
//
// May import: BoothCore, BoothPorts, BoothClock, BoothJPEG, BoothQRCode, CTurboJPEG, CFreeType, CYUV, CFramebufferShims,
// CDRMShims and the system.
