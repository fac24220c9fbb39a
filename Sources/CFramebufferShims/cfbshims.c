#include "cfbshims.h"
#include <errno.h>
#include <linux/kd.h>
#include <string.h>
#include <sys/ioctl.h>

static int retry(int fd, unsigned long request, void *arg) {
    int rc;
    do { rc = ioctl(fd, request, arg); } while (rc == -1 && errno == EINTR);
    return rc;
}

int cfb_get_vscreeninfo(int fd, struct fb_var_screeninfo *info) { return retry(fd, FBIOGET_VSCREENINFO, info); }
int cfb_get_fscreeninfo(int fd, struct fb_fix_screeninfo *info) { return retry(fd, FBIOGET_FSCREENINFO, info); }
int cfb_unblank(int fd) { return retry(fd, FBIOBLANK, (void *)(unsigned long)FB_BLANK_UNBLANK); }
int cfb_kd_get_mode(int fd, int *mode) { return retry(fd, KDGETMODE, mode); }
int cfb_kd_set_mode(int fd, int mode) { return retry(fd, KDSETMODE, (void *)(unsigned long)mode); }
int cfb_kd_text(void) { return KD_TEXT; }
int cfb_kd_graphics(void) { return KD_GRAPHICS; }

void cfb_copy_rows(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, size_t rows) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t y = 0; y < rows; y++) memcpy(d + y * dst_stride, s + y * src_stride, row_bytes);
}
