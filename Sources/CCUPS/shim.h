// libcups (Debian: libcups2-dev; it ships no pkg-config file, so the library is linked by name).
#include <cups/cups.h>
#include <cups/ipp.h>
#include <cups/http.h>
