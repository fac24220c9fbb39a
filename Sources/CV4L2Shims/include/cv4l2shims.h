// CV4L2Shims: what Swift cannot import from libv4l2 and <linux/videodev2.h>.
//
// - `v4l2_open` and `v4l2_ioctl` are variadic; Swift cannot call them.
// - `VIDIOC_*` are function-like macros (`_IOWR('V', 5, struct v4l2_format)`);
//   their values depend on the struct sizes of the target ABI, so they are
//   computed here, in C, which keeps them right on 32-bit ARM too.
// - Control ids and flags built from other macros are exported as constants.
// Every name is prefixed `pb_` / `PB_`.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <linux/videodev2.h>

/// Opens a video node through libv4l2 (`v4l2_open(path, flags)`), so that
/// libv4l2 can convert formats the camera lacks (e.g. RGB24). Returns the fd,
/// or -1 with errno set.
int pb_v4l2_open(const char *path, int flags);

/// Hands an fd opened with open(2) to libv4l2 (`v4l2_fd_open(fd, 0)`), as
/// `v4l2_open` does after its open. Returns the fd, or -1 with errno set.
int pb_v4l2_fd_open(int fd);

/// Closes an fd opened with `pb_v4l2_open` (`v4l2_close`). Returns 0 or -1 with errno.
int pb_v4l2_close(int fd);

/// `v4l2_ioctl(fd, request, arg)`, retrying while it fails with EINTR (the one
/// place EINTR is retried for V4L2 ioctls). Returns 0 or -1 with errno set
/// (EAGAIN from VIDIOC_DQBUF on a non-blocking fd is a normal result).
int pb_v4l2_ioctl(int fd, unsigned long request, void *arg);

/// `v4l2_mmap(NULL, length, PROT_READ|PROT_WRITE, MAP_SHARED, fd, offset)`.
/// Returns the mapping, or NULL with errno set (instead of MAP_FAILED, which
/// Swift cannot import).
void *pb_v4l2_mmap(size_t length, int fd, int64_t offset);

/// `v4l2_munmap(start, length)`. Returns 0 or -1 with errno.
int pb_v4l2_munmap(void *start, size_t length);

/// One line of a library's own log, without its newline, and its syslog priority (3 error, 4 warning,
/// 7 debug): the booth's logger takes it from here.
typedef void (*pb_log_line_fn)(int priority, const char *line);

/// Routes libv4l2's own messages ("libv4l2: error setting pixformat: …"), which it writes to stderr
/// with no priority unless `v4l2_log_file` is set, to `fn`, a line at a time: `v4l2_log_file` becomes a
/// stream of ours (`fopencookie`; libv4l2 flushes after each message, and a flush ends a line).
/// Priorities by `pb_v4l2_log_priority`. NULL sends them to stderr again. Returns 0, or -1 with errno
/// when the stream cannot be made (then libv4l2 keeps writing to stderr).
int pb_v4l2_route_log(pb_log_line_fn fn);

/// The syslog priority of a line libv4l2 logs: "libv4l2: error …" 3, "libv4l2: warning …" 4, any other
/// "libv4l2: …" line 7 (its plugin loading), a line of libv4lconvert's 4; -1 for a line of the ioctl
/// trace libv4l2 writes once it has a log file ("request == VIDIOC_…", "result == …", indented
/// fields): dropped, not a message.
int pb_v4l2_log_priority(const char *line);

/// `poll` on one fd for `events`, with a timeout in milliseconds.
/// Returns >0 with `*revents` set, 0 on timeout, -1 with errno (EINTR is
/// returned, not retried: callers loop until their own deadline).
int pb_poll_one(int fd, short events, int timeout_ms, short *revents);

