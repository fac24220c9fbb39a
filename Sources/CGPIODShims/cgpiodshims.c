// CGPIODShims: see include/cgpiodshims.h. One source for libgpiod v1 (1.6.x)
// and v2 (2.x): v1's gpiod.h defines GPIOD_LINE_BULK_MAX_LINES, v2's does not.
// hardware/gpiod-v2-check.sh compiles this file against both and passes
// -DPB_GPIO_EXPECT_API=N so a wrong branch is a compile error.
#define _GNU_SOURCE
#include "cgpiodshims.h"

#include <gpiod.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define PB_GPIO_API 1
#else
#define PB_GPIO_API 2
#endif

#ifdef PB_GPIO_EXPECT_API
_Static_assert(PB_GPIO_API == PB_GPIO_EXPECT_API, "gpiod.h is not the libgpiod API version this build expects");
#endif

int pb_gpio_api_version(void) { return PB_GPIO_API; }

// MARK: - small helpers (both APIs)

static void copy_name(char dst[PB_GPIO_NAME_MAX], const char *src) {
    dst[0] = '\0';
    if (src) snprintf(dst, PB_GPIO_NAME_MAX, "%s", src);
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static bool is_all_digits(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

/// Sets O_NONBLOCK on a line's event fd so a read with nothing pending
/// returns EAGAIN instead of blocking the button thread.
static int set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// MARK: - chip list (both APIs: directory scan of /dev)

struct pb_gpio_chip_list {
    size_t count;
    char **paths;
};

static long chip_number(const char *name) { return strtol(name + strlen("gpiochip"), NULL, 10); }

static int compare_chip_names(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    long nx = chip_number(x + strlen("/dev/")), ny = chip_number(y + strlen("/dev/"));
    if (nx != ny) return nx < ny ? -1 : 1;
    return strcmp(x, y);
}

pb_gpio_chip_list *pb_gpio_chip_list_new(void) {
    pb_gpio_chip_list *list = calloc(1, sizeof *list);
    if (!list) return NULL;
    DIR *dir = opendir("/dev");
    if (!dir) {
        int saved = errno;
        free(list);
        errno = saved;
        return NULL;
    }
    size_t capacity = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        if (strncmp(name, "gpiochip", 8) != 0 || !is_all_digits(name + 8)) continue;
        if (list->count == capacity) {
            size_t grown = capacity ? capacity * 2 : 8;
            char **paths = realloc(list->paths, grown * sizeof *paths);
            if (!paths) goto fail;
            list->paths = paths;
            capacity = grown;
        }
        char *path = NULL;
        if (asprintf(&path, "/dev/%s", name) < 0) goto fail;
        list->paths[list->count++] = path;
    }
    closedir(dir);
    if (list->count > 1) qsort(list->paths, list->count, sizeof *list->paths, compare_chip_names);
    return list;
fail: {
    int saved = errno;
    closedir(dir);
    pb_gpio_chip_list_free(list);
    errno = saved ? saved : ENOMEM;
    return NULL;
}
}

size_t pb_gpio_chip_list_count(const pb_gpio_chip_list *list) { return list ? list->count : 0; }

const char *pb_gpio_chip_list_path(const pb_gpio_chip_list *list, size_t i) {
    if (!list || i >= list->count) return NULL;
    return list->paths[i];
}

void pb_gpio_chip_list_free(pb_gpio_chip_list *list) {
    if (!list) return;
    for (size_t i = 0; i < list->count; i++) free(list->paths[i]);
    free(list->paths);
    free(list);
}

// MARK: - chip (API-specific open, shared lookup)

struct pb_gpio_chip {
    struct gpiod_chip *chip;
    char *name;
    char *label;
    char *path;
    unsigned int num_lines;
};

static pb_gpio_chip *open_path(const char *path);

void pb_gpio_chip_close(pb_gpio_chip *chip) {
    if (!chip) return;
    int saved = errno;
    if (chip->chip) gpiod_chip_close(chip->chip);
    free(chip->name);
    free(chip->label);
    free(chip->path);
    free(chip);
    errno = saved;
}

const char *pb_gpio_chip_name(const pb_gpio_chip *chip) { return chip->name; }
const char *pb_gpio_chip_label(const pb_gpio_chip *chip) { return chip->label; }
const char *pb_gpio_chip_path(const pb_gpio_chip *chip) { return chip->path; }
unsigned int pb_gpio_chip_num_lines(const pb_gpio_chip *chip) { return chip->num_lines; }

pb_gpio_chip *pb_gpio_chip_open(const char *spec) {
    if (!spec || !*spec) {
        errno = EINVAL;
        return NULL;
    }
    if (strchr(spec, '/')) return open_path(spec);

    char path[64 + PB_GPIO_NAME_MAX];
    if (is_all_digits(spec))
        snprintf(path, sizeof path, "/dev/gpiochip%s", spec);
    else
        snprintf(path, sizeof path, "/dev/%s", spec);
    if (strncmp(path, "/dev/gpiochip", 13) == 0 && access(path, F_OK) == 0) return open_path(path);

    // Not a device name: look for a chip with this label. ENOENT only when every
    // chip could be read; otherwise the first other error (e.g. EACCES) says why
    // the label may have been missed.
    pb_gpio_chip_list *list = pb_gpio_chip_list_new();
    if (!list) return NULL;
    int unreadable = 0;
    for (size_t i = 0; i < list->count; i++) {
        pb_gpio_chip *chip = open_path(list->paths[i]);
        if (!chip) {
            if (!unreadable && errno != ENOENT) unreadable = errno;
            continue;
        }
        if (strcmp(chip->label, spec) == 0) {
            pb_gpio_chip_list_free(list);
            return chip;
        }
        pb_gpio_chip_close(chip);
    }
    pb_gpio_chip_list_free(list);
    errno = unreadable ? unreadable : ENOENT;
    return NULL;
}

struct pb_gpio_line {
    struct gpiod_chip *chip;  // the line's own handle (v1 needs it for the request's lifetime)
    unsigned int offset;
#if PB_GPIO_API == 1
    struct gpiod_line *line;
#else
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
#endif
};

#define PB_EVENT_BATCH 16

unsigned int pb_gpio_line_offset(const pb_gpio_line *line) { return line->offset; }

#if PB_GPIO_API == 1
// MARK: - libgpiod v1 (1.6.x)

static pb_gpio_chip *open_path(const char *path) {
    pb_gpio_chip *chip = calloc(1, sizeof *chip);
    if (!chip) return NULL;
    chip->chip = gpiod_chip_open(path);
    if (!chip->chip) goto fail;
    chip->name = dup_or_empty(gpiod_chip_name(chip->chip));
    chip->label = dup_or_empty(gpiod_chip_label(chip->chip));
    chip->path = strdup(path);
    chip->num_lines = gpiod_chip_num_lines(chip->chip);
    if (!chip->name || !chip->label || !chip->path) goto fail;
    return chip;
fail:
    pb_gpio_chip_close(chip);
    return NULL;
}

int pb_gpio_chip_find_line(pb_gpio_chip *chip, const char *name) {
    if (!name || !*name) {
        errno = EINVAL;
        return -1;
    }
    errno = 0;
    struct gpiod_line *line = gpiod_chip_find_line(chip->chip, name);
    if (!line) {
        if (errno == 0) errno = ENOENT;
        return -1;
    }
    return (int)gpiod_line_offset(line);
}

int pb_gpio_chip_line_info(pb_gpio_chip *chip, unsigned int offset, pb_gpio_line_info *out) {
    if (offset >= chip->num_lines) {
        errno = EINVAL;
        return -1;
    }
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (!line) return -1;
    if (gpiod_line_update(line) < 0) return -1;
    out->offset = offset;
    copy_name(out->name, gpiod_line_name(line));
    copy_name(out->consumer, gpiod_line_consumer(line));
    out->used = gpiod_line_is_used(line);
    out->output = gpiod_line_direction(line) == GPIOD_LINE_DIRECTION_OUTPUT;
    out->active_low = gpiod_line_active_state(line) == GPIOD_LINE_ACTIVE_STATE_LOW;
    return 0;
}

static int bias_flags(int bias) {
    switch (bias) {
    case PB_GPIO_BIAS_AS_IS: return 0;
    case PB_GPIO_BIAS_DISABLED: return GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE;
    case PB_GPIO_BIAS_PULL_UP: return GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP;
    case PB_GPIO_BIAS_PULL_DOWN: return GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN;
    default: return -1;
    }
}

static pb_gpio_line *request(pb_gpio_chip *chip, unsigned int offset, int type, int flags, int value,
                             const char *consumer) {
    if (offset >= chip->num_lines) {
        errno = EINVAL;
        return NULL;
    }
    pb_gpio_line *line = calloc(1, sizeof *line);
    if (!line) return NULL;
    line->offset = offset;
    line->chip = gpiod_chip_open(chip->path);
    if (!line->chip) goto fail;
    line->line = gpiod_chip_get_line(line->chip, offset);
    if (!line->line) goto fail;
    struct gpiod_line_request_config config = {
        .consumer = consumer ? consumer : "photobooth",
        .request_type = type,
        .flags = flags,
    };
    if (gpiod_line_request(line->line, &config, value) < 0) {
        line->line = NULL;  // not requested: nothing to release
        goto fail;
    }
    if (type == GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES && set_nonblocking(gpiod_line_event_get_fd(line->line)) < 0)
        goto fail;
    return line;
fail:
    pb_gpio_line_release(line);
    return NULL;
}

pb_gpio_line *pb_gpio_request_input(pb_gpio_chip *chip, unsigned int offset, int bias, bool active_low,
                                    const char *consumer) {
    int flags = bias_flags(bias);
    if (flags < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (active_low) flags |= GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW;
    return request(chip, offset, GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES, flags, 0, consumer);
}

pb_gpio_line *pb_gpio_request_output(pb_gpio_chip *chip, unsigned int offset, bool active_low, int value,
                                     const char *consumer) {
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    return request(chip, offset, GPIOD_LINE_REQUEST_DIRECTION_OUTPUT, flags, value ? 1 : 0, consumer);
}

int pb_gpio_line_event_fd(pb_gpio_line *line) { return gpiod_line_event_get_fd(line->line); }

int pb_gpio_line_read_events(pb_gpio_line *line, pb_gpio_edge_event *events, int max) {
    if (max <= 0) return 0;
    struct gpiod_line_event batch[PB_EVENT_BATCH];
    int want = max < PB_EVENT_BATCH ? max : PB_EVENT_BATCH;
    int n;
    do {
        n = gpiod_line_event_read_multiple(line->line, batch, (unsigned int)want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    for (int i = 0; i < n; i++) {
        events[i].timestamp_ns = (uint64_t)batch[i].ts.tv_sec * 1000000000u + (uint64_t)batch[i].ts.tv_nsec;
        events[i].edge = batch[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE ? PB_GPIO_EDGE_RISING : PB_GPIO_EDGE_FALLING;
        events[i].offset = line->offset;
        events[i].line_seqno = 0;  // the v1 uAPI's gpioevent_data has none
    }
    return n;
}

int pb_gpio_line_get_value(pb_gpio_line *line) { return gpiod_line_get_value(line->line); }

int pb_gpio_line_set_value(pb_gpio_line *line, int value) { return gpiod_line_set_value(line->line, value ? 1 : 0); }

void pb_gpio_line_release(pb_gpio_line *line) {
    if (!line) return;
    int saved = errno;
    if (line->line) gpiod_line_release(line->line);
    if (line->chip) gpiod_chip_close(line->chip);
    free(line);
    errno = saved;
}

#else
// MARK: - libgpiod v2 (2.x)

static pb_gpio_chip *open_path(const char *path) {
    pb_gpio_chip *chip = calloc(1, sizeof *chip);
    if (!chip) return NULL;
    chip->chip = gpiod_chip_open(path);
    if (!chip->chip) goto fail;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip->chip);
    if (!info) goto fail;
    chip->name = dup_or_empty(gpiod_chip_info_get_name(info));
    chip->label = dup_or_empty(gpiod_chip_info_get_label(info));
    chip->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    chip->path = strdup(path);
    if (!chip->name || !chip->label || !chip->path) goto fail;
    return chip;
fail:
    pb_gpio_chip_close(chip);
    return NULL;
}

int pb_gpio_chip_find_line(pb_gpio_chip *chip, const char *name) {
    if (!name || !*name) {
        errno = EINVAL;
        return -1;
    }
    errno = 0;
    int offset = gpiod_chip_get_line_offset_from_name(chip->chip, name);
    if (offset < 0 && errno == 0) errno = ENOENT;
    return offset;
}

int pb_gpio_chip_line_info(pb_gpio_chip *chip, unsigned int offset, pb_gpio_line_info *out) {
    if (offset >= chip->num_lines) {
        errno = EINVAL;
        return -1;
    }
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip->chip, offset);
    if (!info) return -1;
    out->offset = offset;
    copy_name(out->name, gpiod_line_info_get_name(info));
    copy_name(out->consumer, gpiod_line_info_get_consumer(info));
    out->used = gpiod_line_info_is_used(info);
    out->output = gpiod_line_info_get_direction(info) == GPIOD_LINE_DIRECTION_OUTPUT;
    out->active_low = gpiod_line_info_is_active_low(info);
    gpiod_line_info_free(info);
    return 0;
}

static int native_bias(int bias) {
    switch (bias) {
    case PB_GPIO_BIAS_AS_IS: return GPIOD_LINE_BIAS_AS_IS;
    case PB_GPIO_BIAS_DISABLED: return GPIOD_LINE_BIAS_DISABLED;
    case PB_GPIO_BIAS_PULL_UP: return GPIOD_LINE_BIAS_PULL_UP;
    case PB_GPIO_BIAS_PULL_DOWN: return GPIOD_LINE_BIAS_PULL_DOWN;
    default: return -1;
    }
}

static pb_gpio_line *request(pb_gpio_chip *chip, unsigned int offset, bool input, int bias, bool active_low,
                             int value, const char *consumer) {
    if (offset >= chip->num_lines) {
        errno = EINVAL;
        return NULL;
    }
    pb_gpio_line *line = calloc(1, sizeof *line);
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    if (!line || !settings || !line_config || !request_config) goto fail;
    line->offset = offset;
    if (input) {
        if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) < 0) goto fail;
        if (gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) < 0) goto fail;
        if (gpiod_line_settings_set_bias(settings, native_bias(bias)) < 0) goto fail;
        if (gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC) < 0) goto fail;
    } else {
        if (gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) < 0) goto fail;
        if (gpiod_line_settings_set_output_value(settings, value ? GPIOD_LINE_VALUE_ACTIVE
                                                                 : GPIOD_LINE_VALUE_INACTIVE) < 0)
            goto fail;
    }
    gpiod_line_settings_set_active_low(settings, active_low);
    if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) < 0) goto fail;
    gpiod_request_config_set_consumer(request_config, consumer ? consumer : "photobooth");
    line->request = gpiod_chip_request_lines(chip->chip, request_config, line_config);
    if (!line->request) goto fail;
    if (input) {
        line->buffer = gpiod_edge_event_buffer_new(PB_EVENT_BATCH);
        if (!line->buffer) goto fail;
        if (set_nonblocking(gpiod_line_request_get_fd(line->request)) < 0) goto fail;
    }
    gpiod_line_settings_free(settings);
    gpiod_line_config_free(line_config);
    gpiod_request_config_free(request_config);
    return line;
