// drm-master: another DRM client for the display-kms scenario.
//
//   drm-master CARD try             opens CARD, says whether it is master, tries drmSetMaster, exits:
//                                   prints "master=0|1 setmaster=OK|<errno name>"
//   drm-master CARD hold RRGGBB     opens CARD (master when nobody holds it), shows a buffer filled
//                                   with the colour on the first connected connector, prints
//                                   "holding master=0|1", and holds it until killed (SIGTERM)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

static int fail(const char *what) { fprintf(stderr, "drm-master: %s: %s\n", what, strerror(errno)); return 1; }

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: drm-master CARD try | drm-master CARD hold RRGGBB\n"); return 2; }
    int fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0) return fail("open");
    int master = drmIsMaster(fd);
    if (!strcmp(argv[2], "try")) {
        int r = drmSetMaster(fd);
        printf("master=%d setmaster=%s\n", master, r == 0 ? "OK" : errno == EBUSY ? "EBUSY" : errno == EACCES ? "EACCES"
               : errno == EINVAL ? "EINVAL" : errno == EPERM ? "EPERM" : "error");
        return 0;
    }
    if (strcmp(argv[2], "hold") || argc < 4) return 2;
    unsigned rgb = (unsigned)strtoul(argv[3], NULL, 16);
    drmModeRes *res = drmModeGetResources(fd);
    if (!res) return fail("drmModeGetResources");
    drmModeConnector *c = NULL;
    for (int i = 0; i < res->count_connectors && !c; i++) {
        c = drmModeGetConnector(fd, res->connectors[i]);
        if (c && (c->connection != DRM_MODE_CONNECTED || !c->count_modes)) { drmModeFreeConnector(c); c = NULL; }
    }
    if (!c) return fail("no connected connector");
    drmModeModeInfo mode = c->modes[0];
    for (int i = 0; i < c->count_modes; i++) if (c->modes[i].type & DRM_MODE_TYPE_PREFERRED) mode = c->modes[i];
    uint32_t crtc = 0;
    drmModeEncoder *e = c->encoder_id ? drmModeGetEncoder(fd, c->encoder_id) : NULL;
    if (e) crtc = e->crtc_id;
    if (!crtc) crtc = res->crtcs[0];
    struct drm_mode_create_dumb create = { .width = mode.hdisplay, .height = mode.vdisplay, .bpp = 32 };
    if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create) < 0) return fail("CREATE_DUMB");
    uint32_t fb;
    if (drmModeAddFB(fd, mode.hdisplay, mode.vdisplay, 24, 32, create.pitch, create.handle, &fb) < 0) return fail("AddFB");
    struct drm_mode_map_dumb map = { .handle = create.handle };
    if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map) < 0) return fail("MAP_DUMB");
    uint32_t *px = mmap(NULL, create.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map.offset);
    if (px == MAP_FAILED) return fail("mmap");
    for (uint64_t i = 0; i < create.size / 4; i++) px[i] = rgb;
    int set = drmModeSetCrtc(fd, crtc, fb, 0, 0, &c->connector_id, 1, &mode);
    printf("holding master=%d setcrtc=%s\n", master, set == 0 ? "OK" : strerror(errno));
    fflush(stdout);
    for (;;) pause();  // the kernel drops master with the last descriptor, when this is killed
}
