// libpng 1.6 (Debian: libpng-dev): its simplified API (png_image) reads the picture's PNG overlay
// and background image, with their alpha.
#include <png.h>

// PNG_FORMAT_BGRA as a constant Swift can import: B, G, R, A bytes, libyuv's "ARGB" order.
static const unsigned int cpng_format_bgra = PNG_FORMAT_BGRA;
// PNG_FORMAT_RGBA likewise (R, G, B, A bytes).
static const unsigned int cpng_format_rgba = PNG_FORMAT_RGBA;
