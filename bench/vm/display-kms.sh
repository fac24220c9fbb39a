#!/bin/bash
# bench/vm/display-kms: the live view's drawing to a KMS screen against the fbdev path, in one run
# in the qemu guest (TCG: these are not hardware figures; compare the paths with each other). qemu's
# std VGA with a 1920x1080 EDID mode, bochs DRM: /dev/dri/card0 through libdrm (dumb buffers, page
# flips on vblank) and /dev/fb0, the same card's fbdev emulation, then an in-memory framebuffer.
# BENCH_BIN is BoothBench (release), handed in by bench/run display-kms.
# vm-timeout: 420
# vm-display: std 1920x1080
# vm-module: bochs
. "$REPO/hardware/scenarios/lib.sh"
[ -x "${BENCH_BIN:-}" ] || fail "BENCH_BIN is not set to BoothBench (run bench/run display-kms)"
wait_for 20 "/dev/dri/card0" test -e /dev/dri/card0
log "fb0: $(cat /sys/class/graphics/fb0/name 2>/dev/null) $(cat /sys/class/graphics/fb0/virtual_size 2>/dev/null)"
taskset -c 0 "$BENCH_BIN" display-devices --seconds "${SECONDS_EACH:-10}" /dev/dri/card0 /dev/fb0 memory | tee "$RESULTS/display-devices.txt"
grep -q '^display-devices kms_cpu_fps=' "$RESULTS/display-devices.txt" || fail "no figures"
pass "display-devices bench"
