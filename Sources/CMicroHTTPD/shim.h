// GNU libmicrohttpd (Debian's libmicrohttpd-dev): photobooth-gallery's HTTP server.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
