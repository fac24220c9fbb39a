// BoothJPEG: JPEG and pixels: encode, decode, turn.
//
// Owns TurboJPEG (JPEGEncoder, JPEGDecoder, the lossless transform for whole-MCU JPEGs), libyuv planes
// and turns (YUVPlanes), JPEG marker walking and the EXIF orientation.
//
// May import: BoothCore, CTurboJPEG, CYUV and the system.
