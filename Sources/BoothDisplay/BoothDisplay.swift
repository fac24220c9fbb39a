// BoothDisplay: the screens, behind the DisplaySink port.
//
// Owns the framebuffer (fbdev, its formats, the VT console), the KMS screen (KMSFramebuffer: a
// connected connector's preferred mode, dumb buffers, page flips on vblank, DRM master; PendingScreen
// for a card whose screen is plugged in later), and the screen drawing (ScreenRenderer, picture
// scaling) on a thread of its own (FramebufferDisplay). The canvas and the fonts it draws with are
// BoothRaster's; the turns it draws by come from the booth's one OrientationSource (BoothOrientation).
//
// May import: BoothCore, BoothPorts, BoothClock, BoothJPEG, BoothRaster, BoothQRCode, CTurboJPEG, CYUV, CFramebufferShims,
// CDRMShims and the system.
