/* pb_libcamera.h: a small C interface over libcamera's C++ API, for the booth's Swift side.
 *
 * libcamera's API is C++ and changes between minor versions; this interface does not: every
 * version difference is handled in pb_libcamera.cpp alone. Built and run against Debian 12's
 * libcamera 0.0.3; compile-checked against the other Debian versions (hardware/libcamera-check.sh).
 *
 * Threads: a manager and its cameras may be used from one thread at a time (the booth's camera
 * thread). pb_lc_camera_wait_frame blocks that thread (a condition variable fed by libcamera's own
 * thread, on which requests complete); nothing here runs on Swift's cooperative pool.
 *
 * Errors are negative errno values (-ENODEV: no such camera or it went away; -EBUSY: another
 * process or camera object holds it; -EINVAL: a configuration libcamera refuses; -ENOMEM), with
 * words in pb_lc_last_error() for the thread that saw them.
 */
#ifndef PB_LIBCAMERA_H
#define PB_LIBCAMERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pb_lc_manager pb_lc_manager;
typedef struct pb_lc_camera pb_lc_camera;

/** libcamera's version string (CameraManager::version(), "v0.0.3"). */
const char *pb_lc_version(void);

/** The words of the last error on the calling thread ("" when none). */
const char *pb_lc_last_error(void);

/** One line of libcamera's log, without its newline, and its syslog priority (3 error, 4 warning,
 *  6 info, 7 debug): the booth's logger takes it from here. */
typedef void (*pb_lc_log_fn)(int priority, const char *line);

/** Routes libcamera's log to fn (logSetStream, colours off), a line at a time as pb_lc_log_line makes
 *  it, from whichever thread logs (libcamera's own threads too). NULL: back to stderr. Sets
 *  LIBCAMERA_LOG_LEVELS to *:ERROR unless it is set; an operator's LIBCAMERA_LOG_FILE is left in
 *  force (nothing routed). */
void pb_lc_route_log(pb_lc_log_fn fn);

/** One line libcamera logs ("[0:00:01.234567890] [812] ERROR V4L2 v4l2_videodevice.cpp:1906 msg", its
 *  severity colour-coded or not) as the booth logs it: ANSI colour sequences stripped, the timestamp
 *  and thread dropped, the severity as the priority (FATAL and ERROR 3, WARN 4, INFO 6, DEBUG 7),
 *  "libcamera: V4L2 v4l2_videodevice.cpp:1906 msg" into out (truncated to out_len - 1 bytes). A line
 *  of another shape (a message's second line) is kept whole at 6. Returns the priority. */
int pb_lc_log_line(const char *raw, char *out, size_t out_len);

/** A handle on the process's camera manager (CameraManager::start: enumerates the media devices and
 *  their pipeline handlers). libcamera allows one CameraManager a process, so all handles share one,
 *  started with the first and stopped with the last; the next first one enumerates afresh. Sets
 *  LIBCAMERA_LOG_LEVELS to *:ERROR unless it is set. NULL with *error (negative errno) when it cannot start. */
pb_lc_manager *pb_lc_manager_new(int *error);
/** Stops and frees the manager; every camera opened from it must be closed first. */
void pb_lc_manager_free(pb_lc_manager *manager);

/** The number of cameras the manager found (CameraManager::cameras()). */
int pb_lc_camera_count(pb_lc_manager *manager);

/** Where a camera sits (properties::Location); PB_LC_LOCATION_UNKNOWN when it does not say. */
enum { PB_LC_LOCATION_UNKNOWN = -1, PB_LC_LOCATION_FRONT = 0, PB_LC_LOCATION_BACK = 1, PB_LC_LOCATION_EXTERNAL = 2 };

typedef struct {
    char id[256];       /**< Camera::id(): "platform/vimc.0 Sensor B", "/base/soc/i2c0mux/i2c@1/imx708@1a" */
    char model[128];    /**< properties::Model, "" when absent */
    int32_t location;   /**< PB_LC_LOCATION_* */
    uint32_t pixel_array_width, pixel_array_height;  /**< properties::PixelArraySize, 0 when absent (pixels) */
    int32_t has_autofocus;  /**< 1 when the camera has controls::AfTrigger */
    int32_t has_ae, has_awb, has_ae_flicker;  /**< controls::AeEnable, AwbEnable, AeFlickerMode (newer libcamera) */
    int32_t has_ae_flicker_auto;  /**< AeFlickerMode offers FlickerAuto (the camera detects the lamps' period) */
    int32_t has_frame_duration_limits;  /**< controls::FrameDurationLimits (the frame rate can be asked) */
    int32_t control_count;  /**< the number of controls (Camera::controls()) */
} pb_lc_camera_info;

