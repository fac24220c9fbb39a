// libgpiod (Debian 12: 1.6.3, v1 API; Debian 13 / RPi OS trixie: 2.x, v2 API).
#include <gpiod.h>
