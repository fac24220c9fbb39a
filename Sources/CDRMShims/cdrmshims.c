#include "cdrmshims.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdint.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

struct buffer { uint32_t handle, pitch, fb; uint64_t size; uint8_t *map; };

struct pb_kms {
    int fd;
    uint32_t connector, crtc;
    drmModeModeInfo mode;
    drmModeCrtc *saved;
    struct buffer buf[2];
    int front;          /* the buffer on screen (or flipping to it) */
    int pending;        /* a flip awaits its event */
    int crtc_set;       /* drmModeSetCrtc done since open / since master was regained */
    uint64_t flips;
    uint64_t gen;       /* the pending flip's number: an event of a flip given up (pb_kms_forget_flip) is ignored */
    uint32_t dpms_prop;
};

static void say(char *why, size_t len, const char *fmt, const char *a, int err) {
    if (why && len) snprintf(why, len, fmt, a, strerror(err));
}

static const char *connector_type(uint32_t t) {
    switch (t) {
    case DRM_MODE_CONNECTOR_HDMIA: return "HDMI-A";
    case DRM_MODE_CONNECTOR_HDMIB: return "HDMI-B";
    case DRM_MODE_CONNECTOR_DisplayPort: return "DP";
    case DRM_MODE_CONNECTOR_eDP: return "eDP";
    case DRM_MODE_CONNECTOR_DSI: return "DSI";
    case DRM_MODE_CONNECTOR_DPI: return "DPI";
    case DRM_MODE_CONNECTOR_VGA: return "VGA";
    case DRM_MODE_CONNECTOR_DVID: return "DVI-D";
    case DRM_MODE_CONNECTOR_DVII: return "DVI-I";
    case DRM_MODE_CONNECTOR_LVDS: return "LVDS";
    case DRM_MODE_CONNECTOR_Composite: return "Composite";
    case DRM_MODE_CONNECTOR_VIRTUAL: return "Virtual";
    case DRM_MODE_CONNECTOR_SPI: return "SPI";
    default: return "Unknown";
    }
}

static void fill_info(int fd, drmModeRes *res, pb_kms_info *info) {
    memset(info, 0, sizeof *info);
    drmVersionPtr v = drmGetVersion(fd);
    if (v) { snprintf(info->driver, sizeof info->driver, "%s", v->name); drmFreeVersion(v); }
    info->connectors = (uint32_t)res->count_connectors;
}

/* The connector to use: the first connected one with modes. */
static drmModeConnector *connected(int fd, drmModeRes *res, uint32_t *count) {
    drmModeConnector *found = NULL;
    *count = 0;
    for (int i = 0; i < res->count_connectors; i++) {
        drmModeConnector *c = drmModeGetConnector(fd, res->connectors[i]);
        if (!c) continue;
        if (c->connection == DRM_MODE_CONNECTED && c->count_modes > 0) {
            (*count)++;
            if (!found) { found = c; continue; }
        }
        drmModeFreeConnector(c);
    }
    return found;
}

static int pick_mode(drmModeConnector *c, uint32_t w, uint32_t h) {
    if (w && h) {
        for (int i = 0; i < c->count_modes; i++)
            if (c->modes[i].hdisplay == w && c->modes[i].vdisplay == h) return i;
        return -1;
    }
    for (int i = 0; i < c->count_modes; i++)
        if (c->modes[i].type & DRM_MODE_TYPE_PREFERRED) return i;
    return 0;
}

static void describe(drmModeConnector *c, const drmModeModeInfo *m, pb_kms_info *info) {
    snprintf(info->connector, sizeof info->connector, "%s-%u", connector_type(c->connector_type), c->connector_type_id);
    snprintf(info->mode, sizeof info->mode, "%s", m->name);
    info->width = m->hdisplay;
    info->height = m->vdisplay;
    info->refresh = m->vrefresh;
}

int pb_kms_probe(const char *path, pb_kms_info *info, char *why, size_t why_len) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) { int e = errno; say(why, why_len, "%s: %s", path, e); errno = e; return -1; }
    drmModeRes *res = drmModeGetResources(fd);
    if (!res) { close(fd); say(why, why_len, "%s: no KMS (%s)", path, ENODEV); errno = ENODEV; return -1; }
    fill_info(fd, res, info);
    uint32_t count;
    drmModeConnector *c = connected(fd, res, &count);
    info->connected = count;
    if (c) { describe(c, &c->modes[pick_mode(c, 0, 0)], info); drmModeFreeConnector(c); }
    drmModeFreeResources(res);
    close(fd);
    return 0;
}

