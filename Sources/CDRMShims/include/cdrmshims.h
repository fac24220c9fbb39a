// A KMS screen through libdrm, for BoothDisplay: one connected connector at its preferred mode on a
// CRTC, two dumb buffers (XRGB8888) shown in turn with page flips on vblank. Written in C because
// the dumb-buffer ioctls are request macros and the page-flip event comes through a callback table
// (drmEventContext), neither of which Swift imports.
#ifndef CDRMSHIMS_H
#define CDRMSHIMS_H
#include <stddef.h>
#include <stdint.h>

/// One opened KMS screen; opaque.
typedef struct pb_kms pb_kms;

/// What pb_kms_probe and pb_kms_open found.
typedef struct {
    char driver[32];          ///< drmGetVersion()->name: "bochs-drm", "vc4"
    char connector[32];       ///< "HDMI-A-1", "Virtual-1"
    char mode[32];            ///< the mode's name: "1280x800"
    uint32_t width, height;   ///< the mode's size, pixels
    uint32_t refresh;         ///< vertical refresh, Hz
    uint32_t connectors;      ///< connectors on the card
    uint32_t connected;       ///< of them connected (with modes)
} pb_kms_info;

/// Opens `path` read-write and finds a connected connector with modes, its preferred mode (else its
/// first) or the mode of `want_width`x`want_height` when both are non-zero, and a CRTC it can use.
/// Makes two dumb buffers of that size (XRGB8888, cleared to black) and maps them. Sets nothing on
/// the screen yet (pb_kms_show does). NULL on failure, with errno and a sentence in `why`:
/// ENOENT when `path` does not exist, ENODEV for no KMS (not a modesetting card), ENOLINK for no
/// connected connector, EINVAL for a mode the connector lacks or no CRTC.
pb_kms *pb_kms_open(const char *path, uint32_t want_width, uint32_t want_height, pb_kms_info *info, char *why, size_t why_len);
/// As pb_kms_open on a descriptor already open (read-write) on `path`, which it then owns (closed on
/// failure and by pb_kms_close).
pb_kms *pb_kms_open_fd(int fd, const char *path, uint32_t want_width, uint32_t want_height, pb_kms_info *info, char *why, size_t why_len);
/// Opens `path` and keeps the descriptor only when it became DRM master (nobody else holds it): the
/// descriptor, or -EBUSY (another client holds master; closed again), or -errno of open(). Cheap: no
/// connector probe, no buffers; for the master retry.
int pb_kms_open_master(const char *path);
/// Opens `path`, fills `info` (driver, connectors, the connected count, the first connected one's
/// preferred mode) and closes it; 0, or -1 with errno (and a sentence in `why`).
int pb_kms_probe(const char *path, pb_kms_info *info, char *why, size_t why_len);
/// The device's descriptor (for poll).
int pb_kms_fd(const pb_kms *k);
/// 1 when this descriptor is the DRM master (drmIsMaster), else 0.
int pb_kms_is_master(const pb_kms *k);
/// drmSetMaster on the held descriptor: 0, or -errno (EACCES/EPERM: never master on this descriptor
/// and no CAP_SYS_ADMIN; EBUSY/EINVAL: another client holds master).
int pb_kms_set_master(pb_kms *k);
/// The back buffer to draw into (the one not on screen): waits up to `timeout_ms` for a pending flip
/// to complete first. Its stride in *pitch. NULL when a flip is still pending after the wait
/// (*result 0) or the wait failed (*result -errno); else *result 1.
uint8_t *pb_kms_back(pb_kms *k, int timeout_ms, uint32_t *pitch, int *result);
/// The buffers' stride in bytes (both have the same).
uint32_t pb_kms_pitch(const pb_kms *k);
/// Shows the back buffer, which becomes the front: drmModePageFlip on the next vblank (with an event)
/// once the CRTC is set, else drmModeSetCrtc (the first frame, and again after master was regained
/// or a failed flip; also turns DPMS on).
/// 0, or -errno (EACCES/EPERM: not master; EBUSY: a flip still pending).
int pb_kms_flip(pb_kms *k);
/// After master was lost or a flip failed: the next pb_kms_flip sets the CRTC again (a flip still
/// pending stays pending: its buffer is not drawn into until it completes).
void pb_kms_need_modeset(pb_kms *k);
/// Gives up on a pending flip whose event never came (a driver that lost it): the next frame is
/// drawn and set with drmModeSetCrtc.
void pb_kms_forget_flip(pb_kms *k);
/// Waits up to `timeout_ms` for the pending flip's event (poll + drmHandleEvent): 1 done (or none
/// pending), 0 still pending, -errno.
int pb_kms_wait_flip(pb_kms *k, int timeout_ms);
/// Page flips completed since open (their vblank events).
uint64_t pb_kms_flips(const pb_kms *k);
/// Restores the CRTC as it was before (so the console comes back), frees the buffers, closes.
void pb_kms_close(pb_kms *k);
#endif