fail: {
    int saved = errno;
    gpiod_line_settings_free(settings);
    gpiod_line_config_free(line_config);
    gpiod_request_config_free(request_config);
    pb_gpio_line_release(line);
    errno = saved ? saved : ENOMEM;
    return NULL;
}
}

pb_gpio_line *pb_gpio_request_input(pb_gpio_chip *chip, unsigned int offset, int bias, bool active_low,
                                    const char *consumer) {
    if (native_bias(bias) < 0) {
        errno = EINVAL;
        return NULL;
    }
    return request(chip, offset, true, bias, active_low, 0, consumer);
}

pb_gpio_line *pb_gpio_request_output(pb_gpio_chip *chip, unsigned int offset, bool active_low, int value,
                                     const char *consumer) {
    return request(chip, offset, false, PB_GPIO_BIAS_AS_IS, active_low, value, consumer);
}

int pb_gpio_line_event_fd(pb_gpio_line *line) { return gpiod_line_request_get_fd(line->request); }

int pb_gpio_line_read_events(pb_gpio_line *line, pb_gpio_edge_event *events, int max) {
    if (max <= 0) return 0;
    if (!line->buffer) {
        errno = EINVAL;  // an output line has no events
        return -1;
    }
    size_t want = (size_t)(max < PB_EVENT_BATCH ? max : PB_EVENT_BATCH);
    int n;
    do {
        n = gpiod_line_request_read_edge_events(line->request, line->buffer, want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *event = gpiod_edge_event_buffer_get_event(line->buffer, (unsigned long)i);
        if (!event) return i;
        events[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(event);
        events[i].edge = gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE ? PB_GPIO_EDGE_RISING
                                                                                                : PB_GPIO_EDGE_FALLING;
        events[i].offset = gpiod_edge_event_get_line_offset(event);
        events[i].line_seqno = gpiod_edge_event_get_line_seqno(event);
    }
    return n;
}

int pb_gpio_line_get_value(pb_gpio_line *line) {
    enum gpiod_line_value value = gpiod_line_request_get_value(line->request, line->offset);
    if (value == GPIOD_LINE_VALUE_ERROR) return -1;
    return value == GPIOD_LINE_VALUE_ACTIVE ? 1 : 0;
}

int pb_gpio_line_set_value(pb_gpio_line *line, int value) {
    return gpiod_line_request_set_value(line->request, line->offset,
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

void pb_gpio_line_release(pb_gpio_line *line) {
    if (!line) return;
    int saved = errno;
    if (line->buffer) gpiod_edge_event_buffer_free(line->buffer);
    if (line->request) gpiod_line_request_release(line->request);
    if (line->chip) gpiod_chip_close(line->chip);
    free(line);
    errno = saved;
}

#endif
