// libdrm (Debian: libdrm-dev): the kernel's DRM/KMS devices (/dev/dri/card*). Only CDRMShims uses
// it; Swift imports this module for its `link "drm"`.
#include <xf86drm.h>
#include <xf86drmMode.h>
