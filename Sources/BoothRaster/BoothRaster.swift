// BoothRaster: raster text and drawing, shared by the screens (BoothDisplay) and the pictures (BoothLayout).
//
// Owns the fonts (Font: FreeType faces rendered to AlphaMask coverage), the XRGB8888 canvas the
// screens are drawn on (Canvas), and the shapes both sides measure with (PixelRect, AlphaMask, Scaling).
// No device: it draws into memory only.
//
// May import: BoothCore, CFreeType, CYUV and the system.
