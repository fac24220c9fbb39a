// libevdev (Debian: libevdev-dev): the kernel's input devices (/dev/input/event*) read as events,
// with the key state kept in sync after SYN_DROPPED; and the kernel's input event codes.
#include <libevdev/libevdev.h>
#include <linux/input.h>
// The input button thread's wake-up (eventfd(2)), which Glibc's module does not export.
#include <sys/eventfd.h>