/** Fills *out for camera index (0-based). 0, or -ENODEV for an index out of range. */
int pb_lc_camera_get_info(pb_lc_manager *manager, int index, pb_lc_camera_info *out);
/** The name of control `control` (0-based, < control_count) of camera `index`, into buf (NUL-terminated). */
int pb_lc_camera_control_name(pb_lc_manager *manager, int index, int control, char *buf, size_t length);

/** Stream roles (libcamera::StreamRole). */
enum { PB_LC_ROLE_VIEWFINDER = 0, PB_LC_ROLE_STILL = 1, PB_LC_ROLE_VIDEO = 2, PB_LC_ROLE_RAW = 3 };

/** A pixel format and a size range a stream of a role offers (StreamFormats). fourcc: libcamera's
 *  (DRM) fourcc, e.g. 'NV12', 'YU12' (YUV420), 'RG24' (RGB888: B, G, R bytes in memory), 'BG24'
 *  (BGR888: R, G, B bytes in memory). Sizes in pixels. */
typedef struct {
    uint32_t fourcc;
    uint32_t min_width, min_height, max_width, max_height;
    uint32_t size_count;  /**< discrete sizes listed (StreamFormats::sizes), 0 for a range only */
    char name[32];        /**< libcamera's name (PixelFormat::toString: "NV12", "SRGGB10_CSI2P") */
} pb_lc_stream_format;

/** Up to `max` formats a stream of `role` offers on camera `index`; the count written, or a negative errno
 *  (-EINVAL: the camera offers no stream of that role, as vimc's pipeline has no raw one). */
int pb_lc_camera_stream_formats(pb_lc_manager *manager, int index, int role, pb_lc_stream_format *out, int max);

/** A size in pixels. */
typedef struct { uint32_t width, height; } pb_lc_size;
/** Up to `max` discrete sizes (StreamFormats::sizes) format `fourcc` has for a stream of `role` on camera
 *  `index`: for the raw role, the sensor's modes. The count written (0 for a range only), or a negative errno. */
int pb_lc_camera_stream_sizes(pb_lc_manager *manager, int index, int role, uint32_t fourcc, pb_lc_size *out, int max);

/** The video capture nodes of camera `id` ("/dev/video2"; several separated by newlines) into buf
 *  (NUL-terminated): the nodes another process holds when the camera is in use. Their count, or a
 *  negative errno (-ENODEV: no such camera). */
int pb_lc_camera_video_nodes(pb_lc_manager *manager, const char *id, char *buf, size_t length);
/** Opens camera `id` (CameraManager::get, Camera::acquire). NULL with *error: -ENODEV (no such
 *  camera), -EBUSY (in use), or another negative errno. */
pb_lc_camera *pb_lc_camera_open(pb_lc_manager *manager, const char *id, int *error);
/** Stops the camera if it streams, frees its buffers and requests, releases it (Camera::release). */
void pb_lc_camera_close(pb_lc_camera *camera);

/** One stream to configure: role, fourcc and size asked; libcamera's answer written back (the
 *  fourcc and size it adjusted to, the stride in bytes of plane 0, the frame size in bytes, the
 *  buffer count). */
typedef struct {
    int32_t role;
    uint32_t fourcc;
    uint32_t width, height;
    uint32_t stride;
    uint32_t frame_size;
    uint32_t buffer_count;
} pb_lc_stream_config;

/** Configures one stream (Camera::generateConfiguration, CameraConfiguration::validate,
 *  Camera::configure). 0 when taken as asked, 1 when libcamera adjusted it (see *stream), a
 *  negative errno when it is invalid or configure fails. Stops the camera first when it streams. */
int pb_lc_camera_configure(pb_lc_camera *camera, pb_lc_stream_config *stream);

