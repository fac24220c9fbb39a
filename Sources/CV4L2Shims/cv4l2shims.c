// See include/cv4l2shims.h.
#define _GNU_SOURCE  // fopencookie
#include "cv4l2shims.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <libv4l2.h>

int pb_v4l2_open(const char *path, int flags) {
    return v4l2_open(path, flags);
}

int pb_v4l2_fd_open(int fd) {
    return v4l2_fd_open(fd, 0);
}

int pb_v4l2_close(int fd) {
    return v4l2_close(fd);
}

int pb_v4l2_ioctl(int fd, unsigned long request, void *arg) {
    int r;
    do {
        r = v4l2_ioctl(fd, request, arg);
    } while (r == -1 && errno == EINTR);
    return r;
}

void *pb_v4l2_mmap(size_t length, int fd, int64_t offset) {
    void *p = v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
    return p == MAP_FAILED ? NULL : p;
}

int pb_v4l2_munmap(void *start, size_t length) {
    return v4l2_munmap(start, length);
}

int pb_v4l2_log_priority(const char *line) {
    static const char prefix[] = "libv4l2: ";
    if (line[0] == 0 || line[0] == ' ' || line[0] == '\t') return -1;  // the ioctl trace's fields
    if (strncmp(line, "request == ", 11) == 0 || strncmp(line, "result == ", 10) == 0) return -1;
    if (strncmp(line, prefix, sizeof prefix - 1) != 0) return 4;
    const char *rest = line + sizeof prefix - 1;
    if (strncmp(rest, "error", 5) == 0) return 3;
    if (strncmp(rest, "warning", 7) == 0) return 4;
    return 7;
}

/* The routed log: the line being written, and where lines go. Used only under the stream's own lock
 * (stdio locks a FILE for each call, and libv4l2 flushes after each message). */
static pb_log_line_fn log_line;
static char log_pending[1024];
static size_t log_pending_length;

static void log_emit(void) {
    if (log_pending_length == 0) return;
    log_pending[log_pending_length] = 0;
    int priority = pb_v4l2_log_priority(log_pending);
    if (priority >= 0 && log_line) log_line(priority, log_pending);
    log_pending_length = 0;
}

/* A flush of the stream: libv4l2 flushes after each message, and not every message ends its line
 * ("libv4l2: error getting capabilities: …" is followed by libv4lconvert's own on the same line), so
 * the end of a write ends a line as a newline does. */
static ssize_t log_write(void *cookie, const char *bytes, size_t size) {
    (void)cookie;
    for (size_t i = 0; i < size; i++) {
        if (bytes[i] == '\n') {
            log_emit();
        } else if (log_pending_length < sizeof log_pending - 1) {
            log_pending[log_pending_length++] = bytes[i];
        }
    }
    log_emit();
    return (ssize_t)size;
}

int pb_v4l2_route_log(pb_log_line_fn fn) {
    static FILE *routed;
    if (!fn) {
        if (v4l2_log_file == routed) v4l2_log_file = NULL;
        return 0;
    }
    if (!routed) {
        cookie_io_functions_t io = { .read = NULL, .write = log_write, .seek = NULL, .close = NULL };
        routed = fopencookie(NULL, "w", io);
        if (!routed) return -1;
        setvbuf(routed, NULL, _IOFBF, sizeof log_pending - 1);
    }
    flockfile(routed);
    log_line = fn;
    funlockfile(routed);
    v4l2_log_file = routed;
    return 0;
}

int pb_poll_one(int fd, short events, int timeout_ms, short *revents) {
    struct pollfd p = { .fd = fd, .events = events, .revents = 0 };
    int r = poll(&p, 1, timeout_ms);
    if (revents) *revents = p.revents;
    return r;
}

const unsigned long PB_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long PB_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long PB_VIDIOC_G_FMT = VIDIOC_G_FMT;
const unsigned long PB_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long PB_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long PB_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long PB_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long PB_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long PB_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long PB_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
const unsigned long PB_VIDIOC_G_PARM = VIDIOC_G_PARM;
const unsigned long PB_VIDIOC_S_PARM = VIDIOC_S_PARM;
const unsigned long PB_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
const unsigned long PB_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
const unsigned long PB_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
const unsigned long PB_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
const unsigned long PB_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long PB_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;

