#!/bin/bash
# display-kms: the display scenario (display.sh, steps 1-6) with the booth drawing through DRM/KMS
# on qemu's std VGA with the bochs DRM driver (display.device=/dev/dri/card0: its Virtual-1
# connector at 1280x800, dumb buffers, page flips), read back with QMP screendump as there; then:
#  6b. page flips per second while the live view runs, from the booth's report (bochs's vblank is
#      emulated, so tearing itself cannot be measured here); after the booth stops, the console's
#      own buffer is back on the CRTC (its text visible);
#  7.  DRM master: while the booth holds it another client cannot take it; a client that holds the
#      screen first (a red buffer) keeps it, the booth waits without a fight and draws its idle
#      screen once the other gives master back.
# vm-timeout: 480
# vm-display: std
# vm-module: bochs
SCREEN=kms
. "$REPO/hardware/scenarios/display.sh"