/** What pb_lc_camera_configure would give for *stream (Camera::generateConfiguration and
 *  CameraConfiguration::validate only: nothing configured, allowed while the camera streams): libcamera's
 *  answer written back. 0 taken as asked, 1 adjusted, a negative errno when invalid. */
int pb_lc_camera_validate(pb_lc_camera *camera, pb_lc_stream_config *stream);

/** Configures two streams, a viewfinder and a still stream beside it (roles Viewfinder and StillCapture),
 *  as pb_lc_camera_configure does one: libcamera's answers written back to each. -ENOTSUP when the
 *  pipeline gives one stream only (generateConfiguration or validate keeps one: vimc, UVC, Debian 12's
 *  simple pipeline); the camera is then unconfigured, and pb_lc_camera_configure is the way. With two
 *  streams, every request carries a viewfinder buffer and a still buffer joins one only when asked
 *  (pb_lc_camera_request_still), so the live view never stops for a still. */
int pb_lc_camera_configure_pair(pb_lc_camera *camera, pb_lc_stream_config *viewfinder, pb_lc_stream_config *still);

/** The clockwise turn (degrees) the next pb_lc_camera_configure or pb_lc_camera_configure_pair asks
 *  libcamera for (CameraConfiguration::orientation from 0.2, ::transform before): 0 or 180, what a
 *  sensor's horizontal and vertical flips give for free (a quarter turn needs a transpose no sensor
 *  does). Whether the pipeline took it is pb_lc_camera_turn's answer. 0, or -EINVAL for other degrees. */
int pb_lc_camera_want_turn(pb_lc_camera *camera, int degrees);

/** How the frames of the configuration in force are turned (what validate left of the turn asked, or
 *  the sensor's mounting where the pipeline cannot undo it): the picture in the buffers is the upright one
 *  mirrored left to right when *mirrored is 1, then turned *degrees clockwise (0, 90, 180, 270). 0, or
 *  -EPIPE when not configured. */
int pb_lc_camera_turn(pb_lc_camera *camera, int *degrees, int *mirrored);

/** Controls for the next requests. -1 leaves a control as it is; a control the camera lacks is skipped. */
typedef struct {
    int32_t ae_enable;     /**< controls::AeEnable: 1 auto exposure, 0 off (locked) */
    int32_t awb_enable;    /**< controls::AwbEnable */
    int32_t af_continuous; /**< controls::AfMode Continuous (1) or Manual (0: the lens stays where it is) */
    int32_t flicker_hz;    /**< controls::AeFlickerMode (libcamera 0.2 and later): 50 or 60 manual at the lamps'
                                period for that mains frequency, 0 off, 1 auto (where the camera offers it) */
    int32_t frame_duration_us;  /**< controls::FrameDurationLimits, both limits this many microseconds (> 0) */
} pb_lc_controls;

/** Allocates the buffers (FrameBufferAllocator), maps their planes (dmabuf mmap, read-only), makes
 *  one request a buffer, starts the camera with `controls` (may be NULL) and queues every request. */
int pb_lc_camera_start(pb_lc_camera *camera, const pb_lc_controls *controls);
/** Stops the camera (Camera::stop: pending requests complete as cancelled) and frees buffers;
 *  -ENODEV, without Camera::stop, when its video nodes went away (see pb_lc_camera_wait_frame). */
int pb_lc_camera_stop(pb_lc_camera *camera);
/** Sets `controls` on the next request queued. */
int pb_lc_camera_set_controls(pb_lc_camera *camera, const pb_lc_controls *controls);
/** Starts an autofocus cycle (controls::AfMode Auto, AfTrigger Start) on the next request;
 *  -ENOTSUP for a camera without autofocus. The outcome is in pb_lc_frame.af_state. */
int pb_lc_camera_trigger_autofocus(pb_lc_camera *camera);

/** A completed request's frame. The planes point into the mapped buffer and stay valid until
 *  pb_lc_camera_requeue(cookie) or stop. */
