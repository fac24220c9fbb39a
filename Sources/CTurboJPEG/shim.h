// libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev).
#include <stddef.h>
#include <turbojpeg.h>