const uint32_t PB_V4L2_CAP_VIDEO_CAPTURE = V4L2_CAP_VIDEO_CAPTURE;
const uint32_t PB_V4L2_CAP_STREAMING = V4L2_CAP_STREAMING;
const uint32_t PB_V4L2_CAP_DEVICE_CAPS = V4L2_CAP_DEVICE_CAPS;
const uint32_t PB_V4L2_CAP_TIMEPERFRAME = V4L2_CAP_TIMEPERFRAME;
const uint32_t PB_V4L2_BUF_FLAG_ERROR = V4L2_BUF_FLAG_ERROR;
const uint32_t PB_V4L2_BUF_FLAG_TIMESTAMP_MASK = V4L2_BUF_FLAG_TIMESTAMP_MASK;
const uint32_t PB_V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
const uint32_t PB_V4L2_FMT_FLAG_EMULATED = V4L2_FMT_FLAG_EMULATED;
const uint32_t PB_V4L2_FMT_FLAG_COMPRESSED = V4L2_FMT_FLAG_COMPRESSED;
const uint32_t PB_V4L2_CTRL_FLAG_DISABLED = V4L2_CTRL_FLAG_DISABLED;
const uint32_t PB_V4L2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
const uint32_t PB_V4L2_BUF_TYPE_VIDEO_CAPTURE = V4L2_BUF_TYPE_VIDEO_CAPTURE;
const uint32_t PB_V4L2_MEMORY_MMAP = V4L2_MEMORY_MMAP;
const uint32_t PB_V4L2_FIELD_ANY = V4L2_FIELD_ANY;
const uint32_t PB_V4L2_FRMSIZE_TYPE_DISCRETE = V4L2_FRMSIZE_TYPE_DISCRETE;
const uint32_t PB_V4L2_FRMSIZE_TYPE_CONTINUOUS = V4L2_FRMSIZE_TYPE_CONTINUOUS;
const uint32_t PB_V4L2_FRMSIZE_TYPE_STEPWISE = V4L2_FRMSIZE_TYPE_STEPWISE;
const uint32_t PB_V4L2_FRMIVAL_TYPE_DISCRETE = V4L2_FRMIVAL_TYPE_DISCRETE;
const uint32_t PB_V4L2_FRMIVAL_TYPE_CONTINUOUS = V4L2_FRMIVAL_TYPE_CONTINUOUS;
const uint32_t PB_V4L2_FRMIVAL_TYPE_STEPWISE = V4L2_FRMIVAL_TYPE_STEPWISE;
const uint32_t PB_V4L2_CTRL_TYPE_INTEGER = V4L2_CTRL_TYPE_INTEGER;
const uint32_t PB_V4L2_CTRL_TYPE_BOOLEAN = V4L2_CTRL_TYPE_BOOLEAN;
const uint32_t PB_V4L2_CTRL_TYPE_MENU = V4L2_CTRL_TYPE_MENU;
const uint32_t PB_V4L2_CTRL_TYPE_INTEGER_MENU = V4L2_CTRL_TYPE_INTEGER_MENU;
const uint32_t PB_V4L2_CTRL_TYPE_BUTTON = V4L2_CTRL_TYPE_BUTTON;
const uint32_t PB_V4L2_CTRL_TYPE_CTRL_CLASS = V4L2_CTRL_TYPE_CTRL_CLASS;

const uint32_t PB_V4L2_CID_POWER_LINE_FREQUENCY = V4L2_CID_POWER_LINE_FREQUENCY;
const uint32_t PB_V4L2_CID_EXPOSURE_AUTO = V4L2_CID_EXPOSURE_AUTO;
const uint32_t PB_V4L2_CID_EXPOSURE_ABSOLUTE = V4L2_CID_EXPOSURE_ABSOLUTE;
const uint32_t PB_V4L2_CID_AUTO_WHITE_BALANCE = V4L2_CID_AUTO_WHITE_BALANCE;
const uint32_t PB_V4L2_CID_WHITE_BALANCE_TEMPERATURE = V4L2_CID_WHITE_BALANCE_TEMPERATURE;
const uint32_t PB_V4L2_CID_FOCUS_AUTO = V4L2_CID_FOCUS_AUTO;
const uint32_t PB_V4L2_CID_FOCUS_ABSOLUTE = V4L2_CID_FOCUS_ABSOLUTE;
const uint32_t PB_V4L2_CID_3A_LOCK = V4L2_CID_3A_LOCK;
const uint32_t PB_V4L2_LOCK_EXPOSURE = V4L2_LOCK_EXPOSURE;
const uint32_t PB_V4L2_LOCK_WHITE_BALANCE = V4L2_LOCK_WHITE_BALANCE;
const uint32_t PB_V4L2_LOCK_FOCUS = V4L2_LOCK_FOCUS;
const int32_t PB_V4L2_EXPOSURE_AUTO = V4L2_EXPOSURE_AUTO;
const int32_t PB_V4L2_EXPOSURE_MANUAL = V4L2_EXPOSURE_MANUAL;
const int32_t PB_V4L2_EXPOSURE_APERTURE_PRIORITY = V4L2_EXPOSURE_APERTURE_PRIORITY;
const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_DISABLED = V4L2_CID_POWER_LINE_FREQUENCY_DISABLED;
const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_50HZ = V4L2_CID_POWER_LINE_FREQUENCY_50HZ;
const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_60HZ = V4L2_CID_POWER_LINE_FREQUENCY_60HZ;
const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_AUTO = V4L2_CID_POWER_LINE_FREQUENCY_AUTO;
