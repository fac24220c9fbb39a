// Linux framebuffer (fbdev) and virtual-terminal ioctls, which Swift cannot call (ioctl is variadic
// and the request macros are not imported).
#ifndef CFBSHIMS_H
#define CFBSHIMS_H
#include <linux/fb.h>
#include <stddef.h>

/// ioctl(fd, FBIOGET_VSCREENINFO, info); -1 with errno on failure (EINTR retried).
int cfb_get_vscreeninfo(int fd, struct fb_var_screeninfo *info);
/// ioctl(fd, FBIOGET_FSCREENINFO, info); -1 with errno on failure (EINTR retried).
int cfb_get_fscreeninfo(int fd, struct fb_fix_screeninfo *info);
/// ioctl(fd, FBIOBLANK, FB_BLANK_UNBLANK): turns the screen on.
int cfb_unblank(int fd);
/// ioctl(fd, KDGETMODE, &mode): KD_TEXT (0) or KD_GRAPHICS (1) into *mode.
int cfb_kd_get_mode(int fd, int *mode);
/// ioctl(fd, KDSETMODE, mode).
int cfb_kd_set_mode(int fd, int mode);
/// KD_TEXT and KD_GRAPHICS from <linux/kd.h>.
int cfb_kd_text(void);
int cfb_kd_graphics(void);
/// Copies `rows` rows of `row_bytes` bytes from `src` (stride `src_stride`) to `dst` (stride `dst_stride`).
void cfb_copy_rows(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, size_t rows);
#endif
