// libyuv (Debian: libyuv-dev): SIMD scale, rotate, mirror and pixel-format conversion.
// Its "ARGB" is B, G, R, A bytes in memory: a little-endian 0xAARRGGBB word, the fbdev XRGB8888 layout.
#include <libyuv/convert_argb.h>
#include <libyuv/convert_from_argb.h>
#include <libyuv/planar_functions.h>
#include <libyuv/rotate_argb.h>
#include <libyuv/scale.h>
#include <libyuv/scale_argb.h>
