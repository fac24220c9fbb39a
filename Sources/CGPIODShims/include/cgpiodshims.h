// CGPIODShims: one small C API over libgpiod, the same for the v1 API
// (Debian 12: libgpiod 1.6.3) and the v2 API (Debian 13 / Raspberry Pi OS
// trixie: libgpiod 2.x). The API is chosen at compile time in cgpiodshims.c
// (v1's gpiod.h defines GPIOD_LINE_BULK_MAX_LINES, v2's does not); this header
// exposes no libgpiod type, so Swift sees one API whichever is installed.
//
// Conventions: functions returning a pointer return NULL, and functions
// returning int return -1, with errno set on failure. Nothing is printed.
// Values are logical: with active-low, 1 means "active" (button pressed,
// LED lit) whatever the electrical level.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Which libgpiod API this shim was compiled against: 1 or 2.
int pb_gpio_api_version(void);

/// Line bias (pull resistor) for a requested input.
typedef enum {
    PB_GPIO_BIAS_AS_IS = 0,      ///< Leave the bias as the board set it.
    PB_GPIO_BIAS_DISABLED = 1,   ///< No pull resistor.
    PB_GPIO_BIAS_PULL_UP = 2,    ///< Internal pull-up.
    PB_GPIO_BIAS_PULL_DOWN = 3,  ///< Internal pull-down.
} pb_gpio_bias;

/// Edge type of an event, as logical values (active-low applied by the kernel).
typedef enum {
    PB_GPIO_EDGE_RISING = 1,   ///< The line became active.
    PB_GPIO_EDGE_FALLING = 2,  ///< The line became inactive.
} pb_gpio_edge_type;

/// One edge event read from a requested line.
typedef struct {
    /// Kernel timestamp in nanoseconds on CLOCK_MONOTONIC (kernels >= 5.7 for the v1 uAPI).
    uint64_t timestamp_ns;
    /// PB_GPIO_EDGE_RISING or PB_GPIO_EDGE_FALLING.
    int32_t edge;
    /// Line offset on its chip.
    uint32_t offset;
    /// The event's number among this line's events since the request, from 1
    /// (libgpiod v2: gpiod_edge_event_get_line_seqno, the kernel's GPIO v2 uAPI
    /// line_seqno); a gap means the kernel's event queue overflowed and dropped
    /// events. 0 with libgpiod v1: it uses the v1 uAPI, whose struct
    /// gpioevent_data has no sequence number.
    uint64_t line_seqno;
} pb_gpio_edge_event;

/// Longest line name / consumer kept by pb_gpio_line_info (kernel limit: 32 with NUL).
#define PB_GPIO_NAME_MAX 64

/// What the kernel reports about one line of a chip.
typedef struct {
    uint32_t offset;
    char name[PB_GPIO_NAME_MAX];      ///< Line name, "" when unnamed.
    char consumer[PB_GPIO_NAME_MAX];  ///< Consumer label, "" when none.
    bool used;                        ///< Requested by a process or the kernel.
    bool output;                      ///< Direction is output.
    bool active_low;
} pb_gpio_line_info;

/// An open GPIO chip (character device /dev/gpiochipN).
typedef struct pb_gpio_chip pb_gpio_chip;
/// A requested line: an input with both-edge events, or an output. Owns its
/// own chip handle, so the chip it came from may be closed first.
typedef struct pb_gpio_line pb_gpio_line;
/// A snapshot of the GPIO chip device paths under /dev.
typedef struct pb_gpio_chip_list pb_gpio_chip_list;

/// Opens a chip by path ("/dev/gpiochip0", anything with a '/'), name
/// ("gpiochip0"), number ("0") or label ("pinctrl-bcm2711").
/// Errors: ENOENT when no chip matches; EINVAL for an empty spec; libgpiod's
/// errno otherwise (EACCES, ENODEV/ENOTTY for a non-GPIO device).
pb_gpio_chip *pb_gpio_chip_open(const char *spec);
/// Closes a chip; lines requested from it stay requested. NULL is ignored.
void pb_gpio_chip_close(pb_gpio_chip *chip);
/// The chip's kernel name, e.g. "gpiochip0".
const char *pb_gpio_chip_name(const pb_gpio_chip *chip);
/// The chip's label, e.g. "pinctrl-bcm2711" ("" when none).
const char *pb_gpio_chip_label(const pb_gpio_chip *chip);
/// The path the chip was opened at, e.g. "/dev/gpiochip0".
const char *pb_gpio_chip_path(const pb_gpio_chip *chip);
/// Number of lines on the chip.
unsigned int pb_gpio_chip_num_lines(const pb_gpio_chip *chip);
/// The offset of the line named `name` on this chip; -1 with ENOENT when none.
int pb_gpio_chip_find_line(pb_gpio_chip *chip, const char *name);
/// Fills `out` with the line's info. EINVAL when offset >= num_lines.
int pb_gpio_chip_line_info(pb_gpio_chip *chip, unsigned int offset, pb_gpio_line_info *out);

/// Requests `offset` as an input with both-edge events (CLOCK_MONOTONIC
/// timestamps), the given bias and active-low, under `consumer`. The event
/// fd is made non-blocking. Errors: EBUSY when another consumer holds the
/// line, EINVAL for a bad offset or bias, EOPNOTSUPP when the chip cannot
/// do the bias or edge detection.
pb_gpio_line *pb_gpio_request_input(pb_gpio_chip *chip, unsigned int offset, int bias,
                                    bool active_low, const char *consumer);
/// Requests `offset` as an output starting at logical `value` (0 or 1).
pb_gpio_line *pb_gpio_request_output(pb_gpio_chip *chip, unsigned int offset, bool active_low,
                                     int value, const char *consumer);
/// The file descriptor that becomes readable (POLLIN) when edge events are
/// pending; owned by the line, valid until pb_gpio_line_release.
int pb_gpio_line_event_fd(pb_gpio_line *line);
/// Reads up to `max` pending edge events into `events`. Returns how many were
/// read, 0 when none is pending (EAGAIN is not an error), -1 on error.
/// Retries EINTR.
int pb_gpio_line_read_events(pb_gpio_line *line, pb_gpio_edge_event *events, int max);
/// The line's current logical value: 1 active, 0 inactive, -1 on error.
int pb_gpio_line_get_value(pb_gpio_line *line);
/// Sets an output line's logical value (0 or 1). 0 on success.
int pb_gpio_line_set_value(pb_gpio_line *line, int value);
/// The offset of the requested line.
unsigned int pb_gpio_line_offset(const pb_gpio_line *line);
/// Releases the line and frees it. NULL is ignored.
void pb_gpio_line_release(pb_gpio_line *line);

/// Lists the GPIO character devices (/dev/gpiochip*) in chip-number order.
/// An empty list (count 0) when there is none; NULL with errno only when
/// /dev cannot be read.
pb_gpio_chip_list *pb_gpio_chip_list_new(void);
size_t pb_gpio_chip_list_count(const pb_gpio_chip_list *list);
/// The i-th device path, e.g. "/dev/gpiochip0"; NULL when i is out of range.
const char *pb_gpio_chip_list_path(const pb_gpio_chip_list *list, size_t i);
void pb_gpio_chip_list_free(pb_gpio_chip_list *list);

#ifdef __cplusplus
}
#endif
