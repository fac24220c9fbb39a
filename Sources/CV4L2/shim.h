// libv4l2 (Debian: libv4l-dev) and the kernel's V4L2 UAPI.
#include <linux/videodev2.h>
#include <libv4l2.h>