static uint32_t find_crtc(int fd, drmModeRes *res, drmModeConnector *c) {
    if (c->encoder_id) {
        drmModeEncoder *e = drmModeGetEncoder(fd, c->encoder_id);
        if (e) { uint32_t crtc = e->crtc_id; drmModeFreeEncoder(e); if (crtc) return crtc; }
    }
    for (int i = 0; i < c->count_encoders; i++) {
        drmModeEncoder *e = drmModeGetEncoder(fd, c->encoders[i]);
        if (!e) continue;
        for (int j = 0; j < res->count_crtcs; j++) {
            if (e->possible_crtcs & (1u << j)) { uint32_t crtc = res->crtcs[j]; drmModeFreeEncoder(e); return crtc; }
        }
        drmModeFreeEncoder(e);
    }
    return 0;
}

static int make_buffer(int fd, uint32_t w, uint32_t h, struct buffer *b) {
    struct drm_mode_create_dumb create = { .width = w, .height = h, .bpp = 32 };
    if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create) < 0) return -errno;
    b->handle = create.handle; b->pitch = create.pitch; b->size = create.size;
    if (drmModeAddFB(fd, w, h, 24, 32, b->pitch, b->handle, &b->fb) < 0) return -errno;
    struct drm_mode_map_dumb map = { .handle = b->handle };
    if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map) < 0) return -errno;
    void *m = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map.offset);
    if (m == MAP_FAILED) return -errno;
    b->map = m;
    memset(b->map, 0, b->size);
    return 0;
}

static void free_buffer(int fd, struct buffer *b) {
    if (b->map) munmap(b->map, b->size);
    if (b->fb) drmModeRmFB(fd, b->fb);
    if (b->handle) { struct drm_mode_destroy_dumb d = { .handle = b->handle }; drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d); }
    memset(b, 0, sizeof *b);
}

pb_kms *pb_kms_open(const char *path, uint32_t want_width, uint32_t want_height, pb_kms_info *info, char *why, size_t why_len) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) { int e = errno; say(why, why_len, "%s: %s", path, e); errno = e; return NULL; }
    return pb_kms_open_fd(fd, path, want_width, want_height, info, why, why_len);
}

int pb_kms_open_master(const char *path) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -errno;
    if (!drmIsMaster(fd)) { close(fd); return -EBUSY; }
    return fd;
}

pb_kms *pb_kms_open_fd(int fd, const char *path, uint32_t want_width, uint32_t want_height, pb_kms_info *info, char *why, size_t why_len) {
    drmModeRes *res = drmModeGetResources(fd);
    if (!res) { close(fd); say(why, why_len, "%s: not a KMS device (%s)", path, ENODEV); errno = ENODEV; return NULL; }
    fill_info(fd, res, info);
    uint32_t count;
    drmModeConnector *c = connected(fd, res, &count);
    info->connected = count;
    if (!c) {
        if (why) snprintf(why, why_len, "%s: no connected connector among its %d (is the screen plugged in and on?)", path, res->count_connectors);
        drmModeFreeResources(res); close(fd); errno = ENOLINK; return NULL;
    }
    int m = pick_mode(c, want_width, want_height);
    if (m < 0) {
        if (why) snprintf(why, why_len, "%s: connector offers no %ux%u mode (preferred: %s)", path, want_width, want_height, c->modes[pick_mode(c, 0, 0)].name);
        drmModeFreeConnector(c); drmModeFreeResources(res); close(fd); errno = EINVAL; return NULL;
    }
    pb_kms *k = calloc(1, sizeof *k);
    if (!k) { drmModeFreeConnector(c); drmModeFreeResources(res); close(fd); errno = ENOMEM; return NULL; }
    k->fd = fd;
    k->connector = c->connector_id;
    k->mode = c->modes[m];
    describe(c, &k->mode, info);
    k->crtc = find_crtc(fd, res, c);
    drmModeObjectProperties *props = drmModeObjectGetProperties(fd, c->connector_id, DRM_MODE_OBJECT_CONNECTOR);
    for (uint32_t i = 0; props && i < props->count_props; i++) {
        drmModePropertyRes *p = drmModeGetProperty(fd, props->props[i]);
        if (p && !strcmp(p->name, "DPMS")) k->dpms_prop = p->prop_id;
        drmModeFreeProperty(p);
    }
    drmModeFreeObjectProperties(props);
    drmModeFreeConnector(c);
    drmModeFreeResources(res);
    if (!k->crtc) {
        if (why) snprintf(why, why_len, "%s: no CRTC for connector %s", path, info->connector);
        close(fd); free(k); errno = EINVAL; return NULL;
    }
    k->saved = drmModeGetCrtc(fd, k->crtc);
    for (int i = 0; i < 2; i++) {
        int r = make_buffer(fd, k->mode.hdisplay, k->mode.vdisplay, &k->buf[i]);
        if (r < 0) {
            say(why, why_len, "%s: dumb buffer: %s", path, -r);
            pb_kms_close(k); errno = -r; return NULL;
        }
    }
    return k;
}