// ioctl request numbers.
extern const unsigned long PB_VIDIOC_QUERYCAP;
extern const unsigned long PB_VIDIOC_ENUM_FMT;
extern const unsigned long PB_VIDIOC_G_FMT;
extern const unsigned long PB_VIDIOC_S_FMT;
extern const unsigned long PB_VIDIOC_REQBUFS;
extern const unsigned long PB_VIDIOC_QUERYBUF;
extern const unsigned long PB_VIDIOC_QBUF;
extern const unsigned long PB_VIDIOC_DQBUF;
extern const unsigned long PB_VIDIOC_STREAMON;
extern const unsigned long PB_VIDIOC_STREAMOFF;
extern const unsigned long PB_VIDIOC_G_PARM;
extern const unsigned long PB_VIDIOC_S_PARM;
extern const unsigned long PB_VIDIOC_G_CTRL;
extern const unsigned long PB_VIDIOC_S_CTRL;
extern const unsigned long PB_VIDIOC_QUERYCTRL;
extern const unsigned long PB_VIDIOC_QUERYMENU;
extern const unsigned long PB_VIDIOC_ENUM_FRAMESIZES;
extern const unsigned long PB_VIDIOC_ENUM_FRAMEINTERVALS;

// Capabilities, buffer and format flags.
extern const uint32_t PB_V4L2_CAP_VIDEO_CAPTURE;
extern const uint32_t PB_V4L2_CAP_STREAMING;
extern const uint32_t PB_V4L2_CAP_DEVICE_CAPS;
extern const uint32_t PB_V4L2_CAP_TIMEPERFRAME;
extern const uint32_t PB_V4L2_BUF_FLAG_ERROR;
extern const uint32_t PB_V4L2_BUF_FLAG_TIMESTAMP_MASK;
extern const uint32_t PB_V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
extern const uint32_t PB_V4L2_FMT_FLAG_EMULATED;
extern const uint32_t PB_V4L2_FMT_FLAG_COMPRESSED;
extern const uint32_t PB_V4L2_CTRL_FLAG_DISABLED;
extern const uint32_t PB_V4L2_CTRL_FLAG_NEXT_CTRL;
extern const uint32_t PB_V4L2_BUF_TYPE_VIDEO_CAPTURE;
extern const uint32_t PB_V4L2_MEMORY_MMAP;
extern const uint32_t PB_V4L2_FIELD_ANY;
extern const uint32_t PB_V4L2_FRMSIZE_TYPE_DISCRETE;
extern const uint32_t PB_V4L2_FRMSIZE_TYPE_CONTINUOUS;
extern const uint32_t PB_V4L2_FRMSIZE_TYPE_STEPWISE;
extern const uint32_t PB_V4L2_FRMIVAL_TYPE_DISCRETE;
extern const uint32_t PB_V4L2_FRMIVAL_TYPE_CONTINUOUS;
extern const uint32_t PB_V4L2_FRMIVAL_TYPE_STEPWISE;
extern const uint32_t PB_V4L2_CTRL_TYPE_INTEGER;
extern const uint32_t PB_V4L2_CTRL_TYPE_BOOLEAN;
extern const uint32_t PB_V4L2_CTRL_TYPE_MENU;
extern const uint32_t PB_V4L2_CTRL_TYPE_INTEGER_MENU;
extern const uint32_t PB_V4L2_CTRL_TYPE_BUTTON;
extern const uint32_t PB_V4L2_CTRL_TYPE_CTRL_CLASS;

// Control ids the booth sets.
extern const uint32_t PB_V4L2_CID_POWER_LINE_FREQUENCY;
extern const uint32_t PB_V4L2_CID_EXPOSURE_AUTO;
extern const uint32_t PB_V4L2_CID_EXPOSURE_ABSOLUTE;
extern const uint32_t PB_V4L2_CID_AUTO_WHITE_BALANCE;
extern const uint32_t PB_V4L2_CID_WHITE_BALANCE_TEMPERATURE;
extern const uint32_t PB_V4L2_CID_FOCUS_AUTO;
extern const uint32_t PB_V4L2_CID_FOCUS_ABSOLUTE;
extern const uint32_t PB_V4L2_CID_3A_LOCK;
extern const uint32_t PB_V4L2_LOCK_EXPOSURE;
extern const uint32_t PB_V4L2_LOCK_WHITE_BALANCE;
extern const uint32_t PB_V4L2_LOCK_FOCUS;
extern const int32_t PB_V4L2_EXPOSURE_AUTO;
extern const int32_t PB_V4L2_EXPOSURE_MANUAL;
extern const int32_t PB_V4L2_EXPOSURE_APERTURE_PRIORITY;
extern const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_DISABLED;
extern const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_50HZ;
extern const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_60HZ;
extern const int32_t PB_V4L2_CID_POWER_LINE_FREQUENCY_AUTO;