typedef struct {
    int32_t status;          /**< 0 complete, 1 cancelled, 2 a buffer error (FrameMetadata::FrameError) */
    uint64_t cookie;         /**< give it back to pb_lc_camera_requeue */
    uint64_t sequence;       /**< FrameMetadata::sequence */
    uint64_t timestamp_ns;   /**< FrameMetadata::timestamp (CLOCK_MONOTONIC, ns): the start of exposure */
    uint32_t fourcc, width, height, stride;
    uint32_t plane_count;
    const uint8_t *planes[3];
    uint32_t plane_bytes[3];  /**< bytes used of each plane (FrameMetadata::planes()[i].bytesused) */
    int32_t af_state;         /**< controls::AfState of the request's metadata, -1 when absent */
    uint32_t skipped;         /**< older completed requests requeued unread to give this newest one */
} pb_lc_frame;

/** Waits up to timeout_ms for a completed request and gives the newest (older ones are requeued).
 *  1 with *out filled, 0 on timeout, -ENODEV when the camera was disconnected (Camera::disconnected,
 *  or one of its video nodes gone: pipelines without hotplug never signal it), -EPIPE when it is not
 *  started. A camera whose nodes went away is never stopped (libcamera 0.0.3 aborts stopping it);
 *  close it. */
int pb_lc_camera_wait_frame(pb_lc_camera *camera, int timeout_ms, pb_lc_frame *out);
/** Queues the request of `cookie` again (with the controls set since, and a still buffer when one is wanted). */
int pb_lc_camera_requeue(pb_lc_camera *camera, uint64_t cookie);

/** With two streams: a still buffer joins the next request queued (a request queued after this call: its
 *  exposure starts after it). -ENOTSUP with one stream, -EPIPE when not started. The still arrives with
 *  that request's completion, for pb_lc_camera_take_still. */
int pb_lc_camera_request_still(pb_lc_camera *camera);
/** The oldest completed still not yet taken: 1 with *out filled (its cookie names the still buffer; the
 *  planes stay valid until pb_lc_camera_release_still(cookie) or stop), 0 when none is waiting. */
int pb_lc_camera_take_still(pb_lc_camera *camera, pb_lc_frame *out);
/** Gives a still buffer back for later stills: 0, -EBUSY while it is in a request (it was never taken),
 *  -EINVAL for no such buffer. */
int pb_lc_camera_release_still(pb_lc_camera *camera, uint64_t cookie);

/* The still stream's bookkeeping (pb_still_ledger.hpp), which the camera's two-stream path runs on and
 * which the unit tests drive through this interface: no libcamera involved. A still buffer's states: */
enum { PB_LC_STILL_FREE = 0, PB_LC_STILL_QUEUED = 1, PB_LC_STILL_READY = 2, PB_LC_STILL_TAKEN = 3 };
typedef struct pb_lc_still_ledger pb_lc_still_ledger;
/** A ledger of `count` still buffers, all free, no still wanted; NULL when out of memory. */
pb_lc_still_ledger *pb_lc_still_ledger_new(int count);
void pb_lc_still_ledger_free(pb_lc_still_ledger *ledger);
/** A still is wanted (pb_lc_camera_request_still). */
void pb_lc_still_ledger_want(pb_lc_still_ledger *ledger);
/** Stills wanted and not yet in a request. */
int pb_lc_still_ledger_wanted(const pb_lc_still_ledger *ledger);
/** A request is being queued: the free buffer (index) to add to it when a still is wanted, now queued; -1 for none. */
int pb_lc_still_ledger_attach(pb_lc_still_ledger *ledger);
/** The request could not take buffer `index` or was not queued: free again, first in line, its still wanted again.
 *  0, or -EINVAL when it is not queued. */
int pb_lc_still_ledger_unattach(pb_lc_still_ledger *ledger, int index);
/** Buffer `index`'s request completed: ready, or when `cancelled` free with its still wanted again. 0, or -EINVAL
 *  when it is not queued. */
int pb_lc_still_ledger_complete(pb_lc_still_ledger *ledger, int index, int cancelled);
/** The oldest ready buffer (index), now taken; -1 when none is ready. */
int pb_lc_still_ledger_take(pb_lc_still_ledger *ledger);
/** Buffer `index` given back: 0 (also when already free), -EBUSY while it is in a request, -EINVAL out of range. */
int pb_lc_still_ledger_release(pb_lc_still_ledger *ledger, int index);
/** Buffer `index`'s state (PB_LC_STILL_*), -EINVAL out of range. */
int pb_lc_still_ledger_state(const pb_lc_still_ledger *ledger, int index);

#ifdef __cplusplus
}
#endif

#endif