int pb_kms_fd(const pb_kms *k) { return k->fd; }
int pb_kms_is_master(const pb_kms *k) { return drmIsMaster(k->fd) ? 1 : 0; }
int pb_kms_set_master(pb_kms *k) { return drmSetMaster(k->fd) < 0 ? -errno : 0; }
void pb_kms_need_modeset(pb_kms *k) { k->crtc_set = 0; }
void pb_kms_forget_flip(pb_kms *k) { k->pending = 0; k->gen++; }
uint64_t pb_kms_flips(const pb_kms *k) { return k->flips; }
uint32_t pb_kms_pitch(const pb_kms *k) { return k->buf[0].pitch; }

/* The event's user data: the flip's number, matched against the one pending (one pb_kms per
 * descriptor, so the events read here are this pb_kms's own). */
static _Thread_local pb_kms *event_owner;

static void flip_done(int fd, unsigned seq, unsigned sec, unsigned usec, void *data) {
    (void)fd; (void)seq; (void)sec; (void)usec;
    pb_kms *k = event_owner;
    if (!k || (uint64_t)(uintptr_t)data != k->gen) return;   /* a flip given up earlier */
    k->pending = 0;
    k->flips++;
}

int pb_kms_wait_flip(pb_kms *k, int timeout_ms) {
    while (k->pending) {
        struct pollfd p = { .fd = k->fd, .events = POLLIN };
        int n = poll(&p, 1, timeout_ms);
        if (n < 0) { if (errno == EINTR) continue; return -errno; }
        if (n == 0) return 0;
        drmEventContext ev = { .version = 2, .page_flip_handler = flip_done };
        event_owner = k;
        int r = drmHandleEvent(k->fd, &ev);
        event_owner = NULL;
        if (r < 0) return -errno;
    }
    return 1;
}

uint8_t *pb_kms_back(pb_kms *k, int timeout_ms, uint32_t *pitch, int *result) {
    int r = pb_kms_wait_flip(k, timeout_ms);
    if (result) *result = r;
    if (r != 1) return NULL;
    struct buffer *b = &k->buf[1 - k->front];
    *pitch = b->pitch;
    return b->map;
}

int pb_kms_flip(pb_kms *k) {
    if (k->pending) return -EBUSY;
    int back = 1 - k->front;
    if (!k->crtc_set) {
        /* The first frame (or the first after master was regained): set the CRTC to the buffer just drawn. */
        if (drmModeSetCrtc(k->fd, k->crtc, k->buf[back].fb, 0, 0, &k->connector, 1, &k->mode) < 0) return -errno;
        if (k->dpms_prop) drmModeConnectorSetProperty(k->fd, k->connector, k->dpms_prop, DRM_MODE_DPMS_ON);
        k->front = back;
        k->crtc_set = 1;
        return 0;
    }
    k->gen++;
    if (drmModePageFlip(k->fd, k->crtc, k->buf[back].fb, DRM_MODE_PAGE_FLIP_EVENT, (void *)(uintptr_t)k->gen) < 0) return -errno;
    k->front = back;
    k->pending = 1;
    return 0;
}

void pb_kms_close(pb_kms *k) {
    if (!k) return;
    if (k->pending) pb_kms_wait_flip(k, 100);
    if (k->saved) {
        /* Give the screen back as it was (the console's own buffer), when we may. */
        if (k->saved->buffer_id && drmIsMaster(k->fd))
            drmModeSetCrtc(k->fd, k->saved->crtc_id, k->saved->buffer_id, k->saved->x, k->saved->y, &k->connector, 1, &k->saved->mode);
        drmModeFreeCrtc(k->saved);
    }
    for (int i = 0; i < 2; i++) free_buffer(k->fd, &k->buf[i]);
    close(k->fd);
    free(k);
}
